package jobtracker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/webui"
	"github.com/stratafs/strata/mapreduce"
)

// The JobTracker's web UI (Hadoop MRv1's jobtracker.jsp, jobdetails.jsp,
// jobtasks.jsp, jobconf.jsp, jobhistory.jsp): the cluster's trackers and
// slots, jobs by state with their progress, a job's counters,
// configuration, attempts (with links to their stderr on the
// TaskTracker that ran them) and a timeline of its attempts by tracker;
// retired jobs from the history files.
//
// The scheduler keeps no finished attempts, so the UI keeps its own
// record (attemptLog), fed by hooks in the scheduler under jt.mu: an
// attempt is RUNNING from its launch until its report, the loss of its
// tracker (FAILED, as Hadoop's "Lost task tracker") or the end of its job
// (KILLED).

// maxAttemptsPerJob bounds the attempts the UI remembers of one job.
const maxAttemptsPerJob = 100000

// maxHistoryList bounds the history files the history page reads.
const maxHistoryList = 200

// Attempt is one task attempt as the UI shows it.
type Attempt struct {
	ID, Job, Task, Tracker string
	// Kind is 'm', 'r' or 'c' (the job's cleanup task).
	Kind byte
	// slot is the kind of slot it holds: 0 map, 1 reduce (a cleanup
	// takes a map slot when one is free, else a reduce slot).
	slot          int
	State         string
	Start, Finish time.Time
	Error         string
	// LogURL is its stderr on the TaskTracker that ran it.
	LogURL string
}

// Took is the attempt's run time so far.
func (a *Attempt) Took(now time.Time) time.Duration {
	if a.Finish.IsZero() {
		return now.Sub(a.Start)
	}
	return a.Finish.Sub(a.Start)
}

// trackerCounts are a tracker's slots as the cluster page shows them.
type trackerCounts struct {
	// free are the tracker's free slots (map, reduce) at its last
	// heartbeat, less what that heartbeat's answer launched.
	free [2]int
	// running are the running attempts by the slot they hold.
	running [2]int
	failed  int
}

// jobAttempts are the attempts the UI lists of one job, in launch order.
type jobAttempts struct {
	all                     []*Attempt
	maps, reduces, cleanups []*Attempt
	// failed counts the job's failed attempts, unlisted ones too;
	// unlisted counts those launched past maxAttemptsPerJob.
	failed, unlisted int
}

// attemptLog is the UI's record of attempts. jt.mu guards it. Its
// counters are kept as attempts change, so no page walks every attempt
// under the lock: running holds every running attempt (bounded by the
// cluster's slots), listed or not.
type attemptLog struct {
	jobs     map[string]*jobAttempts
	running  map[string]*Attempt
	trackers map[string]*trackerCounts
}

func (l *attemptLog) init() {
	if l.jobs == nil {
		l.jobs, l.running, l.trackers = map[string]*jobAttempts{}, map[string]*Attempt{}, map[string]*trackerCounts{}
	}
}

func (l *attemptLog) tracker(name string) *trackerCounts {
	l.init()
	tc := l.trackers[name]
	if tc == nil {
		tc = &trackerCounts{}
		l.trackers[name] = tc
	}
	return tc
}

func (l *attemptLog) job(id string) *jobAttempts {
	l.init()
	ja := l.jobs[id]
	if ja == nil {
		ja = &jobAttempts{}
		l.jobs[id] = ja
	}
	return ja
}

func (l *attemptLog) launched(jobID, id string, kind byte, index int, tr *tracker, now time.Time) {
	tc := l.tracker(tr.name)
	// The heartbeat's free slots, less what its answer launches (a
	// cleanup takes a map slot when one is free, as assign does).
	slot := 0
	if kind == 'r' || kind == 'c' && tc.free[0] == 0 {
		slot = 1
	}
	tc.free[slot] = max(tc.free[slot]-1, 0)
	tc.running[slot]++
	a := &Attempt{ID: id, Job: jobID, Tracker: tr.name, Kind: kind, slot: slot, Task: fmt.Sprintf("%c_%06d", kind, index), State: "RUNNING", Start: now}
	if tr.url != "" {
		a.LogURL = tr.url + "/tasklog?attemptid=" + url.QueryEscape(id) + "&filter=stderr"
	}
	l.running[id] = a
	ja := l.job(jobID)
	if len(ja.all) >= maxAttemptsPerJob {
		ja.unlisted++ // counted while it runs, not listed
		return
	}
	ja.all = append(ja.all, a)
	switch kind {
	case 'm':
		ja.maps = append(ja.maps, a)
	case 'r':
		ja.reduces = append(ja.reduces, a)
	default:
		ja.cleanups = append(ja.cleanups, a)
	}
}

// finish ends running attempt a in state.
func (l *attemptLog) finish(a *Attempt, state, msg string, now time.Time) {
	a.State, a.Finish = state, now
	if msg != "" {
		a.Error = msg
	}
	delete(l.running, a.ID)
	if tc := l.trackers[a.Tracker]; tc != nil {
		tc.running[a.slot] = max(tc.running[a.slot]-1, 0)
		if state == "FAILED" {
			tc.failed++
		}
	}
	if ja := l.jobs[a.Job]; ja != nil && state == "FAILED" {
		ja.failed++
	}
}

func (l *attemptLog) reported(rep *mrpb.TaskReport, now time.Time) {
	a := l.running[rep.GetAttemptId()]
	if a == nil || rep.GetState() == mrpb.TaskReport_RUNNING {
		return
	}
	l.finish(a, rep.GetState().String(), rep.GetResult().GetError(), now)
}

func (l *attemptLog) trackerLost(name string, now time.Time) {
	for _, a := range l.running {
		if a.Tracker == name {
			l.finish(a, "FAILED", "Lost task tracker: "+name, now)
		}
	}
	delete(l.trackers, name)
}

func (l *attemptLog) jobEnded(jobID string, now time.Time) {
	for _, a := range l.running {
		if a.Job == jobID && a.Kind != 'c' {
			l.finish(a, "KILLED", "", now)
		}
	}
}

func (l *attemptLog) heartbeat(name string, req *mrpb.HeartbeatRequest) {
	l.tracker(name).free = [2]int{int(req.GetFreeMapSlots()), int(req.GetFreeReduceSlots())}
}

// failed counts a job's failed attempts, lost trackers' included.
func (l *attemptLog) failed(jobID string) int {
	if ja := l.jobs[jobID]; ja != nil {
		return ja.failed
	}
	return 0
}

// forget drops the attempts of a job the JobTracker retired.
func (l *attemptLog) forget(jobID string) {
	for _, a := range l.running {
		if a.Job == jobID {
			l.finish(a, "KILLED", "", a.Start)
		}
	}
	delete(l.jobs, jobID)
}

// webState is the web UI's server and record.
type webState struct {
	attempts attemptLog
	hist     historyView
	srv      *http.Server
	ln       net.Listener
}

// startHTTP serves the web UI on cfg.HTTPAddr, if set.
func (jt *JobTracker) startHTTP() error {
	if jt.cfg.HTTPAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", jt.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("jobtracker: web UI address %s (%s): %w", jt.cfg.HTTPAddr, keyHTTPAddress, err)
	}
	hc := jt.cfg.HTTPAuth
	hc.Addr = jt.cfg.HTTPAddr
	if hc.Log == nil {
		hc.Log = jt.log
	}
	auth, err := httpauth.New(hc)
	if err != nil {
		ln.Close()
		return fmt.Errorf("jobtracker: web UI authentication: %w", err)
	}
	jt.ui.ln = ln
	mux := http.NewServeMux()
	jt.registerUI(mux)
	jt.ui.srv = &http.Server{Handler: auth.Wrap(mux), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10, ErrorLog: slog.NewLogLogger(jt.log.Handler(), slog.LevelDebug)}
	jt.wg.Add(1)
	go func() {
		defer jt.wg.Done()
		if err := jt.ui.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			jt.log.Error("jobtracker: web UI", "err", err)
		}
	}()
	jt.log.Info("jobtracker: web UI", "http", ln.Addr().String())
	return nil
}

func (jt *JobTracker) stopHTTP() {
	if jt.ui.srv != nil {
		jt.ui.srv.Close()
	}
	jt.closeHistoryView()
}

// HTTPAddr is the web UI's bound address, "" without one.
func (jt *JobTracker) HTTPAddr() string {
	if jt.ui.ln == nil {
		return ""
	}
	return jt.ui.ln.Addr().String()
}

var jtNav = []webui.Link{{Name: "Cluster", Href: "/"}, {Name: "Job history", Href: "/jobhistory"}}

func (jt *JobTracker) registerUI(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", jt.pageCluster)
	mux.HandleFunc("GET /jobtracker.jsp", jt.pageCluster)
	mux.HandleFunc("GET /jobdetails", jt.pageJob)
	mux.HandleFunc("GET /jobdetails.jsp", jt.pageJob)
	mux.HandleFunc("GET /jobconf", jt.pageConf)
	mux.HandleFunc("GET /jobhistory", jt.pageHistory)
	webui.Endpoints{Beans: jt.jmxBeans, Metrics: jt.registry(), PProf: jt.cfg.PProf}.Register(mux)
}

func (jt *JobTracker) render(w http.ResponseWriter, t *template.Template, title, active string, refresh int, data any) {
	webui.Render(w, t, webui.Page{Daemon: "JobTracker " + jt.cfg.Addr, Title: title, Nav: jtNav, Active: active, Refresh: refresh, Data: data})
}

// JobSummary is a job's line on the cluster page.
type JobSummary struct {
	ID, Name, User, State, Error       string
	Maps, MapsDone, Reduces, RedsDone  int
	MapsRunning, RedsRunning, Failures int
	Start, Finish, Now                 time.Time
	Committing                         bool
}

// Elapsed is the job's run time until it finished or Now.
func (s JobSummary) Elapsed() time.Duration {
	if s.Finish.IsZero() {
		return s.Now.Sub(s.Start)
	}
	return s.Finish.Sub(s.Start)
}

// summary describes j. Lock held.
func summary(j *job, now time.Time) JobSummary {
	s := JobSummary{ID: j.id, Name: j.name, User: j.user, State: j.state.String(), Error: j.err, Maps: len(j.maps),
		Reduces: len(j.reduces), Start: j.start, Finish: j.finish, Now: now, Committing: j.committing}
	for _, t := range j.maps {
		switch t.state {
		case done:
			s.MapsDone++
		case running:
			s.MapsRunning++
		}
		s.Failures += t.failures
	}
	for _, t := range j.reduces {
		switch t.state {
		case done:
			s.RedsDone++
		case running:
			s.RedsRunning++
		}
		s.Failures += t.failures
	}
	return s
}

// TrackerSummary is a TaskTracker's line on the cluster page.
type TrackerSummary struct {
	Name, Host, URL                    string
	LastSeen                           time.Time
	RunningMaps, RunningReduces        int
	FreeMaps, FreeReduces, FailedTotal int
}

type clusterData struct {
	Trackers                          []TrackerSummary
	Running, Succeeded, Failed, Other []JobSummary
	MapSlots, ReduceSlots             int
	MapsRunning, RedsRunning          int
	Started                           time.Time
	Expiry                            time.Duration
}

func (jt *JobTracker) cluster() clusterData {
	jt.mu.Lock()
	defer jt.mu.Unlock()
	d := clusterData{Started: time.UnixMilli(jt.started), Expiry: jt.cfg.TrackerExpiry}
	byTracker := map[string]*TrackerSummary{}
	for _, tr := range jt.trackers {
		ts := &TrackerSummary{Name: tr.name, Host: tr.host, URL: tr.url, LastSeen: tr.lastSeen}
		if tc := jt.ui.attempts.trackers[tr.name]; tc != nil {
			ts.FreeMaps, ts.FreeReduces, ts.RunningMaps, ts.RunningReduces, ts.FailedTotal = tc.free[0], tc.free[1], tc.running[0], tc.running[1], tc.failed
		}
		byTracker[tr.name] = ts
	}
	for _, ts := range byTracker {
		d.Trackers = append(d.Trackers, *ts)
		d.MapSlots += ts.FreeMaps + ts.RunningMaps
		d.ReduceSlots += ts.FreeReduces + ts.RunningReduces
		d.MapsRunning += ts.RunningMaps
		d.RedsRunning += ts.RunningReduces
	}
	sort.Slice(d.Trackers, func(a, b int) bool { return d.Trackers[a].Name < d.Trackers[b].Name })
	for i := len(jt.order) - 1; i >= 0; i-- {
		s := summary(jt.jobs[jt.order[i]], jt.now())
		s.Failures = jt.ui.attempts.failed(s.ID)
		switch s.State {
		case "RUNNING":
			d.Running = append(d.Running, s)
		case "SUCCEEDED":
			d.Succeeded = append(d.Succeeded, s)
		case "FAILED":
			d.Failed = append(d.Failed, s)
		default:
			d.Other = append(d.Other, s)
		}
	}
	return d
}

const jobTable = `{{define "jobs"}}<table class="sortable jobs">
<thead><tr><th>Job</th><th>Name</th><th>User</th><th>State</th><th>Started</th><th class="num">Elapsed</th><th>Map progress</th><th class="num">Maps</th><th>Reduce progress</th><th class="num">Reduces</th><th class="num">Failed attempts</th></tr></thead>
<tbody>{{range .}}<tr data-job="{{.ID}}"><td><a href="/jobdetails?jobid={{.ID}}">{{.ID}}</a></td><td>{{.Name}}</td><td>{{.User}}</td>
<td><span class="state {{.State}}">{{.State}}</span>{{if .Committing}} committing{{end}}</td>
<td data-sort="{{.Start.Unix}}">{{ts .Start}}</td><td class="num">{{dur .Elapsed}}</td>
<td class="mapprogress">{{progress .MapsDone .Maps}}</td><td class="num">{{.MapsDone}}/{{.Maps}}</td>
<td>{{progress .RedsDone .Reduces}}</td><td class="num">{{.RedsDone}}/{{.Reduces}}</td><td class="num">{{.Failures}}</td></tr>
{{else}}<tr><td colspan="11" class="muted">none</td></tr>{{end}}</tbody></table>{{end}}`

var clusterPage = webui.Parse(jobTable+`{{define "content"}}
<h2>Cluster summary</h2>
<table class="kv" id="clustersummary">
<tr><th>Started</th><td>{{ts .Started}}</td></tr>
<tr><th>TaskTrackers</th><td id="trackers">{{len .Trackers}}</td></tr>
<tr><th>Map slots in use</th><td id="mapslots">{{.MapsRunning}} of {{.MapSlots}}</td></tr>
<tr><th>Reduce slots in use</th><td id="reduceslots">{{.RedsRunning}} of {{.ReduceSlots}}</td></tr>
<tr><th>Jobs</th><td>{{len .Running}} running, {{len .Succeeded}} succeeded, {{len .Failed}} failed, {{len .Other}} killed</td></tr>
</table>
<h2 id="running">Running jobs</h2>{{template "jobs" .Running}}
<h2 id="completed">Completed jobs</h2>{{template "jobs" .Succeeded}}
<h2 id="failed">Failed jobs</h2>{{template "jobs" .Failed}}
<h2 id="killed">Killed jobs</h2>{{template "jobs" .Other}}
<h2>TaskTrackers</h2>
<table class="sortable" id="tasktrackers"><thead><tr><th>Name</th><th>Host</th><th class="num">Last heartbeat</th><th class="num">Running maps</th><th class="num">Running reduces</th><th class="num">Free map slots</th><th class="num">Free reduce slots</th><th class="num">Failed attempts</th></tr></thead>
<tbody>{{range .Trackers}}<tr><td>{{if .URL}}<a href="{{.URL}}/">{{.Name}}</a>{{else}}{{.Name}}{{end}}</td><td>{{.Host}}</td><td class="num" data-sort="{{.LastSeen.Unix}}">{{since .LastSeen}}</td>
<td class="num">{{.RunningMaps}}</td><td class="num">{{.RunningReduces}}</td><td class="num">{{.FreeMaps}}</td><td class="num">{{.FreeReduces}}</td><td class="num">{{.FailedTotal}}</td></tr>
{{else}}<tr><td colspan="8" class="muted">no TaskTracker has reported</td></tr>{{end}}</tbody></table>
<p class="muted">A TaskTracker silent for {{dur .Expiry}} is declared lost; its attempts fail and run again elsewhere.</p>
{{end}}`, nil)

func (jt *JobTracker) pageCluster(w http.ResponseWriter, r *http.Request) {
	webui.RemoteUser(w, r) // keeps a user.name for the job pages it links to
	jt.render(w, clusterPage, "JobTracker", "/", 5, jt.cluster())
}

// CounterGroup is a group of a job's counters.
type CounterGroup struct {
	Name     string
	Counters []mapreduce.CounterValue
}

type jobData struct {
	JobSummary
	Found           bool
	History         bool
	Counters        []CounterGroup
	MapAttempts     []*Attempt
	ReduceAttempts  []*Attempt
	CleanupAttempts []*Attempt
	// Page is the attempt tables' page; MoreMaps and MoreReduces say a
	// next one has more.
	Page                  int
	MoreMaps, MoreReduces bool
	// Timelined are the attempts the timeline draws, the first
	// maxTimeline of Listed; Unlisted were launched past
	// maxAttemptsPerJob and are not kept.
	Timelined        []*Attempt
	Listed, Unlisted int
	// Forbidden names the user refused the job (mapreduce.job.acl-view-job).
	Forbidden string
	Tasks     []TaskHistory
	Timeline  template.HTML
	Now       time.Time
}

func counterGroups(c map[string]map[string]int64) []CounterGroup {
	var out []CounterGroup
	for g, m := range c {
		cg := CounterGroup{Name: g}
		for n, v := range m {
			cg.Counters = append(cg.Counters, mapreduce.CounterValue{Name: n, Value: v})
		}
		sort.Slice(cg.Counters, func(a, b int) bool { return cg.Counters[a].Name < cg.Counters[b].Name })
		out = append(out, cg)
	}
	// Hadoop's order: file system, job, framework, then the rest.
	rank := map[string]int{mapreduce.GroupFileSystem: 0, mapreduce.GroupJob: 1, mapreduce.GroupTask: 2}
	sort.Slice(out, func(a, b int) bool {
		ra, oka := rank[out[a].Name]
		rb, okb := rank[out[b].Name]
		if !oka {
			ra = 3
		}
		if !okb {
			rb = 3
		}
		if ra != rb {
			return ra < rb
		}
		return out[a].Name < out[b].Name
	})
	return out
}

// jobDetails snapshots the job id names, or reads its history: one
// page (of attemptPage) of each attempt table, the timeline's first
// maxTimeline attempts. who must be allowed to view it (Forbidden says
// not, with the job's summary empty).
func (jt *JobTracker) jobDetails(ctx context.Context, id string, page int, who identity) jobData {
	d := jobData{Now: jt.now(), Page: page}
	jt.mu.Lock()
	if j := jt.jobs[id]; j != nil {
		d.Found = true
		if !jt.mayView(who, j.user, j.view) {
			jt.mu.Unlock()
			d.ID, d.Forbidden = id, who.user
			return d
		}
		d.JobSummary = summary(j, jt.now())
		d.Failures = jt.ui.attempts.failed(id)
		d.Counters = counterGroups(j.counters.Map())
		if ja := jt.ui.attempts.jobs[id]; ja != nil {
			d.MapAttempts, d.MoreMaps = pageOf(ja.maps, page)
			d.ReduceAttempts, d.MoreReduces = pageOf(ja.reduces, page)
			d.CleanupAttempts, _ = pageOf(ja.cleanups, 0)
			d.Timelined = copyAttempts(ja.all[:min(len(ja.all), maxTimeline)])
			d.Listed, d.Unlisted = len(ja.all), ja.unlisted
		}
	}
	jt.mu.Unlock()
	if d.Found {
		d.Timeline = timeline(d.Timelined, d.Start, d.Now)
		return d
	}
	if h, err := jt.readHistory(ctx, id); err == nil {
		d.Found, d.History = true, true
		if !jt.mayView(who, h.User, ParseACL(h.ViewACL)) {
			d.ID, d.Forbidden = id, who.user
			return d
		}
		d.JobSummary = JobSummary{ID: h.JobID, Name: h.Name, User: h.User, State: h.State, Error: h.Error, Start: h.Submit, Finish: h.Finish}
		for _, t := range h.Tasks {
			if strings.HasPrefix(t.Task, "m_") {
				d.Maps0(t)
			} else {
				d.Reduces0(t)
			}
			d.Failures += t.Failures
		}
		d.Tasks = h.Tasks
		d.Counters = counterGroups(h.Counters)
	}
	return d
}

// attemptPage is how many attempts of each kind the job page lists at
// once; maxTimeline bounds the attempts its timeline draws.
const (
	attemptPage = 500
	maxTimeline = 2000
)

// pageOf copies page (from 0) of as, and says whether more follow. Lock
// held: the copies may be read after it is released.
func pageOf(as []*Attempt, page int) ([]*Attempt, bool) {
	from := min(max(page, 0)*attemptPage, len(as))
	to := min(from+attemptPage, len(as))
	return copyAttempts(as[from:to]), to < len(as)
}

func copyAttempts(as []*Attempt) []*Attempt {
	out := make([]*Attempt, len(as))
	for i, a := range as {
		c := *a
		out[i] = &c
	}
	return out
}

// mayView says whether who may see a job of owner with view ACL: everyone
// when ACLs are off; else the owner, the JobTracker's user, the
// administrators and the users and groups of mapreduce.job.acl-view-job
// (Hadoop's VIEW_JOB_DETAILS check).
func (jt *JobTracker) mayView(who identity, owner string, view ACL) bool {
	if !jt.cfg.ACLsEnabled {
		return true
	}
	return who.user != "" && (who.user == owner || who.user == jt.cfg.User ||
		jt.cfg.Admins.Allows(who.user, who.groups) || view.Allows(who.user, who.groups))
}

// webIdentity is a page request's user as Hadoop's simple web
// authentication finds it (webui.RemoteUser), with its groups.
func (jt *JobTracker) webIdentity(w http.ResponseWriter, r *http.Request) identity {
	id := identity{user: webui.RemoteUser(w, r)}
	if jt.cfg.ACLsEnabled {
		id.groups = jt.cfg.Groups(id.user)
	}
	return id
}

// Maps0 and Reduces0 count a history's task in the summary.
func (d *jobData) Maps0(t TaskHistory) {
	d.JobSummary.Maps++
	if t.State == "SUCCEEDED" {
		d.MapsDone++
	}
}

func (d *jobData) Reduces0(t TaskHistory) {
	d.JobSummary.Reduces++
	if t.State == "SUCCEEDED" {
		d.RedsDone++
	}
}

// readHistory reads a retired job's history from the JobTracker's own
// history dir, as its own user.
const attemptTable = `{{define "attempts"}}<table class="sortable attempts">
<thead><tr><th>Task</th><th>Attempt</th><th>State</th><th>TaskTracker</th><th>Started</th><th>Finished</th><th class="num">Time</th><th>Error</th><th>Logs</th></tr></thead>
<tbody>{{range .}}<tr data-attempt="{{.ID}}"><td>{{.Task}}</td><td>{{.ID}}</td><td><span class="state {{.State}}">{{.State}}</span></td><td>{{.Tracker}}</td>
<td data-sort="{{.Start.UnixMilli}}">{{ts .Start}}</td><td>{{ts .Finish}}</td><td class="num">{{took .}}</td><td class="wrap">{{.Error}}</td>
<td>{{if .LogURL}}<a href="{{.LogURL}}">stderr</a>{{end}}</td></tr>
{{else}}<tr><td colspan="9" class="muted">none</td></tr>{{end}}</tbody></table>{{end}}`

var jobPage = webui.Parse(attemptTable+`{{define "content"}}
{{if not .Found}}<div class="banner bad">No such job, running or in the history.</div>{{else if .Forbidden}}<div class="banner bad" id="forbidden">User {{.Forbidden}} is not authorized to view job {{.ID}} (mapreduce.job.acl-view-job).</div>{{else}}
<table class="kv" id="jobsummary">
<tr><th>Job</th><td>{{.ID}}{{if .History}} <span class="muted">(retired: from its history file)</span>{{end}}</td></tr>
<tr><th>Name</th><td>{{.Name}}</td></tr><tr><th>User</th><td>{{.User}}</td></tr>
<tr><th>State</th><td><span class="state {{.State}}" id="jobstate">{{.State}}</span>{{if .Committing}} committing output{{end}}{{if .Error}} <span class="bad">{{.Error}}</span>{{end}}</td></tr>
<tr><th>Started</th><td>{{ts .Start}}</td></tr><tr><th>Finished</th><td>{{ts .Finish}}</td></tr>
<tr><th>Elapsed</th><td>{{dur .Elapsed}}</td></tr>
<tr><th>Maps</th><td id="mapprogress">{{progress .MapsDone .Maps}} {{.MapsDone}} of {{.Maps}} done{{if not .History}}, {{.MapsRunning}} running{{end}}</td></tr>
<tr><th>Reduces</th><td id="reduceprogress">{{progress .RedsDone .Reduces}} {{.RedsDone}} of {{.Reduces}} done{{if not .History}}, {{.RedsRunning}} running{{end}}</td></tr>
<tr><th>Failed attempts</th><td>{{.Failures}}</td></tr>
<tr><th>Configuration</th><td>{{if not .History}}<a href="/jobconf?jobid={{.ID}}" id="conflink">job configuration</a>{{else}}-{{end}}</td></tr>
</table>
<h2>Counters</h2>
<table id="counters"><thead><tr><th>Group</th><th>Counter</th><th class="num">Value</th></tr></thead><tbody>
{{range .Counters}}{{$g := .Name}}{{$n := len .Counters}}{{range $i, $c := .Counters}}<tr>{{if eq $i 0}}<td rowspan="{{$n}}">{{$g}}</td>{{end}}<td>{{$c.Name}}</td><td class="num">{{$c.Value}}</td></tr>{{end}}{{end}}
</tbody></table>
{{if .History}}<h2>Tasks</h2>
<table class="sortable" id="historytasks"><thead><tr><th>Task</th><th>State</th><th class="num">Attempts</th><th class="num">Failures</th><th>TaskTracker</th><th>Last error</th></tr></thead><tbody>
{{range .Tasks}}<tr><td>{{.Task}}</td><td><span class="state {{.State}}">{{.State}}</span></td><td class="num">{{.Attempts}}</td><td class="num">{{.Failures}}</td><td>{{.Tracker}}</td><td class="wrap">{{.LastError}}</td></tr>{{end}}
</tbody></table>{{else}}
<h2>Timeline</h2>{{.Timeline}}
{{if lt (len .Timelined) .Listed}}<p class="warn" id="timelinecut">The timeline shows the first {{len .Timelined}} of {{.Listed}} attempts.</p>{{end}}
{{if .Unlisted}}<p class="warn">{{.Unlisted}} attempts launched after the first {{.Listed}} are not kept.</p>{{end}}
{{if or .Page .MoreMaps .MoreReduces}}<p id="pages">Attempts page {{add .Page 1}}{{if .Page}} · <a href="/jobdetails?jobid={{.ID}}&amp;page={{add .Page -1}}">previous</a>{{end}}{{if or .MoreMaps .MoreReduces}} · <a href="/jobdetails?jobid={{.ID}}&amp;page={{add .Page 1}}" id="nextpage">next</a>{{end}}</p>{{end}}
<h2 id="maps">Map attempts</h2>{{template "attempts" .MapAttempts}}
<h2 id="reduces">Reduce attempts</h2>{{template "attempts" .ReduceAttempts}}
<h2 id="cleanup">Job cleanup attempts</h2>{{template "attempts" .CleanupAttempts}}{{end}}
{{end}}{{end}}`, template.FuncMap{
	"took": func(a *Attempt) string { return webui.Duration(a.Took(time.Now())) },
})

func (jt *JobTracker) pageJob(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("jobid")
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	d := jt.jobDetails(r.Context(), id, max(page, 0), jt.webIdentity(w, r))
	refresh := 0
	if d.State == "RUNNING" {
		refresh = 3
	}
	title := "Job " + id
	if d.Name != "" {
		title += ": " + d.Name
	}
	status := 0
	if d.Forbidden != "" {
		status, refresh = http.StatusUnauthorized, 0 // as Hadoop's job pages refuse
	}
	webui.Render(w, jobPage, webui.Page{Daemon: "JobTracker " + jt.cfg.Addr, Title: title, Nav: jtNav, Refresh: refresh, Status: status, Data: d})
}

var confPage = webui.Parse(`{{define "content"}}
{{if not .Found}}<div class="banner bad">No such job in memory (a retired job's configuration is not in its history).</div>{{else if .Forbidden}}<div class="banner bad" id="forbidden">User {{.Forbidden}} is not authorized to view the configuration of job {{.ID}} (mapreduce.job.acl-view-job).</div>{{else}}
<p><a href="/jobdetails?jobid={{.ID}}">back to {{.ID}}</a></p>
<table class="sortable" id="jobconf"><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody>
{{range .Conf}}<tr><td>{{.Name}}</td><td>{{.Value}}</td></tr>{{end}}</tbody></table>{{end}}{{end}}`, nil)

// pageConf shows a job's configuration to those who may view the job,
// with sensitive values (hadoop.security.sensitive-config-keys)
// redacted as Hadoop's ConfigRedactor does.
func (jt *JobTracker) pageConf(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("jobid")
	who := jt.webIdentity(w, r)
	red := jt.cfg.Redactor
	if red == nil {
		red, _ = conf.NewRedactor(conf.New())
	}
	type kv struct{ Name, Value string }
	d := struct {
		ID        string
		Found     bool
		Forbidden string
		Conf      []kv
	}{ID: id}
	jt.mu.Lock()
	if j := jt.jobs[id]; j != nil {
		d.Found = true
		if !jt.mayView(who, j.user, j.view) {
			d.Forbidden = who.user
		} else {
			for k, v := range j.settings {
				d.Conf = append(d.Conf, kv{k, v})
			}
		}
	}
	jt.mu.Unlock()
	for i := range d.Conf {
		d.Conf[i].Value = red.Redact(d.Conf[i].Name, d.Conf[i].Value)
	}
	sort.Slice(d.Conf, func(a, b int) bool { return d.Conf[a].Name < d.Conf[b].Name })
	status := 0
	if d.Forbidden != "" {
		status = http.StatusUnauthorized
	}
	webui.Render(w, confPage, webui.Page{Daemon: "JobTracker " + jt.cfg.Addr, Title: "Configuration of " + id, Nav: jtNav, Status: status, Data: d})
}

var historyPage = webui.Parse(`{{define "content"}}
<p class="muted">{{.Dir}}</p>
{{if .Err}}<div class="banner bad">{{.Err}}</div>{{end}}
<table class="sortable" id="history"><thead><tr><th>Job</th><th>Name</th><th>User</th><th>State</th><th>Submitted</th><th>Finished</th><th class="num">Elapsed</th><th class="num">Tasks</th></tr></thead><tbody>
{{range .Jobs}}<tr><td><a href="/jobdetails?jobid={{.JobID}}">{{.JobID}}</a></td><td>{{.Name}}</td><td>{{.User}}</td><td><span class="state {{.State}}">{{.State}}</span></td>
<td data-sort="{{.Submit.Unix}}">{{ts .Submit}}</td><td>{{ts .Finish}}</td><td class="num">{{dur (sub .Finish .Submit)}}</td><td class="num">{{len .Tasks}}</td></tr>
{{else}}<tr><td colspan="8" class="muted">no histories</td></tr>{{end}}</tbody></table>
{{if .More}}<p class="warn">Only the newest {{len .Jobs}} histories are shown.</p>{{end}}{{end}}`,
	template.FuncMap{"sub": func(a, b time.Time) time.Duration { return a.Sub(b) }})

// pageHistory lists the newest histories in the JobTracker's history
// dir: retired jobs too.
func (jt *JobTracker) pageHistory(w http.ResponseWriter, r *http.Request) {
	d := struct {
		Dir, Err string
		Jobs     []*History
		More     bool
	}{Dir: jt.cfg.HistoryDir}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if err := jt.listHistories(ctx, &d.Jobs, &d.More); err != nil {
		d.Err = err.Error()
	}
	jt.render(w, historyPage, "Job history", "/jobhistory", 0, d)
}

// timeline draws a job's attempts as an SVG Gantt chart: a row per
// tracker slot (attempts that overlap on a tracker take separate rows),
// bars from launch to end coloured by kind and state.
func timeline(as []*Attempt, start, now time.Time) template.HTML {
	if len(as) == 0 {
		return `<p class="muted">no attempts yet</p>`
	}
	end := start
	for _, a := range as {
		e := a.Finish
		if e.IsZero() {
			e = now
		}
		if e.After(end) {
			end = e
		}
	}
	span := end.Sub(start)
	if span <= 0 {
		span = time.Millisecond
	}
	type row struct {
		tracker string
		free    time.Time
	}
	sorted := append([]*Attempt(nil), as...)
	sort.SliceStable(sorted, func(a, b int) bool {
		if sorted[a].Tracker != sorted[b].Tracker {
			return sorted[a].Tracker < sorted[b].Tracker
		}
		return sorted[a].Start.Before(sorted[b].Start)
	})
	var rows []row
	rowOf := make([]int, len(sorted))
	for i, a := range sorted {
		e := a.Finish
		if e.IsZero() {
			e = now
		}
		r := -1
		for k := range rows {
			if rows[k].tracker == a.Tracker && !rows[k].free.After(a.Start) {
				r = k
				break
			}
		}
		if r < 0 {
			rows = append(rows, row{tracker: a.Tracker})
			r = len(rows) - 1
		}
		rows[r].free = e
		rowOf[i] = r
	}
	const left, width, rowH, top = 230, 760, 16, 18
	h := top + len(rows)*rowH + 24
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="attempts by tracker over time">`, left+width+20, h, left+width+20, h)
	for k, r := range rows {
		y := top + k*rowH
		if k%2 == 0 {
			fmt.Fprintf(&b, `<rect x="0" y="%d" width="%d" height="%d" fill="#f6f7f9"/>`, y, left+width, rowH)
		}
		if k == 0 || rows[k-1].tracker != r.tracker {
			fmt.Fprintf(&b, `<text x="4" y="%d">%s</text>`, y+12, template.HTMLEscapeString(r.tracker))
		}
	}
	colors := map[string]string{"m": "#3b82f6", "r": "#8b5cf6", "c": "#64748b"}
	for i, a := range sorted {
		e := a.Finish
		if e.IsZero() {
			e = now
		}
		x0 := left + int(float64(width)*float64(a.Start.Sub(start))/float64(span))
		x1 := left + int(float64(width)*float64(e.Sub(start))/float64(span))
		fill := colors[string(a.Kind)]
		stroke := "none"
		switch a.State {
		case "FAILED":
			fill = "#dc2626"
		case "KILLED":
			fill = "#f59e0b"
		case "RUNNING":
			stroke = "#1e3a8a"
		}
		fmt.Fprintf(&b, `<rect class="attempt %s" x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="%s"><title>%s %s on %s, %s</title></rect>`,
			a.State, x0, top+rowOf[i]*rowH+2, max(x1-x0, 2), rowH-4, fill, stroke,
			template.HTMLEscapeString(a.ID), a.State, template.HTMLEscapeString(a.Tracker), webui.Duration(e.Sub(a.Start)))
	}
	axisY := top + len(rows)*rowH + 14
	for i := 0; i <= 4; i++ {
		x := left + width*i/4
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#d8dde2"/><text x="%d" y="%d">%s</text>`,
			x, top, x, axisY-10, x-10, axisY, webui.Duration(span*time.Duration(i)/4))
	}
	fmt.Fprintf(&b, `<text x="%d" y="12">map</text><rect x="%d" y="4" width="10" height="10" fill="#3b82f6"/>`, left, left+28)
	fmt.Fprintf(&b, `<text x="%d" y="12">reduce</text><rect x="%d" y="4" width="10" height="10" fill="#8b5cf6"/>`, left+50, left+92)
	fmt.Fprintf(&b, `<text x="%d" y="12">failed</text><rect x="%d" y="4" width="10" height="10" fill="#dc2626"/>`, left+114, left+152)
	fmt.Fprintf(&b, `<text x="%d" y="12">killed</text><rect x="%d" y="4" width="10" height="10" fill="#f59e0b"/>`, left+174, left+210)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// jmxBeans are Hadoop MRv1's JobTracker beans with the attributes
// monitoring tools read.
func (jt *JobTracker) jmxBeans() []webui.Bean {
	d := jt.cluster()
	live := map[string]any{}
	for _, t := range d.Trackers {
		live[t.Name] = map[string]any{"hostname": t.Host, "last_seen": t.LastSeen.UnixMilli(),
			"health": "OK", "slots": map[string]int{"map_slots": t.FreeMaps + t.RunningMaps, "map_slots_used": t.RunningMaps,
				"reduce_slots": t.FreeReduces + t.RunningReduces, "reduce_slots_used": t.RunningReduces}}
	}
	beans := []webui.Bean{
		{"name": "Hadoop:service=JobTracker,name=JobTrackerInfo", "modelerType": "org.apache.hadoop.mapred.JobTracker",
			"Version": "strata", "ConfigVersion": "default", "ThreadCount": 0, "SummaryJson": jsonString(map[string]any{
				"nodes": len(d.Trackers), "alive": len(d.Trackers), "blacklisted": 0,
				"slots": map[string]int{"map_slots": d.MapSlots, "map_slots_used": d.MapsRunning, "reduce_slots": d.ReduceSlots, "reduce_slots_used": d.RedsRunning},
				"jobs":  len(d.Running)}),
			"AliveNodesInfoJson": jsonString(live), "BlacklistedNodesInfoJson": "[]", "QueueInfoJson": `{"default":{"state":"running"}}`},
		{"name": "Hadoop:service=JobTracker,name=JobTrackerMetrics", "modelerType": "JobTrackerMetrics",
			"jobs_running": len(d.Running), "jobs_completed": len(d.Succeeded), "jobs_failed": len(d.Failed), "jobs_killed": len(d.Other),
			"maps_running": d.MapsRunning, "reduces_running": d.RedsRunning, "map_slots": d.MapSlots, "reduce_slots": d.ReduceSlots,
			"occupied_map_slots": d.MapsRunning, "occupied_reduce_slots": d.RedsRunning, "trackers": len(d.Trackers)},
	}
	return append(beans, webui.RuntimeBeans("JobTracker")...)
}

// registry is the JobTracker's Prometheus metrics, read on each scrape
// from one snapshot of the cluster (one hold of the scheduler's lock).
func (jt *JobTracker) registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(clusterCollector{jt})
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "strata", Subsystem: "jobtracker", Name: "goroutines", Help: "Goroutines in the process."},
		func() float64 { return float64(runtime.NumGoroutine()) }))
	return reg
}

type clusterGauge struct {
	desc *prometheus.Desc
	f    func(clusterData) float64
}

func gaugeDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("strata_jobtracker_"+name, help, nil, nil)
}

var clusterGauges = []clusterGauge{
	{gaugeDesc("trackers", "TaskTrackers heard from within the expiry interval."), func(d clusterData) float64 { return float64(len(d.Trackers)) }},
	{gaugeDesc("jobs_running", "Jobs running."), func(d clusterData) float64 { return float64(len(d.Running)) }},
	{gaugeDesc("jobs_succeeded", "Succeeded jobs kept in memory."), func(d clusterData) float64 { return float64(len(d.Succeeded)) }},
	{gaugeDesc("jobs_failed", "Failed jobs kept in memory."), func(d clusterData) float64 { return float64(len(d.Failed)) }},
	{gaugeDesc("jobs_killed", "Killed jobs kept in memory."), func(d clusterData) float64 { return float64(len(d.Other)) }},
	{gaugeDesc("map_slots", "Map slots over all trackers."), func(d clusterData) float64 { return float64(d.MapSlots) }},
	{gaugeDesc("map_slots_used", "Map slots running an attempt."), func(d clusterData) float64 { return float64(d.MapsRunning) }},
	{gaugeDesc("reduce_slots", "Reduce slots over all trackers."), func(d clusterData) float64 { return float64(d.ReduceSlots) }},
	{gaugeDesc("reduce_slots_used", "Reduce slots running an attempt."), func(d clusterData) float64 { return float64(d.RedsRunning) }},
}

// clusterCollector reports clusterGauges from one snapshot per scrape.
type clusterCollector struct{ jt *JobTracker }

func (c clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, g := range clusterGauges {
		ch <- g.desc
	}
}

func (c clusterCollector) Collect(ch chan<- prometheus.Metric) {
	d := c.jt.cluster()
	for _, g := range clusterGauges {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, g.f(d))
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
