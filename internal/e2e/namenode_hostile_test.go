package e2e

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
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

// Hostile clients against a real NameNode process: each test checks that
// what one client does to its own connection or requests cannot stop,
// freeze or bypass the NameNode for the others.

const clientProtocolName = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

// rawIPC is a Hadoop IPC connection written by hand, so that a test can
// pipeline calls, stop reading, or reset the connection mid-call.
type rawIPC struct {
	t  *testing.T
	nc *net.TCPConn
	br *bufio.Reader
}

func dialRawIPC(t *testing.T, addr, user string) *rawIPC {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &rawIPC{t: t, nc: nc.(*net.TCPConn), br: bufio.NewReader(nc)}
	t.Cleanup(func() { nc.Close() })
	hdr := []byte{'h', 'r', 'p', 'c', 9, 0, 0}
	hdr = appendRawFrame(t, hdr, &ipcpb.RpcRequestHeaderProto{
		RpcKind: ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(), RpcOp: ipcpb.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
		CallId: proto.Int32(-3), ClientId: []byte("0123456789abcdef"),
	}, &ipcpb.IpcConnectionContextProto{
		UserInfo: &ipcpb.UserInformationProto{EffectiveUser: proto.String(user)}, Protocol: proto.String(clientProtocolName),
	})
	if _, err := nc.Write(hdr); err != nil {
		t.Fatal(err)
	}
	return c
}

func appendRawFrame(t *testing.T, dst []byte, msgs ...proto.Message) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	for _, m := range msgs {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		dst = protowire.AppendVarint(dst, uint64(len(b)))
		dst = append(dst, b...)
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// callFrame is one ClientProtocol call's frame.
func (c *rawIPC) callFrame(id int32, method string, req proto.Message) []byte {
	return appendRawFrame(c.t, nil, &ipcpb.RpcRequestHeaderProto{
		RpcKind: ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(), RpcOp: ipcpb.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
		CallId: proto.Int32(id), ClientId: []byte("0123456789abcdef"),
	}, &ipcpb.RequestHeaderProto{
		MethodName: proto.String(method), DeclaringClassProtocolName: proto.String(clientProtocolName), ClientProtocolVersion: proto.Uint64(1),
	}, req)
}

// reply reads one reply: its call id and, for an error, its class and
// message.
func (c *rawIPC) reply() (id int32, class, msg string, err error) {
	var n [4]byte
	if _, err := io.ReadFull(c.br, n[:]); err != nil {
		return 0, "", "", err
	}
	buf := make([]byte, binary.BigEndian.Uint32(n[:]))
	if _, err := io.ReadFull(c.br, buf); err != nil {
		return 0, "", "", err
	}
	size, k := protowire.ConsumeVarint(buf)
	if k < 0 || uint64(len(buf)-k) < size {
		return 0, "", "", fmt.Errorf("bad reply frame")
	}
	var h ipcpb.RpcResponseHeaderProto
	if err := proto.Unmarshal(buf[k:k+int(size)], &h); err != nil {
		return 0, "", "", err
	}
	return int32(h.GetCallId()), h.GetExceptionClassName(), h.GetErrorMsg(), nil
}

// reset closes the connection with a TCP RST, as a client that crashes
// or times out does.
func (c *rawIPC) reset() {
	c.nc.SetLinger(0)
	c.nc.Close()
}

// TestClientResetDoesNotStopWrites: a client that pipelines mkdirs and
// resets its connection while they wait for the edit log's group commit
// must not stop the NameNode's writes. Every acknowledged mkdir survives a
// restart.
func TestClientResetDoesNotStopWrites(t *testing.T) {
	nn := newNameNode(t)
	ctx := ctxT(t)
	good := nn.Client(nn.Superuser())
	var acked []string
	for round := 0; round < 5; round++ {
		c := dialRawIPC(t, nn.Addr(), nn.Superuser())
		var frames []byte
		names := map[int32]string{}
		for i := int32(0); i < 300; i++ {
			p := fmt.Sprintf("/r%d/d%03d", round, i)
			names[i] = p
			frames = append(frames, c.callFrame(i, "mkdirs", &hdfspb.MkdirsRequestProto{
				Src: proto.String(p), Masked: &hdfspb.FsPermissionProto{Perm: proto.Uint32(0o755)}, CreateParent: proto.Bool(true),
			})...)
		}
		if _, err := c.nc.Write(frames); err != nil {
			t.Fatal(err)
		}
		// Take a few answers, then hang up hard with the rest in flight.
		for k := 0; k < 5; k++ {
			id, class, msg, err := c.reply()
			if err != nil {
				t.Fatalf("round %d: reading a reply: %v", round, err)
			}
			if class != "" {
				t.Fatalf("round %d: mkdir %s failed: %s: %s", round, names[id], class, msg)
			}
			acked = append(acked, names[id])
		}
		c.reset()
		// Another client's mutations still succeed.
		p := fmt.Sprintf("/after-reset-%d", round)
		if err := good.Mkdirs(ctx, p, 0o755); err != nil {
			t.Fatalf("round %d: after a client reset, mkdir %s from another client: %v", round, p, err)
		}
		acked = append(acked, p)
	}
	nn.RestartNameNode()
	c, err := hdfs.New(hdfs.Options{Addr: nn.Addr(), User: nn.Superuser()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range acked {
		if st, err := c.Stat(ctx, p); err != nil || !st.IsDir {
			t.Errorf("acknowledged %s missing after restart: %v", p, err)
		}
	}
	if err := c.Mkdirs(ctx, "/after-restart", 0o755); err != nil {
		t.Fatal(err)
	}
}

// httpAddr is the NameNode process's HTTP address.
func httpAddr(t *testing.T, nn *testcluster.Processes) string {
	for _, a := range nn.NameNodeArgs() {
		if v, ok := strings.CutPrefix(a, "dfs.namenode.http-address="); ok {
			return v
		}
	}
	t.Fatal("no NameNode HTTP address")
	return ""
}

// within fails the test unless f returns within d.
func within(t *testing.T, d time.Duration, what string, f func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(d):
		t.Fatalf("%s did not answer within %v", what, d)
	}
}
