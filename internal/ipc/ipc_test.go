package ipc

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/ipcpb"
)

const testProtocol = "org.example.EchoProtocol"

// startServer runs a server with an echo protocol: "echo" returns the
// request's effectiveUser with the caller's user as realUser, "boom" panics,
// "fail" returns a FileNotFound error, "slow" waits for its realUser
// duration, "iecho" (Inline) returns its request.
func startServer(t testing.TB, cfg ServerConfig) (*Server, string) {
	t.Helper()
	s := NewServer(cfg)
	s.Register(testProtocol, map[string]Method{
		"echo": Unary(func(ctx context.Context, req *ipcpb.UserInformationProto) (*ipcpb.UserInformationProto, error) {
			c, _ := CallerFrom(ctx)
			return &ipcpb.UserInformationProto{EffectiveUser: req.EffectiveUser, RealUser: proto.String(c.User)}, nil
		}),
		"slow": Unary(func(ctx context.Context, req *ipcpb.UserInformationProto) (*ipcpb.UserInformationProto, error) {
			d, _ := time.ParseDuration(req.GetRealUser())
			time.Sleep(d)
			return req, nil
		}),
		"boom": Unary(func(ctx context.Context, req *ipcpb.UserInformationProto) (*ipcpb.UserInformationProto, error) {
			panic("kaboom")
		}),
		"fail": Unary(func(ctx context.Context, req *ipcpb.UserInformationProto) (*ipcpb.UserInformationProto, error) {
			return nil, Errorf(ClassFileNotFound, "File does not exist: %s", req.GetEffectiveUser())
		}),
		"iecho": Unary(func(ctx context.Context, req *ipcpb.UserInformationProto) (*ipcpb.UserInformationProto, error) {
			return req, nil
		}).Inline(),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return s, ln.Addr().String()
}

func newTestClient(t testing.TB, addr, user string) *Client {
	c := NewClient(ClientConfig{Addr: addr, User: user, Protocol: testProtocol})
	t.Cleanup(func() { c.Close() })
	return c
}

func echo(t testing.TB, c *Client, s string) {
	t.Helper()
	var resp ipcpb.UserInformationProto
	err := c.Call(context.Background(), "echo", &ipcpb.UserInformationProto{EffectiveUser: proto.String(s)}, &resp)
	if err != nil {
		t.Fatalf("echo %q: %v", s, err)
	}
	if resp.GetEffectiveUser() != s {
		t.Fatalf("echo %q returned %q", s, resp.GetEffectiveUser())
	}
}

func TestCallCarriesUser(t *testing.T) {
	_, addr := startServer(t, ServerConfig{})
	c := newTestClient(t, addr, "alice")
	var resp ipcpb.UserInformationProto
	if err := c.Call(context.Background(), "echo", &ipcpb.UserInformationProto{EffectiveUser: proto.String("x")}, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.GetRealUser() != "alice" {
		t.Fatalf("server saw user %q, want alice", resp.GetRealUser())
	}
}

func TestConcurrentCallsOnOneConnection(t *testing.T) {
	s, addr := startServer(t, ServerConfig{})
	c := newTestClient(t, addr, "alice")
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// Each call sleeps 200ms: served one at a time they would take 10 s.
			var resp ipcpb.UserInformationProto
			req := &ipcpb.UserInformationProto{EffectiveUser: proto.String(fmt.Sprint(i)), RealUser: proto.String("200ms")}
			if err := c.Call(context.Background(), "slow", req, &resp); err != nil {
				t.Error(err)
				return
			}
			if resp.GetEffectiveUser() != fmt.Sprint(i) {
				t.Errorf("call %d got answer for %s", i, resp.GetEffectiveUser())
			}
		}(i)
	}
	wg.Wait()
	if got := s.Stats().Connections.Load(); got != 1 {
		t.Errorf("%d connections, want 1", got)
	}
	if time.Since(start) > 8*time.Second {
		t.Errorf("50 slow calls took %v: calls were not concurrent", time.Since(start))
	}
}

func TestErrorsKeepConnection(t *testing.T) {
	_, addr := startServer(t, ServerConfig{})
	c := newTestClient(t, addr, "alice")
	ctx := context.Background()
	req := &ipcpb.UserInformationProto{EffectiveUser: proto.String("/nope")}
	var resp ipcpb.UserInformationProto

	err := c.Call(ctx, "fail", req, &resp)
	if !IsClass(err, ClassFileNotFound) || !strings.Contains(err.Error(), "/nope") {
		t.Fatalf("fail: got %v", err)
	}
	err = c.Call(ctx, "nosuch", req, &resp)
	var re *RemoteError
	if !errors.As(err, &re) || re.Class != ClassRPCNoSuchMethod || re.Code != int32(ipcpb.RpcResponseHeaderProto_ERROR_NO_SUCH_METHOD) {
		t.Fatalf("unknown method: got %#v", err)
	}
	err = c.Call(ctx, "boom", req, &resp)
	if !IsClass(err, ClassIOException) || !strings.Contains(err.Error(), "kaboom") {
		t.Fatalf("panic: got %v", err)
	}
	echo(t, c, "still alive")
}

func TestUnknownProtocol(t *testing.T) {
	_, addr := startServer(t, ServerConfig{})
	c := NewClient(ClientConfig{Addr: addr, User: "a", Protocol: "org.example.Nope"})
	defer c.Close()
	err := c.Call(context.Background(), "echo", &ipcpb.UserInformationProto{}, &ipcpb.UserInformationProto{})
	if !IsClass(err, ClassRPCNoSuchProtocol) {
		t.Fatalf("got %v", err)
	}
}

// rawConn opens a TCP connection and writes b.
func rawConn(t *testing.T, addr string, b []byte) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if _, err := nc.Write(b); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	return nc
}

// readFatal reads one response and checks it is FATAL with the given class,
// then checks the server closed the connection.
func readFatal(t *testing.T, nc net.Conn, class string) {
	t.Helper()
	frame, err := readFrame(nc, 1<<20, nil)
	if err != nil {
		t.Fatalf("reading fatal response: %v", err)
	}
	var hdr ipcpb.RpcResponseHeaderProto
	if _, err := unmarshalDelimited(frame, &hdr); err != nil {
		t.Fatal(err)
	}
	if hdr.GetStatus() != ipcpb.RpcResponseHeaderProto_FATAL || hdr.GetExceptionClassName() != class {
		t.Fatalf("got status %v class %q msg %q, want FATAL %s", hdr.GetStatus(), hdr.GetExceptionClassName(), hdr.GetErrorMsg(), class)
	}
	if n, err := nc.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("connection not closed after FATAL: n=%d err=%v", n, err)
	}
}

func contextFrame(t *testing.T) []byte {
	rpcHdr := &ipcpb.RpcRequestHeaderProto{RpcKind: ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(), CallId: proto.Int32(-3), ClientId: []byte("0123456789abcdef")}
	cc := &ipcpb.IpcConnectionContextProto{UserInfo: &ipcpb.UserInformationProto{EffectiveUser: proto.String("mallory")}, Protocol: proto.String(testProtocol)}
	b, err := appendFrame(nil, rpcHdr, cc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var goodHeader = []byte{'h', 'r', 'p', 'c', 9, 0, 0}

func TestMalformedInputDoesNotStopServer(t *testing.T) {
	s, addr := startServer(t, ServerConfig{MaxDataLength: 1 << 20})
	good := newTestClient(t, addr, "alice")
	echo(t, good, "before")

	t.Run("wrong version", func(t *testing.T) {
		nc := rawConn(t, addr, []byte{'h', 'r', 'p', 'c', 7, 0, 0})
		readFatal(t, nc, ClassVersionMismatch)
	})
	t.Run("wrong magic", func(t *testing.T) {
		nc := rawConn(t, addr, []byte("xxxxxxx"))
		readFatal(t, nc, ClassVersionMismatch)
	})
	t.Run("http", func(t *testing.T) {
		nc := rawConn(t, addr, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		b, _ := io.ReadAll(nc)
		if !bytes.HasPrefix(b, []byte("HTTP/1.1 404")) {
			t.Fatalf("got %q", b)
		}
	})
	t.Run("oversize frame", func(t *testing.T) {
		b := append([]byte{}, goodHeader...)
		b = binary.BigEndian.AppendUint32(b, 1<<30)
		nc := rawConn(t, addr, b)
		readFatal(t, nc, ClassRPCServerException)
	})
	t.Run("garbage frame", func(t *testing.T) {
		b := append([]byte{}, goodHeader...)
		b = binary.BigEndian.AppendUint32(b, 5)
		b = append(b, 0xff, 0xff, 0xff, 0xff, 0xff)
		nc := rawConn(t, addr, b)
		readFatal(t, nc, ClassRPCServerException)
	})
	t.Run("call before context", func(t *testing.T) {
		rpcHdr := &ipcpb.RpcRequestHeaderProto{RpcKind: ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(), CallId: proto.Int32(1), ClientId: []byte("x")}
		b, _ := appendFrame(append([]byte{}, goodHeader...), rpcHdr)
		nc := rawConn(t, addr, b)
		readFatal(t, nc, ClassRPCServerException)
	})
	t.Run("truncated frame then close", func(t *testing.T) {
		b := append([]byte{}, goodHeader...)
		b = append(b, contextFrame(t)...)
		b = binary.BigEndian.AppendUint32(b, 100)
		b = append(b, 1, 2, 3)
		nc := rawConn(t, addr, b)
		nc.(*net.TCPConn).CloseWrite()
		if _, err := io.ReadAll(nc); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("truncated header", func(t *testing.T) {
		nc := rawConn(t, addr, []byte("hr"))
		nc.(*net.TCPConn).CloseWrite()
		io.ReadAll(nc)
	})
	t.Run("writable rpc kind", func(t *testing.T) {
		b := append(append([]byte{}, goodHeader...), contextFrame(t)...)
		rpcHdr := &ipcpb.RpcRequestHeaderProto{RpcKind: ipcpb.RpcKindProto_RPC_WRITABLE.Enum(), CallId: proto.Int32(1), ClientId: []byte("x")}
		b, _ = appendFrame(b, rpcHdr)
		nc := rawConn(t, addr, b)
		readFatal(t, nc, ClassRPCServerException)
	})
	t.Run("bad request body", func(t *testing.T) {
		b := append(append([]byte{}, goodHeader...), contextFrame(t)...)
		rpcHdr := &ipcpb.RpcRequestHeaderProto{RpcKind: ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(), CallId: proto.Int32(7), ClientId: []byte("x")}
		reqHdr := &ipcpb.RequestHeaderProto{MethodName: proto.String("echo"), DeclaringClassProtocolName: proto.String(testProtocol), ClientProtocolVersion: proto.Uint64(1)}
		b, _ = appendFrame(b, rpcHdr, reqHdr)
		// Replace the frame's tail with a delimited garbage message.
		b = append(b[:len(b)-0], 0)
		nc := rawConn(t, addr, b[:len(b)-1])
		// A request without a body is a valid empty request: expect SUCCESS
		// with callId 7.
		frame, err := readFrame(nc, 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		var hdr ipcpb.RpcResponseHeaderProto
		unmarshalDelimited(frame, &hdr)
		if hdr.GetCallId() != 7 || hdr.GetStatus() != ipcpb.RpcResponseHeaderProto_SUCCESS {
			t.Fatalf("got %v", &hdr)
		}
	})

	echo(t, good, "after")
	c2 := newTestClient(t, addr, "bob")
	echo(t, c2, "new client")
	if s.Stats().Rejected.Load() < 5 {
		t.Errorf("rejected = %d, want ≥ 5", s.Stats().Rejected.Load())
	}
}

func TestSASLNegotiateFallsBackToSimple(t *testing.T) {
	_, addr := startServer(t, ServerConfig{})
	b := []byte{'h', 'r', 'p', 'c', 9, 0, AuthSASL}
	saslHdr := &ipcpb.RpcRequestHeaderProto{RpcKind: ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(), CallId: proto.Int32(-33), ClientId: []byte{}}
	b, _ = appendFrame(b, saslHdr, &ipcpb.RpcSaslProto{State: ipcpb.RpcSaslProto_NEGOTIATE.Enum()})
	nc := rawConn(t, addr, b)
	frame, err := readFrame(nc, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	var hdr ipcpb.RpcResponseHeaderProto
	rest, err := unmarshalDelimited(frame, &hdr)
	if err != nil {
		t.Fatal(err)
	}
	var sasl ipcpb.RpcSaslProto
	if _, err := unmarshalDelimited(rest, &sasl); err != nil {
		t.Fatal(err)
	}
	if int32(hdr.GetCallId()) != -33 || sasl.GetState() != ipcpb.RpcSaslProto_SUCCESS {
		t.Fatalf("got header %v sasl %v", &hdr, &sasl)
	}
}

func TestClientReconnectsAfterServerRestart(t *testing.T) {
	s, addr := startServer(t, ServerConfig{})
	c := newTestClient(t, addr, "alice")
	echo(t, c, "one")
	s.Close()
	// The first call after the restart may fail on the dead connection.
	s2, _ := startServerAt(t, addr)
	defer s2.Close()
	var err error
	for i := 0; i < 3; i++ {
		var resp ipcpb.UserInformationProto
		if err = c.Call(context.Background(), "echo", &ipcpb.UserInformationProto{EffectiveUser: proto.String("two")}, &resp); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("client did not reconnect: %v", err)
	}
}

func startServerAt(t *testing.T, addr string) (*Server, string) {
	s := NewServer(ServerConfig{})
	s.Register(testProtocol, map[string]Method{
		"echo": Unary(func(ctx context.Context, req *ipcpb.UserInformationProto) (*ipcpb.UserInformationProto, error) {
			return req, nil
		}),
	})
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	return s, addr
}

// FuzzServerConn feeds arbitrary bytes, after a valid connection header
// and context, to a server connection: it must never panic or hang, and
// must never allocate more than the frame limit.
func FuzzServerConn(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff, 0xff})
	rpcHdr := &ipcpb.RpcRequestHeaderProto{RpcKind: ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(), CallId: proto.Int32(1), ClientId: []byte("x")}
	reqHdr := &ipcpb.RequestHeaderProto{MethodName: proto.String("echo"), DeclaringClassProtocolName: proto.String(testProtocol), ClientProtocolVersion: proto.Uint64(1)}
	seed, _ := appendFrame(nil, rpcHdr, reqHdr, &ipcpb.UserInformationProto{EffectiveUser: proto.String("x")})
	f.Add(seed)
	f.Add(seed[:len(seed)-3])
	s := NewServer(ServerConfig{MaxDataLength: 1 << 16, HeaderTimeout: time.Second})
	s.Register(testProtocol, map[string]Method{
		"echo": Unary(func(ctx context.Context, req *ipcpb.UserInformationProto) (*ipcpb.UserInformationProto, error) {
			return req, nil
		}),
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := net.Pipe()
		c := s.newConn(server)
		done := make(chan struct{})
		go func() { c.serve(); close(done) }()
		go io.Copy(io.Discard, client)
		in := append(append(append([]byte{}, goodHeader...), contextFrame(&testing.T{})...), data...)
		client.SetWriteDeadline(time.Now().Add(2 * time.Second))
		client.Write(in)
		client.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("server connection did not finish")
		}
	})
}

func TestDecodeRequestRejectsGarbage(t *testing.T) {
	for _, b := range [][]byte{{0xff}, {0x05, 1, 2}, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}} {
		if _, err := decodeRequest(b); err == nil {
			t.Errorf("decodeRequest(%x) accepted garbage", b)
		}
	}
}
