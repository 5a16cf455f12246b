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
