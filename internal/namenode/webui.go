package namenode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/webui"
)

// The NameNode's web UI: Hadoop's dfshealth.html tabs (Overview,
// Datanodes, Startup Progress), Utilities → Browse the file system, and
// fsck. Pages read the Namesystem through its exported methods, each
// taking the namespace lock briefly; the browse page runs as the
// request's user.name, so HDFS permissions apply as over WebHDFS.

// staleInterval is Hadoop's dfs.namenode.stale.datanode.interval default:
// a live DataNode silent for longer is shown as stale.
const staleInterval = 30 * time.Second

// webUser is the identity of a page request without user.name, Hadoop's
// hadoop.http.staticuser.user default.
const webUser = "dr.who"

// maxBrowseEntries bounds a listing the browse page renders.
const maxBrowseEntries = 5000

// maxBrowseBlocks bounds the blocks of one file the browse page renders.
const maxBrowseBlocks = 1000

// maxFsckReport bounds the fsck report the fsck page shows.
const maxFsckReport = 4 << 20

var nnNav = []webui.Link{{Name: "Overview", Href: "/"}, {Name: "Datanodes", Href: "/datanodes"},
	{Name: "Snapshot", Href: "/snapshots"},
	{Name: "Startup Progress", Href: "/startup"}, {Name: "Browse", Href: "/explorer"}, {Name: "fsck", Href: "/fsckui"}}

// registerUI adds the pages and the common endpoints to mux.
func (n *NameNode) registerUI(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", n.pageOverview)
	mux.HandleFunc("GET /dfshealth.html", n.pageOverview)
	mux.HandleFunc("GET /datanodes", n.pageDatanodes)
	mux.HandleFunc("GET /startup", n.pageStartup)
	mux.HandleFunc("GET /snapshots", n.pageSnapshots)
	mux.HandleFunc("GET /explorer", n.pageExplorer)
	mux.HandleFunc("GET /explorer.html", n.pageExplorer)
	mux.HandleFunc("GET /fsckui", n.pageFsck)
	webui.Endpoints{Beans: n.jmxBeans, Metrics: n.registry(), PProf: n.cfg.PProf}.Register(mux)
}

func (n *NameNode) render(w http.ResponseWriter, t *template.Template, title, active string, refresh int, data any) {
	webui.Render(w, t, webui.Page{Daemon: "NameNode " + n.RPCAddr(), Title: title, Nav: nnNav, Active: active, Refresh: refresh, Data: data})
}

// TypeCapacity is the capacity of one storage type over live DataNodes.
type TypeCapacity struct {
	Type                      storage.Type
	Capacity, Used, Remaining int64
	Volumes, Failed           int
}

// NodeCounts are the DataNodes by state.
type NodeCounts struct{ Live, Dead, Stale int }

type overviewData struct {
	Status
	State      string
	SafeTip    string
	ByType     []TypeCapacity
	Nodes      NodeCounts
	Admin      AdminCounts
	Snapshots  []SnapshotInfo
	Blocks     blockmgmt.ReplicationStats
	LastCPTx   uint64
	LastCPAt   time.Time
	Uptime     time.Duration
	HeapNotice string
}

// capacityByType sums the storages of live DataNodes by storage type.
func capacityByType(sts []blockmgmt.StorageStat) []TypeCapacity {
	m := map[storage.Type]*TypeCapacity{}
	for _, s := range sts {
		if s.Dead {
			continue
		}
		tc := m[s.Type]
		if tc == nil {
			tc = &TypeCapacity{Type: s.Type}
			m[s.Type] = tc
		}
		if s.Failed {
			tc.Failed++
			continue
		}
		tc.Volumes++
		tc.Capacity += s.Capacity
		tc.Used += s.Used
		tc.Remaining += s.Remaining
	}
	out := make([]TypeCapacity, 0, len(m))
	for _, tc := range m {
		out = append(out, *tc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}

// nodeCounts classifies DataNodes as at now.
func nodeCounts(dns []blockmgmt.DatanodeInfo, now time.Time) NodeCounts {
	var c NodeCounts
	for _, d := range dns {
		switch {
		case d.Dead:
			c.Dead++
		case now.Sub(d.LastHeartbeat) > staleInterval:
			c.Stale++
			c.Live++
		default:
			c.Live++
		}
	}
	return c
}

func (n *NameNode) overview() overviewData {
	st := n.Status()
	n.cpMu.Lock()
	cpTx, cpAt := n.lastCPTx, n.lastCPAt
	n.cpMu.Unlock()
	dns := n.ns.DatanodeReport(blockmgmt.ReportAll)
	return overviewData{Status: st, State: n.ServiceState().String(), SafeTip: n.ns.SafeModeTip(),
		ByType: capacityByType(n.ns.Storages()), Nodes: nodeCounts(dns, time.Now()), Admin: adminCounts(dns), Snapshots: n.ns.SnapshotStats(),
		Blocks: n.ns.Stats(), LastCPTx: cpTx, LastCPAt: cpAt, Uptime: time.Since(st.Started)}
}

var overviewPage = webui.Parse(`{{define "content"}}
{{if .SafeMode}}<div class="banner">Safe mode is ON. {{.SafeTip}}</div>{{end}}
{{if gt .Blocks.Missing 0}}<div class="banner bad">There are {{.Blocks.Missing}} missing blocks. The following files may be corrupted: see <a href="/fsckui?path=/">fsck</a>.</div>{{end}}
<h2>Overview</h2>
<table class="kv" id="overview">
<tr><th>State</th><td><span class="state {{.State}}">{{.State}}</span>{{with .HA}} member {{.ID}} of nameservice {{.Nameservice}}, term {{.Term}}, leader {{.Leader}}{{end}}</td></tr>
<tr><th>Started</th><td>{{ts .Started}} ({{dur .Uptime}} ago)</td></tr>
<tr><th>Version</th><td>strata</td></tr>
<tr><th>Cluster ID</th><td>{{.ClusterID}}</td></tr>
<tr><th>Namespace ID</th><td>{{.NamespaceID}}</td></tr>
</table>
<h2>Summary</h2>
<table class="kv" id="summary">
<tr><th>Security</th><td>off (simple authentication)</td></tr>
<tr><th>Safe mode</th><td>{{if .SafeMode}}<span class="warn">ON</span>{{else}}off{{end}}</td></tr>
<tr><th>Files and directories</th><td id="files">{{.Files}} files, {{.Directories}} directories, {{.Blocks.Blocks}} blocks</td></tr>
<tr><th>Configured capacity</th><td>{{bytes .Capacity}}</td></tr>
<tr><th>DFS used</th><td>{{bytes .Used}} {{usage .Used .Remaining .Capacity}}</td></tr>
<tr><th>DFS remaining</th><td>{{bytes .Remaining}} ({{pct .Remaining .Capacity}})</td></tr>
<tr><th>Live nodes</th><td><a href="/datanodes" id="live">{{.Nodes.Live}}</a> <span id="liveadmin">(Decommissioned: {{.Admin.DecomLive}}, In Maintenance: {{.Admin.InMaintenanceLive}})</span></td></tr>
<tr><th>Dead nodes</th><td><a href="/datanodes#dead" id="dead">{{.Nodes.Dead}}</a> (Decommissioned: {{.Admin.DecomDead}}, In Maintenance: {{.Admin.InMaintenanceDead}})</td></tr>
<tr><th>Decommissioning nodes</th><td><a href="/datanodes#decommissioning" id="decommissioning">{{.Admin.Decommissioning}}</a></td></tr>
<tr><th>Entering maintenance nodes</th><td><a href="/datanodes#decommissioning" id="enteringmaintenance">{{.Admin.EnteringMaintenance}}</a></td></tr>
<tr><th>Stale nodes</th><td>{{.Nodes.Stale}} (no heartbeat for 30 s)</td></tr>
<tr><th>Under-replicated blocks</th><td id="underrep">{{.Blocks.UnderReplicated}}</td></tr>
<tr><th>Blocks pending replication</th><td>{{.Blocks.PendingReplication}}</td></tr>
<tr><th>Misplaced blocks (storage policy)</th><td>{{.Blocks.Misplaced}}</td></tr>
<tr><th>Corrupt blocks</th><td{{if gt .Blocks.Corrupt 0}} class="bad"{{end}}>{{.Blocks.Corrupt}}</td></tr>
<tr><th>Missing blocks</th><td{{if gt .Blocks.Missing 0}} class="bad"{{end}}>{{.Blocks.Missing}}</td></tr>
<tr><th>Snapshots</th><td><a href="/snapshots" id="snapshotcount">{{len .Snapshots}} snapshottable directories, {{snapcount .Snapshots}} snapshots</a></td></tr>
<tr><th>RPC</th><td>{{.RPCCalls}} calls on {{.RPCConnections}} connections since start</td></tr>
</table>
<h2>Capacity by storage type</h2>
<table class="sortable" id="storagetypes">
<thead><tr><th>Storage type</th><th class="num">Volumes</th><th class="num">Failed</th><th class="num">Capacity</th><th class="num">Used</th><th class="num">Remaining</th><th>Use</th></tr></thead>
<tbody>{{range .ByType}}<tr><td>{{.Type}}</td><td class="num">{{.Volumes}}</td><td class="num">{{.Failed}}</td><td class="num" data-sort="{{.Capacity}}">{{bytes .Capacity}}</td><td class="num" data-sort="{{.Used}}">{{bytes .Used}}</td><td class="num" data-sort="{{.Remaining}}">{{bytes .Remaining}}</td><td>{{usage .Used .Remaining .Capacity}}</td></tr>
{{else}}<tr><td colspan="7" class="muted">no DataNode has reported storage</td></tr>{{end}}</tbody>
</table>
<h2>NameNode journal status</h2>
<table class="kv" id="journal">
<tr><th>Last transaction id</th><td>{{.LastTxID}}</td></tr>
{{if .HA}}{{with .HA}}<tr><th>Raft</th><td>commit index {{.CommitIndex}}, applied index {{.AppliedIndex}}; txid {{.AppliedTxID}} applied / {{.CommittedTxID}} committed; last contact {{.LastContact}}</td></tr>
<tr><th>Members</th><td>{{range .Members}}{{.ID}} ({{.Addr}}, {{.Suffrage}})<br>{{end}}</td></tr>
{{range .Peers}}<tr><th>Peer {{.ID}}</th><td>{{.State}}, applied index {{.AppliedIndex}}, {{.Lag}} behind{{if .Err}} <span class="bad">{{.Err}}</span>{{end}}</td></tr>{{end}}{{end}}
{{else}}<tr><th>Edit log</th><td>{{.EditRecords}} records in {{.EditSyncs}} group commits since start</td></tr>
<tr><th>Checkpoints</th><td>{{.Checkpoints}} since start; last at txid {{.LastCPTx}}, {{ts .LastCPAt}}</td></tr>{{end}}
</table>
<h2>NameNode storage</h2>
<table class="sortable" id="namedirs"><thead><tr><th>Storage directory</th><th>Type</th><th>State</th></tr></thead>
<tbody>{{range .NameDirs}}<tr><td>{{.Path}}</td><td>IMAGE_AND_EDITS</td><td>{{if .Active}}<span class="ok">Active</span>{{else}}<span class="bad">Failed</span> at {{ts .FailedAt}}: {{.Err}}{{end}}</td></tr>{{end}}</tbody></table>
{{end}}`, template.FuncMap{"snapcount": func(ds []SnapshotInfo) int {
	c := 0
	for _, d := range ds {
		c += len(d.Snapshots)
	}
	return c
}})

func (n *NameNode) pageOverview(w http.ResponseWriter, r *http.Request) {
	n.render(w, overviewPage, "Overview", "/", 5, n.overview())
}

// dnRow is one DataNode on the Datanodes page.
type dnRow struct {
	blockmgmt.DatanodeInfo
	State    string
	Storages []blockmgmt.StorageStat
	Failed   int
	Web      string
}

func (n *NameNode) datanodeRows() (live, dead []dnRow) {
	now := time.Now()
	for _, d := range n.ns.DatanodeStorageReport(blockmgmt.ReportAll) {
		row := dnRow{DatanodeInfo: d.Node, Storages: d.Storages, State: "live"}
		for _, s := range d.Storages {
			if s.Failed {
				row.Failed++
			}
		}
		if d.Node.InfoPort != 0 {
			row.Web = fmt.Sprintf("http://%s:%d/", d.Node.IP, d.Node.InfoPort)
		}
		switch {
		case d.Node.Dead:
			row.State = "dead"
			dead = append(dead, row)
			continue
		case now.Sub(d.Node.LastHeartbeat) > staleInterval:
			row.State = "stale"
		}
		live = append(live, row)
	}
	return live, dead
}

var datanodesPage = webui.Parse(`{{define "content"}}
<h2>In operation</h2>
<table class="sortable" id="datanodes">
<thead><tr><th>Node</th><th>State</th><th>Admin state</th><th class="num">Last contact</th><th class="num">Capacity</th><th>Used</th><th class="num">Remaining</th><th class="num">Blocks</th><th class="num">Failed volumes</th><th class="num">Xceivers</th><th>Version</th></tr></thead>
<tbody>{{range .Live}}<tr>
<td class="wrap">{{.Rack}}/{{if .Web}}<a href="{{.Web}}">{{.Host}} ({{.IP}}:{{.XferPort}})</a>{{else}}{{.Host}} ({{.IP}}:{{.XferPort}}){{end}}</td>
<td><span class="state {{.State}}">{{.State}}</span></td>
<td class="admin"><span class="{{adminclass .AdminState}}">{{.AdminState}}</span>{{with until .MaintenanceExpire}} {{.}}{{end}}</td>
<td class="num" data-sort="{{.LastHeartbeat.Unix}}">{{since .LastHeartbeat}}</td>
<td class="num" data-sort="{{.Capacity}}">{{bytes .Capacity}}</td>
<td data-sort="{{.Used}}">{{usage .Used .Remaining .Capacity}}</td>
<td class="num" data-sort="{{.Remaining}}">{{bytes .Remaining}}</td>
<td class="num">{{.Blocks}}</td><td class="num{{if gt .Failed 0}} bad{{end}}">{{.Failed}}</td><td class="num">{{.Xceivers}}</td><td>strata</td></tr>
{{else}}<tr><td colspan="11" class="muted">no live DataNodes</td></tr>{{end}}</tbody></table>
<h2 id="decommissioning">Decommissioning and entering maintenance</h2>
<table class="sortable" id="decomnodes"><thead><tr><th>Node</th><th>Admin state</th><th class="num">Under replicated blocks</th><th class="num">Blocks with no live replicas</th><th class="num">Under replicated blocks in files under construction</th></tr></thead>
<tbody>{{range .Decom}}<tr><td>{{.Node.Host}} ({{.Node.IP}}:{{.Node.XferPort}})</td><td>{{.Node.AdminState}}</td><td class="num">{{.UnderReplicated}}</td><td class="num">{{.OnlyReplicas}}</td><td class="num">{{.UnderReplicatedInOpenFiles}}</td></tr>
{{else}}<tr><td colspan="5" class="muted">none</td></tr>{{end}}</tbody></table>
<h2>Volumes</h2>
<table class="sortable" id="volumes">
<thead><tr><th>Node</th><th>Storage ID</th><th>Type</th><th>State</th><th class="num">Capacity</th><th>Used</th><th class="num">Remaining</th><th class="num">Blocks</th></tr></thead>
<tbody>{{range .Live}}{{$n := .}}{{range .Storages}}<tr><td>{{$n.Host}}</td><td>{{.StorageID}}</td><td>{{.Type}}</td>
<td>{{if .Failed}}<span class="state FAILED">FAILED</span>{{else}}<span class="ok">in service</span>{{end}}</td>
<td class="num" data-sort="{{.Capacity}}">{{bytes .Capacity}}</td><td data-sort="{{.Used}}">{{usage .Used .Remaining .Capacity}}</td>
<td class="num" data-sort="{{.Remaining}}">{{bytes .Remaining}}</td><td class="num">{{.Blocks}}</td></tr>{{end}}{{end}}</tbody></table>
<h2 id="dead">Dead</h2>
<table class="sortable" id="deadnodes"><thead><tr><th>Node</th><th>Admin state</th><th class="num">Last contact</th></tr></thead>
<tbody>{{range .Dead}}<tr><td>{{.Rack}}/{{.Host}} ({{.IP}}:{{.XferPort}})</td><td class="admin">{{.AdminState}}</td><td class="num" data-sort="{{.LastHeartbeat.Unix}}">{{since .LastHeartbeat}}</td></tr>
{{else}}<tr><td colspan="3" class="muted">none</td></tr>{{end}}</tbody></table>
{{end}}`, template.FuncMap{"adminclass": adminStateClass, "until": maintenanceUntil})

func (n *NameNode) pageDatanodes(w http.ResponseWriter, r *http.Request) {
	live, dead := n.datanodeRows()
	n.render(w, datanodesPage, "Datanode Information", "/datanodes", 5, map[string]any{"Live": live, "Dead": dead, "Decom": n.ns.AdminProgress()})
}

var startupPage = webui.Parse(`{{define "content"}}
<p>Start-up of this NameNode, phase by phase.</p>
<table class="sortable" id="startup"><thead><tr><th>Phase</th><th>Status</th><th>Detail</th></tr></thead><tbody>
{{range .}}<tr><td>{{.Phase}}</td><td>{{if .Done}}<span class="ok">complete</span>{{else}}<span class="warn">in progress</span>{{end}}</td><td>{{.Detail}}</td></tr>{{end}}
</tbody></table>{{end}}`, nil)

type startupPhase struct {
	Phase, Detail string
	Done          bool
}

func (n *NameNode) startupPhases() []startupPhase {
	st := n.Status()
	var ph []startupPhase
	if st.HA == nil {
		ph = append(ph, startupPhase{"Loading fsimage and edits", fmt.Sprintf("namespace at txid %d: %d files, %d directories, loaded before %s", st.LastTxID, st.Files, st.Directories, webui.Timestamp(st.Started)), true})
		n.cpMu.Lock()
		ph = append(ph, startupPhase{"Saving checkpoint", fmt.Sprintf("%d checkpoints since start; last covers txid %d", n.checkpoints, n.lastCPTx), true})
		n.cpMu.Unlock()
	} else {
		h := st.HA
		ph = append(ph, startupPhase{"Joining the Raft group", fmt.Sprintf("member %s of %s, state %s, term %d", h.ID, h.Nameservice, h.State, h.Term), h.Leader != ""},
			startupPhase{"Applying committed edits", fmt.Sprintf("txid %d applied of %d committed", h.AppliedTxID, h.CommittedTxID), h.AppliedTxID >= h.CommittedTxID})
	}
	detail := "left safe mode"
	if st.SafeMode {
		detail = n.ns.SafeModeTip()
	}
	ph = append(ph, startupPhase{"Safe mode", detail, !st.SafeMode})
	return ph
}

func (n *NameNode) pageStartup(w http.ResponseWriter, r *http.Request) {
	n.render(w, startupPage, "Startup Progress", "/startup", 2, n.startupPhases())
}

// browseEntry is a row of the browse page.
type browseEntry struct {
	FileStatus
	Path, Policy string
}

type browseData struct {
	Path, User, Parent string
	Crumbs             []webui.Link
	Entries            []browseEntry
	Truncated          bool
	File               *browseEntry
	Blocks             []LocatedBlock
	BlocksCut          bool
	Err                string
	Standby            bool
	// ReadOnly: the path is inside a snapshot, which no change may touch.
	ReadOnly bool
	// SnapshotDir is the .snapshot directory of a snapshottable
	// directory, else "".
	SnapshotDir string
}

// policyName names the storage policy id, or inherited (an inode without
// one of its own takes its parent's), as Hadoop reports the effective
// policy.
func policyName(id uint8, inherited string) string {
	if id == 0 {
		return inherited
	}
	if p, ok := storage.ByID(id); ok {
		return p.Name
	}
	return fmt.Sprint(id)
}

func (n *NameNode) browse(r *http.Request) browseData {
	q := r.URL.Query()
	user := webui.ParamUser(r)
	if user == "" {
		user = webUser
	}
	p := path.Clean("/" + q.Get("path"))
	d := browseData{Path: p, User: user, Parent: path.Dir(p), ReadOnly: hasDotSnapshot(p)}
	acc := "/"
	d.Crumbs = append(d.Crumbs, webui.Link{Name: "/", Href: "/"})
	for _, c := range strings.Split(strings.Trim(p, "/"), "/") {
		if c != "" {
			acc = path.Join(acc, c)
			d.Crumbs = append(d.Crumbs, webui.Link{Name: c, Href: acc})
		}
	}
	if n.ServiceState() != HAActive {
		d.Standby = true
		return d
	}
	ctx := ipc.WithCaller(r.Context(), &ipc.Caller{User: user, Protocol: "http"})
	st, err := n.ns.FileInfo(ctx, p)
	if err != nil {
		d.Err = ipcMessage(err)
		return d
	}
	if st == nil {
		d.Err = "Path does not exist: " + p
		return d
	}
	if st.SnapshotEnabled {
		d.SnapshotDir = path.Join(p, namespace.DotSnapshot)
	}
	inherited := "HOT"
	if pol, err := n.ns.StoragePolicy(ctx, p); err == nil {
		inherited = pol.Name
	}
	if !st.IsDir {
		d.File = &browseEntry{FileStatus: *st, Path: p, Policy: policyName(st.StoragePolicy, inherited)}
		lbs, err := n.ns.BlockLocations(ctx, p, 0, st.Length, "")
		if err != nil {
			d.Err = ipcMessage(err)
			return d
		}
		d.Blocks = lbs.Blocks
		if lbs.LastBlock != nil && !lbs.LastBlockComplete && (len(d.Blocks) == 0 || d.Blocks[len(d.Blocks)-1].Block.ID != lbs.LastBlock.Block.ID) {
			d.Blocks = append(d.Blocks, *lbs.LastBlock)
		}
		if len(d.Blocks) > maxBrowseBlocks {
			d.Blocks, d.BlocksCut = d.Blocks[:maxBrowseBlocks], true
		}
		return d
	}
	after := ""
	for {
		l, err := n.ns.List(ctx, p, after)
		if err != nil {
			d.Err = ipcMessage(err)
			return d
		}
		if l == nil {
			break
		}
		for _, e := range l.Entries {
			d.Entries = append(d.Entries, browseEntry{FileStatus: e, Path: path.Join(p, e.Name), Policy: policyName(e.StoragePolicy, inherited)})
		}
		if l.Remaining == 0 || len(l.Entries) == 0 {
			break
		}
		if len(d.Entries) >= maxBrowseEntries {
			d.Truncated = true
			break
		}
		after = l.Entries[len(l.Entries)-1].Name
	}
	return d
}

var explorerPage = webui.Parse(`{{define "content"}}
<form class="tools" method="get" action="/explorer">
<label>Path <input type="text" name="path" value="{{.Path}}" id="pathbox"></label>
<label>User <input type="text" name="user.name" value="{{.User}}" id="userbox"></label>
<button type="submit">Go</button></form>
<p id="crumbs">{{range $i, $c := .Crumbs}}{{if $i}} / {{end}}<a href="/explorer?path={{$c.Href}}&amp;user.name={{$.User}}">{{$c.Name}}</a>{{end}}</p>
<div id="message" role="status"></div>
{{if .Standby}}<div class="banner">This NameNode is a standby: browse the file system on the active NameNode.</div>
{{else if .Err}}<div class="banner bad" id="error">{{.Err}}</div>
{{else if .File}}{{with .File}}
<h2>File information</h2>
<table class="kv" id="fileinfo">
<tr><th>Path</th><td>{{.Path}}</td></tr>
<tr><th>Permission</th><td>{{perm .IsDir .Mode}}</td></tr>
<tr><th>Owner / group</th><td>{{.Owner}} / {{.Group}}</td></tr>
<tr><th>Size</th><td>{{bytes .Length}} ({{.Length}} bytes)</td></tr>
<tr><th>Replication</th><td>{{.Replication}}</td></tr>
<tr><th>Block size</th><td>{{bytes (i64 .BlockSize)}}</td></tr>
<tr><th>Storage policy</th><td>{{.Policy}}</td></tr>
<tr><th>Modified</th><td>{{ts (millis .Mtime)}}</td></tr>
<tr><th>Download</th><td><a id="download" href="/webhdfs/v1{{segments .Path}}?op=OPEN&amp;user.name={{$.User}}">download through WebHDFS</a></td></tr>
</table>{{end}}
<h2>Blocks</h2>
<table class="sortable" id="blocks"><thead><tr><th class="num">#</th><th>Block</th><th class="num">Offset</th><th class="num">Size</th><th>Locations</th></tr></thead><tbody>
{{range $i, $b := .Blocks}}<tr><td class="num">{{$i}}</td><td>blk_{{$b.Block.ID}}_{{$b.Block.GenStamp}}{{if $b.Corrupt}} <span class="bad">corrupt</span>{{end}}</td><td class="num">{{$b.Offset}}</td><td class="num" data-sort="{{$b.Block.NumBytes}}">{{bytes $b.Block.NumBytes}}</td>
<td>{{range $b.Locs}}{{.Node.Host}} ({{.Node.IP}}:{{.Node.XferPort}}, {{.StorageType}})<br>{{end}}</td></tr>{{end}}
</tbody></table>
{{if .BlocksCut}}<p class="warn">Only the first {{len .Blocks}} blocks are shown.</p>{{end}}
<p>{{if not .ReadOnly}}<button type="button" data-delete="{{.Path}}">Delete this file</button> {{end}}<a href="/explorer?path={{.Parent}}&amp;user.name={{.User}}">back to {{.Parent}}</a></p>
{{else}}
{{if .SnapshotDir}}<p id="snapshotlink">A snapshottable directory: <a href="/explorer?path={{.SnapshotDir}}&amp;user.name={{.User}}">its snapshots ({{.SnapshotDir}})</a></p>{{end}}
{{if .ReadOnly}}<p class="muted" id="readonly">Inside a snapshot: read only (the NameNode refuses every change here).</p>
{{else}}<div class="tools" id="writetools">
<form id="mkdirform" class="inline"><input type="text" id="mkdirname" placeholder="new directory name"> <button type="submit">Create directory</button></form>
<form id="uploadform" class="inline"><input type="file" id="uploadfile" multiple> <button type="submit">Upload</button></form>
<span class="muted">as {{.User}}, through WebHDFS (needs JavaScript)</span></div>{{end}}
<table class="sortable" id="listing">
<thead><tr><th>Permission</th><th>Owner</th><th>Group</th><th class="num">Size</th><th>Last modified</th><th class="num">Replication</th><th class="num">Block size</th><th>Storage policy</th><th>Name</th><th></th></tr></thead>
<tbody>{{range .Entries}}<tr>
<td>{{perm .IsDir .Mode}}</td><td>{{.Owner}}</td><td>{{.Group}}</td>
<td class="num" data-sort="{{.Length}}">{{if .IsDir}}{{else}}{{bytes .Length}}{{end}}</td>
<td data-sort="{{.Mtime}}">{{ts (millis .Mtime)}}</td>
<td class="num">{{if .IsDir}}0{{else}}{{.Replication}}{{end}}</td>
<td class="num" data-sort="{{.BlockSize}}">{{if .IsDir}}0 B{{else}}{{bytes (i64 .BlockSize)}}{{end}}</td>
<td>{{.Policy}}</td>
<td><a href="/explorer?path={{.Path}}&amp;user.name={{$.User}}">{{.Name}}</a>{{if .SnapshotEnabled}} <a class="snaplink" href="/explorer?path={{.Path}}/.snapshot&amp;user.name={{$.User}}" title="snapshots of {{.Path}}">.snapshot</a>{{end}}</td>
<td>{{if not $.ReadOnly}}<button type="button" data-delete="{{.Path}}" title="delete {{.Path}}">delete</button>{{end}}</td></tr>
{{else}}<tr><td colspan="10" class="muted">empty directory</td></tr>{{end}}</tbody></table>
{{if .Truncated}}<p class="warn">Only the first {{len .Entries}} entries are shown.</p>{{end}}
{{end}}
<script src="/static/webui/explorer.js" defer data-path="{{.Path}}" data-user="{{.User}}" data-parent="{{.Parent}}" id="explorer"></script>
{{end}}`, template.FuncMap{"i64": func(v uint64) int64 { return int64(v) }, "segments": escapeSegments})

func (n *NameNode) pageExplorer(w http.ResponseWriter, r *http.Request) {
	n.render(w, explorerPage, "Browse Directory", "/explorer", 0, n.browse(r))
}

// escapeSegments escapes each segment of an absolute path for a URL's
// path: html/template leaves '?', '#' and "%XX" in a path as they are, so
// a file named "a?op=DELETE" would otherwise make a link run another op.
func escapeSegments(p string) string {
	seg := strings.Split(p, "/")
	for i, s := range seg {
		seg[i] = url.PathEscape(s)
	}
	return strings.Join(seg, "/")
}

// limitWriter keeps the first max bytes written to it and says whether
// more came.
type limitWriter struct {
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); len(p) > room {
		l.buf.Write(p[:max(room, 0)])
		l.truncated = true
		return 0, fmt.Errorf("fsck report longer than %d bytes", l.max)
	}
	return l.buf.Write(p)
}

var fsckPage = webui.Parse(`{{define "content"}}
<form class="tools" method="get" action="/fsckui">
<label>Path <input type="text" name="path" value="{{.Path}}"></label>
<label><input type="checkbox" name="files" value="1"{{if .Files}} checked{{end}}> -files</label>
<label><input type="checkbox" name="blocks" value="1"{{if .Blocks}} checked{{end}}> -blocks</label>
<label><input type="checkbox" name="locations" value="1"{{if .Locations}} checked{{end}}> -locations</label>
<label>User <input type="text" name="user.name" value="{{.User}}"></label>
<button type="submit">Run fsck</button></form>
{{if .Ran}}<p>Status: <span id="fsckstatus" class="{{if .Healthy}}ok{{else}}bad{{end}}">{{if .Healthy}}HEALTHY{{else}}{{.Verdict}}{{end}}</span></p>
<pre id="fsck">{{.Report}}</pre>{{if .Truncated}}<p class="warn">The report was cut at 4 MB; run strata fsck for the rest.</p>{{end}}
{{else}}<p class="muted">fsck needs the superuser; give its name as User.</p>{{end}}
{{end}}`, nil)

func (n *NameNode) pageFsck(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := q.Get("path")
	user := webui.ParamUser(r)
	if user == "" {
		user = webUser // Hadoop's static user, never the superuser
	}
	d := map[string]any{"Path": p, "User": user, "Files": q.Get("files") == "1", "Blocks": q.Get("blocks") == "1", "Locations": q.Get("locations") == "1"}
	if p != "" {
		d["Ran"] = true
		lw := &limitWriter{max: maxFsckReport}
		healthy, ran := false, false
		ctx := ipc.WithCaller(r.Context(), &ipc.Caller{User: user, Protocol: "http"})
		if err := n.ns.checker(ctx).Superuser(""); err != nil && n.cfg.Permissions {
			fmt.Fprintf(&lw.buf, "%v\n\nFsck on path '%s' FAILED\n", ipcMessage(err), p)
		} else {
			from := r.RemoteAddr
			if i := strings.LastIndexByte(from, ':'); i > 0 {
				from = from[:i]
			}
			healthy = n.ns.fsck(lw, path.Clean("/"+p), user, from, fsckOptions{files: d["Files"].(bool), blocks: d["Blocks"].(bool), locations: d["Locations"].(bool)})
			ran = true
		}
		d["Report"], d["Truncated"] = lw.buf.String(), lw.truncated
		// The verdict is fsck's own, never read back from the report (a
		// path name can contain "is HEALTHY").
		d["Healthy"] = ran && healthy
		d["Verdict"] = "FAILED"
		if ran && !healthy && !lw.truncated {
			// false is also fsck's answer for a missing path.
			if st, err := n.ns.FileInfo(ctx, path.Clean("/"+p)); err == nil && st != nil {
				d["Verdict"] = "CORRUPT"
			}
		}
	}
	n.render(w, fsckPage, "fsck", "/fsckui", 0, d)
}

// jmxBeans are Hadoop's NameNode beans with the attributes monitoring
// tools (Ambari, Prometheus' JMX exporter rules, check_hadoop scripts)
// read.
func (n *NameNode) jmxBeans() []webui.Bean {
	st := n.Status()
	bs := n.ns.Stats()
	dns := n.ns.DatanodeReport(blockmgmt.ReportAll)
	nc := nodeCounts(dns, time.Now())
	ac := adminCounts(dns)
	progress := n.ns.AdminProgress()
	snaps := n.ns.SnapshotStats()
	numSnaps := 0
	for _, d := range snaps {
		numSnaps += len(d.Snapshots)
	}
	state := n.ServiceState().String()
	safe := ""
	if st.SafeMode {
		safe = n.ns.SafeModeTip()
	}
	n.cpMu.Lock()
	cpAt := n.lastCPAt
	n.cpMu.Unlock()
	live, dead := map[string]any{}, map[string]any{}
	for _, d := range dns {
		name := fmt.Sprintf("%s:%d", d.Host, d.XferPort)
		if d.Dead {
			dead[name] = map[string]any{"lastContact": int64(time.Since(d.LastHeartbeat).Seconds()), "xferaddr": fmt.Sprintf("%s:%d", d.IP, d.XferPort),
				"adminState": d.AdminState.String(), "decommissioned": d.AdminState == blockmgmt.Decommissioned}
			continue
		}
		live[name] = map[string]any{"infoAddr": fmt.Sprintf("%s:%d", d.IP, d.InfoPort), "xferaddr": fmt.Sprintf("%s:%d", d.IP, d.XferPort),
			"lastContact": int64(time.Since(d.LastHeartbeat).Seconds()), "usedSpace": d.Used, "adminState": d.AdminState.String(),
			"capacity": d.Capacity, "remaining": d.Remaining, "numBlocks": d.Blocks, "version": "strata"}
	}
	pctUsed := 0.0
	if st.Capacity > 0 {
		pctUsed = 100 * float64(st.Used) / float64(st.Capacity)
	}
	beans := []webui.Bean{
		{
			"name": "Hadoop:service=NameNode,name=FSNamesystem", "modelerType": "FSNamesystem",
			"tag.Context": "dfs", "tag.HAState": state, "tag.Hostname": n.RPCAddr(),
			"FilesTotal": st.Files + st.Directories, "BlocksTotal": bs.Blocks,
			"CapacityTotal": st.Capacity, "CapacityUsed": st.Used, "CapacityRemaining": st.Remaining,
			"CapacityTotalGB": st.Capacity >> 30, "CapacityUsedGB": st.Used >> 30, "CapacityRemainingGB": st.Remaining >> 30,
			"NumLiveDataNodes": nc.Live, "NumDeadDataNodes": nc.Dead, "NumStaleDataNodes": nc.Stale,
			"NumDecommissioningDataNodes": ac.Decommissioning, "NumDecomLiveDataNodes": ac.DecomLive, "NumDecomDeadDataNodes": ac.DecomDead,
			"NumInMaintenanceLiveDataNodes": ac.InMaintenanceLive, "NumInMaintenanceDeadDataNodes": ac.InMaintenanceDead,
			"NumEnteringMaintenanceDataNodes": ac.EnteringMaintenance, "UnderReplicatedBlocks": bs.UnderReplicated, "PendingReplicationBlocks": bs.PendingReplication,
			"CorruptBlocks": bs.Corrupt, "MissingBlocks": bs.Missing, "ScheduledReplicationBlocks": bs.PendingReplication,
			"LastWrittenTransactionId": st.LastTxID, "LastCheckpointTime": cpAt.UnixMilli(),
			"TransactionsSinceLastCheckpoint": st.LastTxID - n.checkpointTxID(), "FSState": map[bool]string{true: "safeMode", false: "Operational"}[st.SafeMode],
		},
		{
			"name": "Hadoop:service=NameNode,name=FSNamesystemState", "modelerType": "org.apache.hadoop.hdfs.server.namenode.FSNamesystem",
			"CapacityTotal": st.Capacity, "CapacityUsed": st.Used, "CapacityRemaining": st.Remaining, "FilesTotal": st.Files + st.Directories,
			"BlocksTotal": bs.Blocks, "NumLiveDataNodes": nc.Live, "NumDeadDataNodes": nc.Dead, "NumStaleDataNodes": nc.Stale,
			"UnderReplicatedBlocks": bs.UnderReplicated, "FSState": map[bool]string{true: "safeMode", false: "Operational"}[st.SafeMode],
			"NumDecommissioningDataNodes": ac.Decommissioning, "NumDecomLiveDataNodes": ac.DecomLive, "NumDecomDeadDataNodes": ac.DecomDead,
			"NumInMaintenanceLiveDataNodes": ac.InMaintenanceLive, "NumInMaintenanceDeadDataNodes": ac.InMaintenanceDead,
			"NumEnteringMaintenanceDataNodes": ac.EnteringMaintenance, "NumSnapshottableDirs": len(snaps), "NumSnapshots": numSnaps,
		},
		{
			"name": "Hadoop:service=NameNode,name=NameNodeInfo", "modelerType": "org.apache.hadoop.hdfs.server.namenode.FSNamesystem",
			"ClusterId": st.ClusterID, "BlockPoolId": n.ns.blockPoolID, "Safemode": safe, "Version": "strata", "SoftwareVersion": "strata",
			"Total": st.Capacity, "Used": st.Used, "Free": st.Remaining, "PercentUsed": pctUsed, "PercentRemaining": 100 - pctUsed,
			"TotalBlocks": bs.Blocks, "TotalFiles": st.Files + st.Directories, "NumberOfMissingBlocks": bs.Missing,
			"LiveNodes": jsonString(live), "DeadNodes": jsonString(dead), "DecomNodes": adminJSON(progress, false), "EnteringMaintenanceNodes": adminJSON(progress, true),
			"NameDirStatuses": nameDirStatuses(st.NameDirs), "NNStarted": st.Started.Format("Mon Jan 02 15:04:05 MST 2006"),
		},
		{
			"name": "Hadoop:service=NameNode,name=NameNodeStatus", "modelerType": "org.apache.hadoop.hdfs.server.namenode.NameNode",
			"State": state, "NNRole": "NameNode", "HostAndPort": n.RPCAddr(), "SecurityEnabled": false,
			"LastHATransitionTime": 0,
		},
	}
	beans = append(beans, snapshotBean(snaps))
	return append(beans, webui.RuntimeBeans("NameNode")...)
}

// checkpointTxID is the transaction id the last checkpoint covers.
func (n *NameNode) checkpointTxID() uint64 {
	n.cpMu.Lock()
	defer n.cpMu.Unlock()
	return n.lastCPTx
}

// jsonString is v as a JSON document in a string, as NameNodeInfo's
// LiveNodes and DeadNodes are.
func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
