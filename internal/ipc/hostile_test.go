package ipc

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/ipcpb"
)

// callFrame is one "echo" request frame with the given call id and a
// 64 KiB argument, so that its replies fill socket buffers quickly.
func callFrame(t *testing.T, callID int32) []byte { return methodFrame(t, "echo", callID) }

// methodFrame is callFrame calling method.
func methodFrame(t *testing.T, method string, callID int32) []byte {
	t.Helper()
	rpcHdr := &ipcpb.RpcRequestHeaderProto{RpcKind: ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(), CallId: proto.Int32(callID), ClientId: []byte("0123456789abcdef")}
	reqHdr := &ipcpb.RequestHeaderProto{MethodName: proto.String(method), DeclaringClassProtocolName: proto.String(testProtocol), ClientProtocolVersion: proto.Uint64(1)}
	b, err := appendFrame(nil, rpcHdr, reqHdr, &ipcpb.UserInformationProto{EffectiveUser: proto.String(string(make([]byte, 64<<10)))})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A connection that pipelines more calls than the server serves at once
// and never reads a reply must not stall anybody else's calls, and the
// server must drop it once a reply cannot be written in time: calls run
// on workers ("echo") and on the connection's reader ("iecho", Inline).
func TestClientThatNeverReadsDoesNotStallOthers(t *testing.T) {
	for _, method := range []string{"echo", "iecho"} {
		t.Run(method, func(t *testing.T) { testClientThatNeverReads(t, method) })
	}
}

func testClientThatNeverReads(t *testing.T, method string) {
	s, addr := startServer(t, ServerConfig{MaxInFlight: 16, MaxConnInFlight: 8, WriteTimeout: 300 * time.Millisecond})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// A small receive buffer so that the replies fill it quickly.
	nc.(*net.TCPConn).SetReadBuffer(4096)
	nc.Write(goodHeader)
	nc.Write(contextFrame(t))
	// 1,100 calls in the background (the writes block once the server
	// stops reading this connection); replies are never read.
	go func() {
		bw := bufio.NewWriter(nc)
		for i := range 1100 {
			if _, err := bw.Write(methodFrame(t, method, int32(i))); err != nil {
				return
			}
			if method == "iecho" {
				// One at a time, so that the reader finds nothing
				// else buffered and runs each call itself.
				if bw.Flush() != nil {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}
		bw.Flush()
	}()
	time.Sleep(200 * time.Millisecond)

	good := newTestClient(t, addr, "alice")
	for i := range 50 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var resp ipcpb.UserInformationProto
		err := good.Call(ctx, method, &ipcpb.UserInformationProto{EffectiveUser: proto.String("ok")}, &resp)
		cancel()
		if err != nil {
			t.Fatalf("call %d of a well-behaved client while another never reads: %v", i, err)
		}
	}
	// The server gives up on the reader that does not read.
	deadline := time.Now().Add(10 * time.Second)
	for s.Stats().SlowReaders.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the connection that never reads its replies was not closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A claimed frame length costs memory only as its bytes arrive.
func TestFrameAllocatedAsBytesArrive(t *testing.T) {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], 100<<20)
	r := io.MultiReader(bytesReader(hdr[:]), bytesReader(make([]byte, 10)))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := readFrame(r, 128<<20, nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v, want unexpected EOF", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Fatalf("a 100 MiB claim with 10 bytes sent allocated %d bytes", got)
	}

	// A frame that does arrive is read whole, across several chunks.
	want := make([]byte, 3*frameChunk+17)
	for i := range want {
		want[i] = byte(i)
	}
	binary.BigEndian.PutUint32(hdr[:], uint32(len(want)))
	got, err := readFrame(io.MultiReader(bytesReader(hdr[:]), bytesReader(want)), 128<<20, nil)
	if err != nil || string(got) != string(want) {
		t.Fatalf("multi-chunk frame: err %v, %d bytes", err, len(got))
	}
}

type sliceReader struct{ b []byte }

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

func bytesReader(b []byte) io.Reader { return &sliceReader{b} }

// A connection that stops in the middle of a frame is closed after the
// idle timeout, even when idle connections are otherwise kept.
func TestStalledFrameIsDropped(t *testing.T) {
	s, addr := startServer(t, ServerConfig{IdleTimeout: 200 * time.Millisecond})
	var claim [4]byte
	binary.BigEndian.PutUint32(claim[:], 100<<20)
	nc := rawConn(t, addr, append(append(append(goodHeader, contextFrame(t)...), claim[:]...), "ten bytes!"...))
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("stalled connection: read got %v, want EOF (closed by the server)", err)
	}
	if s.Stats().Idle.Load() != 1 {
		t.Fatalf("idle closes = %d, want 1", s.Stats().Idle.Load())
	}
	echo(t, newTestClient(t, addr, "alice"), "still serving")
}

// An Inline call's connection that stops in the middle of its next
// request, after the call, is closed after the idle timeout; the call was
// answered and other clients' Inline calls are served meanwhile.
func TestStalledAfterInlineCallIsDropped(t *testing.T) {
	s, addr := startServer(t, ServerConfig{IdleTimeout: 200 * time.Millisecond})
	var claim [4]byte
	binary.BigEndian.PutUint32(claim[:], 1000)
	// The call alone, so that it runs on the reader; then the stall.
	nc := rawConn(t, addr, append(append(goodHeader, contextFrame(t)...), methodFrame(t, "iecho", 1)...))
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	frame, err := readFrame(nc, 1<<20, nil)
	if err != nil {
		t.Fatalf("the Inline call before the stall: %v", err)
	}
	var hdr ipcpb.RpcResponseHeaderProto
	if _, err := unmarshalDelimited(frame, &hdr); err != nil || hdr.GetStatus() != ipcpb.RpcResponseHeaderProto_SUCCESS || hdr.GetCallId() != 1 {
		t.Fatalf("the Inline call before the stall: %v, %v", err, &hdr)
	}
	if _, err := nc.Write(append(claim[:], "ten bytes!"...)); err != nil {
		t.Fatal(err)
	}
	good := newTestClient(t, addr, "alice")
	var resp ipcpb.UserInformationProto
	if err := good.Call(context.Background(), "iecho", &ipcpb.UserInformationProto{EffectiveUser: proto.String("meanwhile")}, &resp); err != nil || resp.GetEffectiveUser() != "meanwhile" {
		t.Fatalf("another client's Inline call during the stall: %v %q", err, resp.GetEffectiveUser())
	}
	if _, err := nc.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("stalled connection: read got %v, want EOF (closed by the server)", err)
	}
	if s.Stats().Idle.Load() != 1 {
		t.Fatalf("idle closes = %d, want 1", s.Stats().Idle.Load())
	}
	echo(t, good, "still serving")
}

// Idle connections hold no pooled frame buffer, on either side: a
// server's reader and a client's take one only once a frame's length has
// arrived (thousands of idle connections would otherwise pin a buffer,
// up to maxPooledFrame, each).
func TestIdleConnectionsHoldNoPooledBuffers(t *testing.T) {
	_, addr := startServer(t, ServerConfig{})
	countBuffers.Store(true)
	defer countBuffers.Store(false)
	base := buffersOut.Load()
	const n = 40
	for i := range n {
		c := newTestClient(t, addr, "alice")
		echo(t, c, fmt.Sprint("call ", i))
		var resp ipcpb.UserInformationProto
		if err := c.Call(context.Background(), "iecho", &ipcpb.UserInformationProto{EffectiveUser: proto.String("x")}, &resp); err != nil {
			t.Fatal(err)
		}
	}
	// Let every reader, both sides, come back to wait for its next frame.
	time.Sleep(200 * time.Millisecond)
	// Up to a few of other tests' goroutines' buffers may be counted.
	if out := buffersOut.Load() - base; out > n/4 {
		t.Fatalf("%d pooled buffers out with %d idle connections (server and client ends)", out, n)
	}
}

// Idle connections are kept while few are open (clients such as
// colinmarc/hdfs do not reconnect) and closed past ipc.client.idlethreshold.
func TestIdleConnections(t *testing.T) {
	s, addr := startServer(t, ServerConfig{IdleTimeout: 100 * time.Millisecond})
	c := newTestClient(t, addr, "alice")
	echo(t, c, "one")
	time.Sleep(400 * time.Millisecond)
	if n := s.Stats().Idle.Load(); n != 0 {
		t.Fatalf("an idle connection below the threshold was closed (%d)", n)
	}
	echo(t, c, "two")

	s2, addr2 := startServer(t, ServerConfig{IdleTimeout: 100 * time.Millisecond, IdleThreshold: -1})
	nc := rawConn(t, addr2, append(goodHeader, contextFrame(t)...))
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle connection over the threshold: read got %v, want EOF", err)
	}
	if s2.Stats().Idle.Load() != 1 {
		t.Fatalf("idle closes = %d, want 1", s2.Stats().Idle.Load())
	}
}

// Connections past ipc.server.max.connections are closed at once.
func TestConnectionCap(t *testing.T) {
	s, addr := startServer(t, ServerConfig{MaxConnections: 2})
	a, b := newTestClient(t, addr, "a"), newTestClient(t, addr, "b")
	echo(t, a, "a")
	echo(t, b, "b")
	nc := rawConn(t, addr, goodHeader)
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); err == nil {
		t.Fatal("a third connection was served past a cap of 2")
	}
	if s.Stats().Rejected.Load() != 1 {
		t.Fatalf("rejected = %d, want 1", s.Stats().Rejected.Load())
	}
	echo(t, a, "a again")
}

// A server closed before Serve runs still releases the listener's address.
func TestCloseBeforeServeReleasesListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(ServerConfig{})
	s.Close()
	if err := s.Serve(ln); err == nil {
		t.Fatal("Serve on a closed server returned nil")
	}
	again, err := net.Listen("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("the address is still taken: %v", err)
	}
	again.Close()
}
