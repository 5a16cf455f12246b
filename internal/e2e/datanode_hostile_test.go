package e2e

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/testcluster"
)

// Hostile DataTransferProtocol and WebHDFS clients against DataNode
// processes.

var emptyToken = &hdfspb.TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")}

func xferBlock(pool string, id, gs, n uint64) *hdfspb.ExtendedBlockProto {
	return &hdfspb.ExtendedBlockProto{PoolId: proto.String(pool), BlockId: proto.Uint64(id), GenerationStamp: proto.Uint64(gs), NumBytes: proto.Uint64(n)}
}

func writeOp(blk *hdfspb.ExtendedBlockProto, stage hdfspb.OpWriteBlockProto_BlockConstructionStage, newGS uint64, targets ...*hdfspb.DatanodeInfoProto) *hdfspb.OpWriteBlockProto {
	return &hdfspb.OpWriteBlockProto{
		Header:       &hdfspb.ClientOperationHeaderProto{BaseHeader: &hdfspb.BaseHeaderProto{Block: blk, Token: emptyToken}, ClientName: proto.String("hostile")},
		Targets:      targets,
		Stage:        stage.Enum(),
		PipelineSize: proto.Uint32(uint32(1 + len(targets))), MinBytesRcvd: proto.Uint64(0), MaxBytesRcvd: proto.Uint64(0),
		LatestGenerationStamp: proto.Uint64(newGS),
		RequestedChecksum:     &hdfspb.ChecksumProto{Type: hdfspb.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(), BytesPerChecksum: proto.Uint32(512)},
	}
}

// sendOp opens a connection, sends op and reads the reply; the
// connection stays open for the caller.
func sendOp(t *testing.T, addr string, op datatransfer.Op, msg proto.Message) (net.Conn, *hdfspb.BlockOpResponseProto) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if err := datatransfer.WriteRequest(c, op, msg); err != nil {
		t.Fatal(err)
	}
	resp, err := datatransfer.ReadResponse(bufio.NewReader(c))
	if err != nil {
		t.Fatalf("%v: reading the reply: %v", op, err)
	}
	c.SetDeadline(time.Time{})
	return c, resp
}

func rbwFiles(dir string) []string {
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && strings.Contains(p, string(filepath.Separator)+"rbw"+string(filepath.Separator)) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func writeAndRead(t *testing.T, cl *hdfs.Client, p string, data []byte) {
	t.Helper()
	ctx := ctxT(t)
	w, err := cl.CreateFile(ctx, p, fs.CreateOptions{Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatalf("%s: write: %v", p, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("%s: close: %v", p, err)
	}
	f, err := cl.OpenFile(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("%s: read back %d bytes (%v), want %d", p, len(got), err, len(data))
	}
}

// TestDataNodeIdleTransfersTimeOut fills every transfer slot of a
// DataNode (dfs.datanode.max.transfer.threads=4) with peers that send a
// WRITE_BLOCK header and then nothing, and a reader that asks for a large
// block and never reads it. With short socket timeouts
// (dfs.client.socket-timeout, dfs.datanode.socket.write.timeout) the
// DataNode drops them, its slots come back, an ordinary write and read
// complete, and the idle writes leave no rbw file behind.
func TestDataNodeIdleTransfersTimeOut(t *testing.T) {
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1, Conf: map[string]string{
		"dfs.block.access.token.enable":     "false", // the raw ops below carry no token
		"dfs.datanode.max.transfer.threads": "4",
		"dfs.client.socket-timeout":         "1500",
		"dfs.datanode.socket.write.timeout": "1500",
		"dfs.blocksize":                     "33554432",
	}})
	cl := c.Client(c.Superuser())
	big := make([]byte, 24<<20)
	for i := range big {
		big[i] = byte(i * 31 >> 7)
	}
	writeAndRead(t, cl, "/big", big)
	locs, err := cl.BlockLocations(ctxT(t), "/big")
	if err != nil || len(locs) != 1 {
		t.Fatal(locs, err)
	}
	pool := c.DataNodeStatus(0).Pool
	addr := c.DataNodeAddr(0)

	// The stalled reader takes one slot, three idle writers the others;
	// one more writer finds no slot.
	read := &hdfspb.OpReadBlockProto{Header: &hdfspb.ClientOperationHeaderProto{BaseHeader: &hdfspb.BaseHeaderProto{Block: xferBlock(pool, locs[0].BlockID, locs[0].GenStamp, uint64(len(big))), Token: emptyToken}, ClientName: proto.String("stalled")},
		Offset: proto.Uint64(0), Len: proto.Uint64(uint64(len(big))), SendChecksums: proto.Bool(true)}
	stalled, resp := sendOp(t, addr, datatransfer.OpReadBlock, read)
	if resp.GetStatus() != hdfspb.Status_SUCCESS {
		t.Fatalf("stalled READ_BLOCK: %v %s", resp.GetStatus(), resp.GetMessage())
	}
	var idle []net.Conn
	for i := 0; i < 4; i++ {
		conn, resp := sendOp(t, addr, datatransfer.OpWriteBlock, writeOp(xferBlock(pool, 1<<50+uint64(i), 1, 0), hdfspb.OpWriteBlockProto_PIPELINE_SETUP_CREATE, 1))
		switch {
		case i < 3 && resp.GetStatus() != hdfspb.Status_SUCCESS:
			t.Fatalf("idle WRITE_BLOCK %d: %v %s", i, resp.GetStatus(), resp.GetMessage())
		case i == 3 && !strings.Contains(resp.GetMessage(), "exceeds the limit of concurrent xceivers"):
			t.Fatalf("WRITE_BLOCK over the limit: %v %s", resp.GetStatus(), resp.GetMessage())
		}
		idle = append(idle, conn)
	}
	if n := c.DataNodeStatus(0).Xceivers; n != 4 {
		t.Errorf("%d transfers in progress with every slot taken, want 4", n)
	}

	// The slots come back once the peers have been silent past the
	// timeout; generous bound.
	c.WaitFor("idle transfers to time out", 30*time.Second, func() bool { return c.DataNodeStatus(0).Xceivers == 0 })
	writeAndRead(t, cl, "/after", bytes.Repeat([]byte("after the idle peers "), 20000))
	for i, conn := range append(idle[:3], stalled) {
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.Copy(io.Discard, conn); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Errorf("connection %d is still open after the DataNode timed it out", i)
			}
		}
	}
	if left := rbwFiles(c.VolumeDir(0, 0)); len(left) != 0 {
		t.Errorf("idle writes left rbw files: %v", left)
	}
	if !c.DataNodeProcess(0).Running() {
		t.Fatal("the DataNode exited")
	}
}

// tokenCluster starts a NameNode with dfs.block.access.token.enable and
// two DataNodes, writes a mode-600 file of alice's, and skips the test
// when the NameNode handed the DataNodes no keys (a NameNode without
// block tokens).
func tokenCluster(t *testing.T) (c *testcluster.Processes, pool string, loc hdfs.BlockLocation, data []byte) {
	c = testcluster.NewProcess(t, testcluster.Config{DataNodes: 2, Conf: map[string]string{"dfs.block.access.token.enable": "true"}})
	st := c.DataNodeStatus(0)
	for deadline := time.Now().Add(time.Second); !st.BlockKeys && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		st = c.DataNodeStatus(0)
	}
	if !st.BlockKeys || !st.BlockTokens {
		t.Skip("the NameNode exported no enabled block keys to its DataNodes (NameNode side of block tokens not present)")
	}
	ctx := ctxT(t)
	su := c.Client(c.Superuser())
	if err := su.Mkdirs(ctx, "/home/alice", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := su.SetOwner(ctx, "/home/alice", "alice", ""); err != nil {
		t.Fatal(err)
	}
	alice := c.Client("alice")
	data = bytes.Repeat([]byte("alice's secret "), 4000)
	w, err := alice.CreateFile(ctx, "/home/alice/secret", fs.CreateOptions{Perm: 0o600, Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatalf("writing with block tokens on: %v", err)
	}
	locs, err := alice.BlockLocations(ctx, "/home/alice/secret")
	if err != nil || len(locs) != 1 {
		t.Fatal(locs, err)
	}
	return c, st.Pool, locs[0], data
}

// dataNodeHTTP is DataNode i's HTTP address, from its start-up log line.
func dataNodeHTTP(t *testing.T, c *testcluster.Processes, i int) string {
	t.Helper()
	m := regexp.MustCompile(`datanode: serving.*http=(\S+)`).FindStringSubmatch(c.DataNodeProcess(i).Log())
	if m == nil {
		t.Fatalf("no HTTP address in DataNode %d's log:\n%s", i, c.DataNodeProcess(i).Logs())
	}
	return m[1]
}

func wantAccessTokenError(t *testing.T, what string, resp *hdfspb.BlockOpResponseProto) {
	t.Helper()
	if resp.GetStatus() != hdfspb.Status_ERROR_ACCESS_TOKEN {
		t.Errorf("%s: %v %q, want ERROR_ACCESS_TOKEN", what, resp.GetStatus(), resp.GetMessage())
	}
}

// TestDataNodeRefusesAnonymousRead: with block tokens on, a READ_BLOCK
// without a token for a mode-600 file's block is refused.
func TestDataNodeRefusesAnonymousRead(t *testing.T) {
	c, pool, loc, data := tokenCluster(t)
	i := c.DataNodeByAddr(loc.Hosts[0])
	read := &hdfspb.OpReadBlockProto{Header: &hdfspb.ClientOperationHeaderProto{BaseHeader: &hdfspb.BaseHeaderProto{Block: xferBlock(pool, loc.BlockID, loc.GenStamp, uint64(len(data))), Token: emptyToken}, ClientName: proto.String("anonymous")},
		Offset: proto.Uint64(0), Len: proto.Uint64(uint64(len(data))), SendChecksums: proto.Bool(true)}
	_, resp := sendOp(t, c.DataNodeAddr(i), datatransfer.OpReadBlock, read)
	wantAccessTokenError(t, "anonymous READ_BLOCK", resp)
	// The owner still reads, with the NameNode's token.
	f, err := c.Client("alice").OpenFile(ctxT(t), "/home/alice/secret")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("alice reads %d bytes (%v)", len(got), err)
	}
}

// TestDataNodeRefusesCloseRecoveryWithoutToken: WRITE_BLOCK with stage
// PIPELINE_CLOSE_RECOVERY and no token is refused, and the block stays
// readable (before, it bumped the replica's generation stamp and made the
// block MISSING).
func TestDataNodeRefusesCloseRecoveryWithoutToken(t *testing.T) {
	c, pool, loc, data := tokenCluster(t)
	i := c.DataNodeByAddr(loc.Hosts[0])
	op := writeOp(xferBlock(pool, loc.BlockID, loc.GenStamp, uint64(len(data))), hdfspb.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY, loc.GenStamp+1000)
	_, resp := sendOp(t, c.DataNodeAddr(i), datatransfer.OpWriteBlock, op)
	wantAccessTokenError(t, "PIPELINE_CLOSE_RECOVERY without a token", resp)
	// Reported and read again: the replica is untouched.
	time.Sleep(500 * time.Millisecond)
	f, err := c.Client("alice").OpenFile(ctxT(t), "/home/alice/secret")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after a refused close recovery: %d bytes (%v)", len(got), err)
	}
	out, _, code := c.Run(c.Superuser(), "fsck", "/home/alice/secret")
	if code != 0 || !strings.Contains(out, "is HEALTHY") {
		t.Errorf("fsck after a refused close recovery (exit %d):\n%s", code, out)
	}
}

// TestDataNodeRefusesTransferToArbitraryAddress: TRANSFER_BLOCK (and a
// WRITE_BLOCK pipeline) naming a host:port of the attacker's choosing is
// refused without a token, and the DataNode dials nothing; the refused
// write leaves no rbw file.
func TestDataNodeRefusesTransferToArbitraryAddress(t *testing.T) {
	c, pool, loc, data := tokenCluster(t)
	i := c.DataNodeByAddr(loc.Hosts[0])
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	dialled := make(chan struct{}, 10)
	go func() {
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			dialled <- struct{}{}
			conn.Close()
		}
	}()
	_, ps, _ := net.SplitHostPort(lis.Addr().String())
	port, _ := strconv.Atoi(ps)
	target := &hdfspb.DatanodeInfoProto{Id: &hdfspb.DatanodeIDProto{IpAddr: proto.String("127.0.0.1"), HostName: proto.String("victim"), DatanodeUuid: proto.String("victim"),
		XferPort: proto.Uint32(uint32(port)), InfoPort: proto.Uint32(1), IpcPort: proto.Uint32(1)}}
	tr := &hdfspb.OpTransferBlockProto{Header: &hdfspb.ClientOperationHeaderProto{BaseHeader: &hdfspb.BaseHeaderProto{Block: xferBlock(pool, loc.BlockID, loc.GenStamp, uint64(len(data))), Token: emptyToken}, ClientName: proto.String("hostile")},
		Targets: []*hdfspb.DatanodeInfoProto{target}}
	_, resp := sendOp(t, c.DataNodeAddr(i), datatransfer.OpTransferBlock, tr)
	wantAccessTokenError(t, "TRANSFER_BLOCK to an arbitrary address", resp)
	_, resp = sendOp(t, c.DataNodeAddr(i), datatransfer.OpWriteBlock, writeOp(xferBlock(pool, 1<<50, 1, 0), hdfspb.OpWriteBlockProto_PIPELINE_SETUP_CREATE, 1, target))
	wantAccessTokenError(t, "unsolicited WRITE_BLOCK with a target", resp)
	select {
	case <-dialled:
		t.Error("the DataNode dialled the address a tokenless op named")
	case <-time.After(time.Second):
	}
	if left := rbwFiles(c.VolumeDir(i, 0)); len(left) != 0 {
		t.Errorf("refused write left rbw files: %v", left)
	}
}

// TestDataNodeWebHDFSNeedsRedirectToken: the DataNode's WebHDFS does not
// create files as user.name=root for a caller that went around the
// NameNode.
func TestDataNodeWebHDFSNeedsRedirectToken(t *testing.T) {
	c, _, _, _ := tokenCluster(t)
	httpAddr := dataNodeHTTP(t, c, 0)
	req, _ := http.NewRequest("PUT", "http://"+httpAddr+"/webhdfs/v1/tmp/byroot?"+url.Values{"op": {"CREATE"}, "user.name": {"root"}}.Encode(), strings.NewReader("owned"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !bytes.Contains(body, []byte(`"exception":"InvalidToken"`)) {
		t.Errorf("DataNode WebHDFS CREATE without a redirect token: %d %s", resp.StatusCode, body)
	}
	if _, err := c.Client(c.Superuser()).Stat(context.Background(), "/tmp/byroot"); err == nil {
		t.Error("the refused CREATE made the file")
	}
	// Through the NameNode, whose redirect carries its token, CREATE works.
	var nnHTTP string
	for _, a := range c.ClientArgs() {
		if v, ok := strings.CutPrefix(a, "dfs.namenode.http-address="); ok {
			nnHTTP = v
		}
	}
	if nnHTTP == "" {
		t.Fatalf("no NameNode HTTP address in %q", c.ClientArgs())
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ = http.NewRequest("PUT", "http://"+nnHTTP+"/webhdfs/v1/tmp/viann?"+url.Values{"op": {"CREATE"}, "user.name": {c.Superuser()}}.Encode(), nil)
	resp, err = noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusTemporaryRedirect || loc == "" {
		t.Fatalf("NameNode CREATE: %d, Location %q", resp.StatusCode, loc)
	}
	req, _ = http.NewRequest("PUT", loc, strings.NewReader("via the NameNode"))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("DataNode CREATE with the NameNode's redirect: %d %s", resp.StatusCode, body)
	}
}
