package ipc

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/proto/ipcpb"
	"github.com/stratafs/strata/internal/security"
)

// KerberosInfo names a protocol's principals, as Hadoop's @KerberosInfo
// annotation: the configuration key of the server's principal (which a
// client asks a ticket for) and, for protocols only a daemon may call,
// the key of the principal a caller must have (service authorization).
type KerberosInfo struct {
	ServerPrincipalKey string
	ClientPrincipalKey string
	// SuperuserMayCall lets the superuser (the NameNode's user) call the
	// protocol besides ClientPrincipalKey's principal.
	SuperuserMayCall bool
	// TokenKind is the kind of token a client presents for TOKEN
	// authentication (Hadoop's @TokenInfo selector; default
	// HDFS_DELEGATION_TOKEN).
	TokenKind string
}

var (
	kinfoMu sync.RWMutex
	kinfo   = map[string]KerberosInfo{}
)

// RegisterKerberosInfo records protocol's principals; the packages that
// define protocols call it from init.
func RegisterKerberosInfo(protocol string, info KerberosInfo) {
	kinfoMu.Lock()
	kinfo[protocol] = info
	kinfoMu.Unlock()
}

// KerberosInfoOf returns what RegisterKerberosInfo recorded for protocol.
func KerberosInfoOf(protocol string) (KerberosInfo, bool) {
	kinfoMu.RLock()
	defer kinfoMu.RUnlock()
	i, ok := kinfo[protocol]
	return i, ok
}

// processLogin is the login every Client authenticates with when its
// config names none: Hadoop's UserGroupInformation login user.
type processLogin struct {
	login *security.Login
	conf  *conf.Configuration
	qops  byte
}

var procLogin atomic.Pointer[processLogin]

// SetLogin makes l (nil: none) the Kerberos identity of every Client of
// this process whose ClientConfig names none; c supplies the servers'
// principals (KerberosInfo keys) and hadoop.rpc.protection.
func SetLogin(l *security.Login, c *conf.Configuration) error {
	if l == nil {
		procLogin.Store(nil)
		return nil
	}
	qops := byte(security.QOPAuth)
	if c != nil {
		q, err := security.ParseProtection(c.Get(security.KeyRPCProtection))
		if err != nil {
			return err
		}
		qops = q
	}
	procLogin.Store(&processLogin{login: l, conf: c, qops: qops})
	return nil
}

// Login returns the process login set by SetLogin, or nil.
func Login() *security.Login {
	if p := procLogin.Load(); p != nil {
		return p.login
	}
	return nil
}

// clientSASL is a client connection's security layer after SASL.
type clientSASL struct {
	w     saslLayer
	qop   security.QOP
	token bool       // TOKEN authentication: the token names the user
	mu    sync.Mutex // serialises wrap (sequence numbers)
	// plainRequests sends requests unwrapped, as colinmarc/hdfs does
	// (tests of the server's handling of such clients).
	plainRequests bool
}

// saslLayer is a negotiated security layer: GSSAPI's or DIGEST-MD5's.
type saslLayer interface {
	wrap(msg []byte, seal bool) ([]byte, error)
	unwrap(tok []byte) ([]byte, error)
}

// wrapsRequests reports whether requests go wrapped.
func (s *clientSASL) wrapsRequests() bool { return s.wrapping() && !s.plainRequests }

// kerberos returns the login and settings a Client authenticates with,
// or nil for simple authentication.
func (cfg *ClientConfig) kerberos() *processLogin {
	if cfg.TokenOnly {
		return nil
	}
	if cfg.Login != nil {
		p := &processLogin{login: cfg.Login, qops: byte(security.QOPAuth)}
		if pl := procLogin.Load(); pl != nil {
			p.conf, p.qops = pl.conf, pl.qops
		}
		if cfg.QOPs != 0 {
			p.qops = cfg.QOPs
		}
		return p
	}
	p := procLogin.Load()
	if p != nil && cfg.QOPs != 0 {
		q := *p
		q.qops = cfg.QOPs
		p = &q
	}
	return p
}

// serverPrincipal is the principal to ask a ticket for.
func (cfg *ClientConfig) serverPrincipal(pl *processLogin, advertised *ipcpb.RpcSaslProto_SaslAuth) (string, error) {
	p := cfg.ServerPrincipal
	if p == "" && pl.conf != nil {
		if info, ok := KerberosInfoOf(cfg.Protocol); ok && info.ServerPrincipalKey != "" {
			p = pl.conf.Get(info.ServerPrincipalKey)
		}
	}
	if p == "" {
		// No configured principal: the one the server names.
		p = advertised.GetProtocol() + "/" + advertised.GetServerId() + "@" + pl.login.Client.Credentials.Realm()
	}
	return security.ServerPrincipal(p, cfg.Addr)
}

// saslConnect runs the client side of Hadoop's SASL exchange on nc, after
// the connection header: NEGOTIATE, INITIATE with the AP-REQ, the
// security-layer choice, SUCCESS. The caller has set a deadline on nc.
// With dtok (the token selectToken chose) and a TOKEN entry offered, the
// client authenticates with the token instead (tokenConnect).
func saslConnect(nc net.Conn, br *bufio.Reader, cfg *ClientConfig, pl *processLogin, dtok *delegation.Token, tokQOPs byte, clientID []byte) (*clientSASL, error) {
	send := func(m *ipcpb.RpcSaslProto) error {
		h := &ipcpb.RpcRequestHeaderProto{
			RpcKind: ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
			RpcOp:   ipcpb.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
			CallId:  proto.Int32(callIDSASL), ClientId: clientID,
		}
		buf, err := appendFrame(nil, h, m)
		if err != nil {
			return err
		}
		_, err = nc.Write(buf)
		return err
	}
	recv := func(want ipcpb.RpcSaslProto_SaslState) (*ipcpb.RpcSaslProto, error) {
		frame, err := readFrame(br, maxSASLToken, nil)
		if err != nil {
			return nil, err
		}
		var h ipcpb.RpcResponseHeaderProto
		rest, err := unmarshalDelimited(frame, &h)
		if err != nil {
			return nil, err
		}
		if h.GetStatus() != ipcpb.RpcResponseHeaderProto_SUCCESS {
			return nil, &RemoteError{Class: h.GetExceptionClassName(), Message: h.GetErrorMsg(), Code: int32(h.GetErrorDetail()), Fatal: true}
		}
		var m ipcpb.RpcSaslProto
		if _, err := unmarshalDelimited(rest, &m); err != nil {
			return nil, err
		}
		if m.GetState() == ipcpb.RpcSaslProto_SUCCESS && want == ipcpb.RpcSaslProto_NEGOTIATE {
			// A simple-auth server; Hadoop's client refuses to fall back
			// unless ipc.client.fallback-to-simple-auth-allowed, which
			// strata does not offer.
			return nil, &RemoteError{Class: ClassAccessControl, Message: "Server asks us to fall back to SIMPLE auth, but this client is configured to only allow secure connections.", Fatal: true}
		}
		if m.GetState() != want {
			return nil, fmt.Errorf("ipc: SASL: got %v, want %v", m.GetState(), want)
		}
		return &m, nil
	}
	if err := send(&ipcpb.RpcSaslProto{State: ipcpb.RpcSaslProto_NEGOTIATE.Enum()}); err != nil {
		return nil, err
	}
	neg, err := recv(ipcpb.RpcSaslProto_NEGOTIATE)
	if err != nil {
		return nil, err
	}
	var krb, token *ipcpb.RpcSaslProto_SaslAuth
	var offered []string
	for _, a := range neg.GetAuths() {
		offered = append(offered, a.GetMethod())
		if a.GetMethod() == string(AuthMethodKerberos) && a.GetMechanism() == "GSSAPI" {
			krb = a
		}
		// The entry must carry the server's challenge: the qopHint entry
		// of a server without a token mechanism does too, and such a
		// server refuses the INITIATE, which is the truth.
		if a.GetMethod() == string(AuthMethodToken) && a.GetMechanism() == tokenMechanism && len(a.GetChallenge()) > 0 {
			token = a
		}
	}
	if dtok != nil && token != nil {
		return tokenConnect(token, dtok, tokQOPs, send, recv)
	}
	if krb == nil || pl == nil {
		return nil, &RemoteError{Class: ClassAccessControl, Message: "Client cannot authenticate via:[" + strings.Join(offered, ", ") + "]"}
	}
	spn, err := cfg.serverPrincipal(pl, krb)
	if err != nil {
		return nil, err
	}
	cl := pl.login.Client
	// gokrb5 takes the name without its realm (it finds the realm itself).
	name, inst, _ := security.SplitPrincipal(spn)
	if inst != "" {
		name += "/" + inst
	}
	tkt, key, err := cl.GetServiceTicket(name)
	if err != nil {
		return nil, fmt.Errorf("ipc: Kerberos ticket for %s: %w", spn, err)
	}
	apreq, err := spnego.NewKRB5TokenAPREQ(cl, tkt, key, []int{gssapi.ContextFlagInteg, gssapi.ContextFlagConf}, nil)
	if err != nil {
		return nil, err
	}
	tok, err := apreq.Marshal()
	if err != nil {
		return nil, err
	}
	if err := send(&ipcpb.RpcSaslProto{State: ipcpb.RpcSaslProto_INITIATE.Enum(), Token: tok, Auths: []*ipcpb.RpcSaslProto_SaslAuth{krb}}); err != nil {
		return nil, err
	}
	ch, err := recv(ipcpb.RpcSaslProto_CHALLENGE)
	if err != nil {
		return nil, err
	}
	// RFC 4121: the initiator's sequence numbers start at its
	// authenticator's.
	if err := apreq.APReq.DecryptAuthenticator(key); err != nil {
		return nil, err
	}
	w := &gssWrapper{key: key, seq: uint64(apreq.APReq.Authenticator.SeqNumber)}
	offer, err := w.unwrap(ch.GetToken())
	if err != nil || len(offer) < 4 {
		return nil, fmt.Errorf("ipc: SASL: bad security layer offer from %s: %v", cfg.Addr, err)
	}
	qop := security.Strongest(offer[0] & pl.qops)
	if qop == 0 {
		return nil, fmt.Errorf("ipc: SASL: no common protection layer with %s (server offers %#x, client wants %#x)", cfg.Addr, offer[0], pl.qops)
	}
	// The largest wrapped reply this client accepts, in RFC 4752's three
	// bytes.
	choice := make([]byte, 4)
	binary.BigEndian.PutUint32(choice, uint32(min(cfg.MaxDataLength, 0xFFFFFF)))
	choice[0] = byte(qop)
	w.privacy = qop == security.QOPPrivacy
	resp, err := w.wrap(choice, false)
	if err != nil {
		return nil, err
	}
	if err := send(&ipcpb.RpcSaslProto{State: ipcpb.RpcSaslProto_RESPONSE.Enum(), Token: resp}); err != nil {
		return nil, err
	}
	if _, err := recv(ipcpb.RpcSaslProto_SUCCESS); err != nil {
		return nil, err
	}
	return &clientSASL{w: w, qop: qop}, nil
}

// errNonWrapped is Hadoop's client's words for a frame that is not a
// WRAP message once the connection wraps.
var errNonWrapped = errors.New("Server sent non-wrapped response")

// wrapping reports whether requests and replies are wrapped.
func (s *clientSASL) wrapping() bool {
	return s != nil && (s.qop == security.QOPIntegrity || s.qop == security.QOPPrivacy)
}

// wrapFrame wraps one request frame (length included) in a WRAP message.
func (s *clientSASL) wrapFrame(buf, clientID []byte) ([]byte, error) {
	s.mu.Lock()
	tok, err := s.w.wrap(buf, s.qop == security.QOPPrivacy)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	h := &ipcpb.RpcRequestHeaderProto{
		RpcKind: ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
		RpcOp:   ipcpb.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
		CallId:  proto.Int32(callIDSASL), ClientId: clientID,
	}
	return appendFrame(nil, h, &ipcpb.RpcSaslProto{State: ipcpb.RpcSaslProto_WRAP.Enum(), Token: tok})
}

// unwrapFrames opens a WRAP reply into the frames it holds.
func (s *clientSASL) unwrapFrames(rest []byte, max int) ([][]byte, error) {
	var m ipcpb.RpcSaslProto
	if _, err := unmarshalDelimited(rest, &m); err != nil {
		return nil, err
	}
	if m.GetState() != ipcpb.RpcSaslProto_WRAP {
		return nil, errNonWrapped
	}
	data, err := s.w.unwrap(m.GetToken())
	if err != nil {
		return nil, err
	}
	var frames [][]byte
	for len(data) > 0 {
		if len(data) < 4 {
			return nil, errors.New("ipc: truncated wrapped frame")
		}
		n := binary.BigEndian.Uint32(data)
		if int64(n) > int64(len(data)-4) || int64(n) > int64(max) {
			return nil, errors.New("ipc: bad wrapped frame length")
		}
		frames = append(frames, data[4:4+n])
		data = data[4+n:]
	}
	return frames, nil
}

// saslDeadline bounds the client's side of the exchange.
func saslDeadline(ctx context.Context, d time.Duration) time.Time {
	t := time.Now().Add(d)
	if dl, ok := ctx.Deadline(); ok && dl.Before(t) {
		return dl
	}
	return t
}
