package digestmd5

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// RFC 2831 section 4's example (IMAP, qop auth).
func TestRFCExample(t *testing.T) {
	ss := &session{user: "chris", realm: "elwood.innosoft.com", password: "secret", nonce: "OA6MG9tEQGm2hh",
		cnonce: "OA6MHXh6VqTrRk", qop: Auth, digestURI: "imap/elwood.innosoft.com", nc: "00000001"}
	if got := ss.digest(true); got != "d388dad90d4bbd760a152321f2143af7" {
		t.Errorf("response = %s", got)
	}
	if got := ss.digest(false); got != "ea40f60335c427b5527b84dbabcdfffd" {
		t.Errorf("rspauth = %s", got)
	}
}

// A handshake a Hadoop DataNode had with a client, with
// dfs.encrypt.data.transfer on (qop auth-conf, rc4): the digests, and the
// AES keys the DataNode wrapped in its last message (sequence 0 and 1;
// which is the client's "in" key follows from colinmarc's test setup).
func TestHadoopCapture(t *testing.T) {
	key := []byte{0x4d, 0xed, 0xaa, 0xd4, 0xf0, 0xf8, 0xec, 0x7d, 0xfd, 0xf7, 0x76, 0xaf, 0xbc, 0x93, 0xba, 0x8e, 0xd1, 0xc3, 0xb3, 0xb7}
	ss := &session{user: "388373981 BP-529865118-10.129.176.136-1582635112897 eQzDpjF/W9c=", realm: "0",
		password: base64.StdEncoding.EncodeToString(key), nonce: "8iQSCAmYohP0K4dBX4Z2cxYC4CFJjfVp3aATEHNN",
		cnonce: "dqNZ/hGooPsuK3iWPeDFeQ==", qop: AuthConf, digestURI: "hdfs/0", cipher: "rc4", nc: "00000001"}
	if got := ss.digest(true); got != "c4669d46e21197923d3e98e53e6dd543" {
		t.Errorf("response = %s", got)
	}
	if got := ss.digest(false); got != "830abc648a95a91e9ff1d594cdbca222" {
		t.Errorf("rspauth = %s", got)
	}
	sec, err := ss.security(true, DefaultMaxBuf, DefaultMaxBuf)
	if err != nil {
		t.Fatal(err)
	}
	inKey := []byte{0xbb, 0x5e, 0xcf, 0x32, 0x55, 0xe7, 0x59, 0x5b, 0xe5, 0xf9, 0xd7, 0xd2, 0x1e, 0x29, 0xb8, 0xeb,
		0x04, 0x93, 0x8b, 0x74, 0x58, 0xbd, 0x77, 0x79, 0x8f, 0xfd, 0xf2, 0xe3, 0xb9, 0xbd, 0x70, 0xa7,
		0x3b, 0xbc, 0xf4, 0xa2, 0xf3, 0xa1, 0x8a, 0x51, 0x83, 0x3e, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00}
	outKey := []byte{0x63, 0x50, 0x62, 0xfe, 0x18, 0xed, 0xb9, 0xf6, 0x27, 0x92, 0x45, 0x6f, 0xa6, 0xdc, 0x9c, 0x6e,
		0x71, 0x5e, 0x4a, 0xcb, 0x92, 0x97, 0xa4, 0xcb, 0xa1, 0x56, 0xe3, 0x4f, 0x25, 0x5d, 0xfb, 0xd1,
		0x65, 0x81, 0x12, 0xe5, 0xd9, 0xe0, 0x12, 0x33, 0x53, 0xef, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01}
	wantOut := []byte{0xe6, 0xfb, 0x59, 0xb1, 0x7e, 0xd7, 0xdf, 0x11, 0x3a, 0xf3, 0xac, 0x62, 0xef, 0xc0, 0x86, 0x3d,
		0x92, 0x74, 0x7d, 0xd9, 0x3f, 0xae, 0xbc, 0x62, 0xf2, 0xb5, 0x68, 0x7b, 0x10, 0x6f, 0xa3, 0x53}
	wantIn := []byte{0x7b, 0x91, 0xb6, 0x66, 0x60, 0xab, 0xff, 0x8c, 0x80, 0x48, 0xe2, 0x0c, 0xef, 0x24, 0x0c, 0xc9,
		0x0b, 0xc5, 0xd7, 0x92, 0x14, 0x9c, 0x6f, 0xea, 0xb9, 0x12, 0x1a, 0x48, 0xc4, 0x85, 0x5f, 0x43}
	got, err := sec.Unwrap(bytes.Clone(inKey))
	if err != nil || !bytes.Equal(got, wantIn) {
		t.Fatalf("inKey: %x, %v", got, err)
	}
	got, err = sec.Unwrap(bytes.Clone(outKey))
	if err != nil || !bytes.Equal(got, wantOut) {
		t.Fatalf("outKey: %x, %v", got, err)
	}
	// And the server side produces the same bytes.
	srv, _ := ss.security(false, DefaultMaxBuf, DefaultMaxBuf)
	w1, _ := srv.Wrap(wantIn)
	w2, _ := srv.Wrap(wantOut)
	if !bytes.Equal(w1, inKey) || !bytes.Equal(w2, outKey) {
		t.Fatalf("server wrap differs from Hadoop's:\n%x\n%x", w1, w2)
	}
}

type fixedRand byte

func (r fixedRand) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r) + byte(i)
	}
	return len(p), nil
}

func pair(t *testing.T, serverQOPs, clientQOPs []string, pass string) (*Server, *Client, error) {
	t.Helper()
	srv, err := NewServer(ServerConfig{Protocol: "hdfs", ServerName: "0", QOPs: serverQOPs, Rand: fixedRand(1), MaxBuf: 4096,
		Credentials: func(u string) (string, error) {
			if u != "alice" {
				return "", errors.New("no such user " + u)
			}
			return "s3cret", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewClient(ClientConfig{Protocol: "hdfs", ServerName: "0", Username: "alice", Password: pass, QOPs: clientQOPs, Rand: fixedRand(7)})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := srv.Challenge()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := cl.Respond(ch)
	if err != nil {
		return srv, cl, err
	}
	auth, err := srv.Respond(resp)
	if err != nil {
		return srv, cl, err
	}
	return srv, cl, cl.Verify(auth)
}

func TestRoundTripEachQOP(t *testing.T) {
	for _, qop := range []string{Auth, AuthInt, AuthConf} {
		srv, cl, err := pair(t, []string{qop}, []string{AuthConf, AuthInt, Auth}, "s3cret")
		if err != nil {
			t.Fatalf("%s: %v", qop, err)
		}
		if srv.QOP() != qop || cl.QOP() != qop || srv.Username() != "alice" || !srv.Complete() || !cl.Complete() {
			t.Fatalf("%s: negotiated %s/%s user %q", qop, srv.QOP(), cl.QOP(), srv.Username())
		}
		if qop == Auth {
			if srv.Security() != nil || cl.Security() != nil {
				t.Fatal("auth has no security layer")
			}
			continue
		}
		cs, ss := cl.Security(), srv.Security()
		for i, msg := range []string{"hello", "", strings.Repeat("x", 1000)} {
			w, err := cs.Wrap([]byte(msg))
			if err != nil {
				t.Fatal(err)
			}
			if qop == AuthConf && len(msg) > 0 && bytes.Contains(w, []byte(msg)) {
				t.Errorf("auth-conf sent %q in the clear", msg)
			}
			if qop == AuthInt && !bytes.HasPrefix(w, []byte(msg)) {
				t.Errorf("auth-int message %d not in the clear", i)
			}
			got, err := ss.Unwrap(w)
			if err != nil || string(got) != msg {
				t.Fatalf("%s message %d: %q, %v", qop, i, got, err)
			}
			// And back.
			w, _ = ss.Wrap([]byte(msg))
			if got, err := cs.Unwrap(w); err != nil || string(got) != msg {
				t.Fatalf("%s reply %d: %q, %v", qop, i, got, err)
			}
		}
		// The client's maxbuf is the default, the server's 4096: Wrap
		// honours the peer's.
		if _, err := ss.Wrap(make([]byte, DefaultMaxBuf)); err == nil {
			t.Error("wrapped a message larger than the peer's maxbuf")
		}
		if _, err := cs.Wrap(make([]byte, 4096)); err == nil {
			t.Error("client wrapped past the server's maxbuf 4096")
		}
	}
}

func TestQOPNegotiation(t *testing.T) {
	srv, cl, err := pair(t, []string{AuthConf, AuthInt, Auth}, []string{AuthInt, Auth}, "s3cret")
	if err != nil || srv.QOP() != AuthInt || cl.QOP() != AuthInt {
		t.Fatalf("got %s, %v", srv.QOP(), err)
	}
	if _, _, err := pair(t, []string{Auth}, []string{AuthConf}, "s3cret"); err == nil || !strings.Contains(err.Error(), "no common qop") {
		t.Fatalf("privacy-only client against auth-only server: %v", err)
	}
}

func TestWrongPassword(t *testing.T) {
	if _, _, err := pair(t, []string{Auth}, nil, "guess"); !errors.Is(err, ErrAuthentication) {
		t.Fatalf("wrong password: %v", err)
	}
	srv, _ := NewServer(ServerConfig{Protocol: "hdfs", ServerName: "0", Credentials: func(u string) (string, error) { return "", errors.New("token expired") }})
	cl, _ := NewClient(ClientConfig{Protocol: "hdfs", ServerName: "0", Username: "bob", Password: "x"})
	ch, _ := srv.Challenge()
	resp, _ := cl.Respond(ch)
	_, err := srv.Respond(resp)
	var ce *CredentialError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "token expired") {
		t.Fatalf("refused credentials: %v", err)
	}
}

// A server that does not know the password cannot fake rspauth.
func TestClientChecksServer(t *testing.T) {
	cl, _ := NewClient(ClientConfig{Protocol: "hdfs", ServerName: "0", Username: "alice", Password: "s3cret"})
	if _, err := cl.Respond([]byte(`realm="0",nonce="abc",qop="auth",charset=utf-8,algorithm=md5-sess`)); err != nil {
		t.Fatal(err)
	}
	if err := cl.Verify([]byte("rspauth=00000000000000000000000000000000")); !errors.Is(err, ErrServerAuth) {
		t.Fatalf("forged rspauth: %v", err)
	}
}

func TestResponseChecks(t *testing.T) {
	srv, _, err := pair(t, []string{Auth}, nil, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Respond([]byte("x")); err == nil {
		t.Error("second response accepted")
	}
	base := func() (*Server, string) {
		s, _ := NewServer(ServerConfig{Protocol: "hdfs", ServerName: "0", Rand: fixedRand(1), Credentials: func(string) (string, error) { return "s3cret", nil }})
		ch, _ := s.Challenge()
		c, _ := NewClient(ClientConfig{Protocol: "hdfs", ServerName: "0", Username: "alice", Password: "s3cret"})
		r, _ := c.Respond(ch)
		return s, string(r)
	}
	for name, edit := range map[string]func(string) string{
		"huge":    func(r string) string { return r + strings.Repeat(" ", MaxResponse) },
		"garbage": func(string) string { return `username="alice` },
	} {
		s, r := base()
		if _, err := s.Respond([]byte(edit(r))); err == nil {
			t.Errorf("%s: edited response accepted", name)
		}
	}
	// Each edit comes with a digest recomputed over the edited fields, so
	// only the check named by want can refuse it.
	for name, tc := range map[string]struct {
		edit map[string]string
		want string
	}{
		"digest-uri": {map[string]string{"digest-uri": "imap/0"}, "digest-uri"},
		"nonce":      {map[string]string{"nonce": "forged"}, "nonce mismatch"},
		"nc":         {map[string]string{"nc": "00000002"}, "nonce count"},
		"qop":        {map[string]string{"qop": AuthConf, "cipher": "rc4"}, "not one offered"},
		"authzid":    {map[string]string{"authzid": "root"}, "may not act as root"},
		"realm":      {map[string]string{"realm": "other"}, `realm "other"`},
	} {
		s, r := base()
		_, err := s.Respond(resign(t, r, "s3cret", tc.edit))
		if err == nil || errors.Is(err, ErrAuthentication) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: edited response: %v, want %q", name, err, tc.want)
		}
	}
	s, r := base()
	if _, err := s.Respond(resign(t, r, "s3cret", nil)); err != nil {
		t.Fatalf("re-signed, unedited response refused: %v", err)
	}
}

// resign applies edit to response r and recomputes its digest with pass
// over the edited fields, as a client that knows the password would.
func resign(t *testing.T, r, pass string, edit map[string]string) []byte {
	t.Helper()
	d, err := parseDirectives([]byte(r), MaxResponse)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range edit {
		d[k] = v
	}
	ss := &session{user: d["username"], realm: d["realm"], password: pass, nonce: d["nonce"], cnonce: d["cnonce"],
		authzid: d["authzid"], qop: d["qop"], digestURI: d["digest-uri"], cipher: d["cipher"], nc: d["nc"]}
	d["response"] = ss.digest(true)
	var parts []string
	for k, v := range d {
		parts = append(parts, k+"="+quote(v))
	}
	return []byte(strings.Join(parts, ","))
}

// An on-path attacker strips the challenge's cipher list down to rc4-40:
// neither side of a default configuration goes along.
func TestCipherStripping(t *testing.T) {
	newServer := func(ciphers []string) (*Server, []byte) {
		s, err := NewServer(ServerConfig{Protocol: "hdfs", ServerName: "0", QOPs: []string{AuthConf}, Ciphers: ciphers,
			Rand: fixedRand(1), Credentials: func(string) (string, error) { return "s3cret", nil }})
		if err != nil {
			t.Fatal(err)
		}
		ch, _ := s.Challenge()
		return s, ch
	}
	newClient := func(ciphers []string) *Client {
		c, err := NewClient(ClientConfig{Protocol: "hdfs", ServerName: "0", Username: "alice", Password: "s3cret", QOPs: []string{AuthConf}, Ciphers: ciphers})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	_, ch := newServer(nil)
	if !strings.Contains(string(ch), `cipher="rc4"`) {
		t.Fatalf("default challenge offers more than rc4: %s", ch)
	}
	stripped := []byte(strings.Replace(string(ch), `cipher="rc4"`, `cipher="rc4-40"`, 1))
	if _, err := newClient(nil).Respond(stripped); err == nil || !strings.Contains(err.Error(), "no common cipher") {
		t.Fatalf("client took a stripped cipher list: %v", err)
	}
	// A client that allows everything, tricked into rc4-40: the default
	// server refuses the cipher it did not offer.
	s, ch := newServer(nil)
	resp, err := newClient(Ciphers).Respond([]byte(strings.Replace(string(ch), `cipher="rc4"`, `cipher="rc4-40"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Respond(resp); err == nil || !strings.Contains(err.Error(), "was not offered") {
		t.Fatalf("server accepted rc4-40: %v", err)
	}
	// Configured on both sides, the weaker ciphers work; the strongest
	// common one is picked.
	for _, c := range [][]string{{"rc4-40"}, {"rc4-56", "rc4-40"}} {
		s, ch := newServer(c)
		cl := newClient(Ciphers)
		resp, err := cl.Respond(ch)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(resp), `cipher="`+c[0]+`"`) {
			t.Fatalf("%v: response %s", c, resp)
		}
		if _, err := s.Respond(resp); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
	}
	// A server offering only auth cannot be made to look as if the client
	// chose a qop it does not accept.
	if _, err := newClient(nil).Respond([]byte(`realm="0",nonce="abc",qop="auth",charset=utf-8,algorithm=md5-sess`)); err == nil {
		t.Fatal("client accepting only auth-conf took auth")
	}
	if _, err := NewClient(ClientConfig{Ciphers: []string{"des"}}); err == nil {
		t.Fatal("unknown cipher allowed")
	}
}

// The 2^32nd message would reuse sequence number 0: the layer fails.
func TestSequenceWrap(t *testing.T) {
	cs, ss := securityPair(t, AuthInt)
	cs.seqOut, ss.seqIn = 1<<32-1, 1<<32-1
	w, err := cs.Wrap([]byte("last"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Unwrap(w); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Wrap([]byte("wrapped")); err == nil || !strings.Contains(err.Error(), "exhausted") {
		t.Fatalf("wrap after 2^32 messages: %v", err)
	}
}

func TestParseDirectives(t *testing.T) {
	d, err := parseDirectives([]byte(` realm="a\"b" , nonce="n,1",qop="auth,auth-int",maxbuf=1024,,algorithm=md5-sess `), MaxChallenge)
	if err != nil || d["realm"] != `a"b` || d["nonce"] != "n,1" || d["qop"] != "auth,auth-int" || d["maxbuf"] != "1024" || d["algorithm"] != "md5-sess" {
		t.Fatalf("%v %v", d, err)
	}
	for _, bad := range []string{`a`, `a="x`, `=1`, `nonce=1,nonce=2`, `realm="a",realm="b"`, `nonce="x" qop="auth"`, `nonce=x qop=auth`, `nonce="x"qop="auth"`} {
		if _, err := parseDirectives([]byte(bad), MaxChallenge); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func securityPair(t *testing.T, qop string) (*Security, *Security) {
	srv, cl, err := pair(t, []string{qop}, []string{qop}, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	return cl.Security(), srv.Security()
}

func TestTamperAndReplay(t *testing.T) {
	for _, qop := range []string{AuthInt, AuthConf} {
		n := len("block data") + overhead // 26: body, MAC, type and sequence number
		for i := 0; i < n; i++ {          // flip each byte position in turn
			cs, ss := securityPair(t, qop)
			w, _ := cs.Wrap([]byte("block data"))
			if len(w) != n {
				t.Fatalf("wrapped message of %d bytes, want %d", len(w), n)
			}
			w[i] ^= 0x01
			if _, err := ss.Unwrap(w); err == nil {
				t.Fatalf("%s: byte %d flipped, accepted", qop, i)
			}
			if _, err := ss.Unwrap(w); err == nil {
				t.Fatalf("%s: layer usable after a failure", qop)
			}
		}
		cs, ss := securityPair(t, qop)
		w0, _ := cs.Wrap([]byte("first"))
		if _, err := ss.Unwrap(bytes.Clone(w0)); err != nil {
			t.Fatal(err)
		}
		if _, err := ss.Unwrap(w0); err == nil || !strings.Contains(err.Error(), "out of order") {
			t.Fatalf("%s: replayed message: %v", qop, err)
		}
		cs, ss = securityPair(t, qop)
		cs.Wrap([]byte("dropped"))
		w1, _ := cs.Wrap([]byte("second"))
		if _, err := ss.Unwrap(w1); err == nil {
			t.Fatalf("%s: message after a dropped one accepted", qop)
		}
	}
}

func TestConn(t *testing.T) {
	for _, qop := range []string{AuthInt, AuthConf} {
		cs, ss := securityPair(t, qop)
		a, b := net.Pipe()
		ca, cb := NewConn(a, cs), NewConn(b, ss)
		payload := bytes.Repeat([]byte("0123456789abcdef"), 1000) // larger than the server's maxbuf (4096): split
		errc := make(chan error, 1)
		go func() {
			_, err := ca.Write(payload)
			ca.Close()
			errc <- err
		}()
		got, err := io.ReadAll(cb)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && err != io.EOF {
			t.Fatalf("%s: read: %v", qop, err)
		}
		if !bytes.Equal(got, payload) {
			t.Fatalf("%s: got %d bytes, want %d", qop, len(got), len(payload))
		}
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

type rawConn struct {
	net.Conn
	r io.Reader
}

func (c rawConn) Read(p []byte) (int, error)      { return c.r.Read(p) }
func (c rawConn) SetReadDeadline(time.Time) error { return nil }

// A claimed length past maxbuf is refused before anything is allocated
// for it; a tampered frame fails the read.
func TestConnRefusesBadFrames(t *testing.T) {
	cs, ss := securityPair(t, AuthInt)
	c := NewConn(rawConn{r: bytes.NewReader([]byte{0x7f, 0xff, 0xff, 0xff})}, ss)
	if _, err := c.Read(make([]byte, 10)); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("huge frame: %v", err)
	}
	w, _ := cs.Wrap([]byte("hello"))
	w[2] ^= 0x20
	frame := append([]byte{0, 0, 0, byte(len(w))}, w...)
	c = NewConn(rawConn{r: bytes.NewReader(frame)}, ss)
	if _, err := c.Read(make([]byte, 10)); !errors.Is(err, ErrIntegrity) {
		t.Fatalf("tampered frame: %v", err)
	}
}

func FuzzParseDirectives(f *testing.F) {
	f.Add([]byte(`realm="0",nonce="abc",qop="auth",charset=utf-8,algorithm=md5-sess`))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseDirectives(b, MaxResponse)
		s, _ := NewServer(ServerConfig{Protocol: "hdfs", ServerName: "0", Credentials: func(string) (string, error) { return "p", nil }})
		s.Challenge()
		s.Respond(b)
		c, _ := NewClient(ClientConfig{Protocol: "hdfs", ServerName: "0", Username: "u", Password: "p"})
		c.Respond(b)
	})
}

// SetSendLimit lets whole packets go as one message to peers that take
// them; Conn then writes each Write as one frame.
func TestSendLimit(t *testing.T) {
	cs, ss := securityPair(t, AuthInt) // the server's maxbuf is 4096
	big := make([]byte, 70000)
	if _, err := cs.Wrap(big); err == nil {
		t.Fatal("wrapped past the peer's maxbuf")
	}
	cs.SetSendLimit(MaxMaxBuf)
	w, err := cs.Wrap(big)
	if err != nil || len(w) != len(big)+overhead {
		t.Fatalf("raised limit: %d, %v", len(w), err)
	}
	// The server, whose own maxbuf is 4096, refuses it.
	if _, err := ss.Unwrap(w); err == nil || !strings.Contains(err.Error(), "exceeds maxbuf") {
		t.Fatalf("oversized message: %v", err)
	}
}
