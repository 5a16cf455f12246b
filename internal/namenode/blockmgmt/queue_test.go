package blockmgmt

import "testing"

// The replication monitor's passes check the blocks with work to do: all
// of them once, then only what events queue, and a block stays queued
// while it is under-replicated.
func TestReplicationQueue(t *testing.T) {
	h := newHarness(t, testConfig())
	for _, n := range []string{"dn1", "dn2", "dn3"} {
		h.addNode(n, disk(1<<40))
	}
	var blocks []*Block
	for i := 0; i < 50; i++ {
		_, bs := h.addFile(2, "HOT", mb)
		blocks = append(blocks, bs...)
	}
	for _, b := range blocks {
		h.place(b, "dn1", "dn2")
	}
	if got := h.m.Queued(); got != len(blocks) {
		t.Fatalf("first pass would check %d blocks, want all %d", got, len(blocks))
	}
	st := h.m.Replicate(h.now)
	if st.Blocks != 50 || st.UnderReplicated != 0 || h.m.Queued() != 0 {
		t.Fatalf("after a pass over healthy blocks: %+v, %d queued", st, h.m.Queued())
	}
	// A replica lost: its block, and only it, is checked, and stays
	// queued (under-replicated) until the copy arrives.
	lost := blocks[7]
	if err := h.m.ReceivedDeleted("dn2", []StorageReceivedDeleted{{StorageID: sid("dn2", 0), Deleted: []uint64{lost.ID}}}); err != nil {
		t.Fatal(err)
	}
	if h.m.Queued() != 1 {
		t.Fatalf("%d blocks queued after one replica went, want 1", h.m.Queued())
	}
	st = h.m.Replicate(h.now)
	if st.UnderReplicated != 1 || h.m.Pending() != 1 || h.m.Queued() != 1 {
		t.Fatalf("after the loss: %+v, %d pending, %d queued", st, h.m.Pending(), h.m.Queued())
	}
	cmds := h.heartbeat("dn1")
	if len(cmds) != 1 || cmds[0].Kind != Transfer || len(cmds[0].Targets) != 1 {
		t.Fatalf("dn1 told %s, want one transfer", describe(cmds))
	}
	h.place(lost, cmds[0].Targets[0].Node.UUID)
	st = h.m.Replicate(h.now)
	if st.UnderReplicated != 0 || h.m.Pending() != 0 || h.m.Queued() != 0 {
		t.Fatalf("after the copy arrived: %+v, %d pending, %d queued", st, h.m.Pending(), h.m.Queued())
	}
	// A node dies: every block it held is queued, and they are counted
	// under-replicated until copied.
	held := 0
	for _, b := range blocks {
		if b.Replicas.Of(sid("dn2", 0)) != nil {
			held++
		}
	}
	h.m.markDead(h.m.dns.byUUID["dn2"])
	if h.m.Queued() != held {
		t.Fatalf("%d blocks queued after dn2 died, want its %d", h.m.Queued(), held)
	}
	if st = h.m.Replicate(h.now); st.UnderReplicated != held {
		t.Fatalf("after dn2 died: %+v, want %d under-replicated", st, held)
	}
	// A dropped block leaves the counts.
	h.blocks.Drop(blocks[0])
	if st = h.m.Replicate(h.now); st.UnderReplicated != held-1 || st.Blocks != 49 {
		t.Fatalf("after a drop: %+v", st)
	}
	// A file's replication raised outside block management
	// (BlockMap.Changed): its block is checked again.
	h.advance(10 * 60e9) // the transfers time out
	h.m.Replicate(h.now)
	f := blocks[7].File.(*fakeFile)
	f.repl = 3
	h.blocks.Changed(blocks[7].ID)
	before := h.m.Queued()
	if !queued(h.m, blocks[7].ID) || before == 0 {
		t.Fatal("a changed block is not queued")
	}
}

func queued(m *Manager, id uint64) bool {
	return m.blocks.Get(id).queued || m.needed.all
}

// TestSweepFindsMissedBlocks: blocks whose need changed behind the
// Manager's back (no event queued them) are checked by the round-robin
// sweep, sweepSize of them a pass, until every one is.
func TestSweepFindsMissedBlocks(t *testing.T) {
	h := newHarness(t, testConfig())
	h.addNode("dn1", disk(100*mb))
	h.addNode("dn2", disk(100*mb))
	const n = 2500
	lengths := make([]int64, n)
	for i := range lengths {
		lengths[i] = 10
	}
	f, bs := h.addFile(1, "HOT", lengths...)
	reps := make([]ReportedReplica, n)
	for i, b := range bs {
		reps[i] = finalized(b)
	}
	h.report("dn1", 0, reps...)
	if st := h.m.Replicate(h.now); st.UnderReplicated != 0 || h.m.Queued() != 0 {
		t.Fatalf("after the first pass: stats %+v, %d queued", st, h.m.Queued())
	}
	f.repl = 2 // no BlockMap.Changed: the queue does not hear of it
	per := sweepSize(n)
	for pass := 1; pass <= (n+per-1)/per; pass++ {
		st := h.m.Replicate(h.now)
		if want := min(n, pass*per); st.UnderReplicated != want {
			t.Fatalf("pass %d: %d under-replicated, want %d", pass, st.UnderReplicated, want)
		}
	}
}

// TestWatched: the block map's Changed is worth calling only while the
// Manager is active and has no pass over every block ahead.
func TestWatched(t *testing.T) {
	if NewBlockMap().Watched() {
		t.Error("a block map without a Manager is watched")
	}
	h := newHarness(t, testConfig())
	if h.blocks.Watched() {
		t.Error("watched with a full pass ahead")
	}
	h.m.Replicate(h.now)
	if !h.blocks.Watched() {
		t.Error("not watched after the full pass")
	}
	h.m.SetStandby(true)
	if h.blocks.Watched() {
		t.Error("watched on a standby")
	}
	h.m.SetStandby(false)
	h.m.Replicate(h.now)
	h.blocks.ChangedAll()
	if h.blocks.Watched() {
		t.Error("watched after ChangedAll")
	}
}

// TestRepeatedReportQueuesNothing: a DataNode's periodic full report of
// the replicas the NameNode already knows changes nothing and gives the
// replication monitor no work; what it leaves out is removed and
// checked, and a replica marked corrupt stays so when reported again
// unchanged (only its deletion clears it).
func TestRepeatedReportQueuesNothing(t *testing.T) {
	h := newHarness(t, testConfig())
	h.addNode("dn1", disk(1<<40))
	var reps []ReportedReplica
	var blocks []*Block
	for range 20 {
		_, bs := h.addFile(1, "HOT", mb)
		blocks = append(blocks, bs...)
		reps = append(reps, finalized(bs[0]))
	}
	h.report("dn1", 0, reps...)
	h.m.Replicate(h.now)
	if q := h.m.Queued(); q != 0 {
		t.Fatalf("%d blocks queued after the first pass, want 0", q)
	}
	h.report("dn1", 0, reps...)
	if q := h.m.Queued(); q != 0 {
		t.Fatalf("a repeated report queued %d blocks, want 0", q)
	}
	h.m.ReportBadReplicas([]BadReplica{{BlockID: blocks[3].ID, StorageID: sid("dn1", 0)}})
	h.m.Replicate(h.now)
	h.report("dn1", 0, append(reps[:5:5], reps[6:]...)...)
	if got := h.m.Queued(); got != 2 { // the corrupt one stays queued, the left-out one joins it
		t.Errorf("%d blocks queued after a report without one replica, want 2", got)
	}
	if blocks[5].Replicas.Of(sid("dn1", 0)) != nil || h.m.Storage(sid("dn1", 0)).Blocks[blocks[5].ID] != nil {
		t.Errorf("the replica left out of the report is still recorded")
	}
	if r := blocks[3].Replicas.Of(sid("dn1", 0)); r == nil || !r.Corrupt {
		t.Errorf("replica marked corrupt, reported again unchanged: %+v, want still corrupt", r)
	}
}
