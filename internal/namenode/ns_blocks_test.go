package namenode

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/storage"
)

// TestWriteThenReplicateAfterDeadNode drives the Namesystem as the RPC
// adapters do, with a fake clock and no sockets: DataNodes register, a
// file is written and closed, one holder of its block stops heartbeating,
// and the block monitor has the other holder copy the block to the spare
// node.
func TestWriteThenReplicateAfterDeadNode(t *testing.T) {
	ns, _ := testNS(t)
	now := time.Unix(1_700_000_000, 0)
	ns.now = func() time.Time { return now }
	ctx := as("hdfs")
	nodes := []string{"dn1", "dn2", "dn3"}
	registerDisks(t, ns, nodes...)
	st, err := ns.Create(ctx, "/f", CreateOptions{ClientName: "c", Perm: 0o644, Replication: 2})
	mustOK(t, err)
	lb, err := ns.AddBlock(ctx, AddBlockRequest{Path: "/f", Client: "c", FileID: st.FileID})
	mustOK(t, err)
	if len(lb.Locs) != 2 {
		t.Fatalf("pipeline %+v, want 2 nodes", lb.Locs)
	}
	// The pipeline's nodes report the finished replica.
	holders := map[string]bool{}
	for _, loc := range lb.Locs {
		holders[loc.Node.UUID] = true
		mustOK(t, ns.ReceivedDeleted(loc.Node.UUID, []blockmgmt.StorageReceivedDeleted{{StorageID: loc.StorageID,
			Received: []blockmgmt.ReportedReplica{{ID: lb.Block.ID, GenStamp: lb.Block.GenStamp, NumBytes: 10, Finalized: true}}}}))
	}
	done, err := ns.CompleteFile(ctx, "/f", st.FileID, "c", &namespace.BlockInfo{ID: lb.Block.ID, GenStamp: lb.Block.GenStamp, NumBytes: 10})
	if !done || err != nil {
		t.Fatalf("complete: %v %v", done, err)
	}
	var spare, survivor, lost string
	for _, n := range nodes {
		switch {
		case !holders[n]:
			spare = n
		case survivor == "":
			survivor = n
		default:
			lost = n
		}
	}
	now = now.Add(631 * time.Second)
	ns.Heartbeat(blockmgmt.Heartbeat{UUID: survivor})
	ns.Heartbeat(blockmgmt.Heartbeat{UUID: spare})
	ns.blockMonitor(now)
	if dead := ns.DatanodeReport(blockmgmt.ReportDead); len(dead) != 1 || dead[0].UUID != lost {
		t.Fatalf("dead nodes %+v, want %s", dead, lost)
	}
	cmds := ns.Heartbeat(blockmgmt.Heartbeat{UUID: survivor})
	if len(cmds) != 1 || cmds[0].Kind != blockmgmt.Transfer || len(cmds[0].Targets) != 1 || cmds[0].Targets[0].Node.UUID != spare {
		t.Fatalf("survivor's commands %+v, want a transfer to %s", cmds, spare)
	}
	if st := ns.Stats(); st.UnderReplicated != 1 || st.PendingReplication != 0 {
		t.Errorf("stats %+v", st)
	}
	// Reads are served from the surviving replica only.
	lbs, err := ns.BlockLocations(context.Background(), "/f", 0, 10, "")
	mustOK(t, err)
	if len(lbs.Blocks) != 1 || len(lbs.Blocks[0].Locs) != 1 || lbs.Blocks[0].Locs[0].Node.UUID != survivor {
		t.Errorf("locations %+v", lbs.Blocks)
	}
}

// TestDeleteInvalidatesReplicas: deleting a file queues the deletion of
// its replicas for the DataNodes that hold them.
func TestDeleteInvalidatesReplicas(t *testing.T) {
	ns, _ := testNS(t)
	ctx := as("hdfs")
	mustOK(t, ns.RegisterDatanode(blockmgmt.Registration{UUID: "dn1", IP: "10.0.0.1", XferPort: 9866,
		Storages: []blockmgmt.StorageReport{{ID: "s1", Type: storage.Disk, Remaining: 1 << 30}}}, ""))
	st, err := ns.Create(ctx, "/f", CreateOptions{ClientName: "c", Perm: 0o644, Replication: 1})
	mustOK(t, err)
	lb, err := ns.AddBlock(ctx, AddBlockRequest{Path: "/f", Client: "c", FileID: st.FileID})
	mustOK(t, err)
	mustOK(t, ns.ReceivedDeleted("dn1", []blockmgmt.StorageReceivedDeleted{{StorageID: "s1",
		Received: []blockmgmt.ReportedReplica{{ID: lb.Block.ID, GenStamp: lb.Block.GenStamp, NumBytes: 5, Finalized: true}}}}))
	done, err := ns.CompleteFile(ctx, "/f", st.FileID, "c", &namespace.BlockInfo{ID: lb.Block.ID, GenStamp: lb.Block.GenStamp, NumBytes: 5})
	if !done || err != nil {
		t.Fatalf("complete: %v %v", done, err)
	}
	if ok, err := ns.Delete(ctx, "/f", false); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	// The node is told to delete it (twice over, today: as a replica
	// holder and as a member of the block's write pipeline).
	cmds := ns.Heartbeat(blockmgmt.Heartbeat{UUID: "dn1"})
	if len(cmds) != 1 || cmds[0].Kind != blockmgmt.Invalidate || len(cmds[0].Blocks) == 0 {
		t.Fatalf("commands after delete: %+v", cmds)
	}
	for _, b := range cmds[0].Blocks {
		if b.ID != lb.Block.ID || b.GenStamp != lb.Block.GenStamp {
			t.Errorf("invalidates %+v, want only blk_%d_%d", b, lb.Block.ID, lb.Block.GenStamp)
		}
	}
}

// A NameNode that learnt of an empty block from the log (a new active
// after a failover) has no pipeline targets for it in memory; a retried
// addBlock must get a pipeline, not a block without locations.
func TestRetriedAddBlockWithoutTargets(t *testing.T) {
	ns, _ := testNS(t)
	ctx := as("hdfs")
	registerDisks(t, ns, "dn1", "dn2")
	st, err := ns.Create(ctx, "/f", CreateOptions{ClientName: "c", Perm: 0o644, Replication: 2})
	mustOK(t, err)
	first, err := ns.AddBlock(ctx, AddBlockRequest{Path: "/f", Client: "c", FileID: st.FileID})
	mustOK(t, err)
	ns.mu.Lock()
	b := ns.tree.Blocks.Get(first.Block.ID)
	b.Expected = nil // as a standby that applied the edit has it
	ns.mu.Unlock()
	again, err := ns.AddBlock(ctx, AddBlockRequest{Path: "/f", Client: "c", FileID: st.FileID})
	mustOK(t, err)
	if again.Block.ID != first.Block.ID || len(again.Locs) != 2 {
		t.Fatalf("retried addBlock = blk_%d with %d locations, want blk_%d with 2", again.Block.ID, len(again.Locs), first.Block.ID)
	}
}

// registerDisks registers DataNodes with one 1 GiB DISK storage each, at
// 10.0.0.1, 10.0.0.2, ...
func registerDisks(t *testing.T, ns *Namesystem, uuids ...string) {
	t.Helper()
	for i, uuid := range uuids {
		reg := blockmgmt.Registration{UUID: uuid, IP: fmt.Sprintf("10.0.0.%d", i+1), XferPort: 9866,
			Storages: []blockmgmt.StorageReport{{ID: uuid + "-s0", Type: storage.Disk, Capacity: 1 << 30, Remaining: 1 << 30}}}
		mustOK(t, ns.RegisterDatanode(reg, ""))
	}
}
