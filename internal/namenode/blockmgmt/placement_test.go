package blockmgmt

import (
	"sort"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/storage"
)

// TestPlacement checks where new replicas go for each storage policy:
// one storage per distinct DataNode, of the wanted type or the policy's
// fallback, the writer's own node first.
func TestPlacement(t *testing.T) {
	// dn1, dn2: DISK only; dn3: SSD and DISK; dn4: SSD only.
	nodes := map[string][]vol{
		"dn1": {disk(100 * mb)}, "dn2": {disk(100 * mb)},
		"dn3": {ssd(100 * mb), disk(100 * mb)}, "dn4": {ssd(100 * mb)},
	}
	tests := []struct {
		name     string
		policy   string
		n        int
		creation bool
		only     []string // nodes registered (default all)
		local    string
		exclude  []string
		need     int64
		// want is the sorted types chosen; wantNodes, when set, the exact
		// sorted nodes.
		want      string
		wantNodes string
	}{
		{name: "HOT is all DISK", policy: "HOT", n: 3, creation: true, want: "DISK,DISK,DISK"},
		{name: "ONE_SSD is one SSD, the rest DISK", policy: "ONE_SSD", n: 3, creation: true, want: "DISK,DISK,SSD"},
		{name: "ALL_SSD is SSD while SSD volumes last", policy: "ALL_SSD", n: 2, creation: true, want: "SSD,SSD", wantNodes: "dn3,dn4"},
		{name: "ALL_SSD falls back to DISK", policy: "ALL_SSD", n: 3, creation: true, want: "DISK,SSD,SSD"},
		{name: "ALL_SSD with no SSD at all is DISK", policy: "ALL_SSD", n: 2, creation: true, only: []string{"dn1", "dn2"}, want: "DISK,DISK"},
		{name: "HOT has no creation fallback", policy: "HOT", n: 2, creation: true, only: []string{"dn4"}, want: ""},
		{name: "COLD without ARCHIVE volumes places nothing", policy: "COLD", n: 1, creation: true, want: ""},
		{name: "one replica per node", policy: "HOT", n: 5, creation: true, want: "DISK,DISK,DISK"},
		{name: "the writer's node first", policy: "HOT", n: 1, creation: true, local: "10.0.0.2", want: "DISK", wantNodes: "dn2"},
		{name: "excluded nodes get nothing", policy: "HOT", n: 3, creation: true, exclude: []string{"dn1", "dn2"}, want: "DISK", wantNodes: "dn3"},
		{name: "no room, no replica", policy: "HOT", n: 1, creation: true, need: 200 * mb, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			only := tt.only
			if only == nil {
				only = []string{"dn1", "dn2", "dn3", "dn4"}
			}
			for _, n := range only {
				h.addNode(n, nodes[n]...)
			}
			pol := policy(t, tt.policy)
			ex := map[string]bool{}
			for _, n := range tt.exclude {
				ex[n] = true
			}
			got := h.m.Choose(Placement{Types: pol.ChooseTypes(tt.n), Policy: pol, Exclude: ex, Local: tt.local, Need: tt.need, Creation: tt.creation})
			var types, dns []string
			seen := map[string]bool{}
			for _, st := range got {
				types = append(types, st.Type.String())
				dns = append(dns, st.DN.UUID)
				if seen[st.DN.UUID] {
					t.Errorf("two replicas on %s", st.DN.UUID)
				}
				seen[st.DN.UUID] = true
				if ex[st.DN.UUID] {
					t.Errorf("replica on excluded %s", st.DN.UUID)
				}
			}
			if tt.local != "" && len(got) > 0 && got[0].DN.IP != tt.local {
				t.Errorf("first replica on %s, want the writer's node", got[0].DN.IP)
			}
			sort.Strings(types)
			sort.Strings(dns)
			if s := strings.Join(types, ","); s != tt.want {
				t.Errorf("types %q, want %q", s, tt.want)
			}
			if tt.wantNodes != "" && strings.Join(dns, ",") != tt.wantNodes {
				t.Errorf("nodes %v, want %s", dns, tt.wantNodes)
			}
		})
	}
}

// TestPlacementCountsScheduledBytes: a storage chosen for a block is not
// chosen again once the bytes scheduled on it exceed its free space, until
// its next storage report.
func TestPlacementCountsScheduledBytes(t *testing.T) {
	h := newHarness(t, testConfig())
	h.addNode("dn1", disk(3*mb))
	pol := policy(t, "HOT")
	choose := func() int {
		return len(h.m.Choose(Placement{Types: []storage.Type{storage.Disk}, Policy: pol, Need: 2 * mb, Creation: true}))
	}
	if choose() != 1 {
		t.Fatal("first block not placed")
	}
	if choose() != 0 {
		t.Fatal("second block placed on a storage with 1 MB unscheduled")
	}
	h.m.Heartbeat(Heartbeat{UUID: "dn1", Storages: []StorageReport{{ID: sid("dn1", 0), Type: storage.Disk, Remaining: 3 * mb}}})
	if choose() != 1 {
		t.Fatal("not placed after a storage report")
	}
}
