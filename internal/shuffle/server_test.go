package shuffle

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/spill"
)

func TestServer(t *testing.T) {
	job := makeJob(t, spill.None, 2, 3, mixedCounts, 20)
	srv := NewServer(ServerConfig{})
	srv.SetSecret(job.id, job.secret)
	m := job.maps[0]
	// Index nil: Add reads file.out.index.
	if err := srv.Add(MapOutputInfo{JobID: job.id, AttemptID: m.attempt, Path: m.out.Path}); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(m.out.Path)
	if err != nil {
		t.Fatal(err)
	}
	q := func(job, attempt, reduce string) string {
		return Path + "?" + url.Values{"job": {job}, "map": {attempt}, "reduce": {reduce}}.Encode()
	}
	for _, tc := range []struct {
		name, method, target, version string
		status                        int
		reduce                        int // for 200: the partition
	}{
		{"ok", "GET", q(job.id, m.attempt, "1"), Version, 200, 1},
		{"empty partition", "GET", q(job.id, m.attempt, "2"), Version, 200, 2},
		{"no version header", "GET", q(job.id, m.attempt, "0"), "", 200, 0},
		{"head", "HEAD", q(job.id, m.attempt, "0"), Version, 200, 0},
		{"other version", "GET", q(job.id, m.attempt, "0"), "2", 400, 0},
		{"no job", "GET", q("", m.attempt, "0"), Version, 400, 0},
		{"no map", "GET", q(job.id, "", "0"), Version, 400, 0},
		{"no reduce", "GET", Path + "?job=" + job.id + "&map=" + m.attempt, Version, 400, 0},
		{"bad reduce", "GET", q(job.id, m.attempt, "x"), Version, 400, 0},
		{"negative reduce", "GET", q(job.id, m.attempt, "-1"), Version, 400, 0},
		{"reduce out of range", "GET", q(job.id, m.attempt, "3"), Version, 400, 0},
		{"unknown job", "GET", q("job_other", m.attempt, "0"), Version, 401, 0},
		{"unknown map", "GET", q(job.id, job.maps[1].attempt, "0"), Version, 404, 0},
		{"other path", "GET", "/other?job=x", Version, 404, 0},
		{"post", "POST", q(job.id, m.attempt, "0"), Version, 405, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := signed(tc.method, tc.target, job.secret)
			if tc.version != "" {
				req.Header.Set(HeaderVersion, tc.version)
			}
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, req)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d (%s)", w.Code, tc.status, w.Body)
			}
			if tc.status != 200 {
				return
			}
			e := m.out.Index[tc.reduce]
			h := w.Header()
			for k, want := range map[string]string{
				HeaderRawLength:  strconv.FormatInt(e.RawLength, 10),
				HeaderPartLength: strconv.FormatInt(e.PartLength, 10),
				"Content-Length": strconv.FormatInt(e.PartLength, 10),
				HeaderMap:        m.attempt,
				HeaderReduce:     strconv.Itoa(tc.reduce),
				HeaderVersion:    Version,
			} {
				if got := h.Get(k); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
			want := file[e.Offset : e.Offset+e.PartLength]
			if tc.method == "HEAD" {
				want = nil
			}
			if !bytes.Equal(w.Body.Bytes(), want) {
				t.Errorf("body of %d bytes differs from the stored segment (%d bytes)", w.Body.Len(), len(want))
			}
		})
	}

	get := func() int {
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, signed("GET", q(job.id, m.attempt, "0"), job.secret))
		return w.Code
	}
	// A truncated file is a server error; a missing one is not found.
	trunc := filepath.Join(t.TempDir(), "file.out")
	os.WriteFile(trunc, file[:len(file)-1], 0o644)
	srv.Add(MapOutputInfo{JobID: job.id, AttemptID: m.attempt, Path: trunc, Index: m.out.Index})
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, signed("GET", q(job.id, m.attempt, "2"), job.secret))
	if w.Code != 500 {
		t.Errorf("truncated file: status %d", w.Code)
	}
	os.Remove(trunc)
	if c := get(); c != 404 {
		t.Errorf("missing file: status %d", c)
	}
	srv.Add(MapOutputInfo{JobID: job.id, AttemptID: m.attempt, Path: m.out.Path, Index: m.out.Index})
	if c := get(); c != 200 {
		t.Errorf("re-added: status %d", c)
	}
	srv.Remove(job.id, m.attempt)
	if c := get(); c != 404 {
		t.Errorf("after Remove: status %d", c)
	}
	srv.Add(MapOutputInfo{JobID: job.id, AttemptID: m.attempt, Path: m.out.Path, Index: m.out.Index})
	srv.RemoveJob(job.id)
	if c := get(); c != 401 {
		t.Errorf("after RemoveJob (the secret gone too): status %d", c)
	}
	if st := srv.Stats(); st.Served == 0 || st.Failed == 0 || st.Bytes == 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestServerAddErrors(t *testing.T) {
	srv := NewServer(ServerConfig{})
	dir := t.TempDir()
	bad := filepath.Join(dir, "file.out")
	os.WriteFile(bad+".index", []byte("not an index"), 0o644)
	for _, info := range []MapOutputInfo{
		{AttemptID: "a", Path: bad},
		{JobID: "j", Path: bad},
		{JobID: "j", AttemptID: "a"},
		{JobID: "j", AttemptID: "a", Path: bad},                              // corrupt index
		{JobID: "j", AttemptID: "a", Path: filepath.Join(dir, "none")},       // no index
		{JobID: "j", AttemptID: "a", Path: bad, Index: []spill.IndexEntry{}}, // no partitions
	} {
		if err := srv.Add(info); err == nil {
			t.Errorf("Add accepted %+v", info)
		}
	}
}

// TestServerBusy: a full server answers 503 with Retry-After at once.
func TestServerBusy(t *testing.T) {
	job := makeJob(t, spill.None, 1, 1, func(m, p int) int { return 10 }, 21)
	srv := NewServer(ServerConfig{MaxConcurrent: 1, RetryAfter: 1500e6})
	srv.SetSecret(job.id, job.secret)
	m := job.maps[0]
	srv.Add(MapOutputInfo{JobID: job.id, AttemptID: m.attempt, Path: m.out.Path, Index: m.out.Index})
	target := Path + "?job=" + job.id + "&map=" + m.attempt + "&reduce=0"
	srv.sem <- struct{}{} // the one slot is taken
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, signed("GET", target, job.secret))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "2" {
		t.Errorf("status %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	<-srv.sem
	w = httptest.NewRecorder()
	srv.ServeHTTP(w, signed("GET", target, job.secret))
	if w.Code != 200 {
		t.Errorf("status %d after the slot was freed", w.Code)
	}
	if st := srv.Stats(); st.Busy != 1 || st.Served != 1 {
		t.Errorf("stats %+v", st)
	}
	// Over a real connection the body arrives whole (sendfile path).
	hs := httptest.NewServer(srv)
	defer hs.Close()
	resp, err := http.DefaultClient.Do(clientRequest(t, hs.URL+target, job.secret))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	file, _ := os.ReadFile(m.out.Path)
	if e := m.out.Index[0]; !bytes.Equal(body, file[e.Offset:e.Offset+e.PartLength]) {
		t.Error("body differs from the stored segment")
	}
}

// TestServerKeepAlive: the per-chunk write deadline must not outlive the
// response (net/http clears it), or the connection's next request would
// fail.
func TestServerKeepAlive(t *testing.T) {
	job := makeJob(t, spill.None, 1, 1, func(m, p int) int { return 10 }, 22)
	srv := NewServer(ServerConfig{WriteTimeout: 50e6})
	srv.SetSecret(job.id, job.secret)
	m := job.maps[0]
	srv.Add(MapOutputInfo{JobID: job.id, AttemptID: m.attempt, Path: m.out.Path, Index: m.out.Index})
	hs := httptest.NewUnstartedServer(srv)
	var conns atomic.Int32
	hs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	hs.Start()
	defer hs.Close()
	target := hs.URL + Path + "?job=" + job.id + "&map=" + m.attempt + "&reduce=0"
	for i := range 2 {
		if i > 0 {
			time.Sleep(150 * time.Millisecond)
		}
		resp, err := hs.Client().Do(clientRequest(t, target, job.secret))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || int64(len(body)) != m.out.Index[0].PartLength {
			t.Fatalf("request %d: %d, %d bytes, %v", i, resp.StatusCode, len(body), err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1 (kept alive)", n)
	}
}
