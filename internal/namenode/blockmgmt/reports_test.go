package blockmgmt

import (
	"testing"
	"time"
)

// TestBlockReportDiff checks how a full block report is merged with what
// the NameNode knows of a block (committed, gs 1001, 100 bytes).
func TestBlockReportDiff(t *testing.T) {
	tests := []struct {
		name        string
		prior       bool // dn1 already reported a good replica
		report      func(b *Block) []ReportedReplica
		wantGood    []string
		wantCorrupt bool
		wantCmds    string
	}{
		{
			name:     "new replica",
			report:   func(b *Block) []ReportedReplica { return []ReportedReplica{finalized(b)} },
			wantGood: []string{"dn1"},
		},
		{
			name:   "replica removed",
			prior:  true,
			report: func(b *Block) []ReportedReplica { return nil },
		},
		{
			name: "older generation stamp is corrupt",
			report: func(b *Block) []ReportedReplica {
				r := finalized(b)
				r.GenStamp--
				return []ReportedReplica{r}
			},
			wantCorrupt: true,
		},
		{
			name: "wrong length is corrupt",
			report: func(b *Block) []ReportedReplica {
				r := finalized(b)
				r.NumBytes = 99
				return []ReportedReplica{r}
			},
			wantCorrupt: true,
		},
		{
			name: "unfinished copy found at a restart (RWR) of a committed block is deleted",
			report: func(b *Block) []ReportedReplica {
				r := finalized(b)
				r.Finalized = false
				return []ReportedReplica{r}
			},
			wantCmds: "invalidate b1@1001",
		},
		{
			name: "copy being received of a committed block is left alone",
			report: func(b *Block) []ReportedReplica {
				r := finalized(b)
				r.Finalized, r.Writing = false, true
				return []ReportedReplica{r}
			},
		},
		{
			name: "copy being received with an older generation stamp is deleted",
			report: func(b *Block) []ReportedReplica {
				r := finalized(b)
				r.Finalized, r.Writing = false, true
				r.GenStamp--
				return []ReportedReplica{r}
			},
			wantCmds: "invalidate b1@1000",
		},
		{
			name: "replica of no file is deleted",
			report: func(b *Block) []ReportedReplica {
				return []ReportedReplica{{ID: 77, GenStamp: 5, NumBytes: 10, Finalized: true}}
			},
			wantCmds: "invalidate id77@5",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			h.addNode("dn1", disk(10*mb))
			_, bs := h.addFile(1, "HOT", 100)
			b := bs[0]
			if tt.prior {
				h.report("dn1", 0, finalized(b))
				if got := holders(b); len(got) != 1 {
					t.Fatalf("prior report: holders %v", got)
				}
			}
			cmds := h.report("dn1", 0, tt.report(b)...)
			if got := holders(b); !equal(got, tt.wantGood) {
				t.Errorf("good replicas on %v, want %v", got, tt.wantGood)
			}
			r := b.Replicas.Of(sid("dn1", 0))
			if gotCorrupt := r != nil && r.Corrupt; gotCorrupt != tt.wantCorrupt {
				t.Errorf("corrupt = %v, want %v", gotCorrupt, tt.wantCorrupt)
			}
			if got := describe(cmds); got != tt.wantCmds {
				t.Errorf("commands %q, want %q", got, tt.wantCmds)
			}
			st := h.m.Storage(sid("dn1", 0))
			if _, listed := st.Blocks[b.ID]; listed != (r != nil) {
				t.Errorf("storage lists the block: %v, replica recorded: %v", listed, r != nil)
			}
		})
	}
}

func TestBlockReportFromUnknownNode(t *testing.T) {
	h := newHarness(t, testConfig())
	cmds, err := h.m.BlockReport("ghost", nil)
	if err != nil || describe(cmds) != "reregister" {
		t.Fatalf("report from unknown node: %q %v", describe(cmds), err)
	}
	if got := describe(h.heartbeat("ghost")); got != "reregister" {
		t.Errorf("heartbeat from unknown node: %q", got)
	}
	h.addNode("dn1", disk(mb))
	if _, err := h.m.BlockReport("dn1", []StorageBlockReport{{StorageID: "nope"}}); err == nil {
		t.Error("report for an unknown storage accepted")
	}
	if err := h.m.ReceivedDeleted("ghost", nil); err == nil {
		t.Error("incremental report from an unknown node accepted")
	}
}

// TestIncrementalReport: received replicas are added, deleted ones
// forgotten, and a node that confirms a deletion may get a copy again.
func TestIncrementalReport(t *testing.T) {
	h := newHarness(t, testConfig())
	h.addNode("dn1", disk(10*mb))
	_, bs := h.addFile(1, "HOT", 100)
	b := bs[0]
	h.place(b, "dn1")
	if got := holders(b); !equal(got, []string{"dn1"}) {
		t.Fatalf("after received: %v", got)
	}
	b.Deleting = map[string]time.Time{"dn1": h.now}
	if err := h.m.ReceivedDeleted("dn1", []StorageReceivedDeleted{{StorageID: sid("dn1", 0), Deleted: []uint64{b.ID}}}); err != nil {
		t.Fatal(err)
	}
	if len(b.Replicas) != 0 || len(b.Deleting) != 0 {
		t.Errorf("after deleted: replicas %d, deleting %v", len(b.Replicas), b.Deleting)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
