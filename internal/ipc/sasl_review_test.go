package ipc

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/proto/ipcpb"
	"github.com/stratafs/strata/internal/security"
)

// apReqToken builds alice's AP-REQ for svc/localhost, letting edit change
// her authenticator before it is encrypted with the session key.
func apReqToken(t *testing.T, l *security.Login, edit func(*types.Authenticator)) []byte {
	t.Helper()
	tkt, key, err := l.Client.GetServiceTicket("svc/localhost")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := spnego.NewKRB5TokenAPREQ(l.Client, tkt, key, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := types.NewAuthenticator(l.Client.Credentials.Domain(), l.Client.Credentials.CName())
	if err != nil {
		t.Fatal(err)
	}
	cksum := make([]byte, 24)
	binary.LittleEndian.PutUint32(cksum, 16)
	auth.Cksum = types.Checksum{CksumType: chksumtype.GSSAPI, Checksum: cksum}
	edit(&auth)
	if tok.APReq, err = messages.NewAPReq(tkt, key, auth); err != nil {
		t.Fatal(err)
	}
	b, err := tok.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGSSAPIIdentityIsTheTicketsClient: the authenticated name is the
// ticket's (the KDC's word); an authenticator naming another realm, as a
// principal of a trusted realm would to pass for this realm's, is
// refused.
func TestGSSAPIIdentityIsTheTicketsClient(t *testing.T) {
	e := startKDC(t)
	kt, err := keytab.Load(filepath.Join(e.dir, "svc.keytab"))
	if err != nil {
		t.Fatal(err)
	}
	mech := &GSSAPIMechanism{Principal: "svc/localhost@" + e.kdc.Realm, Keytab: kt, ClockSkew: security.ClockSkew(e.krb5), QOPs: 1}
	alice := e.userLogin(t, "alice")
	step := func(tok []byte) (SASLSession, error) {
		s, _ := mech.NewSession(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1})
		_, _, err := s.Step(tok)
		return s, err
	}
	s, err := step(apReqToken(t, alice, func(*types.Authenticator) {}))
	if err != nil || s.Principal() != "alice@"+e.kdc.Realm {
		t.Fatalf("honest AP-REQ: %v %q", err, s.Principal())
	}
	s, err = step(apReqToken(t, alice, func(a *types.Authenticator) { a.CRealm = "OTHER.REALM" }))
	if err == nil || !strings.Contains(err.Error(), gssInitiateFailed) {
		t.Fatalf("authenticator of another realm: accepted as %q (%v)", s.Principal(), err)
	}
}

// TestShortTokensDoNotPanic: sealed Wrap tokens and AP-REQs whose
// ciphertext is shorter than the enctype's minimum are refused, not
// sliced out of bounds inside gokrb5.
func TestShortTokensDoNotPanic(t *testing.T) {
	key := testKey()
	for _, acceptor := range []bool{true, false} {
		w := &gssWrapper{key: key, acceptor: acceptor}
		flags := byte(wrapFlagSealed)
		if !acceptor {
			flags |= wrapFlagAcceptor
		}
		for n := 0; n <= 64; n++ {
			for _, ec := range []uint16{0, 12, 0xffff} {
				tok := []byte{5, 4, flags, 0xff, byte(ec >> 8), byte(ec), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
				tok = append(tok, bytes.Repeat([]byte{0xa5}, n)...)
				if _, err := w.unwrap(tok); err == nil {
					t.Fatalf("garbage sealed token of %d bytes accepted", n)
				}
			}
		}
	}

	e := startKDC(t)
	kt, err := keytab.Load(filepath.Join(e.dir, "svc.keytab"))
	if err != nil {
		t.Fatal(err)
	}
	mech := &GSSAPIMechanism{Principal: "svc/localhost@" + e.kdc.Realm, Keytab: kt, ClockSkew: security.ClockSkew(e.krb5), QOPs: 1}
	alice := e.userLogin(t, "alice")
	tkt, key2, err := alice.Client.GetServiceTicket("svc/localhost")
	if err != nil {
		t.Fatal(err)
	}
	for n := range 40 {
		for _, part := range []string{"ticket", "authenticator"} {
			tok, err := spnego.NewKRB5TokenAPREQ(alice.Client, tkt, key2, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if part == "ticket" {
				tok.APReq.Ticket.EncPart.Cipher = tok.APReq.Ticket.EncPart.Cipher[:n]
			} else {
				tok.APReq.EncryptedAuthenticator.Cipher = tok.APReq.EncryptedAuthenticator.Cipher[:n]
			}
			b, err := tok.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			s, _ := mech.NewSession(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1})
			if _, _, err := s.Step(b); err == nil {
				t.Fatalf("%s cut to %d bytes accepted", part, n)
			}
		}
	}
}

// TestWrapSequenceHeaderAndSealing: a replayed token is refused, so is a
// sealed token whose outer EC was changed (its encrypted header copy
// says otherwise), and an unsealed token once privacy is negotiated.
func TestWrapSequenceHeaderAndSealing(t *testing.T) {
	key := testKey()
	srv, cli := &gssWrapper{key: key, acceptor: true}, &gssWrapper{key: key, seq: 77}
	msg := bytes.Repeat([]byte("request "), 20)
	for _, seal := range []bool{false, true} {
		tok, _ := cli.wrap(msg, seal)
		if got, err := srv.unwrap(tok); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("seal=%v: %v", seal, err)
		}
		if _, err := srv.unwrap(tok); err == nil || !strings.Contains(err.Error(), "replayed") {
			t.Fatalf("seal=%v: replayed token: %v", seal, err)
		}
	}
	// Out of order (Hadoop's server queues replies after wrapping them)
	// is accepted, each number once.
	held, _ := cli.wrap(msg, true)
	tok, _ := cli.wrap(msg, true)
	for _, tk := range [][]byte{tok, held} {
		if _, err := srv.unwrap(tk); err != nil {
			t.Fatalf("token out of order: %v", err)
		}
	}
	for _, tk := range [][]byte{tok, held} {
		if _, err := srv.unwrap(tk); err == nil {
			t.Fatal("replay of an out-of-order token accepted")
		}
	}
	// Held back further than the window: refused.
	old, _ := cli.wrap(msg, false)
	cli.seq += replayWindowBits
	tok, _ = cli.wrap(msg, false)
	if _, err := srv.unwrap(tok); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.unwrap(old); err == nil || !strings.Contains(err.Error(), "too old") {
		t.Fatalf("token older than the window: %v", err)
	}

	srv, cli = &gssWrapper{key: key, acceptor: true}, &gssWrapper{key: key}
	tok, _ = cli.wrap(msg, true)
	binary.BigEndian.PutUint16(tok[4:6], 20)
	if got, err := srv.unwrap(tok); err == nil {
		t.Fatalf("tampered EC accepted: %d of %d bytes", len(got), len(msg))
	}

	srv, cli = &gssWrapper{key: key, acceptor: true, privacy: true}, &gssWrapper{key: key}
	tok, _ = cli.wrap(msg, false)
	if _, err := srv.unwrap(tok); err == nil || !strings.Contains(err.Error(), "Privacy not protected") {
		t.Fatalf("unsealed token under privacy: %v", err)
	}
	tok, _ = cli.wrap(msg, true)
	if _, err := srv.unwrap(tok); err != nil {
		t.Fatalf("sealed token under privacy: %v", err)
	}
}

// TestClientRefusesUnwrappedReplies: once integrity is on, a reply frame
// that is not a WRAP message (anyone on the path could have sent it)
// breaks the connection, with Hadoop's words, and reaches no call.
func TestClientRefusesUnwrappedReplies(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	ch := make(chan result, 1)
	cc := &clientConn{nc: a, cfg: ClientConfig{Addr: "nn:8020", MaxDataLength: 1 << 20},
		sasl:    &clientSASL{w: &gssWrapper{key: testKey()}, qop: security.QOPIntegrity},
		pending: map[int32]chan result{7: ch}}
	hdr := &ipcpb.RpcResponseHeaderProto{CallId: proto.Uint32(7), Status: ipcpb.RpcResponseHeaderProto_SUCCESS.Enum()}
	frame, err := appendFrame(nil, hdr, &ipcpb.UserInformationProto{EffectiveUser: proto.String("forged")})
	if err != nil {
		t.Fatal(err)
	}
	if cc.deliver(frame[4:], false, nil) {
		t.Fatal("unwrapped reply accepted")
	}
	if r, ok := <-ch; ok {
		t.Fatalf("the call got the forged reply %v", r.hdr)
	}
	if err := cc.err(); err == nil || !strings.Contains(err.Error(), "Server sent non-wrapped response") {
		t.Fatalf("connection error: %v", err)
	}
}

// secureServer is e.server with a restricted protocol beside the echo
// one: strata.test.Restricted, whose callers must be gw.
func (e *krbEnv) secureServer(t *testing.T, protection string, logs io.Writer, set ...string) string {
	t.Helper()
	RegisterKerberosInfo("strata.test.Restricted", KerberosInfo{ClientPrincipalKey: "restricted.principal"})
	c := conf.New()
	c.Set("hadoop.security.authentication", "kerberos")
	c.Set("hadoop.rpc.protection", protection)
	c.Set("svc.principal", "svc/_HOST@"+e.kdc.Realm)
	c.Set("svc.keytab", filepath.Join(e.dir, "svc.keytab"))
	c.Set("restricted.principal", "gw@"+e.kdc.Realm)
	for i := 0; i+1 < len(set); i += 2 {
		c.Set(set[i], set[i+1])
	}
	st, err := SecureSettingsFrom(c, "svc.principal", "svc.keytab")
	if err != nil {
		t.Fatal(err)
	}
	sec, err := KerberosServer(st, e.krb5, "127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := ServerConfig{SASL: sec.SASL, HeaderTimeout: 2 * time.Second}
	if logs != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	s, addr := startServer(t, cfg)
	s.Register("strata.test.Restricted", map[string]Method{
		"register": Unary(func(ctx context.Context, req *ipcpb.UserInformationProto) (*ipcpb.UserInformationProto, error) {
			c, _ := CallerFrom(ctx)
			return &ipcpb.UserInformationProto{RealUser: proto.String(c.User)}, nil
		}),
	})
	return addr
}

// TestServiceAuthorizationPerCall: a user who opens the connection with
// an open protocol and then names a restricted one in a call's header is
// refused; the restricted protocol's principal is served.
func TestServiceAuthorizationPerCall(t *testing.T) {
	e := startKDC(t)
	addr := e.secureServer(t, "authentication", nil)
	SetLogin(nil, nil)
	for _, tc := range []struct {
		user string
		ok   bool
	}{{"alice", false}, {"gw", true}} {
		c := NewClient(ClientConfig{Addr: addr, Protocol: testProtocol, CallProtocol: "strata.test.Restricted", Login: e.userLogin(t, tc.user), ServerPrincipal: "svc/localhost@" + e.kdc.Realm})
		defer c.Close()
		var resp ipcpb.UserInformationProto
		err := c.Call(context.Background(), "register", &ipcpb.UserInformationProto{}, &resp)
		if tc.ok != (err == nil) {
			t.Fatalf("%s calling the restricted protocol on a %s connection: %v", tc.user, testProtocol, err)
		}
		if !tc.ok && (!IsClass(err, security.ClassAuthorization) || !strings.Contains(err.Error(), "is not authorized for protocol strata.test.Restricted")) {
			t.Fatalf("%s: refusal %v", tc.user, err)
		}
	}
}

// TestWrappedRequestsStayWrapped: once a client's connection context
// came wrapped, a plain frame on its connection (unprotected bytes
// injected into a protected connection) closes it.
func TestWrappedRequestsStayWrapped(t *testing.T) {
	e := startKDC(t)
	alice := e.userLogin(t, "alice")
	var logs syncBuffer
	addr := e.secureServer(t, "integrity", &logs)
	SetLogin(nil, nil)
	c := NewClient(ClientConfig{Addr: addr, Protocol: testProtocol, Login: alice, ServerPrincipal: "svc/localhost@" + e.kdc.Realm, QOPs: byte(security.QOPIntegrity)})
	defer c.Close()
	if u, err := whoami(c); err != nil || u != "alice" {
		t.Fatalf("wrapped client: %q %v", u, err)
	}
	if strings.Contains(logs.String(), "unwrapped") {
		t.Fatalf("a wrapping client was logged as unwrapped: %s", logs.String())
	}
	// Inject a plain frame into the same connection.
	cc := c.conn
	cc.wmu.Lock()
	_, err := cc.nc.Write(callFrame(t, 99))
	cc.wmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); cc.err() == nil; {
		if time.Now().After(end) {
			t.Fatal("the server kept a connection that sent a plain frame after wrapped ones")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestUnwrappedContextClients: a client whose connection context comes
// plain under integrity (as colinmarc/hdfs) is served and logged once,
// or refused with strata.ipc.sasl.require-wrapped-requests.
func TestUnwrappedContextClients(t *testing.T) {
	e := startKDC(t)
	alice := e.userLogin(t, "alice")
	for _, require := range []bool{false, true} {
		var logs syncBuffer
		set := []string{}
		if require {
			set = []string{security.KeyRequireWrappedRequests, "true"}
		}
		addr := e.secureServer(t, "integrity", &logs, set...)
		SetLogin(nil, nil)
		c := NewClient(ClientConfig{Addr: addr, Protocol: testProtocol, Login: alice, ServerPrincipal: "svc/localhost@" + e.kdc.Realm, QOPs: byte(security.QOPIntegrity), plainRequests: true})
		for range 2 {
			_, err := whoami(c)
			if require {
				if err == nil || !strings.Contains(err.Error(), "unwrapped") {
					t.Fatalf("require: %v", err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("lax: %v", err)
			}
		}
		c.Close()
		if n := strings.Count(logs.String(), "sends requests unwrapped"); !require && n != 1 {
			t.Fatalf("logged %d times: %s", n, logs.String())
		}
	}
}

// TestSecondConnectionContextRefused: the user of a connection is set
// once; a second context is refused with Hadoop's words.
func TestSecondConnectionContextRefused(t *testing.T) {
	_, addr := startServer(t, ServerConfig{})
	nc := rawConn(t, addr, append(append(append([]byte{}, goodHeader...), contextFrame(t)...), contextFrame(t)...))
	frame, err := readFrame(nc, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	var hdr ipcpb.RpcResponseHeaderProto
	if _, err := unmarshalDelimited(frame, &hdr); err != nil {
		t.Fatal(err)
	}
	if hdr.GetStatus() != ipcpb.RpcResponseHeaderProto_FATAL || hdr.GetErrorMsg() != "Connection context already processed" {
		t.Fatalf("second context: %v %q", hdr.GetStatus(), hdr.GetErrorMsg())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// panicMech is a mechanism whose exchange panics, as a decoder bug
// reachable by a peer's bytes would.
type panicMech struct{}

func (panicMech) Auth() *ipcpb.RpcSaslProto_SaslAuth {
	return &ipcpb.RpcSaslProto_SaslAuth{Method: proto.String("KERBEROS"), Mechanism: proto.String("GSSAPI")}
}
func (panicMech) Method() AuthMethod { return AuthMethodKerberos }
func (panicMech) NewSession(net.Addr) (SASLSession, error) {
	var s *gssSession
	return s, nil // nil: Step dereferences it
}

// TestConnectionPanicClosesOnlyThatConnection: a panic while serving a
// connection's bytes closes it; the server goes on.
func TestConnectionPanicClosesOnlyThatConnection(t *testing.T) {
	var logs syncBuffer
	_, addr := startServer(t, ServerConfig{
		SASL:   &SASLConfig{Mechanisms: []SASLMechanism{panicMech{}}, MapUser: func(p string) (string, error) { return p, nil }},
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	saslFrame := func(m *ipcpb.RpcSaslProto) []byte {
		h := &ipcpb.RpcRequestHeaderProto{RpcKind: ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(), CallId: proto.Int32(callIDSASL), ClientId: []byte("0123456789abcdef")}
		b, err := appendFrame(nil, h, m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hdr := []byte{'h', 'r', 'p', 'c', Version, 0, AuthSASL}
	for range 2 {
		nc := rawConn(t, addr, append(append([]byte{}, hdr...), saslFrame(&ipcpb.RpcSaslProto{State: ipcpb.RpcSaslProto_INITIATE.Enum(), Auths: []*ipcpb.RpcSaslProto_SaslAuth{panicMech{}.Auth()}, Token: []byte{1}})...))
		if _, err := io.ReadAll(nc); err != nil {
			t.Fatalf("the panicking connection was not closed: %v", err)
		}
	}
	nc := rawConn(t, addr, append(append([]byte{}, hdr...), saslFrame(&ipcpb.RpcSaslProto{State: ipcpb.RpcSaslProto_NEGOTIATE.Enum()})...))
	if _, err := readFrame(nc, 1<<20, nil); err != nil {
		t.Fatalf("the server stopped serving after a panic: %v", err)
	}
	if !strings.Contains(logs.String(), "panicked") {
		t.Fatalf("panic not logged: %s", logs.String())
	}
}

// TestWrappedRequestBoundedByMaxBuffer: a wrapped request longer than
// the max buffer the server offered is refused before it is unwrapped.
func TestWrappedRequestBoundedByMaxBuffer(t *testing.T) {
	key := testKey()
	c := &serverConn{srv: NewServer(ServerConfig{}), sasl: &saslState{sess: &gssSession{mech: &GSSAPIMechanism{MaxBuffer: 200}, w: &gssWrapper{key: key, acceptor: true}}}}
	r := &saslReader{c: c}
	cli := &clientSASL{w: &gssWrapper{key: key}, qop: security.QOPIntegrity}
	for _, n := range []int{100, 300} {
		buf, err := cli.wrapFrame(bytes.Repeat([]byte{1}, n), []byte("0123456789abcdef"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.unwrapFrame(buf[4:])
		if n <= 200 && err != nil || n > 200 && (err == nil || !strings.Contains(err.Error(), "max buffer")) {
			t.Fatalf("%d bytes: %v", n, err)
		}
	}
}
