package blockmgmt

import (
	"slices"
	"testing"
	"time"
)

// TestStandbyPostponesReports drives a standby through reports that run
// ahead of its namespace: each case reports replicas (full, incremental,
// bad-block), then lets edits arrive (the block is added, or its
// generation stamp raised) and calls ProcessQueued, and optionally makes
// the Manager active. It checks what is held back, what is recorded and
// that the standby queued no command.
func TestStandbyPostponesReports(t *testing.T) {
	type step struct {
		report   func(h *harness, next ReportedReplica) // next: a replica of the block the edits will add
		edit     bool                                   // the edit adding the block arrives, then ProcessQueued
		activate bool                                   // SetStandby(false)
	}
	tests := []struct {
		name        string
		steps       []step
		wantQueued  int
		wantHolders []string // good replicas of the block, if it exists
		wantCorrupt int
		wantCmds    string // commands for dn1 after the steps
	}{
		{
			name: "full report of a block not known yet: held, then recorded",
			steps: []step{
				{report: func(h *harness, r ReportedReplica) { h.report("dn1", 0, r) }},
				{edit: true},
			},
			wantHolders: []string{"dn1"},
		},
		{
			name: "incremental report of a block not known yet: held, then recorded",
			steps: []step{
				{report: func(h *harness, r ReportedReplica) { h.received("dn1", r) }},
				{edit: true},
			},
			wantHolders: []string{"dn1"},
		},
		{
			name: "without the edit it stays held and nothing is invalidated",
			steps: []step{
				{report: func(h *harness, r ReportedReplica) { h.report("dn1", 0, r) }},
			},
			wantQueued: 1,
		},
		{
			name: "still unknown when the standby becomes active: invalidated",
			steps: []step{
				{report: func(h *harness, r ReportedReplica) { h.report("dn1", 0, r) }},
				{activate: true},
			},
			wantCmds: "invalidate b2@1002",
		},
		{
			name: "deleted before the edit: the held report goes",
			steps: []step{
				{report: func(h *harness, r ReportedReplica) { h.received("dn1", r) }},
				{report: func(h *harness, r ReportedReplica) { h.deleted("dn1", r.ID) }},
				{edit: true},
			},
			wantHolders: nil,
		},
		{
			name: "a newer full report without the replica supersedes the held one",
			steps: []step{
				{report: func(h *harness, r ReportedReplica) { h.received("dn1", r) }},
				{report: func(h *harness, r ReportedReplica) { h.report("dn1", 0) }},
				{edit: true},
			},
		},
		{
			name: "a DataNode's bad-block report follows its held replica",
			steps: []step{
				{report: func(h *harness, r ReportedReplica) { h.received("dn1", r) }},
				{report: func(h *harness, r ReportedReplica) {
					h.m.DatanodeReportBadReplicas(sid("dn1", 0), []uint64{r.ID}, "checksum")
				}},
				{edit: true},
			},
			wantCorrupt: 1,
		},
		{
			name: "re-registration drops the node's held reports",
			steps: []step{
				{report: func(h *harness, r ReportedReplica) { h.received("dn1", r) }},
				{report: func(h *harness, r ReportedReplica) { h.addNode("dn1", disk(10*mb)) }},
				{edit: true},
			},
		},
		{
			name: "a report with an older generation stamp is held until active, then corrupt",
			steps: []step{
				{edit: true},
				{report: func(h *harness, r ReportedReplica) { r.GenStamp--; h.report("dn1", 0, r) }},
				{report: func(h *harness, r ReportedReplica) { h.report("dn2", 0, r) }},
			},
			wantQueued:  1,
			wantHolders: []string{"dn2"},
		},
		{
			name: "older generation stamp, then active: recorded corrupt",
			steps: []step{
				{edit: true},
				{report: func(h *harness, r ReportedReplica) { r.GenStamp--; h.report("dn1", 0, r) }},
				{activate: true},
			},
			wantCorrupt: 1,
		},
		{
			name: "an unfinished copy of a committed block is held, not invalidated",
			steps: []step{
				{edit: true},
				{report: func(h *harness, r ReportedReplica) { r.Finalized = false; h.received("dn1", r) }},
			},
			wantQueued: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			h.addNode("dn1", disk(10*mb))
			h.addNode("dn2", disk(10*mb))
			h.addFile(1, "HOT", mb) // b1: known to everyone
			h.m.SetStandby(true)
			next := ReportedReplica{ID: h.blocks.LastID() + 1, GenStamp: h.blocks.LastGenStamp() + 1, NumBytes: mb, Finalized: true}
			var b *Block
			for _, s := range tt.steps {
				if s.report != nil {
					s.report(h, next)
				}
				if s.edit {
					_, bs := h.addFile(2, "HOT", mb)
					b = bs[0]
					if b.ID != next.ID || b.GenStamp != next.GenStamp {
						t.Fatalf("edit made %s, want blk_%d_%d", b, next.ID, next.GenStamp)
					}
					h.m.ProcessQueued()
				}
				if s.activate {
					h.m.SetStandby(false)
				}
				if h.m.Standby() {
					if c := h.allCommands("dn1", "dn2"); c != "" {
						t.Fatalf("a standby queued commands: %s", c)
					}
				}
			}
			if q, _ := h.m.QueuedReports(); q != tt.wantQueued {
				t.Errorf("queued %d reports, want %d", q, tt.wantQueued)
			}
			if b == nil {
				b = h.blocks.Get(next.ID)
			}
			if b != nil {
				if got := holders(b); !slices.Equal(got, tt.wantHolders) {
					t.Errorf("good replicas on %v, want %v", got, tt.wantHolders)
				}
				corrupt := 0
				for _, r := range b.Replicas {
					if r.Corrupt {
						corrupt++
					}
				}
				if corrupt != tt.wantCorrupt {
					t.Errorf("%d corrupt replicas, want %d", corrupt, tt.wantCorrupt)
				}
			} else if tt.wantHolders != nil || tt.wantCorrupt != 0 {
				t.Errorf("block never added")
			}
			if got := describe(h.heartbeat("dn1")); got != tt.wantCmds {
				t.Errorf("dn1's commands %q, want %q", got, tt.wantCmds)
			}
		})
	}
}

// TestStandbyFutureGenStamp: a replica at a generation stamp the standby
// has not reached yet is held until the edit raising it arrives, then
// counts.
func TestStandbyFutureGenStamp(t *testing.T) {
	h := newHarness(t, testConfig())
	h.addNode("dn1", disk(10*mb))
	_, bs := h.addFile(1, "HOT", mb)
	b := bs[0]
	h.m.SetStandby(true)
	r := finalized(b)
	r.GenStamp++
	h.received("dn1", r)
	if q, _ := h.m.QueuedReports(); q != 1 || len(b.Replicas) != 0 {
		t.Fatalf("queued %d, replicas %d; want the report held", q, len(b.Replicas))
	}
	if n := h.m.ProcessQueued(); n != 0 {
		t.Fatalf("ProcessQueued applied %d reports before any edit", n)
	}
	b.GenStamp++ // the edit of a pipeline recovery
	h.blocks.Note(b.ID, b.GenStamp)
	if n := h.m.ProcessQueued(); n != 1 {
		t.Fatalf("ProcessQueued applied %d reports, want 1", n)
	}
	if got := holders(b); !slices.Equal(got, []string{"dn1"}) {
		t.Fatalf("good replicas on %v", got)
	}
}

// TestStandbyQueueBound: past MaxQueuedReports the oldest held report is
// dropped and counted.
func TestStandbyQueueBound(t *testing.T) {
	cfg := testConfig()
	cfg.MaxQueuedReports = 2
	h := newHarness(t, cfg)
	h.addNode("dn1", disk(10*mb))
	h.m.SetStandby(true)
	first := h.blocks.LastID() + 1
	gs := h.blocks.LastGenStamp() + 1
	for i := range uint64(3) {
		h.received("dn1", ReportedReplica{ID: first + i, GenStamp: gs + i, NumBytes: mb, Finalized: true})
	}
	if q, dropped := h.m.QueuedReports(); q != 2 || dropped != 1 {
		t.Fatalf("queued %d, dropped %d; want 2, 1", q, dropped)
	}
	_, bs := h.addFile(1, "HOT", mb, mb, mb)
	h.m.ProcessQueued()
	var got []int
	for _, b := range bs {
		got = append(got, len(b.Replicas))
	}
	if !slices.Equal(got, []int{0, 1, 1}) {
		t.Fatalf("replicas per block %v, want the oldest report dropped", got)
	}
}

// TestStandbyIssuesNoCommands: a standby neither replicates nor recovers;
// entering standby drops the work already queued, and becoming active
// starts replicating.
func TestStandbyIssuesNoCommands(t *testing.T) {
	h := newHarness(t, testConfig())
	for _, n := range []string{"dn1", "dn2", "dn3"} {
		h.addNode(n, disk(10*mb))
	}
	_, bs := h.addFile(3, "HOT", mb)
	h.place(bs[0], "dn1")
	h.m.Replicate(h.now)
	h.m.SetStandby(true)
	if c := h.allCommands("dn1", "dn2", "dn3"); c != "" {
		t.Fatalf("standby kept the active's commands: %s", c)
	}
	h.m.Replicate(h.now)
	f, open := h.addFile(2, "HOT", 0)
	f.uc = true
	open[0].Committed = false
	h.place(open[0], "dn2")
	h.m.StartRecovery(open[0], open[0].GenStamp, false)
	if c := h.allCommands("dn1", "dn2", "dn3"); c != "" || h.m.Pending() != 0 || h.m.Recovering(open[0].ID) {
		t.Fatalf("standby issued work: %q, pending %d", c, h.m.Pending())
	}
	if done := h.m.FinishedRecoveries(h.now); done != nil {
		t.Fatalf("standby finished recoveries: %v", done)
	}
	// An edit deleting a file: the standby forgets the replicas, the
	// active tells the DataNodes.
	_, gone := h.addFile(1, "HOT", mb)
	h.place(gone[0], "dn3")
	h.blocks.Drop(gone[0])
	h.m.InvalidateRemoved()
	if c := h.allCommands("dn3"); c != "" {
		t.Fatalf("standby invalidated removed blocks: %s", c)
	}
	h.m.SetStandby(false)
	h.m.Replicate(h.now)
	if c := h.allCommands("dn1"); c != "dn1: transfer b1 -> dn2/DISK,dn3/DISK" {
		t.Fatalf("active's commands: %q", c)
	}
}

func (h *harness) received(node string, reps ...ReportedReplica) {
	h.t.Helper()
	if err := h.m.ReceivedDeleted(node, []StorageReceivedDeleted{{StorageID: sid(node, 0), Received: reps}}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) deleted(node string, ids ...uint64) {
	h.t.Helper()
	if err := h.m.ReceivedDeleted(node, []StorageReceivedDeleted{{StorageID: sid(node, 0), Deleted: ids}}); err != nil {
		h.t.Fatal(err)
	}
}

// TestStandbyAdvancesMaintenance: a standby moves a node entering
// maintenance to In Maintenance (its view of the blocks says it may), so
// when the node goes down the standby keeps its replicas and, after a
// failover, nothing is re-replicated for it.
func TestStandbyAdvancesMaintenance(t *testing.T) {
	cfg := testConfig()
	cfg.MaintenanceMinReplication = 1
	h := newHarness(t, cfg)
	for _, n := range []string{"dn1", "dn2", "dn3"} {
		h.addNode(n, disk(100*mb))
	}
	_, bs := h.addFile(2, "HOT", mb)
	h.place(bs[0], "dn1", "dn2")
	h.m.SetStandby(true)
	h.m.SetHosts(&Hosts{Rules: []HostRule{{Entry: HostEntry{Host: "10.0.0.1"}, State: InMaintenance}}})
	d := h.m.dns.byUUID["dn1"]
	h.m.Replicate(h.now)
	if d.AdminState != InMaintenance {
		t.Fatalf("standby left the node %v", d.AdminState)
	}
	h.advance(cfg.HeartbeatExpiry + time.Second)
	h.heartbeat("dn2")
	h.heartbeat("dn3")
	h.m.CheckHeartbeats(h.now)
	if !d.Dead || len(d.Storages[sid("dn1", 0)].Blocks) != 1 {
		t.Fatal("standby dropped the replicas of a node down for maintenance")
	}
	h.m.SetStandby(false)
	h.m.Replicate(h.now)
	if c := h.allCommands("dn2", "dn3"); c != "" {
		t.Fatalf("after failover: %q, want nothing copied for a node in maintenance", c)
	}
}
