package ipc

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/minikdc"
	"github.com/stratafs/strata/internal/proto/ipcpb"
	"github.com/stratafs/strata/internal/security"
)

type krbEnv struct {
	kdc  *minikdc.KDC
	krb5 *config.Config
	dir  string
}

func startKDC(t *testing.T) *krbEnv {
	t.Helper()
	if err := minikdc.Available(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	kdc, err := minikdc.Start(dir, minikdc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kdc.Close() })
	kc, err := config.Load(kdc.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"alice", "gw"} {
		if err := kdc.AddUser(u, u+"-pw"); err != nil {
			t.Fatal(err)
		}
	}
	if err := kdc.AddService(filepath.Join(dir, "svc.keytab"), "svc/localhost"); err != nil {
		t.Fatal(err)
	}
	return &krbEnv{kdc: kdc, krb5: kc, dir: dir}
}

func (e *krbEnv) userLogin(t *testing.T, name string) *security.Login {
	t.Helper()
	cc := filepath.Join(e.dir, name+".cc")
	if err := e.kdc.Kinit(cc, name, name+"-pw", 0); err != nil {
		t.Fatal(err)
	}
	l, err := security.LoginFromCCacheFile(e.krb5, cc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func (e *krbEnv) server(t *testing.T, protection string, set ...string) string {
	t.Helper()
	c := conf.New()
	c.Set("hadoop.security.authentication", "kerberos")
	c.Set("hadoop.rpc.protection", protection)
	c.Set("svc.principal", "svc/_HOST@"+e.kdc.Realm)
	c.Set("svc.keytab", filepath.Join(e.dir, "svc.keytab"))
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
	if sec.Login.Principal != "svc/localhost@"+e.kdc.Realm {
		t.Fatalf("server principal %s", sec.Login.Principal)
	}
	_, addr := startServer(t, ServerConfig{SASL: sec.SASL, HeaderTimeout: 2 * time.Second})
	return addr
}

// whoami calls echo and returns the caller's user as the server saw it.
func whoami(c *Client) (string, error) {
	var resp ipcpb.UserInformationProto
	err := c.Call(context.Background(), "echo", &ipcpb.UserInformationProto{EffectiveUser: proto.String(strings.Repeat("x", 100000))}, &resp)
	return resp.GetRealUser(), err
}

func TestKerberosEachProtection(t *testing.T) {
	e := startKDC(t)
	alice := e.userLogin(t, "alice")
	for _, prot := range []string{"authentication", "integrity", "privacy", "authentication,privacy"} {
		t.Run(prot, func(t *testing.T) {
			addr := e.server(t, prot)
			SetLogin(nil, nil)
			q, _ := security.ParseProtection(prot)
			rec := recordingProxy(t, addr)
			c := NewClient(ClientConfig{Addr: rec.addr, Protocol: testProtocol, Login: alice, ServerPrincipal: "svc/localhost@" + e.kdc.Realm, QOPs: q})
			defer c.Close()
			for i := 0; i < 3; i++ {
				u, err := whoami(c)
				if err != nil || u != "alice" {
					t.Fatalf("whoami = %q, %v", u, err)
				}
			}
			// The marker travels in the clear unless privacy was chosen.
			sent, got := rec.bytes()
			plain := security.Strongest(q) != security.QOPPrivacy
			for _, b := range [][]byte{sent, got} {
				if has := bytes.Contains(b, []byte(strings.Repeat("x", 1000))); has != plain {
					t.Fatalf("%s: marker in the clear = %v (%d bytes seen)", prot, has, len(b))
				}
			}
			// A simple client is refused with Hadoop's words.
			s := newTestClient(t, addr, "root")
			_, err := whoami(s)
			if !IsClass(err, ClassAccessControl) || !strings.Contains(err.Error(), "SIMPLE authentication is not enabled.  Available:[KERBEROS]") {
				t.Fatalf("simple client: %v", err)
			}
		})
	}
}

func TestKerberosRefusals(t *testing.T) {
	e := startKDC(t)
	alice := e.userLogin(t, "alice")
	gw := e.userLogin(t, "gw")
	addr := e.server(t, "authentication", "hadoop.proxyuser.gw.users", "carol", "hadoop.proxyuser.gw.hosts", "127.0.0.1")

	// Impersonation: gw may act as carol, not as bob; alice as no one.
	c := NewClient(ClientConfig{Addr: addr, Protocol: testProtocol, Login: gw, User: "carol", ServerPrincipal: "svc/localhost@" + e.kdc.Realm})
	defer c.Close()
	if u, err := whoami(c); err != nil || u != "carol" {
		t.Fatalf("gw as carol: %q %v", u, err)
	}
	for _, cs := range []struct {
		l    *security.Login
		user string
		msg  string
	}{{gw, "bob", "User: gw is not allowed to impersonate bob"}, {alice, "root", "User: alice is not allowed to impersonate root"}} {
		c := NewClient(ClientConfig{Addr: addr, Protocol: testProtocol, Login: cs.l, User: cs.user, ServerPrincipal: "svc/localhost@" + e.kdc.Realm})
		_, err := whoami(c)
		c.Close()
		if !IsClass(err, security.ClassAuthorization) || !strings.Contains(err.Error(), cs.msg) {
			t.Fatalf("%s as %s: %v", cs.l.User, cs.user, err)
		}
	}

	// A Kerberos client does not fall back to a simple server.
	_, simpleAddr := startServer(t, ServerConfig{})
	sc := NewClient(ClientConfig{Addr: simpleAddr, Protocol: testProtocol, Login: alice, ServerPrincipal: "svc/localhost@" + e.kdc.Realm})
	_, err := whoami(sc)
	sc.Close()
	if !IsClass(err, ClassAccessControl) || !strings.Contains(err.Error(), "Server asks us to fall back to SIMPLE auth") {
		t.Fatalf("kerberos client to a simple server: %v", err)
	}

	// A ticket for another service is not accepted: GSS initiate failed.
	if err := e.kdc.AddService(filepath.Join(e.dir, "other.keytab"), "other/localhost"); err != nil {
		t.Fatal(err)
	}
	c2 := NewClient(ClientConfig{Addr: addr, Protocol: testProtocol, Login: alice, ServerPrincipal: "other/localhost@" + e.kdc.Realm})
	_, err = whoami(c2)
	c2.Close()
	if !IsClass(err, ClassSaslException) || !strings.Contains(err.Error(), "GSS initiate failed") {
		t.Fatalf("wrong-service ticket: %v", err)
	}

	// A client that hangs up mid-exchange, or sends garbage, or stalls,
	// costs the server nothing lasting.
	for _, junk := range [][]byte{
		{'h', 'r', 'p', 'c', 9, 0, AuthSASL},
		{'h', 'r', 'p', 'c', 9, 0, AuthSASL, 0xff, 0xff, 0xff, 0xff},
		{'h', 'r', 'p', 'c', 9, 0, AuthSASL, 0, 0, 0, 3, 1, 2, 3},
	} {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.Write(junk)
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 1024)
		for {
			if _, err := nc.Read(buf); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Fatalf("server kept a stalled handshake %x open", junk)
				}
				break
			}
		}
		nc.Close()
	}
	if u, err := whoami(NewClient(ClientConfig{Addr: addr, Protocol: testProtocol, Login: alice, ServerPrincipal: "svc/localhost@" + e.kdc.Realm})); err != nil || u != "alice" {
		t.Fatalf("after junk: %q %v", u, err)
	}
}

func TestServiceAuthorizer(t *testing.T) {
	RegisterKerberosInfo("test.DatanodeProtocol", KerberosInfo{ClientPrincipalKey: "dn.principal"})
	RegisterKerberosInfo("test.Admin", KerberosInfo{ClientPrincipalKey: "nn.principal", SuperuserMayCall: true})
	principals := map[string]string{"test.DatanodeProtocol": "dn/_HOST@R", "test.Admin": "nn/_HOST@R"}
	old := security.LookupAddr
	security.LookupAddr = func(string) ([]string, error) { return []string{"node1.example."}, nil }
	defer func() { security.LookupAddr = old }()
	auth := ServiceAuthorizer(principals, "hdfs")
	remote := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1)}
	for _, cs := range []struct {
		protocol, principal, user string
		ok                        bool
	}{
		{"test.DatanodeProtocol", "dn/node1.example@R", "dn", true},
		{"test.DatanodeProtocol", "dn/node2.example@R", "dn", false},
		{"test.DatanodeProtocol", "alice@R", "alice", false},
		{"test.DatanodeProtocol", "hdfs@R", "hdfs", false},
		{"test.Admin", "hdfs@R", "hdfs", true},
		{"test.Admin", "alice@R", "alice", false},
		{"ClientProtocol", "alice@R", "alice", true},
	} {
		err := auth(cs.protocol, cs.principal, cs.user, remote)
		if (err == nil) != cs.ok {
			t.Errorf("%s by %s: %v", cs.protocol, cs.principal, err)
		}
	}
}

type recorder struct {
	addr     string
	mu       sync.Mutex
	up, down bytes.Buffer
}

func (r *recorder) bytes() ([]byte, []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]byte(nil), r.up.Bytes()...), append([]byte(nil), r.down.Bytes()...)
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// recordingProxy forwards connections to addr and keeps every byte.
func recordingProxy(t *testing.T, addr string) *recorder {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	r := &recorder{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(io.MultiWriter(s, lockedWriter{&r.mu, &r.up}), c); s.Close() }()
			go func() { io.Copy(io.MultiWriter(c, lockedWriter{&r.mu, &r.down}), s); c.Close() }()
		}
	}()
	return r
}

// TestGSSAPIRefusesExpiredAndReplayedTickets steps the server's session
// with AP-REQs built by hand: a replayed one, and one whose ticket expired
// (2 s lifetime, 2 s clock skew) are refused as GSS initiate failed.
func TestGSSAPIRefusesExpiredAndReplayedTickets(t *testing.T) {
	e := startKDC(t)
	kt, err := keytab.Load(filepath.Join(e.dir, "svc.keytab"))
	if err != nil {
		t.Fatal(err)
	}
	mech := &GSSAPIMechanism{Principal: "svc/localhost@" + e.kdc.Realm, Keytab: kt, ClockSkew: security.ClockSkew(e.krb5), QOPs: 1}
	remote := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}
	token := func(l *security.Login) []byte {
		tkt, key, err := l.Client.GetServiceTicket("svc/localhost")
		if err != nil {
			t.Fatal(err)
		}
		ap, err := spnego.NewKRB5TokenAPREQ(l.Client, tkt, key, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ap.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	step := func(tok []byte) error {
		s, _ := mech.NewSession(remote)
		_, _, err := s.Step(tok)
		return err
	}
	fresh := token(e.userLogin(t, "alice"))
	if err := step(fresh); err != nil {
		t.Fatalf("fresh ticket: %v", err)
	}
	if err := step(fresh); err == nil || !strings.Contains(err.Error(), gssInitiateFailed) || !strings.Contains(err.Error(), "replay") {
		t.Fatalf("replayed AP-REQ: %v", err)
	}
	if err := step([]byte("garbage")); err == nil || !strings.Contains(err.Error(), gssInitiateFailed) {
		t.Fatalf("garbage: %v", err)
	}

	cc := filepath.Join(e.dir, "short.cc")
	if err := e.kdc.Kinit(cc, "alice", "alice-pw", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	short, err := security.LoginFromCCacheFile(e.krb5, cc, nil)
	if err != nil {
		t.Fatal(err)
	}
	tkt, key, err := short.Client.GetServiceTicket("svc/localhost")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second) // lifetime + skew + 1
	ap, err := spnego.NewKRB5TokenAPREQ(short.Client, tkt, key, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ap.Marshal()
	if err := step(b); err == nil || !strings.Contains(err.Error(), gssInitiateFailed) || !strings.Contains(err.Error(), "KRB_AP_ERR_TKT_EXPIRED") {
		t.Fatalf("expired ticket: %v", err)
	}
}

// TestGSSAPIMutualAuthentication: a client that requires mutual
// authentication (as Java's GSSAPI does) gets an AP-REP it can decrypt
// with the session key, carrying its authenticator's time, then the
// security-layer offer after an empty reply.
func TestGSSAPIMutualAuthentication(t *testing.T) {
	e := startKDC(t)
	kt, err := keytab.Load(filepath.Join(e.dir, "svc.keytab"))
	if err != nil {
		t.Fatal(err)
	}
	mech := &GSSAPIMechanism{Principal: "svc/localhost@" + e.kdc.Realm, Keytab: kt, ClockSkew: security.ClockSkew(e.krb5), QOPs: 7}
	alice := e.userLogin(t, "alice")
	tkt, key, err := alice.Client.GetServiceTicket("svc/localhost")
	if err != nil {
		t.Fatal(err)
	}
	ap, err := spnego.NewKRB5TokenAPREQ(alice.Client, tkt, key, []int{gssapi.ContextFlagMutual}, []int{flags.APOptionMutualRequired})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := ap.Marshal()
	s, _ := mech.NewSession(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1})
	rep, done, err := s.Step(tok)
	if err != nil || done {
		t.Fatalf("AP-REQ: %v %v", done, err)
	}
	var rt spnego.KRB5Token
	if err := rt.Unmarshal(rep); err != nil || !rt.IsAPRep() {
		t.Fatalf("reply is not an AP-REP token: %v", err)
	}
	plain, err := crypto.DecryptEncPart(rt.APRep.EncPart, key, keyusage.AP_REP_ENCPART)
	if err != nil {
		t.Fatal(err)
	}
	var part messages.EncAPRepPart
	if err := part.Unmarshal(plain); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(part.CTime); d < -time.Minute || d > time.Minute {
		t.Fatalf("AP-REP time %v is not the authenticator's (now)", part.CTime)
	}
	offer, done, err := s.Step(nil)
	if err != nil || done {
		t.Fatalf("empty reply: %v %v", done, err)
	}
	w := &gssWrapper{key: key}
	layer, err := w.unwrap(offer)
	if err != nil || layer[0] != 7 {
		t.Fatalf("offer %x: %v", layer, err)
	}
	choice, _ := w.wrap([]byte{4, 0, 0x10, 0}, false)
	if _, done, err := s.Step(choice); err != nil || !done || s.QOP() != security.QOPPrivacy || s.Principal() != "alice@"+e.kdc.Realm {
		t.Fatalf("choice: %v %v %v %s", done, err, s.QOP(), s.Principal())
	}
}

// TestJavaGSSAPIClient runs the JDK's SASL GSSAPI client — Hadoop's Java
// client's mechanism, with mutual authentication — against the server at
// each protection level (testdata/JavaSaslClient.java).
func TestJavaGSSAPIClient(t *testing.T) {
	javac, err1 := exec.LookPath("javac")
	java, err2 := exec.LookPath("java")
	if err1 != nil || err2 != nil {
		t.Skip("no JDK")
	}
	e := startKDC(t)
	classes := t.TempDir()
	if out, err := exec.Command(javac, "-d", classes, "testdata/JavaSaslClient.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	cc := filepath.Join(e.dir, "alice.cc")
	if err := e.kdc.Kinit(cc, "alice", "alice-pw", 0); err != nil {
		t.Fatal(err)
	}
	jaas := filepath.Join(e.dir, "jaas.conf")
	os.WriteFile(jaas, []byte(`client {
  com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true ticketCache="`+cc+`" doNotPrompt=true;
};
`), 0o644)
	for _, c := range []struct{ prot, ask, want string }{
		{"authentication", "auth", "auth"},
		{"integrity", "auth-int", "auth-int"},
		{"privacy", "auth-conf", "auth-conf"},
		{"authentication,integrity,privacy", "auth-conf,auth-int,auth", "auth-conf"},
	} {
		addr := e.server(t, c.prot)
		_, port, _ := net.SplitHostPort(addr)
		cmd := exec.Command(java, "-Djava.security.krb5.conf="+e.kdc.ConfigPath, "-Djava.security.auth.login.config="+jaas,
			"-Djavax.security.auth.useSubjectCredsOnly=true", "-cp", classes, "JavaSaslClient", "localhost", port, c.ask)
		out, err := cmd.CombinedOutput()
		want := "echo=hello from java user=alice qop=" + c.want
		if err != nil || !strings.Contains(string(out), want) {
			t.Fatalf("%s: %v\n%s\nwant %s", c.prot, err, out, want)
		}
	}
}
