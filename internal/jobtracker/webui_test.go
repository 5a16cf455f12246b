package jobtracker

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/proto/mrpb"
)

// TestWebUIAttempts: the job page lists each attempt with its state and
// tracker — a lost tracker's attempt as FAILED "Lost task tracker" — and
// the cluster page counts slots in use.
func TestWebUIAttempts(t *testing.T) {
	h := newHarness(t)
	j := h.submit([][]string{{"h1"}, {"h2"}}, 1)
	h.heartbeat(beat{tracker: "tt-h1", maps: 1})
	h.heartbeat(beat{tracker: "tt-h2", maps: 1})
	mux := http.NewServeMux()
	h.jt.registerUI(mux)
	get := func(u string) string {
		t.Helper()
		w := httptest.NewRecorder()
		done := make(chan struct{})
		go func() { mux.ServeHTTP(w, httptest.NewRequest("GET", u, nil)); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("GET %s hangs", u)
		}
		if w.Code != 200 {
			t.Fatalf("GET %s: %d %s", u, w.Code, w.Body)
		}
		return w.Body.String()
	}
	cl := get("/")
	if !strings.Contains(cl, `<td id="mapslots">2 of 2</td>`) || !strings.Contains(cl, j.id) {
		t.Errorf("cluster page:\n%s", cl)
	}
	if m := get("/metrics"); !strings.Contains(m, "strata_jobtracker_map_slots_used 2") || !strings.Contains(m, "strata_jobtracker_trackers 2") {
		t.Errorf("metrics:\n%s", m)
	}
	h.clk.advance(h.jt.cfg.TrackerExpiry + time.Second)
	h.heartbeat(beat{tracker: "tt-h1", reports: []*mrpb.TaskReport{succeeded(attemptID(j, 'm', 0, 0))}})
	h.jt.expireTrackers()
	page := get("/jobdetails?user.name=alice&jobid=" + j.id)
	for _, want := range []string{attemptID(j, 'm', 0, 0), "SUCCEEDED", "Lost task tracker: tt-h2", `<svg id="timeline"`} {
		if !strings.Contains(page, want) {
			t.Errorf("job page lacks %q:\n%s", want, page)
		}
	}
}

// TestWebUIHistory: a job the JobTracker no longer holds is shown from its
// history file, and the history page lists it.
func TestWebUIHistory(t *testing.T) {
	h := newHarness(t)
	start := h.clk.now()
	h.jt.writeHistory(&History{JobID: "job_1_0042", Name: "old sort", User: "carol", State: "SUCCEEDED", Submit: start, Finish: start.Add(90 * time.Second),
		Counters: map[string]map[string]int64{"Job Counters": {"Launched map tasks": 3}},
		Tasks:    []TaskHistory{{Task: "m_000000", State: "SUCCEEDED", Attempts: 2, Failures: 1, Tracker: "tt-h1", LastError: "disk <full>"}}})
	mux := http.NewServeMux()
	h.jt.registerUI(mux)
	for u, want := range map[string][]string{
		"/jobdetails?user.name=carol&jobid=job_1_0042": {"old sort", "from its history file", "Launched map tasks", "disk &lt;full&gt;", "1m 30s"},
		"/jobhistory":                 {"job_1_0042", "carol", "1m 30s"},
		"/jobdetails?jobid=job_9_9":   {"No such job"},
		"/jobdetails?jobid=../../etc": {"No such job"},
	} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("GET", u, nil))
		for _, s := range want {
			if !strings.Contains(w.Body.String(), s) {
				t.Errorf("GET %s lacks %q:\n%s", u, s, w.Body)
			}
		}
	}
}

// TestWebUIJobACLs: with mapreduce.cluster.acls.enabled the job page and
// its configuration are the owner's, the administrators' and
// mapreduce.job.acl-view-job's (a request without user.name is dr.who's);
// sensitive settings are redacted for everyone.
func TestWebUIJobACLs(t *testing.T) {
	h := newHarness(t)
	j := h.submit([][]string{{"h1"}}, 0, "fs.s3a.secret.key", "AKIAsecretvalue", "my.db.password", "hunter2",
		keyACLViewJob, "viewer", "mapreduce.job.name", "visible")
	mux := http.NewServeMux()
	h.jt.registerUI(mux)
	get := func(u string) (int, string) {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("GET", u, nil))
		return w.Code, w.Body.String()
	}
	for _, u := range []string{"alice", "viewer", h.jt.cfg.User} {
		code, body := get("/jobconf?user.name=" + u + "&jobid=" + j.id)
		if code != 200 || !strings.Contains(body, "visible") || !strings.Contains(body, "&lt;redacted&gt;") {
			t.Errorf("jobconf as %s: %d\n%s", u, code, body)
		}
		if strings.Contains(body, "AKIAsecretvalue") || strings.Contains(body, "hunter2") {
			t.Errorf("jobconf as %s shows a secret", u)
		}
		if code, _ := get("/jobdetails?user.name=" + u + "&jobid=" + j.id); code != 200 {
			t.Errorf("jobdetails as %s: %d", u, code)
		}
	}
	for _, u := range []string{"/jobconf?user.name=mallory&", "/jobconf?", "/jobdetails?user.name=mallory&", "/jobdetails?"} {
		code, body := get(u + "jobid=" + j.id)
		if code != http.StatusUnauthorized || strings.Contains(body, "visible") || !strings.Contains(body, "not authorized") {
			t.Errorf("GET %s: %d\n%s", u, code, body)
		}
	}
	// The user.name a page named is kept for the links it leads to.
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "/?user.name=viewer", nil))
	r := httptest.NewRequest("GET", "/jobconf?jobid="+j.id, nil)
	for _, c := range w.Result().Cookies() {
		r.AddCookie(c)
	}
	w = httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Errorf("jobconf with the cookie of user.name=viewer: %d", w.Code)
	}
	// Secure mode with simple HTTP authentication: user.name, and the
	// cookie a page set for one, are not trusted; the request is dr.who's.
	c := conf.New()
	c.Set(httpauth.KeySecurityAuthentication, "kerberos")
	hc, err := httpauth.ConfigFrom(c)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := httpauth.New(hc)
	if err != nil {
		t.Fatal(err)
	}
	for _, withCookie := range []bool{false, true} {
		r := httptest.NewRequest("GET", "/jobconf?user.name=alice&jobid="+j.id, nil)
		if withCookie {
			r = httptest.NewRequest("GET", "/jobconf?jobid="+j.id, nil)
			for _, c := range w.Result().Cookies() {
				r.AddCookie(c)
			}
		}
		sw := httptest.NewRecorder()
		auth.Wrap(mux).ServeHTTP(sw, r)
		if sw.Code != http.StatusUnauthorized || strings.Contains(sw.Body.String(), "visible") {
			t.Errorf("secure, simple HTTP (cookie %v): jobconf %d\n%s", withCookie, sw.Code, sw.Body)
		}
	}
	h.jt.cfg.ACLsEnabled = false
	if code, body := get("/jobconf?jobid=" + j.id); code != 200 || strings.Contains(body, "hunter2") {
		t.Errorf("jobconf without ACLs: %d", code)
	}
}

// TestAttemptLogCounts: slot totals stay right past maxAttemptsPerJob
// (the launches are counted, not listed), a lost tracker's running
// attempts fail, and retiring a job forgets its attempts.
func TestAttemptLogCounts(t *testing.T) {
	var l attemptLog
	tr := &tracker{name: "tt-a"}
	now := time.Unix(100, 0)
	l.heartbeat("tt-a", &mrpb.HeartbeatRequest{FreeMapSlots: proto.Int32(2), FreeReduceSlots: proto.Int32(2)})
	for i := 0; i < maxAttemptsPerJob; i++ {
		l.launched("job_1", fmt.Sprintf("attempt_1_m_%06d_0", i), 'm', i, tr, now)
		l.reported(&mrpb.TaskReport{AttemptId: proto.String(fmt.Sprintf("attempt_1_m_%06d_0", i)), State: mrpb.TaskReport_SUCCEEDED.Enum()}, now)
	}
	l.heartbeat("tt-a", &mrpb.HeartbeatRequest{FreeMapSlots: proto.Int32(2), FreeReduceSlots: proto.Int32(2)})
	l.launched("job_1", "attempt_1_m_999999_0", 'm', 999999, tr, now) // past the cap
	l.launched("job_1", "attempt_1_r_000000_0", 'r', 0, tr, now)
	tc := l.trackers["tt-a"]
	if tc.free != [2]int{1, 1} || tc.running != [2]int{1, 1} {
		t.Fatalf("after launches past the cap: free %v running %v", tc.free, tc.running)
	}
	if ja := l.jobs["job_1"]; len(ja.all) != maxAttemptsPerJob || ja.unlisted != 2 {
		t.Errorf("listed %d, unlisted %d", len(ja.all), ja.unlisted)
	}
	l.trackerLost("tt-a", now)
	if len(l.running) != 0 || l.failed("job_1") != 2 {
		t.Errorf("after the tracker's loss: %d running, %d failed", len(l.running), l.failed("job_1"))
	}
	l.forget("job_1")
	if len(l.jobs) != 0 {
		t.Errorf("a retired job's attempts are kept")
	}
}

// TestRetireForgetsAttempts: retire drops the retired jobs' attempts
// whether or not a page was viewed.
func TestRetireForgetsAttempts(t *testing.T) {
	h := newHarness(t)
	h.jt.cfg.RetiredJobs = 1
	var ids []string
	for i := 0; i < 3; i++ {
		j := h.submit([][]string{{"h1"}}, 0)
		ids = append(ids, j.id)
		h.jt.mu.Lock()
		h.jt.ui.attempts.launched(j.id, "attempt_x_"+j.id, 'm', 0, &tracker{name: "tt-h1"}, h.clk.now())
		h.jt.endJob(j, mrpb.JobState_KILLED, "test")
		if j.cleanup != nil {
			j.cleanup.state = done
		}
		h.jt.mu.Unlock()
	}
	h.jt.mu.Lock()
	h.jt.retire()
	n := len(h.jt.ui.attempts.jobs)
	h.jt.mu.Unlock()
	if n > 1 {
		t.Errorf("after retiring to 1 job, attempts of %d jobs are kept", n)
	}
}
