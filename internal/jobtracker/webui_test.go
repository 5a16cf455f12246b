package jobtracker

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
	page := get("/jobdetails?jobid=" + j.id)
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
		"/jobdetails?jobid=job_1_0042": {"old sort", "from its history file", "Launched map tasks", "disk &lt;full&gt;", "1m 30s"},
		"/jobhistory":                  {"job_1_0042", "carol", "1m 30s"},
		"/jobdetails?jobid=job_9_9":    {"No such job"},
		"/jobdetails?jobid=../../etc":  {"No such job"},
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
