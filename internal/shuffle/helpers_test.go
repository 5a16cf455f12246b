package shuffle

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/jobtoken"
	"github.com/stratafs/strata/internal/spill"
)

type rec struct{ key, value []byte }

func compareRecs(a, b rec) int {
	if c := bytes.Compare(a.key, b.key); c != 0 {
		return c
	}
	return bytes.Compare(a.value, b.value)
}

// testMap is one map attempt's output and what was collected into it.
type testMap struct {
	attempt string
	out     spill.Output
	parts   [][]rec // records by partition
}

// testJob is a job's finished maps.
type testJob struct {
	id     string
	secret []byte
	codec  spill.Codec
	maps   []*testMap
}

// makeJob runs nMaps map attempts through spill.Collector; count(m, p)
// says how many random records map m writes to partition p.
func makeJob(t testing.TB, codec spill.Codec, nMaps, nParts int, count func(m, p int) int, seed uint64) *testJob {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(seed, 7))
	job := &testJob{id: fmt.Sprintf("job_test_%04d", seed), codec: codec, secret: []byte(fmt.Sprintf("secret of job %d", seed))}
	for m := range nMaps {
		tm := &testMap{attempt: fmt.Sprintf("attempt_test_%04d_m_%06d_0", seed, m), parts: make([][]rec, nParts)}
		c, err := spill.NewCollector(spill.Config{Partitions: nParts, SortBytes: 1 << 20, Codec: codec,
			LocalDirs: []string{dir}, Name: tm.attempt})
		if err != nil {
			t.Fatal(err)
		}
		// Interleave partitions so that records are collected out of order.
		var order []int
		for p := range nParts {
			for range count(m, p) {
				order = append(order, p)
			}
		}
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, p := range order {
			k := make([]byte, rng.IntN(13))
			for i := range k {
				k[i] = 'a' + byte(rng.IntN(4)) // small alphabet: equal keys across maps
			}
			v := make([]byte, rng.IntN(100))
			for i := range v {
				v[i] = byte(rng.Uint32())
			}
			if err := c.Collect(p, k, v); err != nil {
				t.Fatal(err)
			}
			tm.parts[p] = append(tm.parts[p], rec{k, v})
		}
		if tm.out, err = c.Close(); err != nil {
			t.Fatal(err)
		}
		job.maps = append(job.maps, tm)
	}
	return job
}

// expected returns the records of partition r, in (key, value) order.
func (j *testJob) expected(r int) []rec {
	var all []rec
	for _, m := range j.maps {
		all = append(all, m.parts[r]...)
	}
	slices.SortFunc(all, compareRecs)
	return all
}

func (j *testJob) partBytes(r int) int64 {
	var n int64
	for _, m := range j.maps {
		n += m.out.Index[r].PartLength
	}
	return n
}

// tracker is a TaskTracker's shuffle server on a test HTTP server, with
// a hook for fault injection and a count of requests per map attempt.
type tracker struct {
	srv  *Server
	hs   *httptest.Server
	hook atomic.Pointer[func(w http.ResponseWriter, r *http.Request) bool]

	mu       sync.Mutex
	requests map[string]int
}

func newTracker(t testing.TB, cfg ServerConfig) *tracker {
	tt := &tracker{srv: NewServer(cfg), requests: map[string]int{}}
	tt.hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tt.mu.Lock()
		tt.requests[r.URL.Query().Get("map")]++
		tt.mu.Unlock()
		if h := tt.hook.Load(); h != nil && (*h)(w, r) {
			return
		}
		tt.srv.ServeHTTP(w, r)
	}))
	t.Cleanup(tt.hs.Close)
	return tt
}

func (tt *tracker) setHook(h func(w http.ResponseWriter, r *http.Request) bool) { tt.hook.Store(&h) }

func (tt *tracker) count(attempt string) int {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.requests[attempt]
}

// serve registers the job's maps on the trackers, map m on tracker
// m mod len, and returns their locations.
func serve(t testing.TB, job *testJob, trackers ...*tracker) []MapLocation {
	t.Helper()
	var locs []MapLocation
	for i, m := range job.maps {
		tt := trackers[i%len(trackers)]
		tt.srv.SetSecret(job.id, job.secret)
		if err := tt.srv.Add(MapOutputInfo{JobID: job.id, AttemptID: m.attempt, Path: m.out.Path, Index: m.out.Index}); err != nil {
			t.Fatal(err)
		}
		locs = append(locs, MapLocation{AttemptID: m.attempt, URL: tt.hs.URL, MapIndex: i})
	}
	return locs
}

// counters collects counter increments.
type counters struct {
	mu sync.Mutex
	m  map[string]int64
}

func (c *counters) add(name string, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]int64{}
	}
	c.m[name] += n
}

func (c *counters) get(name string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[name]
}

// testConfig returns a Config with short timeouts and two local dirs.
func testConfig(t testing.TB, job *testJob, r int, cnt *counters) Config {
	cfg := DefaultConfig()
	cfg.JobID = job.id
	cfg.Secret = job.secret
	cfg.Reduce = r
	cfg.Codec = job.codec
	cfg.LocalDirs = []string{t.TempDir(), t.TempDir()}
	cfg.Name = fmt.Sprintf("attempt_test_r_%06d_0", r)
	cfg.ConnectTimeout = 2 * time.Second
	cfg.ReadTimeout = 2 * time.Second
	cfg.Retries = 2
	cfg.RetryBackoff = 5 * time.Millisecond
	cfg.MaxBackoff = 20 * time.Millisecond
	if cnt != nil {
		cfg.Counters = cnt.add
	}
	return cfg
}

// drain reads it to the end, checks the key order and closes it.
func drain(t testing.TB, it spill.Iterator, compare func(a, b []byte) int) []rec {
	t.Helper()
	if compare == nil {
		compare = bytes.Compare
	}
	var out []rec
	for it.Next() {
		if n := len(out); n > 0 && compare(out[n-1].key, it.Key()) > 0 {
			t.Fatalf("record %d: key %q after %q", n, it.Key(), out[n-1].key)
		}
		out = append(out, rec{slices.Clone(it.Key()), slices.Clone(it.Value())})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func checkRecords(t testing.TB, got, want []rec) {
	t.Helper()
	slices.SortFunc(got, compareRecs)
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range got {
		if compareRecs(got[i], want[i]) != 0 {
			t.Fatalf("record %d (sorted): got %q=%x, want %q=%x", i, got[i].key, got[i].value, want[i].key, want[i].value)
		}
	}
}

// checkClean checks that the attempt left nothing in its local dirs.
func checkClean(t testing.TB, cfg Config) {
	t.Helper()
	for _, d := range cfg.LocalDirs {
		if _, err := os.Stat(filepath.Join(d, cfg.Name)); !os.IsNotExist(err) {
			ents, _ := os.ReadDir(filepath.Join(d, cfg.Name))
			t.Errorf("%s/%s still exists (%v, %d entries)", d, cfg.Name, err, len(ents))
		}
	}
}

// signed is a request for target (a path and query, or a full URL)
// signed with secret, as a fetcher sends it.
func signed(method, target string, secret []byte) *http.Request {
	req := httptest.NewRequest(method, target, nil)
	req.Header.Set(jobtoken.HeaderURLHash, jobtoken.URLHash(secret, req.URL))
	return req
}

// clientRequest is signed for a real connection to target (a full URL).
func clientRequest(t testing.TB, target string, secret []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest("GET", target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(jobtoken.HeaderURLHash, jobtoken.URLHash(secret, req.URL))
	return req
}
