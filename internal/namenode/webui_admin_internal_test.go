package namenode

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/namenode/blockmgmt"
)

// TestWebUISnapshots: the Snapshot page lists snapshottable directories
// and their snapshots; Browse links a snapshottable directory to its
// .snapshot, lists a snapshot's files and offers no change inside it;
// the SnapshotInfo bean carries the same.
func TestWebUISnapshots(t *testing.T) {
	nn := startTestNameNode(t, nil)
	ns := nn.Namesystem()
	mustOK(t, ns.Mkdirs(as("hdfs"), "/snap/kept", 0o755, true))
	mustOK(t, ns.AllowSnapshot(as("hdfs"), "/snap"))
	if _, err := ns.CreateSnapshot(as("hdfs"), "/snap", "s1"); err != nil {
		t.Fatal(err)
	}
	mustOK(t, ns.Mkdirs(as("hdfs"), "/snap/later", 0o755, false))
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get("http://" + nn.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	for path, want := range map[string][]string{
		"/snapshots":                          {`<a href="/explorer?path=%2fsnap">/snap</a>`, "65536", "/snap/.snapshot/s1", "drwxr-xr-x"},
		"/":                                   {"1 snapshottable directories, 1 snapshots"},
		"/explorer?path=/&user.name=hdfs":     {`class="snaplink" href="/explorer?path=%2fsnap/.snapshot&amp;user.name=hdfs"`},
		"/explorer?path=/snap&user.name=hdfs": {`id="snapshotlink"`, `id="writetools"`, "later"},
		"/explorer?path=/snap/.snapshot&user.name=hdfs":           {">s1<", `id="readonly"`},
		"/explorer?path=/snap/.snapshot/s1&user.name=hdfs":        {">kept<", `id="readonly"`},
		"/jmx?qry=Hadoop:service=NameNode,name=SnapshotInfo":      {`"snapshotDirectory": "/snap/.snapshot/s1"`, `"snapshotNumber": 1`, `"permission": "755"`},
		"/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState": {`"NumSnapshots": 1`, `"NumSnapshottableDirs": 1`, `"NumDecommissioningDataNodes": 0`},
	} {
		body := get(path)
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s lacks %q:\n%.3000s", path, w, body)
			}
		}
		if strings.Contains(path, ".snapshot") && (strings.Contains(body, "data-delete") || strings.Contains(body, "writetools")) {
			t.Errorf("GET %s offers changes inside a snapshot", path)
		}
	}
	if body := get("/explorer?path=/snap/.snapshot/s1&user.name=hdfs"); strings.Contains(body, "later") {
		t.Errorf("snapshot s1 lists a directory made after it")
	}
}

// TestAdminCounts: decommissioned and in-maintenance nodes count by live
// and dead; decommissioning and entering maintenance only while live.
func TestAdminCounts(t *testing.T) {
	dn := func(s blockmgmt.AdminState, dead bool) blockmgmt.DatanodeInfo {
		return blockmgmt.DatanodeInfo{AdminState: s, Dead: dead}
	}
	got := adminCounts([]blockmgmt.DatanodeInfo{
		dn(blockmgmt.Normal, false), dn(blockmgmt.DecommissionInProgress, false), dn(blockmgmt.DecommissionInProgress, true),
		dn(blockmgmt.Decommissioned, false), dn(blockmgmt.Decommissioned, true), dn(blockmgmt.Decommissioned, true),
		dn(blockmgmt.EnteringMaintenance, false), dn(blockmgmt.InMaintenance, true), dn(blockmgmt.InMaintenance, false),
	})
	want := AdminCounts{DecomLive: 1, DecomDead: 2, Decommissioning: 1, InMaintenanceLive: 1, InMaintenanceDead: 1, EnteringMaintenance: 1}
	if got != want {
		t.Errorf("adminCounts = %+v, want %+v", got, want)
	}
}
