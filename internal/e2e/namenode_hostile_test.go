package e2e

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
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
	id, class, msg, _, err = c.replyBody()
	return id, class, msg, err
}

// call sends one call and reads its reply into resp; it returns the
// error class and message of a refused call.
func (c *rawIPC) call(method string, req, resp proto.Message) (class, msg string) {
	c.t.Helper()
	if _, err := c.nc.Write(c.callFrame(1, method, req)); err != nil {
		c.t.Fatal(err)
	}
	_, class, msg, body, err := c.replyBody()
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	if class == "" && resp != nil {
		size, k := protowire.ConsumeVarint(body)
		if k < 0 || uint64(len(body)-k) < size {
			c.t.Fatalf("%s: bad response", method)
		}
		if err := proto.Unmarshal(body[k:k+int(size)], resp); err != nil {
			c.t.Fatalf("%s: %v", method, err)
		}
	}
	return class, msg
}

func (c *rawIPC) replyBody() (id int32, class, msg string, body []byte, err error) {
	var n [4]byte
	if _, err := io.ReadFull(c.br, n[:]); err != nil {
		return 0, "", "", nil, err
	}
	buf := make([]byte, binary.BigEndian.Uint32(n[:]))
	if _, err := io.ReadFull(c.br, buf); err != nil {
		return 0, "", "", nil, err
	}
	size, k := protowire.ConsumeVarint(buf)
	if k < 0 || uint64(len(buf)-k) < size {
		return 0, "", "", nil, fmt.Errorf("bad reply frame")
	}
	var h ipcpb.RpcResponseHeaderProto
	if err := proto.Unmarshal(buf[k:k+int(size)], &h); err != nil {
		return 0, "", "", nil, err
	}
	return int32(h.GetCallId()), h.GetExceptionClassName(), h.GetErrorMsg(), buf[k+int(size):], nil
}

// reset closes the connection with a TCP RST, as a client that crashes
// or times out does.
func (c *rawIPC) reset() {
	c.nc.SetLinger(0)
	c.nc.Close()
}

// TestNameNodeClientResetDoesNotStopWrites: a client that pipelines mkdirs and
// resets its connection while they wait for the edit log's group commit
// must not stop the NameNode's writes. Every acknowledged mkdir survives a
// restart.
func TestNameNodeClientResetDoesNotStopWrites(t *testing.T) {
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

// TestNameNodeHugeAdditionalDatanodeCount: getAdditionalDatanode with
// numAdditionalNodes = 30,000,000 from a client that holds no lease on the
// file answers at once with an error, and the NameNode keeps answering.
func TestNameNodeHugeAdditionalDatanodeCount(t *testing.T) {
	nn := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1})
	ctx := ctxT(t)
	good := nn.Client(nn.Superuser())
	w, err := good.Create(ctx, "/victim", fs.CreateOptions{Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("some data")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	evil := dialRawIPC(t, nn.Addr(), "mallory")
	var locs hdfspb.GetBlockLocationsResponseProto
	if class, msg := evil.call("getBlockLocations", &hdfspb.GetBlockLocationsRequestProto{
		Src: proto.String("/victim"), Offset: proto.Uint64(0), Length: proto.Uint64(1 << 20),
	}, &locs); class != "" {
		t.Fatalf("getBlockLocations: %s: %s", class, msg)
	}
	if len(locs.GetLocations().GetBlocks()) != 1 {
		t.Fatalf("want one block, got %v", locs.GetLocations())
	}
	blk := locs.GetLocations().GetBlocks()[0].GetB()

	// Other clients keep being answered while the hostile call runs.
	stop := make(chan struct{})
	slow := make(chan time.Duration, 1)
	go func() {
		var worst time.Duration
		defer func() { slow <- worst }()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			start := time.Now()
			if err := good.Mkdirs(ctx, fmt.Sprintf("/busy/%d", i), 0o755); err != nil {
				t.Error(err)
				return
			}
			worst = max(worst, time.Since(start))
		}
	}()
	start := time.Now()
	class, msg := evil.call("getAdditionalDatanode", &hdfspb.GetAdditionalDatanodeRequestProto{
		Src: proto.String("/victim"), Blk: blk, NumAdditionalNodes: proto.Uint32(30_000_000), ClientName: proto.String("DFSClient_mallory"),
	}, &hdfspb.GetAdditionalDatanodeResponseProto{})
	took := time.Since(start)
	close(stop)
	worst := <-slow
	if class == "" {
		t.Fatalf("getAdditionalDatanode with 30,000,000 nodes and no lease succeeded")
	}
	t.Logf("refused in %v: %s: %s; slowest concurrent mkdir %v", took, class, msg, worst)
	if took > 3*time.Second || worst > 3*time.Second {
		t.Fatalf("the NameNode stalled: the hostile call took %v, a concurrent mkdir %v", took, worst)
	}
	// Within Hadoop's bounds but without the lease: LeaseExpiredException.
	class, msg = evil.call("getAdditionalDatanode", &hdfspb.GetAdditionalDatanodeRequestProto{
		Src: proto.String("/victim"), Blk: blk, NumAdditionalNodes: proto.Uint32(1), ClientName: proto.String("DFSClient_mallory"),
	}, &hdfspb.GetAdditionalDatanodeResponseProto{})
	if !strings.HasSuffix(class, "LeaseExpiredException") {
		t.Errorf("getAdditionalDatanode without the lease: %s: %s", class, msg)
	}
	within(t, 5*time.Second, "ls after the hostile calls", func() error {
		_, err := good.List(ctx, "/")
		return err
	})
}

// longTree makes a tree whose fsck -files report is about 10 MB: a
// chain of 30 directories with 250-byte names, each holding 100 empty
// directories, so that a report cannot fit in the sockets' buffers.
func longTree(t *testing.T, c *hdfs.Client) {
	ctx := ctxT(t)
	var chain []string
	p := ""
	for d := 0; d < 30; d++ {
		p += "/" + fmt.Sprintf("%02d", d) + strings.Repeat("x", 248)
		chain = append(chain, p)
	}
	errs := make(chan error, len(chain))
	for _, dir := range chain {
		go func() {
			for k := 0; k < 100; k++ {
				if err := c.Mkdirs(ctx, fmt.Sprintf("%s/leaf%03d", dir, k), 0o755); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range chain {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestNameNodeFsckStalledReaderAndPermission: /fsck is for the superuser only
// (with permissions on), and a superuser's fsck whose reader never reads
// does not freeze the namespace for everyone else.
func TestNameNodeFsckStalledReaderAndPermission(t *testing.T) {
	nn := newNameNode(t)
	ctx := ctxT(t)
	super := nn.Superuser()
	good := nn.Client(super)
	if err := good.Mkdirs(ctx, "/private/alice-secret", 0o700); err != nil {
		t.Fatal(err)
	}
	longTree(t, good)
	web := httpAddr(t, nn)
	hc := http.Client{Timeout: 10 * time.Second}

	// A non-superuser is refused and sees no path.
	resp, err := hc.Get("http://" + web + "/fsck?path=/&files=1&blocks=1&locations=1&user.name=bob")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "Access denied for user bob. Superuser privilege is required") ||
		strings.Contains(string(body), "alice-secret") || strings.Contains(string(body), "leaf") {
		t.Fatalf("fsck as bob: %s\n%.500s", resp.Status, body)
	}

	// A superuser's fsck with a reader that never reads.
	d := net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	stalled, err := d.Dial("tcp", web)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	fmt.Fprintf(stalled, "GET /fsck?path=/&files=1&user.name=%s HTTP/1.1\r\nHost: %s\r\n\r\n", super, web)
	time.Sleep(time.Second) // let the report fill the buffers

	within(t, 10*time.Second, "mkdir during a stalled fsck", func() error { return good.Mkdirs(ctx, "/during-fsck", 0o755) })
	within(t, 10*time.Second, "ls during a stalled fsck", func() error {
		_, err := good.List(ctx, "/")
		return err
	})
	within(t, 10*time.Second, "/status during a stalled fsck", func() error {
		resp, err := hc.Get("http://" + web + "/status")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
	// The stalled reader did get a report in progress.
	stalled.SetReadDeadline(time.Now().Add(10 * time.Second))
	head := make([]byte, 4096)
	n, _ := io.ReadFull(stalled, head)
	if !strings.Contains(string(head[:n]), "200 OK") || !strings.Contains(string(head[:n]), "FSCK started by "+super) {
		t.Errorf("the superuser's fsck answered %q", head[:n])
	}
}

// TestNameNodeNonSuperuserClusterCalls: a user who cannot read a file cannot have
// its replicas marked corrupt (and so deleted), and the DataNode reports
// are the superuser's, as in Hadoop.
func TestNameNodeNonSuperuserClusterCalls(t *testing.T) {
	nn := testcluster.NewProcess(t, testcluster.Config{DataNodes: 2})
	ctx := ctxT(t)
	super := nn.Superuser()
	good := nn.Client(super)
	w, err := good.Create(ctx, "/private/secret", fs.CreateOptions{Replication: 2, Perm: 0o600, CreateParent: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("not for bob"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	admin := dialRawIPC(t, nn.Addr(), super)
	var locs hdfspb.GetBlockLocationsResponseProto
	var lb *hdfspb.LocatedBlockProto
	deadline := time.Now().Add(30 * time.Second)
	for {
		if class, msg := admin.call("getBlockLocations", &hdfspb.GetBlockLocationsRequestProto{
			Src: proto.String("/private/secret"), Offset: proto.Uint64(0), Length: proto.Uint64(1 << 20),
		}, &locs); class != "" {
			t.Fatalf("getBlockLocations: %s: %s", class, msg)
		}
		lb = locs.GetLocations().GetBlocks()[0]
		if len(lb.GetLocs()) == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(lb.GetLocs()) != 2 {
		t.Fatalf("want 2 replicas, have %d", len(lb.GetLocs()))
	}

	bob := dialRawIPC(t, nn.Addr(), "bob")
	class, msg := bob.call("reportBadBlocks", &hdfspb.ReportBadBlocksRequestProto{Blocks: []*hdfspb.LocatedBlockProto{{
		B: lb.GetB(), Offset: proto.Uint64(0), Locs: lb.GetLocs()[:1], Corrupt: proto.Bool(false), BlockToken: lb.GetBlockToken(),
	}}}, &hdfspb.ReportBadBlocksResponseProto{})
	if !strings.HasSuffix(class, "AccessControlException") {
		t.Fatalf("bob's reportBadBlocks on a file he cannot read: %q %q", class, msg)
	}
	for _, c := range []struct {
		method string
		req    proto.Message
	}{
		{"getDatanodeReport", &hdfspb.GetDatanodeReportRequestProto{Type: hdfspb.DatanodeReportTypeProto_ALL.Enum()}},
		{"getDatanodeStorageReport", &hdfspb.GetDatanodeStorageReportRequestProto{Type: hdfspb.DatanodeReportTypeProto_ALL.Enum()}},
	} {
		class, msg := bob.call(c.method, c.req, nil)
		if !strings.HasSuffix(class, "AccessControlException") || msg != "Access denied for user bob. Superuser privilege is required" {
			t.Errorf("%s as bob: %q %q", c.method, class, msg)
		}
		if class, msg := admin.call(c.method, c.req, nil); class != "" {
			t.Errorf("%s as the superuser: %s: %s", c.method, class, msg)
		}
	}
	// Both replicas are still good.
	if class, msg := admin.call("getBlockLocations", &hdfspb.GetBlockLocationsRequestProto{
		Src: proto.String("/private/secret"), Offset: proto.Uint64(0), Length: proto.Uint64(1 << 20),
	}, &locs); class != "" || len(locs.GetLocations().GetBlocks()[0].GetLocs()) != 2 || locs.GetLocations().GetBlocks()[0].GetCorrupt() {
		t.Fatalf("after bob's report: %s %s %v", class, msg, locs.GetLocations())
	}
}
