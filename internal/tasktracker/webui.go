package tasktracker

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"

	"github.com/stratafs/strata/internal/jobtracker"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/webui"
)

// The TaskTracker's web page (Hadoop MRv1's tasktracker.jsp): its slots,
// running attempts, local directories and the shuffle it served; and
// /tasklog, an attempt's standard error (Hadoop's TaskLogServlet), which
// the JobTracker's job page links to.

// maxTaskLog is how much of the end of an attempt's log /tasklog shows.
const maxTaskLog = 1 << 20

// attemptIDPattern is a task attempt id: attempt_<start>_<seq>_<type>_<task>_<attempt>.
var attemptIDPattern = regexp.MustCompile(`^attempt_([0-9]+_[0-9]+)_[mrc]_[0-9]{1,9}_[0-9]{1,9}$`)

// LocalDir is a local directory's use, as the page shows it.
type LocalDir struct {
	Path                 string
	Capacity, Free, Used int64
	Err                  string
}

// RunningAttempt is an attempt running on this tracker.
type RunningAttempt struct {
	ID, Job, Kind string
	CommitPending bool
}

type ttPage struct {
	Name, JobTracker                                        string
	MapSlots, ReduceSlots                                   int
	FreeMaps, FreeReduces                                   int
	Running                                                 []RunningAttempt
	Dirs                                                    []LocalDir
	ShuffleServed, ShuffleBytes, ShuffleBusy, ShuffleFailed int64
	Unreported                                              int
}

func localDir(p string) LocalDir {
	d := LocalDir{Path: p}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		d.Err = err.Error()
		return d
	}
	d.Capacity = int64(st.Blocks) * int64(st.Bsize)
	d.Free = int64(st.Bavail) * int64(st.Bsize)
	d.Used = d.Capacity - d.Free // as df counts it for unprivileged users
	return d
}

func (tt *TaskTracker) pageData() ttPage {
	p := ttPage{Name: tt.name, JobTracker: tt.cfg.JobTracker, MapSlots: tt.cfg.MapSlots, ReduceSlots: tt.cfg.ReduceSlots}
	tt.mu.Lock()
	p.FreeMaps, p.FreeReduces, p.Unreported = tt.freeMaps, tt.freeReduce, len(tt.reports)
	for _, a := range tt.running {
		kind := "reduce"
		switch {
		case strings.Contains(a.id, "_c_"):
			kind = "cleanup"
		case a.isMap:
			kind = "map"
		}
		p.Running = append(p.Running, RunningAttempt{ID: a.id, Job: a.job, Kind: kind, CommitPending: a.commitPending})
	}
	tt.mu.Unlock()
	sort.Slice(p.Running, func(a, b int) bool { return p.Running[a].ID < p.Running[b].ID })
	for _, d := range tt.cfg.LocalDirs {
		p.Dirs = append(p.Dirs, localDir(d))
	}
	st := tt.shuffle.Stats()
	p.ShuffleServed, p.ShuffleBytes, p.ShuffleBusy, p.ShuffleFailed = st.Served, st.Bytes, st.Busy, st.Failed
	return p
}

var ttPageTmpl = webui.Parse(`{{define "content"}}
<table class="kv" id="ttinfo">
<tr><th>Name</th><td>{{.Name}}</td></tr>
<tr><th>JobTracker</th><td>{{.JobTracker}}</td></tr>
<tr><th>Map slots</th><td id="mapslots">{{sub .MapSlots .FreeMaps}} of {{.MapSlots}} in use</td></tr>
<tr><th>Reduce slots</th><td id="reduceslots">{{sub .ReduceSlots .FreeReduces}} of {{.ReduceSlots}} in use</td></tr>
<tr><th>Ended attempts not yet reported</th><td>{{.Unreported}}</td></tr>
<tr><th>Shuffle served</th><td id="shuffle">{{.ShuffleServed}} map output segments, {{bytes .ShuffleBytes}}; {{.ShuffleBusy}} refused busy, {{.ShuffleFailed}} failed</td></tr>
</table>
<h2>Running attempts</h2>
<table class="sortable" id="running"><thead><tr><th>Attempt</th><th>Job</th><th>Kind</th><th>State</th><th>Logs</th></tr></thead><tbody>
{{range .Running}}<tr><td>{{.ID}}</td><td>{{.Job}}</td><td>{{.Kind}}</td><td>{{if .CommitPending}}COMMIT_PENDING{{else}}RUNNING{{end}}</td><td><a href="/tasklog?attemptid={{.ID}}&amp;filter=stderr">stderr</a></td></tr>
{{else}}<tr><td colspan="5" class="muted">none</td></tr>{{end}}</tbody></table>
<h2>Local directories</h2>
<table class="sortable" id="localdirs"><thead><tr><th>Directory</th><th class="num">Capacity</th><th>Used</th><th class="num">Free</th></tr></thead><tbody>
{{range .Dirs}}<tr><td>{{.Path}}</td>{{if .Err}}<td colspan="3" class="bad">{{.Err}}</td>{{else}}<td class="num" data-sort="{{.Capacity}}">{{bytes .Capacity}}</td><td data-sort="{{.Used}}">{{bar .Used .Capacity}}</td><td class="num" data-sort="{{.Free}}">{{bytes .Free}}</td>{{end}}</tr>{{end}}
</tbody></table>{{end}}`, map[string]any{"sub": func(a, b int) int { return a - b }})

var taskLogTmpl = webui.Parse(`{{define "content"}}
{{if .Err}}<div class="banner bad">{{.Err}}</div>{{else}}
<p>{{.Path}} ({{bytes .Size}}){{if .Cut}}, the last {{bytes .Shown}}{{end}} · <a href="/tasklog?attemptid={{.ID}}&amp;filter=stderr&amp;plaintext=true">plain text</a></p>
<pre id="tasklog">{{.Text}}</pre>{{end}}{{end}}`, nil)

func (tt *TaskTracker) registerUI(mux *http.ServeMux) {
	nav := []webui.Link{{Name: "TaskTracker", Href: "/"}}
	page := func(w http.ResponseWriter, r *http.Request) {
		webui.Render(w, ttPageTmpl, webui.Page{Daemon: tt.name, Title: "TaskTracker " + tt.name, Nav: nav, Active: "/", Refresh: 5, Data: tt.pageData()})
	}
	mux.HandleFunc("GET /{$}", page)
	mux.HandleFunc("GET /tasktracker.jsp", page)
	mux.HandleFunc("GET /tasklog", func(w http.ResponseWriter, r *http.Request) { tt.serveTaskLog(w, r, nav) })
	webui.Endpoints{Beans: tt.jmxBeans, Metrics: tt.registry(), PProf: tt.cfg.PProf}.Register(mux)
}

// taskLogPath is where an attempt's standard error is kept (see run), or
// an error for an id that is not an attempt's.
func (tt *TaskTracker) taskLogPath(id string) (string, error) {
	m := attemptIDPattern.FindStringSubmatch(id)
	if m == nil {
		return "", fmt.Errorf("not a task attempt id: %q", id)
	}
	return filepath.Join(tt.cfg.LocalDirs[0], "userlogs", "job_"+m[1], id+".stderr"), nil
}

// serveTaskLog shows the end of an attempt's standard error (filter=stderr,
// the only log strata keeps), as HTML or with plaintext=true as text.
func (tt *TaskTracker) serveTaskLog(w http.ResponseWriter, r *http.Request, nav []webui.Link) {
	q := r.URL.Query()
	id := q.Get("attemptid")
	d := map[string]any{"ID": id}
	render := func(status int) {
		if status != http.StatusOK {
			w.WriteHeader(status)
		}
		webui.Render(w, taskLogTmpl, webui.Page{Daemon: tt.name, Title: "Task log " + id, Nav: nav, Data: d})
	}
	if f := q.Get("filter"); f != "" && f != "stderr" {
		d["Err"] = "only the stderr log is kept (filter=stderr)"
		render(http.StatusNotFound)
		return
	}
	p, err := tt.taskLogPath(id)
	if err != nil {
		d["Err"] = err.Error()
		render(http.StatusBadRequest)
		return
	}
	if user := webui.RemoteUser(w, r); !tt.mayViewLog(user, filepath.Dir(p)) {
		d["Err"] = fmt.Sprintf("User %s is not authorized to view the logs of %s", user, id)
		render(http.StatusUnauthorized)
		return
	}
	f, err := os.Open(p)
	if err != nil {
		d["Err"] = "no log of " + id + " on this TaskTracker"
		render(http.StatusNotFound)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		d["Err"] = err.Error()
		render(http.StatusInternalServerError)
		return
	}
	off := max(st.Size()-maxTaskLog, 0)
	b, err := io.ReadAll(io.NewSectionReader(f, off, maxTaskLog))
	if err != nil {
		d["Err"] = err.Error()
		render(http.StatusInternalServerError)
		return
	}
	if q.Get("plaintext") == "true" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(b)
		return
	}
	d["Path"], d["Size"], d["Shown"], d["Cut"], d["Text"] = p, st.Size(), int64(len(b)), off > 0, string(b)
	render(http.StatusOK)
}

func (tt *TaskTracker) jmxBeans() []webui.Bean {
	p := tt.pageData()
	beans := []webui.Bean{
		{"name": "Hadoop:service=TaskTracker,name=TaskTrackerInfo", "modelerType": "org.apache.hadoop.mapred.TaskTracker",
			"Hostname": tt.cfg.Host, "Version": "strata", "ConfigVersion": "default", "JobTrackerUrl": p.JobTracker, "RpcPort": 0,
			"HttpPort": tt.httpPort(), "Healthy": true, "TasksInfoJson": jsonTasks(p)},
		{"name": "Hadoop:service=TaskTracker,name=TaskTrackerMetrics", "modelerType": "TaskTrackerMetrics",
			"mapTaskSlots": p.MapSlots, "reduceTaskSlots": p.ReduceSlots, "maps_running": p.MapSlots - p.FreeMaps,
			"reduces_running": p.ReduceSlots - p.FreeReduces, "shuffle_output_bytes": p.ShuffleBytes,
			"shuffle_success_outputs": p.ShuffleServed, "shuffle_failed_outputs": p.ShuffleFailed},
	}
	return append(beans, webui.RuntimeBeans("TaskTracker")...)
}

func jsonTasks(p ttPage) string {
	return fmt.Sprintf(`{"running":%d,"failed":0,"commit_pending":%d}`, len(p.Running), countPending(p.Running))
}

func countPending(rs []RunningAttempt) int {
	n := 0
	for _, r := range rs {
		if r.CommitPending {
			n++
		}
	}
	return n
}

// httpPort is the port the tracker's HTTP server listens on.
func (tt *TaskTracker) httpPort() string {
	if tt.ln == nil {
		return ""
	}
	_, p, _ := net.SplitHostPort(tt.ln.Addr().String())
	return p
}

func (tt *TaskTracker) registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	gauge := func(name, help string, f func(ttPage) float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "strata", Subsystem: "tasktracker", Name: name, Help: help},
			func() float64 { return f(tt.pageData()) }))
	}
	counter := func(name, help string, f func() float64) {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "strata", Subsystem: "tasktracker", Name: name, Help: help}, f))
	}
	gauge("map_slots", "Map slots.", func(p ttPage) float64 { return float64(p.MapSlots) })
	gauge("map_slots_used", "Map slots running an attempt.", func(p ttPage) float64 { return float64(p.MapSlots - p.FreeMaps) })
	gauge("reduce_slots", "Reduce slots.", func(p ttPage) float64 { return float64(p.ReduceSlots) })
	gauge("reduce_slots_used", "Reduce slots running an attempt.", func(p ttPage) float64 { return float64(p.ReduceSlots - p.FreeReduces) })
	counter("shuffle_segments_served_total", "Map output segments sent completely to reducers.", func() float64 { return float64(tt.shuffle.Stats().Served) })
	counter("shuffle_bytes_total", "Map output bytes sent to reducers.", func() float64 { return float64(tt.shuffle.Stats().Bytes) })
	counter("shuffle_busy_total", "Shuffle requests refused as busy (503).", func() float64 { return float64(tt.shuffle.Stats().Busy) })
	counter("shuffle_failed_total", "Shuffle requests refused or failed otherwise.", func() float64 { return float64(tt.shuffle.Stats().Failed) })
	tt.registerAccounting(reg) // CPU and intermediate space (accounting.go)
	return reg
}

// jobACLsFile, in an attempt's job log directory, names the job's owner
// and view ACL, so its logs can be checked after the job is gone (as
// Hadoop's TaskTracker keeps job-acls.xml there).
const jobACLsFile = "job-acls.json"

type jobACLs struct {
	User    string `json:"user"`
	ViewACL string `json:"viewAcl"`
}

func writeJobACLs(dir string, spec *mrpb.TaskSpec) error {
	b, _ := json.Marshal(jobACLs{User: spec.GetUser(), ViewACL: spec.GetConf()["mapreduce.job.acl-view-job"]})
	return os.WriteFile(filepath.Join(dir, jobACLsFile), b, 0o644)
}

// mayViewLog says whether user may read the logs in a job's log dir:
// everyone without ACLs; else the job's owner, the TaskTracker's user,
// the administrators and the job's mapreduce.job.acl-view-job. A log
// without its job's ACLs is the TaskTracker's and the administrators'.
func (tt *TaskTracker) mayViewLog(user, dir string) bool {
	if !tt.cfg.ACLsEnabled {
		return true
	}
	var acls jobACLs
	if b, err := os.ReadFile(filepath.Join(dir, jobACLsFile)); err == nil && len(b) < 64<<10 {
		json.Unmarshal(b, &acls)
	}
	groups := tt.cfg.Groups(user)
	return user == tt.cfg.User || (acls.User != "" && user == acls.User) ||
		tt.cfg.Admins.Allows(user, groups) || jobtracker.ParseACL(acls.ViewACL).Allows(user, groups)
}
