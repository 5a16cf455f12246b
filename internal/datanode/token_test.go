package datanode_test

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
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/testcluster"
)

// rawOp sends one op to a DataNode and returns its reply.
func rawOp(t *testing.T, addr string, op datatransfer.Op, msg proto.Message) *hdfspb.BlockOpResponseProto {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if err := datatransfer.WriteRequest(c, op, msg); err != nil {
		t.Fatal(err)
	}
	resp, err := datatransfer.ReadResponse(bufio.NewReader(c))
	if err != nil {
		t.Fatalf("%v: reading the reply: %v", op, err)
	}
	return resp
}

var noToken = &hdfspb.TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")}

func wantRefused(t *testing.T, what string, resp *hdfspb.BlockOpResponseProto, msg string) {
	t.Helper()
	if resp.GetStatus() != hdfspb.Status_ERROR_ACCESS_TOKEN || !strings.Contains(resp.GetMessage(), msg) {
		t.Errorf("%s: %v %q, want ERROR_ACCESS_TOKEN with %q", what, resp.GetStatus(), resp.GetMessage(), msg)
	}
}

// TestBlockTokensChecked gives two DataNodes block keys from a master, as
// a NameNode with dfs.block.access.token.enable would, and checks every
// op against Hadoop's access modes: refused without a valid token (before
// any replica is touched or target dialled), served with one; the
// DataNode's own copies carry tokens it mints; WebHDFS needs the
// NameNode's redirect token.
func TestBlockTokensChecked(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 2})
	su := c.Superuser()
	cl := c.Client(su)
	ctx := context.Background()
	data := bytes.Repeat([]byte("token "), 3000)
	w, err := cl.CreateFile(ctx, "/secret", fs.CreateOptions{Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	locs, err := cl.BlockLocations(ctx, "/secret")
	if err != nil || len(locs) != 1 {
		t.Fatalf("locations: %v %v", locs, err)
	}
	src := c.DataNodeByAddr(locs[0].Hosts[0])
	other := 1 - src
	dn := c.DataNode(src)
	pool := dn.Status().Pool
	// The cluster's NameNode may have turned tokens on itself; if not,
	// the DataNodes get enabled keys of the test's own making.
	imported := false
	if !dn.BlockTokensEnabled() {
		master, err := blocktoken.NewMaster(blocktoken.Config{BlockPoolID: pool, Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if err := datanode.ImportKeys(c.DataNode(i), blocktoken.KeysProto(master.ExportKeys())); err != nil {
				t.Fatal(err)
			}
		}
		imported = true
	}
	if !dn.BlockTokensEnabled() || !dn.Status().BlockTokens {
		t.Fatal("imported enabled keys, but the DataNode does not check tokens")
	}
	blk := &hdfspb.ExtendedBlockProto{PoolId: proto.String(pool), BlockId: proto.Uint64(locs[0].BlockID), GenerationStamp: proto.Uint64(locs[0].GenStamp), NumBytes: proto.Uint64(uint64(len(data)))}
	mint := func(modes ...blocktoken.AccessMode) *hdfspb.TokenProto {
		return datanode.MintToken(dn, "alice", locs[0].BlockID, modes...)
	}
	addr := c.DataNodeAddr(src)
	read := func(tok *hdfspb.TokenProto) *hdfspb.OpReadBlockProto {
		return &hdfspb.OpReadBlockProto{Header: &hdfspb.ClientOperationHeaderProto{BaseHeader: &hdfspb.BaseHeaderProto{Block: blk, Token: tok}, ClientName: proto.String("x")},
			Offset: proto.Uint64(0), Len: proto.Uint64(uint64(len(data)))}
	}

	// READ_BLOCK: no token, a WRITE-only token, a token for another
	// block; then a READ token reads the data.
	wantRefused(t, "READ_BLOCK without a token", rawOp(t, addr, datatransfer.OpReadBlock, read(noToken)), "Block token")
	wantRefused(t, "READ_BLOCK with a WRITE token", rawOp(t, addr, datatransfer.OpReadBlock, read(mint(blocktoken.Write))), "doesn't have READ permission")
	otherBlk := datanode.MintToken(dn, "alice", locs[0].BlockID+1, blocktoken.Read)
	wantRefused(t, "READ_BLOCK with another block's token", rawOp(t, addr, datatransfer.OpReadBlock, read(otherBlk)), "doesn't apply to block")
	forged := mint(blocktoken.Read)
	forged.Password = bytes.Repeat([]byte{1}, len(forged.Password))
	wantRefused(t, "READ_BLOCK with a forged password", rawOp(t, addr, datatransfer.OpReadBlock, read(forged)), "correct token password")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	br, err := datatransfer.NewBlockReader(ctx, conn, "x", blk, mint(blocktoken.Read), 0, int64(len(data)))
	if err != nil {
		t.Fatalf("READ_BLOCK with a READ token: %v", err)
	}
	got, err := io.ReadAll(br)
	br.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes with a token (%v)", len(got), err)
	}

	// BLOCK_CHECKSUM and REQUEST_SHORT_CIRCUIT_FDS need READ, COPY_BLOCK
	// COPY, REPLACE_BLOCK REPLACE.
	wantRefused(t, "BLOCK_CHECKSUM", rawOp(t, addr, datatransfer.OpBlockChecksum, &hdfspb.OpBlockChecksumProto{Header: &hdfspb.BaseHeaderProto{Block: blk, Token: noToken}}), "Block token")
	if r := rawOp(t, addr, datatransfer.OpBlockChecksum, &hdfspb.OpBlockChecksumProto{Header: &hdfspb.BaseHeaderProto{Block: blk, Token: mint(blocktoken.Read)}}); r.GetStatus() != hdfspb.Status_SUCCESS {
		t.Errorf("BLOCK_CHECKSUM with a READ token: %v %s", r.GetStatus(), r.GetMessage())
	}
	wantRefused(t, "COPY_BLOCK with a READ token", rawOp(t, addr, datatransfer.OpCopyBlock, &hdfspb.OpCopyBlockProto{Header: &hdfspb.BaseHeaderProto{Block: blk, Token: mint(blocktoken.Read)}}), "doesn't have COPY permission")
	wantRefused(t, "REPLACE_BLOCK with a COPY token", rawOp(t, addr, datatransfer.OpReplaceBlock, &hdfspb.OpReplaceBlockProto{Header: &hdfspb.BaseHeaderProto{Block: blk, Token: mint(blocktoken.Copy)},
		DelHint: proto.String(""), Source: &hdfspb.DatanodeInfoProto{Id: &hdfspb.DatanodeIDProto{IpAddr: proto.String("127.0.0.1"), HostName: proto.String("x"), DatanodeUuid: proto.String("x"), XferPort: proto.Uint32(1), InfoPort: proto.Uint32(1), IpcPort: proto.Uint32(1)}}}), "doesn't have REPLACE permission")

	// WRITE_BLOCK PIPELINE_CLOSE_RECOVERY without a token is refused and
	// the replica keeps its generation stamp and stays readable.
	closeRec := &hdfspb.OpWriteBlockProto{Header: &hdfspb.ClientOperationHeaderProto{BaseHeader: &hdfspb.BaseHeaderProto{Block: blk, Token: noToken}, ClientName: proto.String("x")},
		Stage: hdfspb.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY.Enum(), PipelineSize: proto.Uint32(1), MinBytesRcvd: proto.Uint64(0), MaxBytesRcvd: proto.Uint64(0),
		LatestGenerationStamp: proto.Uint64(locs[0].GenStamp + 100),
		RequestedChecksum:     &hdfspb.ChecksumProto{Type: hdfspb.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(), BytesPerChecksum: proto.Uint32(512)}}
	wantRefused(t, "WRITE_BLOCK PIPELINE_CLOSE_RECOVERY", rawOp(t, addr, datatransfer.OpWriteBlock, closeRec), "Block token")
	if info, ok := dn.Dataset().Get(locs[0].BlockID); !ok || info.GenStamp != locs[0].GenStamp {
		t.Errorf("after a refused close recovery the replica is %+v (present %v), want generation stamp %d", info, ok, locs[0].GenStamp)
	}

	// An unsolicited WRITE_BLOCK (a new block, with a pipeline target)
	// is refused: no replica, no rbw file, no connection to the target.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	dialled := make(chan struct{}, 10)
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			dialled <- struct{}{}
			c.Close()
		}
	}()
	_, portS, _ := net.SplitHostPort(lis.Addr().String())
	port := uint32(0)
	for _, ch := range portS {
		port = port*10 + uint32(ch-'0')
	}
	target := &hdfspb.DatanodeInfoProto{Id: &hdfspb.DatanodeIDProto{IpAddr: proto.String("127.0.0.1"), HostName: proto.String("evil"), DatanodeUuid: proto.String("evil"), XferPort: proto.Uint32(port), InfoPort: proto.Uint32(1), IpcPort: proto.Uint32(1)}}
	newBlk := &hdfspb.ExtendedBlockProto{PoolId: proto.String(pool), BlockId: proto.Uint64(1 << 50), GenerationStamp: proto.Uint64(1), NumBytes: proto.Uint64(0)}
	create := proto.Clone(closeRec).(*hdfspb.OpWriteBlockProto)
	create.Header.BaseHeader.Block = newBlk
	create.Stage = hdfspb.OpWriteBlockProto_PIPELINE_SETUP_CREATE.Enum()
	create.LatestGenerationStamp = proto.Uint64(1)
	create.Targets = []*hdfspb.DatanodeInfoProto{target}
	create.PipelineSize = proto.Uint32(2)
	wantRefused(t, "unsolicited WRITE_BLOCK with a target", rawOp(t, addr, datatransfer.OpWriteBlock, create), "Block token")
	// TRANSFER_BLOCK to an arbitrary host:port.
	transfer := &hdfspb.OpTransferBlockProto{Header: &hdfspb.ClientOperationHeaderProto{BaseHeader: &hdfspb.BaseHeaderProto{Block: blk, Token: mint(blocktoken.Read)}, ClientName: proto.String("x")},
		Targets: []*hdfspb.DatanodeInfoProto{target}}
	wantRefused(t, "TRANSFER_BLOCK with a READ token", rawOp(t, addr, datatransfer.OpTransferBlock, transfer), "doesn't have COPY permission")
	if _, ok := dn.Dataset().Get(1 << 50); ok {
		t.Error("a refused WRITE_BLOCK left a replica")
	}
	checkNoRBW(t, c.VolumeDir(src, 0))
	select {
	case <-dialled:
		t.Error("a refused op made the DataNode dial its target")
	case <-time.After(200 * time.Millisecond):
	}

	// TRANSFER_BLOCK with a COPY token to the other DataNode: the copy
	// carries the DataNode's own WRITE token, which the target accepts.
	oid := c.DataNode(other)
	_, oportS, _ := net.SplitHostPort(c.DataNodeAddr(other))
	oport := uint32(0)
	for _, ch := range oportS {
		oport = oport*10 + uint32(ch-'0')
	}
	transfer.Header.BaseHeader.Token = mint(blocktoken.Copy)
	transfer.Targets = []*hdfspb.DatanodeInfoProto{{Id: &hdfspb.DatanodeIDProto{IpAddr: proto.String("127.0.0.1"), HostName: proto.String("dn"), DatanodeUuid: proto.String(oid.UUID()), XferPort: proto.Uint32(oport), InfoPort: proto.Uint32(1), IpcPort: proto.Uint32(1)}}}
	if r := rawOp(t, addr, datatransfer.OpTransferBlock, transfer); r.GetStatus() != hdfspb.Status_SUCCESS {
		t.Fatalf("TRANSFER_BLOCK with a COPY token: %v %s", r.GetStatus(), r.GetMessage())
	}
	// SUCCESS means the target acknowledged the whole copy.
	if oid.Status().TokenRefusals != 0 {
		t.Errorf("the target refused %d tokens", oid.Status().TokenRefusals)
	}

	// A two-node write pipeline with the client's WRITE token: the first
	// node forwards the token and the second accepts it.
	pipeBlk := &hdfspb.ExtendedBlockProto{PoolId: proto.String(pool), BlockId: proto.Uint64(1<<50 + 7), GenerationStamp: proto.Uint64(1), NumBytes: proto.Uint64(0)}
	pconn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	bw, err := datatransfer.NewBlockWriter(ctx, pconn, datatransfer.WriteBlockConfig{ClientName: "x", Block: pipeBlk,
		Token: datanode.MintToken(dn, "alice", 1<<50+7, blocktoken.Write), Targets: transfer.Targets, LatestGenerationStamp: 1})
	if err != nil {
		t.Fatalf("pipeline with a WRITE token: %v", err)
	}
	bw.Write(data)
	if err := bw.Close(); err != nil {
		t.Fatalf("pipeline with a WRITE token: %v", err)
	}
	// (Close returned once both nodes acknowledged every packet; the
	// NameNode, which knows no such block, may delete the replicas now.)
	if oid.Status().TokenRefusals != 0 {
		t.Errorf("the second pipeline node refused the forwarded token")
	}

	// WebHDFS: CREATE as root with no redirect token, with one for
	// another path or user, refused; the NameNode's token works. The
	// redirect token is needed with DataTransferProtocol tokens off too
	// (off here, as the NameNode of this test issues none to its client).
	if imported {
		off, err := blocktoken.NewMaster(blocktoken.Config{BlockPoolID: pool})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if err := datanode.ImportKeys(c.DataNode(i), blocktoken.KeysProto(off.ExportKeys())); err != nil {
				t.Fatal(err)
			}
		}
		if dn.BlockTokensEnabled() {
			t.Fatal("keys with enabled=false left tokens on")
		}
	}
	web := "http://" + dn.HTTPAddr() + "/webhdfs/v1"
	put := func(path, user, tok string) (int, string) {
		q := url.Values{"op": {"CREATE"}, "user.name": {user}}
		if tok != "" {
			q.Set(blocktoken.RedirectParam, tok)
		}
		req, _ := http.NewRequest("PUT", web+path+"?"+q.Encode(), strings.NewReader("hello"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct{ what, path, user, tok string }{
		{"no token", "/owned", "root", ""},
		{"another path's token", "/owned", "root", datanode.RedirectToken(dn, "root", "CREATE", "/elsewhere", blocktoken.Write)},
		{"another user's token", "/owned", "root", datanode.RedirectToken(dn, "bob", "CREATE", "/owned", blocktoken.Write)},
		{"an OPEN token", "/owned", "root", datanode.RedirectToken(dn, "root", "OPEN", "/owned", blocktoken.Read)},
		{"garbage", "/owned", "root", "x.y"},
	} {
		code, body := put(tc.path, tc.user, tc.tok)
		if code != 403 || !strings.Contains(body, `"exception":"InvalidToken"`) {
			t.Errorf("WebHDFS CREATE with %s: %d %s, want 403 InvalidToken", tc.what, code, body)
		}
	}
	if _, err := cl.Stat(ctx, "/owned"); !os.IsNotExist(err) {
		t.Errorf("refused CREATEs made /owned: %v", err)
	}
	if code, body := put("/owned", su, datanode.RedirectToken(dn, su, "CREATE", "/owned", blocktoken.Write)); code != 201 {
		t.Errorf("WebHDFS CREATE with the redirect token: %d %s", code, body)
	}
}

// checkNoRBW fails if any file is left under an rbw directory of vol.
func checkNoRBW(t *testing.T, vol string) {
	t.Helper()
	filepath.Walk(vol, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && strings.Contains(p, string(filepath.Separator)+"rbw"+string(filepath.Separator)) {
			t.Errorf("rbw file left behind: %s", p)
		}
		return nil
	})
}
