package blockmgmt

import (
	"testing"
)

// TestLeaseRecovery: the last block of an open file is finished by every
// holder at a new generation stamp; the file may close at the shortest
// length once all holders reported, or after RecoveryTimeout with some.
func TestLeaseRecovery(t *testing.T) {
	tests := []struct {
		name     string
		reports  map[string]int64 // holder -> length reported at the new stamp
		wait     bool             // let RecoveryTimeout pass
		wantDone bool
		wantLen  int64
	}{
		{name: "all holders reported: shortest length", reports: map[string]int64{"dn1": 80, "dn2": 70}, wantDone: true, wantLen: 70},
		{name: "one holder missing: wait", reports: map[string]int64{"dn1": 80}},
		{name: "one holder missing past the timeout: close", reports: map[string]int64{"dn1": 80}, wait: true, wantDone: true, wantLen: 80},
		{name: "no holder reported past the timeout: wait", reports: nil, wait: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			h.addNode("dn1", disk(10*mb))
			h.addNode("dn2", disk(10*mb))
			f, bs := h.addFile(2, "HOT", 0)
			f.uc = true
			b := bs[0]
			b.Committed = false
			for _, n := range []string{"dn1", "dn2"} {
				h.m.ReceivedDeleted(n, []StorageReceivedDeleted{{StorageID: sid(n, 0), Received: []ReportedReplica{{ID: b.ID, GenStamp: b.GenStamp, NumBytes: 50}}}})
			}
			oldGS := b.GenStamp
			b.GenStamp++ // the namespace's UpdateBlocks edit
			h.m.StartRecovery(b, oldGS, false)
			if !h.m.Recovering(b.ID) {
				t.Fatal("not recovering")
			}
			for _, n := range []string{"dn1", "dn2"} {
				if got := describe(h.heartbeat(n)); got != "recover b1 gs 1001->1002 len -1" {
					t.Fatalf("%s: %q", n, got)
				}
			}
			for n, l := range tt.reports {
				h.m.ReceivedDeleted(n, []StorageReceivedDeleted{{StorageID: sid(n, 0), Received: []ReportedReplica{{ID: b.ID, GenStamp: b.GenStamp, NumBytes: l, Finalized: true}}}})
			}
			if tt.wait {
				h.advance(RecoveryTimeout + 1)
			}
			done := h.m.FinishedRecoveries(h.now)
			if (len(done) == 1) != tt.wantDone {
				t.Fatalf("done %+v, want done %v", done, tt.wantDone)
			}
			if tt.wantDone {
				if done[0].Block != b || done[0].Length != tt.wantLen || done[0].DropLast {
					t.Errorf("done %+v, want length %d", done[0], tt.wantLen)
				}
				if h.m.Recovering(b.ID) {
					t.Error("still recovering after done")
				}
			}
		})
	}
}

// TestTruncateRecovery: a truncate recovery asks for the block's new
// length and finishes at it.
func TestTruncateRecovery(t *testing.T) {
	h := newHarness(t, testConfig())
	h.addNode("dn1", disk(10*mb))
	f, bs := h.addFile(1, "HOT", 100)
	b := bs[0]
	h.place(b, "dn1")
	f.uc = true
	oldGS := b.GenStamp
	b.GenStamp, b.NumBytes = oldGS+1, 40
	h.m.StartRecovery(b, oldGS, true)
	if got := describe(h.heartbeat("dn1")); got != "recover b1 gs 1001->1002 len 40" {
		t.Fatalf("command %q", got)
	}
	h.m.ReceivedDeleted("dn1", []StorageReceivedDeleted{{StorageID: sid("dn1", 0), Received: []ReportedReplica{{ID: b.ID, GenStamp: b.GenStamp, NumBytes: 40, Finalized: true}}}})
	done := h.m.FinishedRecoveries(h.now)
	if len(done) != 1 || done[0].Length != 40 {
		t.Fatalf("done %+v", done)
	}
}

// TestCopyRecoveryRetries: a copy-on-truncate whose copies all fail is
// sent again after RecoveryTimeout, skipping a source replica reported
// corrupt, and finishes once a copy is reported; with no live source it
// never closes the file with a block nobody has.
func TestCopyRecoveryRetries(t *testing.T) {
	h := newHarness(t, testConfig())
	h.addNode("dn1", disk(10*mb))
	h.addNode("dn2", disk(10*mb))
	_, bs := h.addFile(2, "HOT", 100)
	src := bs[0]
	h.place(src, "dn1", "dn2")
	f, nbs := h.addFile(2, "HOT", 40)
	b := nbs[0]
	f.uc = true
	b.Committed = false
	h.m.StartCopyRecovery(b, src)
	for _, n := range []string{"dn1", "dn2"} {
		if got := describe(h.heartbeat(n)); got != "recover b1 gs 1001->1002 len 40" {
			t.Fatalf("%s: %q", n, got)
		}
	}
	// dn1 finds its source replica corrupt; dn2 never answers.
	h.m.ReportBadReplicas([]BadReplica{{BlockID: src.ID, GenStamp: src.GenStamp, DatanodeUUID: "dn1", StorageID: sid("dn1", 0)}})
	h.advance(RecoveryTimeout + 1)
	if done := h.m.FinishedRecoveries(h.now); len(done) != 0 {
		t.Fatalf("done with no copy: %+v", done)
	}
	if got := describe(h.heartbeat("dn1")); got != "" {
		t.Fatalf("copy again from the corrupt replica: %q", got)
	}
	if got := describe(h.heartbeat("dn2")); got != "recover b1 gs 1001->1002 len 40" {
		t.Fatalf("no second round from dn2: %q", got)
	}
	h.m.ReceivedDeleted("dn2", []StorageReceivedDeleted{{StorageID: sid("dn2", 0), Received: []ReportedReplica{{ID: b.ID, GenStamp: b.GenStamp, NumBytes: 40, Finalized: true}}}})
	if done := h.m.FinishedRecoveries(h.now); len(done) != 1 || done[0].Length != 40 || done[0].DropLast {
		t.Fatalf("done %+v", done)
	}
}
