package datatransfer

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/digestmd5"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

var testToken = &hdfspb.TokenProto{Identifier: []byte("identifier-bytes"), Password: []byte("pw-bytes")}

func testServer(qops []string) *SASLServer {
	return &SASLServer{QOPs: qops, TokenPassword: func(id []byte) ([]byte, error) {
		if string(id) != "identifier-bytes" {
			return nil, fmt.Errorf("Block token with %q is expired.", id)
		}
		return []byte("pw-bytes"), nil
	}}
}

// handshake runs both sides over a pipe; the server echoes one message.
func runPair(t *testing.T, srv *SASLServer, cl *SASLClient, tok *hdfspb.TokenProto) (clientErr, serverErr error, user string) {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	type res struct {
		user string
		err  error
	}
	done := make(chan res, 1)
	go func() {
		c, u, err := srv.Handshake(b)
		if err == nil {
			buf := make([]byte, 5)
			if _, err = io.ReadFull(c, buf); err == nil {
				_, err = c.Write(bytes.ToUpper(buf))
			}
		}
		b.Close()
		done <- res{u, err}
	}()
	c, err := cl.Handshake(context.Background(), a, tok)
	if err == nil {
		if _, err = c.Write([]byte("hello")); err == nil {
			buf := make([]byte, 5)
			if _, err = io.ReadFull(c, buf); err == nil && string(buf) != "HELLO" {
				err = fmt.Errorf("echo %q", buf)
			}
		}
	} else {
		a.Close()
	}
	r := <-done
	return err, r.err, r.user
}

func TestSASLHandshakeEachQOP(t *testing.T) {
	for _, tc := range []struct {
		server, client string
		suites         string
	}{
		{"authentication", "authentication", ""},
		{"integrity", "integrity", ""},
		{"privacy", "privacy", ""},
		{"privacy", "privacy", AESCTRNoPadding},
		{"privacy,integrity", "integrity,authentication", ""},
	} {
		sq, _ := ParseProtection(tc.server)
		cq, _ := ParseProtection(tc.client)
		srv := testServer(sq)
		srv.CipherSuites = tc.suites
		cerr, serr, user := runPair(t, srv, &SASLClient{QOPs: cq, CipherSuites: tc.suites}, testToken)
		if cerr != nil || serr != nil {
			t.Fatalf("%+v: client %v, server %v", tc, cerr, serr)
		}
		if user != "aWRlbnRpZmllci1ieXRlcw==" {
			t.Errorf("username %q", user)
		}
	}
}

func TestSASLRefusals(t *testing.T) {
	// A forged token: the DataNode answers ERROR with accessTokenError,
	// which the client's errors.Is(ErrAccessToken) sees.
	bad := &hdfspb.TokenProto{Identifier: []byte("forged"), Password: []byte("x")}
	cerr, serr, _ := runPair(t, testServer([]string{digestmd5.Auth}), &SASLClient{QOPs: []string{digestmd5.Auth}}, bad)
	if !errors.Is(cerr, ErrAccessToken) || !strings.Contains(cerr.Error(), "is expired") || serr == nil {
		t.Fatalf("forged token: client %v, server %v", cerr, serr)
	}
	// A right identifier with a wrong password fails the digest.
	wrong := &hdfspb.TokenProto{Identifier: testToken.Identifier, Password: []byte("guess")}
	cerr, serr, _ = runPair(t, testServer([]string{digestmd5.Auth}), &SASLClient{QOPs: []string{digestmd5.Auth}}, wrong)
	if cerr == nil || !strings.Contains(cerr.Error(), "Mismatched response") || serr == nil {
		t.Fatalf("wrong password: client %v, server %v", cerr, serr)
	}
	// The client wants privacy, the server offers authentication only.
	cerr, _, _ = runPair(t, testServer([]string{digestmd5.Auth}), &SASLClient{QOPs: []string{digestmd5.AuthConf}}, testToken)
	if cerr == nil || !strings.Contains(cerr.Error(), "no common qop") {
		t.Fatalf("qop mismatch: %v", cerr)
	}
}

// A client without SASL sends an op header first: MagicError.
func TestSASLNoMagic(t *testing.T) {
	a, b := net.Pipe()
	go func() {
		a.Write([]byte{0x00, 0x1c, byte(OpReadBlock), 0x20}) // version, op, length: a plain op
		a.Close()
	}()
	_, _, err := testServer([]string{digestmd5.Auth}).Handshake(b)
	var me *MagicError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "instead of deadbeef") {
		t.Fatalf("no magic: %v", err)
	}
}

// Hostile sizes are refused before allocation; a silent peer is cut off
// by the caller's deadline.
func TestSASLBounds(t *testing.T) {
	a, b := net.Pipe()
	go func() {
		msg := binary.BigEndian.AppendUint32(nil, SASLMagic)
		msg = binary.AppendUvarint(msg, 1<<30)
		a.Write(msg)
	}()
	b.SetDeadline(time.Now().Add(time.Second)) // the DataNode's handshake deadline
	_, _, err := testServer([]string{digestmd5.Auth}).Handshake(b)
	if !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("huge message: %v", err)
	}
	a.Close()
	a, b = net.Pipe()
	defer a.Close()
	b.SetDeadline(time.Now().Add(50 * time.Millisecond))
	if _, _, err := testServer([]string{digestmd5.Auth}).Handshake(b); err == nil {
		t.Fatal("silent peer: no error")
	}
}

// A byte flipped on the wire of an integrity-protected connection is
// detected by the reader.
func TestSASLTamperedStream(t *testing.T) {
	a, b := net.Pipe()
	mitmA, mitmB := net.Pipe()
	srv := testServer([]string{digestmd5.AuthInt})
	serr := make(chan error, 1)
	go func() {
		c, _, err := srv.Handshake(b)
		if err == nil {
			_, err = io.ReadAll(c)
		}
		serr <- err
	}()
	// Relay mitmB <-> a, flipping one byte of the first post-handshake
	// client frame.
	flip := make(chan struct{})
	go func() { io.Copy(mitmB, a) }()
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := mitmB.Read(buf)
			if n > 0 {
				select {
				case <-flip:
					buf[n/2] ^= 1 // inside the message, past the length
				default:
				}
				a.Write(buf[:n])
			}
			if err != nil {
				a.Close()
				return
			}
		}
	}()
	c, err := (&SASLClient{QOPs: []string{digestmd5.AuthInt}}).Handshake(context.Background(), mitmA, testToken)
	if err != nil {
		t.Fatal(err)
	}
	close(flip)
	c.Write([]byte("some block data"))
	err = <-serr
	if !errors.Is(err, digestmd5.ErrIntegrity) {
		t.Fatalf("tampered stream: %v", err)
	}
	mitmA.Close()
}

// scriptConn is a connection that reads a fixed client script and
// discards what the server writes.
type scriptConn struct {
	net.Conn
	r io.Reader
}

func (c scriptConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c scriptConn) Write(p []byte) (int, error) { return len(p), nil }

// The server's side of the handshake reads whatever a peer sends without
// panicking, allocating past its bounds or accepting it.
func FuzzSASLServer(f *testing.F) {
	first, _ := appendDelimited(binary.BigEndian.AppendUint32(nil, SASLMagic), success([]byte{}))
	resp, _ := appendDelimited(nil, success([]byte(`username="aWQ=",realm="0",nonce="x",cnonce="y",nc=00000001,qop=auth,digest-uri="hdfs/0",response=00000000000000000000000000000000`)))
	f.Add(append(append([]byte{}, first...), resp...))
	f.Add([]byte{0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, qops := range [][]string{{digestmd5.Auth}, {digestmd5.AuthConf}} {
			srv := testServer(qops)
			if _, _, err := srv.Handshake(scriptConn{r: bytes.NewReader(b)}); err == nil {
				t.Fatalf("a scripted client without the password passed: %q", b)
			}
		}
	})
}
