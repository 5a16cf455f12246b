package namenode

import (
	"fmt"
	"net/http"
	"time"

	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/webui"
)

// The web UI's view of decommissioning, maintenance and snapshots:
// Hadoop's dfshealth "Decommissioning" and "In Maintenance" figures, its
// Snapshot tab, and the jmx attributes that carry them.

// AdminCounts are the DataNodes by admin state, as Hadoop's FSNamesystem
// bean counts them: decommissioned and in-maintenance nodes split by
// live and dead; decommissioning and entering maintenance over live
// nodes only.
type AdminCounts struct {
	DecomLive, DecomDead                 int
	Decommissioning                      int
	InMaintenanceLive, InMaintenanceDead int
	EnteringMaintenance                  int
}

func adminCounts(dns []blockmgmt.DatanodeInfo) AdminCounts {
	var c AdminCounts
	for _, d := range dns {
		switch d.AdminState {
		case blockmgmt.Decommissioned:
			if d.Dead {
				c.DecomDead++
			} else {
				c.DecomLive++
			}
		case blockmgmt.DecommissionInProgress:
			if !d.Dead {
				c.Decommissioning++
			}
		case blockmgmt.InMaintenance:
			if d.Dead {
				c.InMaintenanceDead++
			} else {
				c.InMaintenanceLive++
			}
		case blockmgmt.EnteringMaintenance:
			if !d.Dead {
				c.EnteringMaintenance++
			}
		}
	}
	return c
}

// AdminProgress reports the live DataNodes decommissioning or entering
// maintenance with the blocks that keep them from finishing.
func (s *Namesystem) AdminProgress() []blockmgmt.AdminProgress {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bm.AdminProgress()
}

// adminJSON is NameNodeInfo's DecomNodes (maintenance false) or
// EnteringMaintenanceNodes (true): node name → its progress.
func adminJSON(ps []blockmgmt.AdminProgress, maintenance bool) string {
	out := map[string]any{}
	for _, p := range ps {
		if (p.Node.AdminState == blockmgmt.EnteringMaintenance) != maintenance {
			continue
		}
		only := "decommissionOnlyReplicas"
		if maintenance {
			only = "maintenanceOnlyReplicas"
		}
		out[fmt.Sprintf("%s:%d", p.Node.Host, p.Node.XferPort)] = map[string]any{
			"xferaddr": fmt.Sprintf("%s:%d", p.Node.IP, p.Node.XferPort), "underReplicatedBlocks": p.UnderReplicated,
			only: p.OnlyReplicas, "underReplicateInOpenFiles": p.UnderReplicatedInOpenFiles}
	}
	return jsonString(out)
}

// SnapshotInfo is one snapshottable directory with its snapshots, for
// the Snapshot page and the SnapshotInfo bean.
type SnapshotInfo struct {
	Path      string
	Status    FileStatus
	Quota     int
	Snapshots []SnapshotEntry
}

// SnapshotEntry is one snapshot.
type SnapshotEntry struct {
	ID         uint32
	Name, Path string
	Ctime      int64 // ms since the epoch
}

// SnapshotStats lists every snapshottable directory and its snapshots in
// path order, whoever owns them, as Hadoop's SnapshotInfo bean does.
func (s *Namesystem) SnapshotStats() []SnapshotInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	dirs := s.tree.SnapshotDirs()
	out := make([]SnapshotInfo, 0, len(dirs))
	for _, d := range dirs {
		p := d.Path()
		e := SnapshotInfo{Path: p, Status: s.status(d), Quota: namespace.SnapshotLimit}
		for _, sn := range d.Snap().Snapshots {
			e.Snapshots = append(e.Snapshots, SnapshotEntry{ID: sn.ID, Name: sn.Name, Path: namespace.SnapshotPath(p, sn.Name), Ctime: sn.Ctime})
		}
		out = append(out, e)
	}
	return out
}

// snapshotBean is Hadoop's SnapshotInfo bean (SnapshotStatsMXBean).
func snapshotBean(infos []SnapshotInfo) map[string]any {
	dirs, snaps := []map[string]any{}, []map[string]any{}
	for _, d := range infos {
		dirs = append(dirs, map[string]any{"path": d.Path, "snapshotNumber": len(d.Snapshots), "snapshotQuota": d.Quota,
			"modificationTime": d.Status.Mtime, "permission": fmt.Sprintf("%o", d.Status.Mode&0o7777), "owner": d.Status.Owner, "group": d.Status.Group})
		for _, sn := range d.Snapshots {
			snaps = append(snaps, map[string]any{"snapshotID": sn.ID, "snapshotDirectory": sn.Path, "modificationTime": sn.Ctime})
		}
	}
	return map[string]any{"name": "Hadoop:service=NameNode,name=SnapshotInfo", "modelerType": "org.apache.hadoop.hdfs.server.namenode.snapshot.SnapshotManager",
		"SnapshottableDirectories": dirs, "Snapshots": snaps}
}

var snapshotPage = webui.Parse(`{{define "content"}}
<h2>Snapshottable directories: {{len .}}</h2>
<table class="sortable" id="snapshottable">
<thead><tr><th>Path</th><th class="num">Snapshot number</th><th class="num">Snapshot quota</th><th>Modification time</th><th>Permission</th><th>Owner</th><th>Group</th></tr></thead>
<tbody>{{range .}}<tr><td><a href="/explorer?path={{.Path}}">{{.Path}}</a></td><td class="num">{{len .Snapshots}}</td><td class="num">{{.Quota}}</td>
<td data-sort="{{.Status.Mtime}}">{{ts (millis .Status.Mtime)}}</td><td>{{perm true .Status.Mode}}</td><td>{{.Status.Owner}}</td><td>{{.Status.Group}}</td></tr>
{{else}}<tr><td colspan="7" class="muted">none (hdfs dfsadmin -allowSnapshot makes a directory snapshottable)</td></tr>{{end}}</tbody></table>
<h2>Snapshotted directories</h2>
<table class="sortable" id="snapshots">
<thead><tr><th class="num">Snapshot ID</th><th>Name</th><th>Snapshot directory</th><th>Modification time</th></tr></thead>
<tbody>{{range .}}{{range .Snapshots}}<tr><td class="num">{{.ID}}</td><td>{{.Name}}</td><td><a href="/explorer?path={{.Path}}">{{.Path}}</a></td><td data-sort="{{.Ctime}}">{{ts (millis .Ctime)}}</td></tr>
{{end}}{{end}}</tbody></table>
{{end}}`, nil)

func (n *NameNode) pageSnapshots(w http.ResponseWriter, r *http.Request) {
	n.render(w, snapshotPage, "Snapshot Summary", "/snapshots", 0, n.ns.SnapshotStats())
}

// adminStateClass is the CSS class of an admin state's badge.
func adminStateClass(s blockmgmt.AdminState) string {
	switch s {
	case blockmgmt.Normal:
		return "ok"
	case blockmgmt.Decommissioned, blockmgmt.InMaintenance:
		return "muted"
	}
	return "warn"
}

// maintenanceUntil describes a maintenance expiry for the Datanodes page.
func maintenanceUntil(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "until " + t.Format("2006-01-02 15:04:05")
}
