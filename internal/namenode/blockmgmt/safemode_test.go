package blockmgmt

import (
	"testing"
	"time"
)

// TestStartupSafeMode: safe mode ends once the threshold fraction of
// blocks has a good replica and the extension has passed on the clock.
func TestStartupSafeMode(t *testing.T) {
	tests := []struct {
		name      string
		threshold float64
		extension time.Duration
		reported  int // of 4 blocks
		steps     []time.Duration
		wantOn    []bool // after each step
	}{
		{name: "below the threshold stays on", threshold: 0.75, extension: 0, reported: 2,
			steps: []time.Duration{0, time.Hour}, wantOn: []bool{true, true}},
		{name: "at the threshold with no extension leaves at once", threshold: 0.75, extension: 0, reported: 3,
			steps: []time.Duration{0}, wantOn: []bool{false}},
		{name: "the extension runs on the clock", threshold: 0.75, extension: 30 * time.Second, reported: 3,
			steps: []time.Duration{0, 29 * time.Second, time.Second}, wantOn: []bool{true, true, false}},
		{name: "threshold above 1 never leaves", threshold: 1.5, extension: 0, reported: 4,
			steps: []time.Duration{0, time.Hour}, wantOn: []bool{true, true}},
		{name: "threshold 0 leaves with nothing reported", threshold: 0, extension: 0, reported: 0,
			steps: []time.Duration{0}, wantOn: []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.SafeModeThreshold, cfg.SafeModeExtension = tt.threshold, tt.extension
			h := newHarness(t, cfg)
			h.addNode("dn1", disk(10*mb))
			_, bs := h.addFile(1, "HOT", 1, 2, 3, 4)
			h.m.StartupSafeMode()
			if !h.m.InSafeMode() {
				t.Fatal("no startup safe mode with blocks")
			}
			for _, b := range bs[:tt.reported] {
				h.place(b, "dn1")
			}
			for i, d := range tt.steps {
				h.advance(d)
				h.m.CheckSafeMode(h.now)
				if got := h.m.InSafeMode(); got != tt.wantOn[i] {
					t.Fatalf("step %d (+%v): safe mode %v, want %v (%s)", i, d, got, tt.wantOn[i], h.m.SafeModeTip())
				}
			}
		})
	}
}

// TestSafeModeExtensionRestarts: falling below the threshold during the
// extension (a node dies) restarts the wait.
func TestSafeModeExtensionRestarts(t *testing.T) {
	cfg := testConfig()
	cfg.SafeModeThreshold, cfg.SafeModeExtension = 1, 30*time.Second
	h := newHarness(t, cfg)
	h.addNode("dn1", disk(10*mb))
	_, bs := h.addFile(1, "HOT", 100)
	h.m.StartupSafeMode()
	h.place(bs[0], "dn1")
	h.m.CheckSafeMode(h.now)
	h.advance(20 * time.Second)
	h.m.ReceivedDeleted("dn1", []StorageReceivedDeleted{{StorageID: sid("dn1", 0), Deleted: []uint64{bs[0].ID}}})
	h.m.CheckSafeMode(h.now)
	h.place(bs[0], "dn1")
	h.m.CheckSafeMode(h.now)
	h.advance(20 * time.Second)
	h.m.CheckSafeMode(h.now)
	if !h.m.InSafeMode() {
		t.Fatal("left safe mode 20 s after the threshold was reached again")
	}
	h.advance(10 * time.Second)
	h.m.CheckSafeMode(h.now)
	if h.m.InSafeMode() {
		t.Fatal("still in safe mode after the extension")
	}
}

func TestManualSafeMode(t *testing.T) {
	h := newHarness(t, testConfig())
	if h.m.InSafeMode() {
		t.Fatal("safe mode with no blocks")
	}
	h.m.StartupSafeMode() // no blocks: stays off
	if h.m.InSafeMode() {
		t.Fatal("startup safe mode with no blocks")
	}
	h.m.EnterSafeMode()
	h.m.CheckSafeMode(h.now)
	if !h.m.InSafeMode() || h.m.InStartupSafeMode() {
		t.Fatal("manual safe mode not on, or counted as startup")
	}
	if got := h.m.SafeModeTip(); got != "Safe mode is ON. It was turned on manually." {
		t.Errorf("tip %q", got)
	}
	h.m.LeaveSafeMode()
	if h.m.InSafeMode() {
		t.Fatal("still on after leave")
	}
}
