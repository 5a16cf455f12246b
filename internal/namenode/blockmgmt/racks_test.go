package blockmgmt

import (
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/storage"
)

// addRackNode registers node on rack with one DISK volume.
func (h *harness) addRackNode(node, rack string) {
	h.t.Helper()
	reg := Registration{UUID: node, IP: "10.0.0." + strings.TrimPrefix(node, "dn"), XferPort: 9866, Rack: rack,
		Storages: []StorageReport{{ID: sid(node, 0), Type: disk(0).typ, Capacity: 100 * 100 * mb, Remaining: 100 * mb}}}
	if err := h.m.RegisterDatanode(reg, ""); err != nil {
		h.t.Fatal(err)
	}
}

func racksOf(sts []*Storage) []string {
	var out []string
	for _, s := range sts {
		out = append(out, s.DN.rack())
	}
	return out
}

// TestRackPlacementNewBlock: first replica on the writer, second off its
// rack, third on the second's rack — for many seeds.
func TestRackPlacementNewBlock(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		h := newHarness(t, testConfig())
		h.m.rng.r = rand.New(rand.NewPCG(seed, seed))
		for i, rack := range []string{"/r1", "/r1", "/r1", "/r2", "/r2", "/r2"} {
			h.addRackNode("dn"+string(rune('1'+i)), rack)
		}
		got := h.m.Choose(Placement{Types: wantTypes(3), Policy: policy(t, "HOT"), Local: "10.0.0.2", Need: mb, Creation: true})
		if len(got) != 3 {
			t.Fatalf("seed %d: %d targets", seed, len(got))
		}
		if got[0].DN.UUID != "dn2" {
			t.Fatalf("seed %d: first replica on %s, want the writer dn2", seed, got[0].DN.UUID)
		}
		r := racksOf(got)
		if r[1] == r[0] || r[2] != r[1] {
			t.Fatalf("seed %d: racks %v, want /r1 then twice /r2", seed, r)
		}
	}
}

func wantTypes(n int) []storage.Type {
	out := make([]storage.Type, n)
	for i := range out {
		out[i] = disk(0).typ
	}
	return out
}

// TestRackPlacementOneRack: with one rack every replica goes there.
func TestRackPlacementOneRack(t *testing.T) {
	h := newHarness(t, testConfig())
	for _, n := range []string{"dn1", "dn2", "dn3"} {
		h.addRackNode(n, "/r1")
	}
	got := h.m.Choose(Placement{Types: wantTypes(3), Policy: policy(t, "HOT"), Need: mb, Creation: true})
	if len(got) != 3 {
		t.Fatalf("%d targets on one rack, want 3", len(got))
	}
}

// TestRackPlacementReplication continues from existing replicas: one
// replica on /r1 gets its next copy on /r2.
func TestRackPlacementReplication(t *testing.T) {
	for seed := uint64(0); seed < 30; seed++ {
		h := newHarness(t, testConfig())
		h.m.rng.r = rand.New(rand.NewPCG(seed, 1))
		for i, rack := range []string{"/r1", "/r1", "/r2", "/r2"} {
			h.addRackNode("dn"+string(rune('1'+i)), rack)
		}
		_, bs := h.addFile(2, "HOT", mb)
		h.place(bs[0], "dn1")
		h.m.Replicate(h.now)
		cmds := describe(h.heartbeat("dn1"))
		if !strings.Contains(cmds, "dn3/DISK") && !strings.Contains(cmds, "dn4/DISK") {
			t.Fatalf("seed %d: copy of a /r1-only block went to %q, want /r2", seed, cmds)
		}
	}
}

// TestMisReplicatedBlockIsFixed: three replicas on one rack of two get a
// copy on the other rack, then one of the crowded rack is deleted.
func TestMisReplicatedBlockIsFixed(t *testing.T) {
	h := newHarness(t, testConfig())
	for i, rack := range []string{"/r1", "/r1", "/r1", "/r2"} {
		h.addRackNode("dn"+string(rune('1'+i)), rack)
	}
	_, bs := h.addFile(3, "HOT", mb)
	h.place(bs[0], "dn1", "dn2", "dn3")
	h.m.Replicate(h.now)
	all := h.allCommands("dn1", "dn2", "dn3", "dn4")
	if !strings.Contains(all, "transfer b1 -> dn4/DISK") {
		t.Fatalf("commands %q, want a copy to dn4 on /r2", all)
	}
	h.place(bs[0], "dn4")
	h.m.Replicate(h.now)
	all = h.allCommands("dn1", "dn2", "dn3", "dn4")
	if strings.Count(all, "invalidate b1") != 1 || strings.Contains(all, "dn4: invalidate") {
		t.Fatalf("commands %q, want one /r1 replica deleted", all)
	}
	if got := holders(bs[0]); len(got) != 3 || got[2] != "dn4" {
		t.Fatalf("holders %v", got)
	}
}

// TestLocationsByDistance: the reader's node, then its rack, then the
// rest; a decommissioning node's replica last.
func TestLocationsByDistance(t *testing.T) {
	h := newHarness(t, testConfig())
	for i, rack := range []string{"/r1", "/r1", "/r2", "/r2"} {
		h.addRackNode("dn"+string(rune('1'+i)), rack)
	}
	_, bs := h.addFile(4, "HOT", mb)
	h.place(bs[0], "dn1", "dn2", "dn3", "dn4")
	for i := 0; i < 20; i++ {
		locs, _ := h.m.Locations(bs[0], "10.0.0.3")
		var got []string
		for _, s := range locs {
			got = append(got, s.DN.UUID)
		}
		if got[0] != "dn3" || got[1] != "dn4" {
			t.Fatalf("order %v for a reader on dn3, want dn3, dn4, then /r1", got)
		}
	}
	h.m.SetHosts(&Hosts{Rules: []HostRule{{Entry: HostEntry{Host: "10.0.0.4"}, State: Decommissioned}}})
	locs, _ := h.m.Locations(bs[0], "10.0.0.3")
	if locs[len(locs)-1].DN.UUID != "dn4" {
		t.Fatalf("a decommissioning node's replica is not last")
	}
	// A reader on no DataNode, placed by the mapping.
	h.m.clientRack = func(string) string { return "/r1" }
	locs, _ = h.m.Locations(bs[0], "10.9.9.9")
	ids := []string{locs[0].DN.UUID, locs[1].DN.UUID}
	sort.Strings(ids)
	if ids[0] != "dn1" || ids[1] != "dn2" {
		t.Fatalf("reader on /r1 got %v first", ids)
	}
}
