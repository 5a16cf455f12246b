package blockmgmt

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/storage"
)

func excludeRule(ip string, s AdminState) HostRule {
	return HostRule{Entry: HostEntry{Host: ip}, State: s}
}

// TestDecommissionStateMachine: an excluded node goes Decommission In
// Progress, its blocks are copied from it (it is the preferred source)
// to in-service nodes, and it ends Decommissioned once every block has
// its replication elsewhere; its replicas are kept and read last.
func TestDecommissionStateMachine(t *testing.T) {
	h := newHarness(t, testConfig())
	for _, n := range []string{"dn1", "dn2", "dn3", "dn4"} {
		h.addNode(n, disk(100*mb))
	}
	_, bs := h.addFile(3, "HOT", mb, mb)
	for _, b := range bs {
		h.place(b, "dn1", "dn2", "dn3")
	}
	h.m.SetHosts(&Hosts{Rules: []HostRule{excludeRule("10.0.0.1", Decommissioned)}})
	d := h.m.dns.byUUID["dn1"]
	if d.AdminState != DecommissionInProgress {
		t.Fatalf("state %v, want Decommission In Progress", d.AdminState)
	}
	if got := h.m.DatanodeReport(ReportDecommissioning); len(got) != 1 || got[0].UUID != "dn1" {
		t.Fatalf("decommissioning report %v", got)
	}
	h.m.Replicate(h.now)
	if d.AdminState != DecommissionInProgress {
		t.Fatal("decommissioned before its blocks were copied")
	}
	cmds := describe(h.heartbeat("dn1"))
	if strings.Count(cmds, "transfer") != 2 || strings.Count(cmds, "dn4/DISK") != 2 {
		t.Fatalf("dn1 commands %q, want both blocks copied from it to dn4", cmds)
	}
	// Nothing new goes to the leaving node.
	if got := h.m.Choose(Placement{Types: wantTypes(4), Policy: policy(t, "HOT"), Need: mb, Creation: true}); len(got) != 3 {
		t.Fatalf("placement used %d nodes, want the 3 in service", len(got))
	}
	h.place(bs[0], "dn4")
	h.m.Replicate(h.now)
	if d.AdminState != DecommissionInProgress {
		t.Fatal("decommissioned with one block short")
	}
	h.place(bs[1], "dn4")
	h.m.Replicate(h.now)
	if d.AdminState != Decommissioned {
		t.Fatalf("state %v, want Decommissioned", d.AdminState)
	}
	// Its replicas stay, are not deleted as excess, and are read last.
	all := h.allCommands("dn1", "dn2", "dn3", "dn4")
	if strings.Contains(all, "invalidate") {
		t.Fatalf("commands %q: nothing should be deleted", all)
	}
	locs, _ := h.m.Locations(bs[0], "10.0.0.1")
	if len(locs) != 4 || locs[3].DN.UUID != "dn1" {
		t.Fatalf("locations %v: the decommissioned node's replica should be last", locs)
	}
	// Back in service: the surplus goes.
	h.m.SetHosts(&Hosts{})
	if d.AdminState != Normal {
		t.Fatalf("state %v after re-inclusion", d.AdminState)
	}
	h.m.Replicate(h.now)
	if all := h.allCommands("dn1", "dn2", "dn3", "dn4"); strings.Count(all, "b1") != 1 || strings.Count(all, "b2") != 1 {
		t.Fatalf("commands %q, want one excess replica of each block deleted", all)
	}
}

// TestDecommissionWaitsForOpenLastBlock: the last block of a file being
// written holds decommission until it has the minimum replication
// elsewhere.
func TestDecommissionWaitsForOpenLastBlock(t *testing.T) {
	h := newHarness(t, testConfig())
	for _, n := range []string{"dn1", "dn2"} {
		h.addNode(n, disk(100*mb))
	}
	f, bs := h.addFile(2, "HOT", mb)
	f.uc = true
	h.place(bs[0], "dn1")
	h.m.SetHosts(&Hosts{Rules: []HostRule{excludeRule("10.0.0.1", Decommissioned)}})
	h.m.Replicate(h.now)
	if s := h.m.dns.byUUID["dn1"].AdminState; s != DecommissionInProgress {
		t.Fatalf("state %v with an open block only on the node", s)
	}
	h.place(bs[0], "dn2")
	h.m.Replicate(h.now)
	if s := h.m.dns.byUUID["dn1"].AdminState; s != Decommissioned {
		t.Fatalf("state %v, want Decommissioned", s)
	}
}

// TestMaintenance: Entering Maintenance ends when every block keeps
// dfs.namenode.maintenance.replication.min live replicas; the node's
// replicas are not re-replicated when it goes down, and it returns to
// service when the maintenance expires.
func TestMaintenance(t *testing.T) {
	cfg := testConfig()
	cfg.MaintenanceMinReplication = 2
	h := newHarness(t, cfg)
	for _, n := range []string{"dn1", "dn2", "dn3", "dn4"} {
		h.addNode(n, disk(100*mb))
	}
	_, bs := h.addFile(3, "HOT", mb)
	h.place(bs[0], "dn1", "dn2")
	h.m.SetHosts(&Hosts{Rules: []HostRule{{Entry: HostEntry{Host: "10.0.0.1"}, State: InMaintenance, MaintenanceExpire: h.now.Add(time.Hour)}}})
	d := h.m.dns.byUUID["dn1"]
	if d.AdminState != EnteringMaintenance {
		t.Fatalf("state %v", d.AdminState)
	}
	h.m.Replicate(h.now)
	// 1 live (dn2) < min 2: one copy, not to the maintenance node.
	if all := h.allCommands("dn1", "dn2", "dn3", "dn4"); strings.Count(all, "transfer b1") != 1 || strings.Contains(all, "dn1/") {
		t.Fatalf("commands %q, want one copy", all)
	}
	h.place(bs[0], "dn3")
	h.m.Replicate(h.now)
	if d.AdminState != InMaintenance {
		t.Fatalf("state %v, want In Maintenance", d.AdminState)
	}
	// Down for maintenance: nothing is copied for it (2 live + 1 in maintenance).
	h.advance(time.Duration(cfg.HeartbeatExpiry) + time.Second)
	for _, n := range []string{"dn2", "dn3", "dn4"} {
		h.heartbeat(n)
	}
	h.m.CheckHeartbeats(h.now)
	h.m.Replicate(h.now)
	if all := h.allCommands("dn2", "dn3", "dn4"); all != "" {
		t.Fatalf("commands %q for a node in maintenance", all)
	}
	// Expired: back in service while dead, its replicas are gone and the
	// block is copied to full replication.
	h.advance(time.Hour)
	for _, n := range []string{"dn2", "dn3", "dn4"} {
		h.heartbeat(n)
	}
	h.m.Replicate(h.now)
	h.m.Replicate(h.now)
	if d.AdminState != Normal {
		t.Fatalf("state %v after expiry", d.AdminState)
	}
	if all := h.allCommands("dn2", "dn3", "dn4"); !strings.Contains(all, "transfer b1 -> dn4/DISK") {
		t.Fatalf("commands %q, want the block copied to dn4", all)
	}
}

// TestDecommissionWaitsForBlockReport: a decommissioning node that
// re-registers lists no blocks until its block report arrives; it must
// not be Decommissioned in that window (it holds the only replica).
func TestDecommissionWaitsForBlockReport(t *testing.T) {
	for _, want := range []AdminState{Decommissioned, InMaintenance} {
		h := newHarness(t, testConfig())
		h.addNode("dn1", disk(100*mb))
		h.addNode("dn2", disk(100*mb))
		_, bs := h.addFile(1, "HOT", mb)
		h.report("dn1", 0, finalized(bs[0]))
		h.m.SetHosts(&Hosts{Rules: []HostRule{excludeRule("10.0.0.1", want)}})
		reg := Registration{UUID: "dn1", IP: "10.0.0.1", XferPort: 9866,
			Storages: []StorageReport{{ID: sid("dn1", 0), Type: storage.Disk, Capacity: 100 * 100 * mb, Remaining: 100 * mb}}}
		if err := h.m.RegisterDatanode(reg, ""); err != nil {
			t.Fatal(err)
		}
		h.m.Replicate(h.now)
		d := h.m.dns.byUUID["dn1"]
		if d.AdminState == Decommissioned || d.AdminState == InMaintenance {
			t.Fatalf("%v before the re-registered node's block report", d.AdminState)
		}
		h.report("dn1", 0, finalized(bs[0]))
		h.m.Replicate(h.now)
		if d.AdminState == Decommissioned || d.AdminState == InMaintenance {
			t.Fatalf("%v with the only replica of a block", d.AdminState)
		}
	}
}

// TestAdmissionByRemoteAddress: the include and exclude lists match the
// address the node connects from, not the IP or host name it claims.
func TestAdmissionByRemoteAddress(t *testing.T) {
	h := newHarness(t, testConfig())
	h.m.SetHosts(&Hosts{
		Include: []HostEntry{{Host: "10.0.0.5"}, {Host: "good.example", addrs: []string{"10.0.0.9"}}},
		Rules:   []HostRule{excludeRule("10.0.0.9", Decommissioned)},
	})
	var de *DisallowedError
	for _, reg := range []Registration{
		{UUID: "liar1", IP: "10.0.0.5", XferPort: 9866},
		{UUID: "liar2", IP: "192.168.7.7", Hostname: "good.example", XferPort: 9866},
		{UUID: "liar3", IP: "good.example", Hostname: "10.0.0.5", XferPort: 9866},
	} {
		if err := h.m.RegisterDatanode(reg, "192.168.7.7"); !errors.As(err, &de) {
			t.Fatalf("%+v from 192.168.7.7 admitted: %v", reg, err)
		}
	}
	if err := h.m.RegisterDatanode(Registration{UUID: "dn9", IP: "10.0.0.1", Hostname: "x", XferPort: 9866}, "10.0.0.9"); err != nil {
		t.Fatal(err)
	}
	d := h.m.dns.byUUID["dn9"]
	if d.IP != "10.0.0.9" || d.AdminState != DecommissionInProgress {
		t.Fatalf("node at %s in state %v, want 10.0.0.9 decommissioning", d.IP, d.AdminState)
	}
}

// TestDisallowedNode: a node outside a non-empty include list cannot
// register; one removed from it by a refresh is taken out of service.
func TestDisallowedNode(t *testing.T) {
	h := newHarness(t, testConfig())
	h.addNode("dn1", disk(100*mb))
	h.m.SetHosts(&Hosts{Include: []HostEntry{{Host: "10.0.0.2"}}})
	if d := h.m.dns.byUUID["dn1"]; !d.Dead || !d.Disallowed {
		t.Fatal("an excluded registered node is still in service")
	}
	var de *DisallowedError
	err := h.m.RegisterDatanode(Registration{UUID: "dn1", IP: "10.0.0.1", XferPort: 9866}, "")
	if !errors.As(err, &de) {
		t.Fatalf("registration outside the include list: %v", err)
	}
	if err := h.m.RegisterDatanode(Registration{UUID: "dn2", IP: "10.0.0.2", XferPort: 9866}, ""); err != nil {
		t.Fatal(err)
	}
	// host:port entries match only that port.
	h.m.SetHosts(&Hosts{Include: []HostEntry{{Host: "10.0.0.2", Port: 9999}}})
	if !h.m.dns.byUUID["dn2"].Disallowed {
		t.Fatal("port mismatch still included")
	}
}

func TestParseHostsFiles(t *testing.T) {
	es, err := ParseHostsFile(strings.NewReader("# comment\n10.0.0.1\nhost2:9866  host3 # trailing\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || es[0].Host != "10.0.0.1" || es[1].Port != 9866 || es[2].Host != "host3" {
		t.Fatalf("entries %+v", es)
	}
	if _, err := ParseHostsFile(strings.NewReader("h:99999\n")); err == nil {
		t.Fatal("bad port accepted")
	}
	h, err := ParseCombinedHostsFile([]byte(`[{"hostName":"10.0.0.1"},{"hostName":"10.0.0.2","port":9866,"adminState":"DECOMMISSIONED"},
		{"hostName":"10.0.0.3","adminState":"IN_MAINTENANCE","maintenanceExpireTimeInMS":1700000000000}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Include) != 3 || len(h.Rules) != 2 || h.Rules[0].State != Decommissioned || h.Rules[1].State != InMaintenance ||
		h.Rules[1].MaintenanceExpire.UnixMilli() != 1700000000000 {
		t.Fatalf("combined hosts %+v", h)
	}
	old, err := ParseCombinedHostsFile([]byte(`{"hostName":"a"} {"hostName":"b","adminState":"DECOMMISSIONED"}`))
	if err != nil || len(old.Include) != 2 || len(old.Rules) != 1 {
		t.Fatalf("older combined format: %+v %v", old, err)
	}
	if _, err := ParseCombinedHostsFile([]byte(`[{"hostName":"a","adminState":"BOGUS"}]`)); err == nil {
		t.Fatal("unknown admin state accepted")
	}
}

// FuzzParseHostsFiles: no input makes the hosts parsers panic, and what
// they accept is well formed.
func FuzzParseHostsFiles(f *testing.F) {
	f.Add([]byte("10.0.0.1\nh:9866 # c\n"))
	f.Add([]byte(`[{"hostName":"a","port":1,"adminState":"IN_MAINTENANCE","maintenanceExpireTimeInMS":5}]`))
	f.Add([]byte(`{"hostName":"a"}{"hostName":"b"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if es, err := ParseHostsFile(strings.NewReader(string(data))); err == nil {
			for _, e := range es {
				if e.Host == "" || e.Port > 65535 {
					t.Fatalf("bad entry %+v", e)
				}
			}
		}
		if h, err := ParseCombinedHostsFile(data); err == nil {
			for _, e := range h.Include {
				if e.Host == "" {
					t.Fatalf("empty host in %+v", h)
				}
			}
		}
	})
}
