package datanode_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/testcluster"
)

// targetOf is a pipeline target for a DataNode's transfer address.
func targetOf(t *testing.T, addr string) *hdfspb.DatanodeInfoProto {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return &hdfspb.DatanodeInfoProto{Id: &hdfspb.DatanodeIDProto{IpAddr: proto.String(host), HostName: proto.String(host),
		DatanodeUuid: proto.String(addr), XferPort: proto.Uint32(uint32(p)), InfoPort: proto.Uint32(0), IpcPort: proto.Uint32(0)}}
}

// PIPELINE_CLOSE_RECOVERY through a three-node pipeline whose replicas
// are RBW on two nodes and FINALIZED on the last (a node that finalized
// before the close-stage failure): every node takes the new generation
// stamp and finalizes, the op is forwarded down the pipeline, the
// NameNode learns the replicas (complete succeeds with the new
// generation stamp), and a failed mirror is named in firstBadLink while
// the nodes before it are still recovered.
func TestPipelineCloseRecovery(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 3})
	cl := c.Client(c.Superuser())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const p = "/closerec"
	const name = "DFSClient_closerec"
	data := bytes.Repeat([]byte("close recovery "), 200)
	n := int64(len(data))
	// Create the file and its block with raw calls (this test holds the
	// lease), then write the data through the pipeline with an hflush:
	// three RBW replicas with every byte acknowledged.
	var cr hdfspb.CreateResponseProto
	if err := cl.Call(ctx, "create", &hdfspb.CreateRequestProto{Src: proto.String(p), Masked: &hdfspb.FsPermissionProto{Perm: proto.Uint32(0o644)},
		ClientName: proto.String(name), CreateFlag: proto.Uint32(1), CreateParent: proto.Bool(true), Replication: proto.Uint32(3), BlockSize: proto.Uint64(1 << 20)}, &cr); err != nil {
		t.Fatal(err)
	}
	var ab hdfspb.AddBlockResponseProto
	if err := cl.Call(ctx, "addBlock", &hdfspb.AddBlockRequestProto{Src: proto.String(p), ClientName: proto.String(name), FileId: proto.Uint64(cr.GetFs().GetFileId())}, &ab); err != nil {
		t.Fatal(err)
	}
	lb := ab.GetBlock()
	nodes := lb.GetLocs()
	if len(nodes) != 3 {
		t.Fatalf("pipeline of %d nodes", len(nodes))
	}
	addrs := make([]string, 3)
	var dns []*datanode.DataNode
	for i, d := range nodes {
		addrs[i] = net.JoinHostPort(d.GetId().GetIpAddr(), strconv.Itoa(int(d.GetId().GetXferPort())))
		dns = append(dns, c.DataNode(c.DataNodeByAddr(addrs[i])))
	}
	conn, err := net.DialTimeout("tcp", addrs[0], 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	bw, err := datatransfer.NewBlockWriter(ctx, conn, datatransfer.WriteBlockConfig{ClientName: name, Block: lb.GetB(), Token: lb.GetBlockToken(),
		Targets: nodes[1:]})
	if err != nil {
		t.Fatal(err)
	}
	defer bw.Abort()
	if _, err := bw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(false); err != nil {
		t.Fatal(err)
	}
	blockID, oldGS := lb.GetB().GetBlockId(), lb.GetB().GetGenerationStamp()
	old := fsdataset.Block{ID: blockID, GenStamp: oldGS, NumBytes: n}
	// The last node finalizes (with the old generation stamp) as if it had
	// received the last packet before the failure.
	if err := dns[2].Dataset().UpdateFinalizedGenStamp(old, oldGS); err != nil {
		t.Fatal(err)
	}

	eb := proto.Clone(lb.GetB()).(*hdfspb.ExtendedBlockProto)
	eb.NumBytes = proto.Uint64(uint64(n))
	var ub hdfspb.UpdateBlockForPipelineResponseProto
	if err := cl.Call(ctx, "updateBlockForPipeline", &hdfspb.UpdateBlockForPipelineRequestProto{Block: eb, ClientName: proto.String(name)}, &ub); err != nil {
		t.Fatal(err)
	}
	newGS := ub.GetBlock().GetB().GetGenerationStamp()
	tok := ub.GetBlock().GetBlockToken()
	if newGS <= oldGS {
		t.Fatalf("new generation stamp %d after %d", newGS, oldGS)
	}
	recoverClose := func(gs uint64, first string, rest ...string) error {
		var targets []*hdfspb.DatanodeInfoProto
		for _, a := range rest {
			targets = append(targets, targetOf(t, a))
		}
		conn, err := net.DialTimeout("tcp", first, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return datatransfer.CloseRecovery(ctx, conn, datatransfer.WriteBlockConfig{ClientName: "recoverer", Block: eb, Token: tok,
			Targets: targets, LatestGenerationStamp: gs, MinBytesRcvd: n, MaxBytesRcvd: n})
	}
	if err := recoverClose(newGS, addrs[0], addrs[1], addrs[2]); err != nil {
		t.Fatalf("close recovery: %v", err)
	}
	for i, dn := range dns {
		ri, ok := dn.Dataset().Get(blockID)
		if !ok || ri.State != fsdataset.Finalized || ri.GenStamp != newGS || ri.NumBytes != n {
			t.Errorf("node %d: replica %+v (found %v), want FINALIZED with generation stamp %d and %d bytes", i, ri, ok, newGS, n)
		}
	}

	// The NameNode takes the new pipeline and the file completes: the
	// replicas were reported with the new generation stamp.
	nb := proto.Clone(eb).(*hdfspb.ExtendedBlockProto)
	nb.GenerationStamp = proto.Uint64(newGS)
	var ids []*hdfspb.DatanodeIDProto
	for _, d := range nodes {
		ids = append(ids, d.GetId())
	}
	up := &hdfspb.UpdatePipelineRequestProto{ClientName: proto.String(name), OldBlock: eb, NewBlock: nb, NewNodes: ids, StorageIDs: lb.GetStorageIDs()}
	if err := cl.Call(ctx, "updatePipeline", up, &hdfspb.UpdatePipelineResponseProto{}); err != nil {
		t.Fatal(err)
	}
	completed := false
	for i := 0; i < 100 && !completed; i++ {
		var resp hdfspb.CompleteResponseProto
		if err := cl.Call(ctx, "complete", &hdfspb.CompleteRequestProto{Src: proto.String(p), ClientName: proto.String(name), Last: nb, FileId: proto.Uint64(cr.GetFs().GetFileId())}, &resp); err != nil {
			t.Fatal(err)
		}
		completed = resp.GetResult()
		time.Sleep(50 * time.Millisecond)
	}
	if !completed {
		t.Fatal("complete never succeeded after the close recovery")
	}

	// A mirror that cannot be reached is the bad link; the nodes before
	// it are recovered all the same.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	eb.GenerationStamp = proto.Uint64(newGS)
	err = recoverClose(newGS+1, addrs[0], addrs[1], dead)
	var pe *datatransfer.PipelineError
	if !errors.As(err, &pe) || pe.BadIndex != 2 || pe.FirstBadLink != dead {
		t.Fatalf("close recovery with a dead last node: %v, want a failure at node 2 (%s)", err, dead)
	}
	for i, dn := range dns[:2] {
		if ri, _ := dn.Dataset().Get(blockID); ri.GenStamp != newGS+1 || ri.State != fsdataset.Finalized {
			t.Errorf("node %d after the second recovery: %+v", i, ri)
		}
	}
	// A replica shorter than minBytesRcvd is refused by that node.
	n++
	if err := recoverClose(newGS+2, addrs[2]); !errors.As(err, &pe) || pe.BadIndex != 0 || pe.Status != hdfspb.Status_ERROR {
		t.Fatalf("close recovery of a short replica: %v, want ERROR at node 0", err)
	}
}

// A pipeline node that fails after every data packet was acknowledged
// fails the last packet: the first node has then finalized its replica
// and refuses a streaming recovery. The client recovers in the close
// stage instead (PIPELINE_CLOSE_RECOVERY, forwarded by the first node to
// the third, whose replica is still RBW, with three), and the file
// completes on the remaining nodes with the new generation stamp.
func TestWriterRecoversInCloseStage(t *testing.T) {
	for _, repl := range []int{2, 3} {
		t.Run(fmt.Sprintf("replication %d", repl), func(t *testing.T) { writerRecoversInCloseStage(t, repl) })
	}
}

func writerRecoversInCloseStage(t *testing.T, repl int) {
	c := testcluster.New(t, testcluster.Config{DataNodes: repl})
	cl := c.Client(c.Superuser())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const p = "/closestage"
	data := bytes.Repeat([]byte("close stage "), 5000)
	fw, err := cl.CreateFile(ctx, p, fs.CreateOptions{Replication: repl})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := fw.Flush(); err != nil {
		t.Fatal(err)
	}
	locs, err := cl.BlockLocations(ctx, p)
	if err != nil || len(locs) != 1 || len(locs[0].Hosts) != repl {
		t.Fatalf("locations %v: %v", locs, err)
	}
	c.StopDataNode(c.DataNodeByAddr(locs[0].Hosts[1]))
	if err := fw.Close(); err != nil {
		t.Fatalf("Close after the second node failed: %v", err)
	}
	for i, h := range locs[0].Hosts {
		if i == 1 {
			continue
		}
		ri, ok := c.DataNode(c.DataNodeByAddr(h)).Dataset().Get(locs[0].BlockID)
		if !ok || ri.State != fsdataset.Finalized || ri.GenStamp <= locs[0].GenStamp || ri.NumBytes != int64(len(data)) {
			t.Errorf("node %d's replica %+v (found %v), want FINALIZED with a generation stamp after %d", i, ri, ok, locs[0].GenStamp)
		}
	}
	r, err := cl.Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes: %v", len(got), err)
	}
}
