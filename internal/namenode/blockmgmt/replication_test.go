package blockmgmt

import (
	"testing"
	"time"
)

// TestUnderReplication checks which blocks the monitor copies, from which
// replica and to where.
func TestUnderReplication(t *testing.T) {
	tests := []struct {
		name  string
		setup func(h *harness)
		want  string // every node's commands after one Replicate
	}{
		{
			name: "one replica of three: copy from it to the two other nodes",
			setup: func(h *harness) {
				_, bs := h.addFile(3, "HOT", 100)
				h.place(bs[0], "dn1")
			},
			want: "dn1: transfer b1 -> dn2/DISK,dn3/DISK",
		},
		{
			name: "source is the holder with the fewest streams",
			setup: func(h *harness) {
				_, bs := h.addFile(3, "HOT", 100)
				h.place(bs[0], "dn1", "dn2")
				h.m.dns.byUUID["dn1"].pendingTransfers = 1
			},
			want: "dn2: transfer b1 -> dn3/DISK",
		},
		{
			name: "lowest block id first when streams run out",
			setup: func(h *harness) {
				h.m.cfg.MaxReplicationStreams = 1
				_, bs := h.addFile(2, "HOT", 100, 100)
				h.place(bs[0], "dn1")
				h.place(bs[1], "dn1")
			},
			want: "dn1: transfer b1 -> dn2/DISK",
		},
		{
			name: "source at its stream limit copies nothing",
			setup: func(h *harness) {
				_, bs := h.addFile(2, "HOT", 100)
				h.place(bs[0], "dn1")
				h.m.dns.byUUID["dn1"].pendingTransfers = 2
			},
			want: "",
		},
		{
			name: "no target on a node that was just told to delete its copy",
			setup: func(h *harness) {
				_, bs := h.addFile(2, "HOT", 100)
				h.place(bs[0], "dn1")
				bs[0].Deleting = map[string]time.Time{"dn2": h.now.Add(-time.Minute)}
			},
			want: "dn1: transfer b1 -> dn3/DISK",
		},
		{
			name: "a deletion older than the replication timeout no longer excludes",
			setup: func(h *harness) {
				_, bs := h.addFile(3, "HOT", 100)
				h.place(bs[0], "dn1")
				bs[0].Deleting = map[string]time.Time{"dn2": h.now.Add(-10 * time.Minute)}
			},
			want: "dn1: transfer b1 -> dn2/DISK,dn3/DISK",
		},
		{
			name: "target needs room for the block",
			setup: func(h *harness) {
				_, bs := h.addFile(2, "HOT", 6*mb)
				h.place(bs[0], "dn1")
				// dn2 has 1 MB left only.
				h.m.dns.byStorage[sid("dn2", 0)].Remaining = mb
			},
			want: "dn1: transfer b1 -> dn3/DISK",
		},
		{
			name: "last block of a file being written is left alone",
			setup: func(h *harness) {
				f, bs := h.addFile(3, "HOT", 100)
				f.uc = true
				h.place(bs[0], "dn1")
			},
			want: "",
		},
		{
			name: "ONE_SSD: the missing SSD copy goes to an SSD volume",
			setup: func(h *harness) {
				h.addNode("dn4", ssd(10*mb))
				h.heartbeat("dn4")
				_, bs := h.addFile(2, "ONE_SSD", 100)
				h.place(bs[0], "dn1")
			},
			want: "dn1: transfer b1 -> dn4/SSD",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			for _, n := range []string{"dn1", "dn2", "dn3"} {
				h.addNode(n, disk(10*mb))
			}
			tt.setup(h)
			h.m.Replicate(h.now)
			if got := h.allCommands("dn1", "dn2", "dn3", "dn4"); got != tt.want {
				t.Errorf("commands:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestOverReplication checks which replica the monitor deletes.
func TestOverReplication(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		nodes  map[string]vol
		on     []string
		want   string
	}{
		{
			name:   "the copy on the storage with the least space goes",
			policy: "HOT",
			nodes:  map[string]vol{"dn1": disk(50 * mb), "dn2": disk(10 * mb), "dn3": disk(90 * mb), "dn4": disk(70 * mb)},
			on:     []string{"dn1", "dn2", "dn3", "dn4"},
			want:   "dn2: invalidate b1@1001",
		},
		{
			name:   "a copy the policy does not want goes first",
			policy: "ONE_SSD",
			nodes:  map[string]vol{"dn1": ssd(90 * mb), "dn2": disk(10 * mb), "dn3": disk(50 * mb), "dn4": disk(90 * mb)},
			on:     []string{"dn1", "dn2", "dn3", "dn4"},
			want:   "dn2: invalidate b1@1001",
		},
		{
			name:   "ALL_SSD keeps SSD copies over a roomier DISK one",
			policy: "ALL_SSD",
			nodes:  map[string]vol{"dn1": ssd(10 * mb), "dn2": ssd(20 * mb), "dn3": ssd(30 * mb), "dn4": disk(90 * mb)},
			on:     []string{"dn1", "dn2", "dn3", "dn4"},
			want:   "dn4: invalidate b1@1001",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			for _, n := range []string{"dn1", "dn2", "dn3", "dn4"} {
				h.addNode(n, tt.nodes[n])
			}
			_, bs := h.addFile(3, tt.policy, 100)
			h.place(bs[0], tt.on...)
			h.m.Replicate(h.now)
			if got := h.allCommands("dn1", "dn2", "dn3", "dn4"); got != tt.want {
				t.Errorf("commands:\n%s\nwant:\n%s", got, tt.want)
			}
			if got := len(GoodReplicas(bs[0])); got != 3 {
				t.Errorf("%d good replicas left, want 3", got)
			}
			// The node that deleted gets no new copy until it confirms.
			if len(bs[0].Deleting) != 1 {
				t.Errorf("deleting %v, want one node", bs[0].Deleting)
			}
		})
	}
}

// TestCorruptReplicas: a replica reported bad is deleted once a good copy
// exists and replaced; the last copy of a block is never deleted.
func TestCorruptReplicas(t *testing.T) {
	tests := []struct {
		name        string
		repl        int
		on          []string
		bad         []string // nodes whose copy a client reports bad
		want        string
		wantMissing int
		wantCorrupt int
	}{
		{
			name: "bad copy deleted and replaced while a good one exists",
			repl: 2, on: []string{"dn1", "dn2"}, bad: []string{"dn2"},
			want:        "dn1: transfer b1 -> dn3/DISK\ndn2: invalidate b1@1001",
			wantCorrupt: 1,
		},
		{
			name: "the only copy is kept even when corrupt",
			repl: 2, on: []string{"dn1"}, bad: []string{"dn1"},
			want:        "",
			wantMissing: 1, wantCorrupt: 1,
		},
		{
			name: "every copy corrupt: nothing is deleted",
			repl: 2, on: []string{"dn1", "dn2"}, bad: []string{"dn1", "dn2"},
			want:        "",
			wantMissing: 1, wantCorrupt: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			for _, n := range []string{"dn1", "dn2", "dn3"} {
				h.addNode(n, disk(10*mb))
			}
			_, bs := h.addFile(tt.repl, "HOT", 100)
			h.place(bs[0], tt.on...)
			var bad []BadReplica
			for _, n := range tt.bad {
				bad = append(bad, BadReplica{BlockID: bs[0].ID, DatanodeUUID: n})
			}
			h.m.ReportBadReplicas(bad)
			st := h.m.Replicate(h.now)
			if got := h.allCommands("dn1", "dn2", "dn3"); got != tt.want {
				t.Errorf("commands:\n%s\nwant:\n%s", got, tt.want)
			}
			if st.Missing != tt.wantMissing || st.Corrupt != tt.wantCorrupt {
				t.Errorf("stats %+v, want missing %d corrupt %d", st, tt.wantMissing, tt.wantCorrupt)
			}
			for _, n := range tt.bad {
				if len(tt.bad) == len(tt.on) {
					if bs[0].Replicas.Of(sid(n, 0)) == nil {
						t.Errorf("the corrupt copy on %s was forgotten", n)
					}
				}
			}
		})
	}
}

// TestCorruptReportSurvivesReport: a copy reported bad by its DataNode
// stays corrupt when the node reports the same copy again incrementally.
// (A full block report forgets the mark: it rebuilds the storage's list.)
func TestCorruptReportSurvivesReport(t *testing.T) {
	h := newHarness(t, testConfig())
	h.addNode("dn1", disk(10*mb))
	_, bs := h.addFile(1, "HOT", 100)
	h.report("dn1", 0, finalized(bs[0]))
	h.m.DatanodeReportBadReplicas(sid("dn1", 0), []uint64{bs[0].ID}, "checksum")
	h.place(bs[0], "dn1")
	if r := bs[0].Replicas.Of(sid("dn1", 0)); r == nil || !r.Corrupt {
		t.Fatalf("replica after re-report: %+v", r)
	}
}

// TestDeadNode: a DataNode silent for longer than the expiry is declared
// dead at the monitor's next check, its replicas stop counting and their
// blocks are copied elsewhere; one heartbeat short of that it lives.
func TestDeadNode(t *testing.T) {
	cfg := testConfig()
	h := newHarness(t, cfg)
	for _, n := range []string{"dn1", "dn2", "dn3"} {
		h.addNode(n, disk(10*mb))
	}
	_, bs := h.addFile(2, "HOT", 100)
	h.place(bs[0], "dn1", "dn2")

	h.advance(cfg.HeartbeatExpiry)
	h.heartbeat("dn1")
	h.heartbeat("dn3")
	h.m.CheckHeartbeats(h.now) // dn2 silent for exactly the expiry: alive
	if got := holders(bs[0]); !equal(got, []string{"dn1", "dn2"}) {
		t.Fatalf("at the expiry: holders %v", got)
	}
	h.advance(time.Millisecond)
	h.m.CheckHeartbeats(h.now)
	if got := holders(bs[0]); !equal(got, []string{"dn1"}) {
		t.Fatalf("after the expiry: holders %v", got)
	}
	if got := h.m.DatanodeReport(ReportDead); len(got) != 1 || got[0].UUID != "dn2" {
		t.Fatalf("dead nodes: %+v", got)
	}
	st := h.m.Replicate(h.now)
	if st.UnderReplicated != 1 {
		t.Errorf("stats %+v, want one under-replicated block", st)
	}
	if got := h.allCommands("dn1", "dn3"); got != "dn1: transfer b1 -> dn3/DISK" {
		t.Errorf("commands %q", got)
	}
	// A dead node is told to register again.
	if got := describe(h.heartbeat("dn2")); got != "reregister" {
		t.Errorf("dead node's heartbeat: %q", got)
	}
}

// TestPendingReplicationTimeout: a copy that is not reported done is not
// scheduled twice before ReplicationTimeout, and is scheduled again after.
func TestPendingReplicationTimeout(t *testing.T) {
	cfg := testConfig()
	h := newHarness(t, cfg)
	h.addNode("dn1", disk(10*mb))
	h.addNode("dn2", disk(10*mb))
	_, bs := h.addFile(2, "HOT", 100)
	h.place(bs[0], "dn1")
	h.m.Replicate(h.now)
	if got := h.allCommands("dn1", "dn2"); got != "dn1: transfer b1 -> dn2/DISK" {
		t.Fatalf("first pass: %q", got)
	}
	h.advance(cfg.ReplicationTimeout)
	if st := h.m.Replicate(h.now); st.PendingReplication != 1 {
		t.Errorf("pending %d at the deadline, want 1", st.PendingReplication)
	}
	if got := h.allCommands("dn1", "dn2"); got != "" {
		t.Fatalf("scheduled again before the timeout: %q", got)
	}
	h.advance(time.Second)
	h.m.Replicate(h.now)
	if got := h.allCommands("dn1", "dn2"); got != "dn1: transfer b1 -> dn2/DISK" {
		t.Fatalf("after the timeout: %q", got)
	}
	// The copy arrives: the pending entry and the source's stream go.
	h.place(bs[0], "dn2")
	if h.m.Pending() != 0 || h.m.dns.byUUID["dn1"].pendingTransfers != 0 {
		t.Errorf("after arrival: pending %d, dn1 streams %d", h.m.Pending(), h.m.dns.byUUID["dn1"].pendingTransfers)
	}
}

// TestSatisfyStoragePolicyMoves: with the mover's request, a replica on
// the wrong type moves to a volume of the right type on its own node.
func TestSatisfyStoragePolicyMoves(t *testing.T) {
	h := newHarness(t, testConfig())
	h.addNode("dn1", disk(10*mb), ssd(10*mb))
	f, bs := h.addFile(1, "ALL_SSD", 100)
	h.place(bs[0], "dn1") // on dn1's DISK volume
	h.m.Replicate(h.now)
	if got := h.allCommands("dn1"); got != "" {
		t.Fatalf("moved without a request: %q", got)
	}
	_, other := h.addFile(1, "HOT", 100)
	h.place(other[0], "dn1")
	h.m.Replicate(h.now)
	h.m.SatisfyStoragePolicy(f.id, bs)
	if q := h.m.Queued(); q != 1 {
		t.Errorf("%d blocks queued by the request, want 1 (the file's)", q)
	}
	if st := h.m.Replicate(h.now); st.Misplaced != 1 {
		t.Errorf("misplaced %d, want 1", st.Misplaced)
	}
	if got := h.allCommands("dn1"); got != "dn1: move b1 -> SSD" {
		t.Errorf("commands %q", got)
	}
}

// TestClientReportedCorruptQueued: a copy a client reports bad, of a block
// the monitor had settled, is replaced and deleted on the next pass and
// counted as corrupt.
func TestClientReportedCorruptQueued(t *testing.T) {
	h := newHarness(t, testConfig())
	for _, n := range []string{"dn1", "dn2", "dn3"} {
		h.addNode(n, disk(10*mb))
	}
	_, bs := h.addFile(2, "HOT", 100)
	h.place(bs[0], "dn1", "dn2")
	if st := h.m.Replicate(h.now); st.Corrupt != 0 || st.UnderReplicated != 0 {
		t.Fatalf("settled block: stats %+v", st)
	}
	if got := h.allCommands("dn1", "dn2", "dn3"); got != "" {
		t.Fatalf("commands for a settled block: %s", got)
	}
	h.m.ReportBadReplicas([]BadReplica{{BlockID: bs[0].ID, DatanodeUUID: "dn2"}})
	st := h.m.Replicate(h.now)
	if want := "dn1: transfer b1 -> dn3/DISK\ndn2: invalidate b1@1001"; h.allCommands("dn1", "dn2", "dn3") != want {
		t.Errorf("commands after the client's report, want:\n%s", want)
	}
	if st.Corrupt != 1 || st.UnderReplicated != 1 {
		t.Errorf("stats %+v, want corrupt 1 under-replicated 1", st)
	}
}
