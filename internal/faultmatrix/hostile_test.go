package faultmatrix

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/proto/ipcpb"
	"github.com/stratafs/strata/internal/testcluster"
)

const clientProtocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

// rpcFrame is one Hadoop IPC request frame: length, then the
// varint-delimited RPC header, request header and request.
func rpcFrame(callID int32, method string, req proto.Message) []byte {
	msgs := []proto.Message{
		&ipcpb.RpcRequestHeaderProto{RpcKind: ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
			RpcOp: ipcpb.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(), CallId: proto.Int32(callID), ClientId: []byte("fault-matrix-001")},
	}
	if callID == -3 {
		msgs = append(msgs, &ipcpb.IpcConnectionContextProto{UserInfo: &ipcpb.UserInformationProto{EffectiveUser: proto.String("mallory")},
			Protocol: proto.String(clientProtocol)})
	} else {
		msgs = append(msgs, &ipcpb.RequestHeaderProto{MethodName: proto.String(method),
			DeclaringClassProtocolName: proto.String(clientProtocol), ClientProtocolVersion: proto.Uint64(1)}, req)
	}
	b := []byte{0, 0, 0, 0}
	for _, m := range msgs {
		mb, _ := proto.Marshal(m)
		b = protowire.AppendVarint(b, uint64(len(mb)))
		b = append(b, mb...)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// rpcConn is a raw connection to the NameNode past the connection
// header and context.
func rpcConn(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	tc := nc.(*net.TCPConn)
	tc.SetReadBuffer(4096)
	tc.Write(append([]byte("hrpc\x09\x00\x00"), rpcFrame(-3, "", nil)...))
	return tc
}

func mkdirReq(p string) proto.Message {
	return &hdfspb.MkdirsRequestProto{Src: proto.String(p), Masked: &hdfspb.FsPermissionProto{Perm: proto.Uint32(0o755)}, CreateParent: proto.Bool(true)}
}

// serves checks that a well-behaved client still gets a mutation, a
// read and a block write/read through within 15 s, and that every daemon
// still runs; it returns the first failure.
func serves(ctx context.Context, c *testcluster.Processes, cl *hdfs.Client, tag string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	p := "/good/" + tag
	if err := cl.Mkdirs(ctx, p, 0o755); err != nil {
		return fmt.Errorf("mkdir: %w", err)
	}
	if err := writeFile(ctx, cl, p+"/f", content(p, 100<<10), 1, 1<<20); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	got, err := readFile(ctx, cl, p+"/f")
	if err != nil || string(got) != string(content(p, 100<<10)) {
		return fmt.Errorf("read back: %d bytes, %v", len(got), err)
	}
	if !c.NameNodeProcess().Running() {
		return fmt.Errorf("the NameNode exited")
	}
	if !c.DataNodeProcess(0).Running() {
		return fmt.Errorf("the DataNode exited")
	}
	return nil
}

// Hostile and careless clients of every port a cluster listens on: the
// daemons stay up and keep serving a well-behaved client while they
// hang up mid-call, never read replies or send garbage.
func TestHostileClients(t *testing.T) {
	t.Parallel()
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1, Volumes: disk, Conf: map[string]string{"dfs.replication": "1"}})
	ctx := ctxT(t)
	cl := client(t, c)
	nnHTTP, dnXfer, dnHTTP := c.NameNodeHTTPAddr(), c.DataNodeAddr(0), c.DataNodeHTTPAddr(0)
	if err := serves(ctx, c, cl, "before"); err != nil {
		t.Fatal(err)
	}
	// The raw connections act as "mallory", who may write here.
	if err := cl.Mkdirs(ctx, "/hostile", 0o777); err != nil {
		t.Fatal(err)
	}
	if err := cl.SetPermission(ctx, "/hostile", 0o777); err != nil {
		t.Fatal(err)
	}

	t.Run("ipc never reads", func(t *testing.T) {
		r := record(t, "client never reads replies (NameNode IPC)")
		// Replies of some 30 KiB each: a listing of 100 long names.
		long := strings.Repeat("n", 200)
		for i := 0; i < 100; i++ {
			if err := cl.Mkdirs(ctx, fmt.Sprintf("/wide/%03d-%s", i, long), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		r.Running = "one connection sends 1,100 getListing calls (~30 KiB replies) and never reads; a well-behaved client alongside"
		nc := rpcConn(t, c.Addr())
		go func() {
			bw := bufio.NewWriter(nc)
			req := &hdfspb.GetListingRequestProto{Src: proto.String("/wide"), StartAfter: []byte{}, NeedLocation: proto.Bool(false)}
			for i := 0; i < 1100; i++ {
				if _, err := bw.Write(rpcFrame(int32(i), "getListing", req)); err != nil {
					return
				}
			}
			bw.Flush()
		}()
		time.Sleep(500 * time.Millisecond)
		t0 := time.Now()
		err := serves(ctx, c, cl, "never-reads")
		r.Acked = "the well-behaved client's calls"
		if err != nil {
			t.Fatalf("while a client never reads: %v", err)
		}
		r.Recover = since(t0) + " for the good client's calls meanwhile"
		r.Survived = "NameNode up; other clients served while the reader stalled"
	})

	t.Run("xfer never reads", func(t *testing.T) {
		r := record(t, "readers that never read (DataNode transfer)")
		const size = 4 << 20
		if err := writeFile(ctx, cl, "/stall", content("/stall", size), 1, 8<<20); err != nil {
			t.Fatal(err)
		}
		n := 20 * scale()
		r.Running = fmt.Sprintf("%d readers of a 4 MiB block that read 1 byte and stop; a well-behaved client alongside", n)
		for i := 0; i < n; i++ {
			f, err := cl.OpenFile(ctx, "/stall")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if _, err := f.Read(make([]byte, 1)); err != nil {
				t.Fatal(err)
			}
		}
		t0 := time.Now()
		if err := serves(ctx, c, cl, "xfer-stalled"); err != nil {
			t.Fatalf("while %d readers stall: %v", n, err)
		}
		got, err := readFile(ctx, cl, "/stall")
		if err != nil || string(got) != string(content("/stall", size)) {
			t.Fatalf("a full read of the block the stalled readers hold: %d bytes, %v", len(got), err)
		}
		r.Acked = "the well-behaved client's calls"
		r.Recover = since(t0) + " for the good client's write and reads meanwhile"
		r.Survived = "DataNode up; the same block and new ones served to others"
	})

	t.Run("garbage", func(t *testing.T) {
		r := record(t, "garbage to the NameNode IPC, DataNode transfer and HTTP ports")
		junk := make([]byte, 64<<10)
		for i := range junk {
			junk[i] = byte(i*131 + i>>7)
		}
		oversize := binary.BigEndian.AppendUint32([]byte("hrpc\x09\x00\x00"), 0x7fffffff)
		inputs := []struct {
			port, addr, what string
			b                []byte
		}{
			{"ipc", c.Addr(), "random bytes", junk},
			{"ipc", c.Addr(), "wrong version", []byte("hrpc\x04\x00\x00")},
			{"ipc", c.Addr(), "2 GiB frame claimed", oversize},
			{"ipc", c.Addr(), "bad varint", append([]byte("hrpc\x09\x00\x00"), 0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff, 0xff)},
			{"ipc", c.Addr(), "call before context", append([]byte("hrpc\x09\x00\x00"), rpcFrame(1, "mkdirs", mkdirReq("/x"))...)},
			{"xfer", dnXfer, "random bytes", junk},
			{"xfer", dnXfer, "WRITE_BLOCK with a garbage body", append([]byte{0, 28, 80, 0xff, 0xff, 0xff, 0xff, 0x0f}, junk[:1000]...)},
			{"xfer", dnXfer, "READ_BLOCK of a huge length", []byte{0, 28, 81, 0x7f}},
			{"xfer", dnXfer, "wrong version", []byte{0, 99, 81, 0, 0, 0}},
			{"nn-http", nnHTTP, "random bytes", junk},
			{"nn-http", nnHTTP, "1 MiB header", []byte("GET /status HTTP/1.1\r\nX: " + strings.Repeat("a", 1<<20) + "\r\n\r\n")},
			{"nn-http", nnHTTP, "bad request line", []byte("\x00\x01 / HTTP/9.9\r\n\r\n")},
			{"nn-http", nnHTTP, "webhdfs garbage", []byte("GET /webhdfs/v1/%ff%00?op=\x7f HTTP/1.1\r\nHost: x\r\n\r\n")},
			{"dn-http", dnHTTP, "random bytes", junk},
			{"dn-http", dnHTTP, "1 MiB header", []byte("GET /status HTTP/1.1\r\nX: " + strings.Repeat("a", 1<<20) + "\r\n\r\n")},
			{"dn-http", dnHTTP, "webhdfs garbage", []byte("PUT /webhdfs/v1/x?op=CREATE&namenoderpcaddress=\x00 HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\nabc")},
		}
		r.Running = fmt.Sprintf("%d malformed inputs (random bytes, oversize frames and headers, bad varints, truncated ops), plus half-sent requests left open, to 4 ports", len(inputs))
		// Connections that start a request and stall, held open throughout.
		for _, a := range []string{c.Addr(), dnXfer, nnHTTP, dnHTTP} {
			nc, err := net.Dial("tcp", a)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { nc.Close() })
			nc.Write([]byte("GET /status HTTP/1.1\r\nHost: x\r\n")[:7])
		}
		for _, in := range inputs {
			nc, err := net.DialTimeout("tcp", in.addr, 5*time.Second)
			if err != nil {
				t.Fatalf("%s %s: dial: %v", in.port, in.what, err)
			}
			nc.SetDeadline(time.Now().Add(10 * time.Second))
			nc.Write(in.b)
			nc.(*net.TCPConn).CloseWrite()
			io.Copy(io.Discard, nc)
			nc.Close()
			if err := serves(ctx, c, cl, strings.NewReplacer(" ", "-", "/", "-").Replace(in.port+"-"+in.what)); err != nil {
				t.Fatalf("after %q to the %s port: %v", in.what, in.port, err)
			}
		}
		t0 := time.Now()
		for _, a := range []string{nnHTTP, dnHTTP} {
			hc := http.Client{Timeout: 10 * time.Second}
			resp, err := hc.Get("http://" + a + "/status")
			if err != nil {
				t.Fatalf("GET /status on %s after the garbage: %v", a, err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("GET /status on %s: %s", a, resp.Status)
			}
		}
		r.Acked = "the well-behaved client's calls after each input"
		r.Recover = since(t0) + " (no outage)"
		r.Survived = "every daemon up; mkdir, write, read and both /status pages served after each input"
	})
	// Last: on a NameNode with the bug this leaves it refusing
	// mutations.
	t.Run("ipc hang-up mid-call", func(t *testing.T) {
		r := record(t, "client hangs up with 300 calls in flight (NameNode IPC)")
		r.Running = fmt.Sprintf("%d times: 3 connections with 300 pipelined mkdirs each, then TCP resets 0-9 ms later; then a half-sent call; a well-behaved client alongside", 30*rounds())
		// Reset at different moments after the calls went out, so that
		// some of the calls wait on the edit log's sync when it comes.
		var err error
		t0 := time.Now()
		for round := 0; round < 30*rounds() && err == nil; round++ {
			var ncs []*net.TCPConn
			for k := 0; k < 3; k++ {
				nc := rpcConn(t, c.Addr())
				bw := bufio.NewWriter(nc)
				for i := 0; i < 300; i++ {
					bw.Write(rpcFrame(int32(i), "mkdirs", mkdirReq(fmt.Sprintf("/hostile/rst%d/%d/%d", round, k, i))))
				}
				bw.Flush()
				ncs = append(ncs, nc)
			}
			time.Sleep(time.Duration(round%10) * time.Millisecond)
			for _, nc := range ncs {
				nc.SetLinger(0)
				nc.Close()
			}
			time.Sleep(10 * time.Millisecond)
			err = serves(ctx, c, cl, fmt.Sprintf("after-rst-%d", round))
		}
		// A half-sent frame, then a close.
		if err == nil {
			nc := rpcConn(t, c.Addr())
			f := rpcFrame(1, "mkdirs", mkdirReq("/hostile/half"))
			nc.Write(f[:len(f)/2])
			nc.Close()
			err = serves(ctx, c, cl, "after-half")
		}
		r.Acked = "the well-behaved client's calls"
		if err != nil {
			t.Fatalf("after a client hung up mid-call: %v", err)
		}
		r.Recover = since(t0) + " (no outage)"
		r.Survived = "NameNode up; later mutations, writes and reads served"
	})

}
