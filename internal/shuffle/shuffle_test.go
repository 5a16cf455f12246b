package shuffle

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/spill"
)

// mixedCounts: partition 0 small (memory), 1 large (disk with a small
// budget), 2 empty everywhere, 3 large in even maps and empty in odd.
func mixedCounts(m, p int) int {
	switch p {
	case 0:
		return 100 + 17*m%150
	case 1:
		return 300 + 31*m%200
	case 3:
		if m%2 == 0 {
			return 400
		}
	}
	return 0
}

// shuffleAll starts a shuffle of locs with New, Adds them all and Waits
// for the merged records; the caller closes the Shuffle.
func shuffleAll(t *testing.T, cfg Config, locs []MapLocation) (*Shuffle, spill.Iterator) {
	t.Helper()
	s, err := New(cfg, len(locs))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range locs {
		if err := s.Add(l); err != nil {
			s.Close()
			t.Fatal(err)
		}
	}
	it, err := s.Wait(context.Background())
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	return s, it
}

// run shuffles with New, Add and Wait, checks the result against the
// reference and returns the Shuffle (closed) for its statistics.
func run(t *testing.T, job *testJob, cfg Config, locs []MapLocation) *Shuffle {
	t.Helper()
	s, it := shuffleAll(t, cfg, locs)
	defer s.Close()
	checkRecords(t, drain(t, it, cfg.Compare), job.expected(cfg.Reduce))
	s.Close()
	checkClean(t, cfg)
	return s
}

func TestShuffle(t *testing.T) {
	const nMaps, nParts = 8, 4
	for _, codec := range []spill.Codec{spill.None, spill.LZ4, spill.Zstd} {
		job := makeJob(t, codec, nMaps, nParts, mixedCounts, 1)
		a, b := newTracker(t, ServerConfig{}), newTracker(t, ServerConfig{})
		locs := serve(t, job, a, b)
		for _, budget := range []string{"memory", "small"} {
			t.Run(codec.String()+"/"+budget, func(t *testing.T) {
				var memMerges, diskMerges, onDisk int
				for r := range nParts {
					cnt := &counters{}
					cfg := testConfig(t, job, r, cnt)
					if budget == "small" {
						cfg.MemoryBudget = 64 << 10 // 16 KiB segments in memory, merged at 42 KiB
						cfg.SortFactor = 3          // on-disk merges from 5 files
					}
					s := run(t, job, cfg, locs)
					if s.maxUsed > cfg.MemoryBudget {
						t.Errorf("reduce %d: %d bytes in memory, budget %d", r, s.maxUsed, cfg.MemoryBudget)
					}
					memMerges += s.memMerges
					diskMerges += s.diskMerges
					for _, m := range job.maps {
						if m.out.Index[r].PartLength > s.maxSingle {
							onDisk++
						}
					}
					for name, want := range map[string]int64{
						CounterShuffledMaps:       nMaps,
						CounterMergedMapOutputs:   nMaps,
						CounterReduceShuffleBytes: job.partBytes(r),
						CounterFailedShuffles:     0,
					} {
						if got := cnt.get(name); got != want {
							t.Errorf("reduce %d: counter %q = %d, want %d", r, name, got, want)
						}
					}
				}
				t.Logf("%d segments to disk, %d in-memory merges, %d on-disk merges", onDisk, memMerges, diskMerges)
				if budget == "memory" && onDisk+memMerges+diskMerges > 0 {
					t.Errorf("default budget: %d to disk, %d+%d merges; want all in memory", onDisk, memMerges, diskMerges)
				}
				if budget == "small" && codec == spill.None && (onDisk == 0 || memMerges == 0 || diskMerges == 0) {
					t.Errorf("small budget: want segments on disk, in-memory and on-disk merges")
				}
			})
		}
	}
}

// TestCompare uses a custom key order on both sides.
func TestCompare(t *testing.T) {
	rev := func(a, b []byte) int { return bytes.Compare(b, a) }
	job := makeJob(t, spill.None, 4, 1, func(m, p int) int { return 500 }, 2)
	// Rebuild with the reverse order: makeJob's collector sorts bytewise,
	// so write the maps again through collectors with rev.
	dir := t.TempDir()
	for _, m := range job.maps {
		c, err := spill.NewCollector(spill.Config{Partitions: 1, Compare: rev, LocalDirs: []string{dir}, Name: m.attempt})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range m.parts[0] {
			c.Collect(0, r.key, r.value)
		}
		if m.out, err = c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	locs := serve(t, job, newTracker(t, ServerConfig{}))
	cfg := testConfig(t, job, 0, nil)
	cfg.Compare = rev
	cfg.MemoryBudget = 64 << 10
	cfg.SortFactor = 2
	run(t, job, cfg, locs)
}

// TestMemoryStall: segments just under the single-segment limit, a
// merge threshold above what fits with fetches in flight, and many
// fetchers: fetches must wait for memory without exceeding the budget or
// deadlocking.
func TestMemoryStall(t *testing.T) {
	job := makeJob(t, spill.None, 20, 1, func(m, p int) int { return 240 }, 3)
	locs := serve(t, job, newTracker(t, ServerConfig{}), newTracker(t, ServerConfig{}))
	cfg := testConfig(t, job, 0, nil)
	cfg.MemoryBudget = 64 << 10
	cfg.MemoryLimitPercent = 0.3
	cfg.MergePercent = 0.95
	cfg.ParallelCopies = 8
	s := run(t, job, cfg, locs)
	t.Logf("max in memory %d, %d stalls, %d in-memory merges", s.maxUsed, s.stalls, s.memMerges)
	if s.maxUsed > cfg.MemoryBudget {
		t.Errorf("%d bytes in memory, budget %d", s.maxUsed, cfg.MemoryBudget)
	}
}

func TestZeroMaps(t *testing.T) {
	job := &testJob{id: "job_none", secret: []byte("s")}
	cfg := testConfig(t, job, 0, nil)
	it, err := Fetch(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := drain(t, it, nil); len(got) != 0 {
		t.Fatalf("%d records", len(got))
	}
	checkClean(t, cfg)
}

// TestRetryServerError: a server that fails twice, then answers.
func TestRetryServerError(t *testing.T) {
	job := makeJob(t, spill.LZ4, 4, 2, mixedCounts, 4)
	a, b := newTracker(t, ServerConfig{}), newTracker(t, ServerConfig{})
	locs := serve(t, job, a, b)
	victim := job.maps[2].attempt // on a
	var mu sync.Mutex
	fails := 0
	a.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Query().Get("map") == victim && fails < 2 {
			fails++
			http.Error(w, "disk on fire", http.StatusInternalServerError)
			return true
		}
		return false
	})
	cnt := &counters{}
	cfg := testConfig(t, job, 0, cnt)
	it, err := Fetch(context.Background(), cfg, locs)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, drain(t, it, nil), job.expected(0))
	if got := a.count(victim); got != 3 {
		t.Errorf("%d requests for the map, want 3", got)
	}
	if got := cnt.get(CounterFailedShuffles); got != 2 {
		t.Errorf("Failed Shuffles = %d, want 2", got)
	}
	checkClean(t, cfg)
}

// hang is a hook that sends the headers and half the body of the real
// answer, or nothing at all, then stalls until the client goes away.
func hang(tt *tracker, attempt string, halfBody bool) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Query().Get("map") != attempt {
			return false
		}
		if halfBody {
			rec := httptest.NewRecorder()
			tt.srv.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			body := rec.Body.Bytes()
			w.Write(body[:len(body)/2])
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		return true
	}
}

// TestServerDown: one map's server refuses connections, hangs, or stops
// in the middle of the body; the shuffle reports exactly that map,
// within its timeouts.
func TestServerDown(t *testing.T) {
	for _, mode := range []string{"refused", "no-answer", "half-body"} {
		t.Run(mode, func(t *testing.T) {
			job := makeJob(t, spill.None, 5, 2, mixedCounts, 5)
			a, b := newTracker(t, ServerConfig{}), newTracker(t, ServerConfig{})
			locs := serve(t, job, a, b)
			victim := 3 // on b
			switch mode {
			case "refused":
				dead := httptest.NewServer(http.NotFoundHandler())
				dead.Close()
				locs[victim].URL = dead.URL
			case "no-answer":
				b.setHook(hang(b, job.maps[victim].attempt, false))
			case "half-body":
				b.setHook(hang(b, job.maps[victim].attempt, true))
			}
			cnt := &counters{}
			cfg := testConfig(t, job, 1, cnt) // partition 1: ~25 KB, in memory
			cfg.ConnectTimeout = 200 * time.Millisecond
			cfg.ReadTimeout = 200 * time.Millisecond
			var reported []MapLocation
			var mu sync.Mutex
			cfg.OnFailure = func(loc MapLocation, err error) {
				mu.Lock()
				reported = append(reported, loc)
				mu.Unlock()
			}
			start := time.Now()
			it, err := Fetch(context.Background(), cfg, locs)
			elapsed := time.Since(start)
			var fe *FetchError
			if !errors.As(err, &fe) {
				if it != nil {
					it.Close()
				}
				t.Fatalf("got %v, want a *FetchError", err)
			}
			t.Logf("after %v: %v", elapsed, err)
			if len(fe.Failed) != 1 || fe.Failed[0] != locs[victim] {
				t.Errorf("failed maps %+v, want just %+v", fe.Failed, locs[victim])
			}
			if mode != "refused" {
				if !errors.Is(err, ErrTimeout) {
					t.Errorf("error does not wrap ErrTimeout: %v", err)
				}
				if got := b.count(job.maps[victim].attempt); got != cfg.Retries+1 {
					t.Errorf("%d requests for the map, want %d", got, cfg.Retries+1)
				}
			}
			// 3 attempts × (connect+read timeout) plus backoffs, with room.
			if elapsed > 5*time.Second {
				t.Errorf("took %v", elapsed)
			}
			mu.Lock()
			if len(reported) != 1 || reported[0] != locs[victim] {
				t.Errorf("OnFailure got %+v", reported)
			}
			mu.Unlock()
			if got := cnt.get(CounterFailedShuffles); got != int64(cfg.Retries+1) {
				t.Errorf("Failed Shuffles = %d, want %d", got, cfg.Retries+1)
			}
			if got := cnt.get(CounterShuffledMaps); got != int64(len(locs)-1) {
				t.Errorf("Shuffled Maps = %d, want %d", got, len(locs)-1)
			}
			checkClean(t, cfg)
		})
	}
}

// TestCorrupt: a byte of a stored segment is flipped; every fetch fails
// its checksum, so the map is retried, then reported, with ErrCorrupt.
func TestCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name  string
		codec spill.Codec
		small bool // a small memory budget: the segment goes to disk
	}{{"memory", spill.None, false}, {"disk", spill.None, true}, {"memory-zstd", spill.Zstd, false}, {"disk-lz4", spill.LZ4, true}} {
		t.Run(tc.name, func(t *testing.T) {
			job := makeJob(t, tc.codec, 4, 2, mixedCounts, 6)
			locs := serve(t, job, newTracker(t, ServerConfig{}), newTracker(t, ServerConfig{}))
			const r, victim = 1, 2
			m := job.maps[victim]
			e := m.out.Index[r]
			f, err := os.OpenFile(m.out.Path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			var bb [1]byte
			off := e.Offset + e.PartLength/2
			f.ReadAt(bb[:], off)
			bb[0] ^= 0x10
			f.WriteAt(bb[:], off)
			f.Close()
			cnt := &counters{}
			cfg := testConfig(t, job, r, cnt)
			if tc.small {
				cfg.MemoryBudget = 32 << 10
			}
			_, err = Fetch(context.Background(), cfg, locs)
			var fe *FetchError
			if !errors.As(err, &fe) || !errors.Is(err, spill.ErrCorrupt) {
				t.Fatalf("got %v, want a *FetchError wrapping spill.ErrCorrupt", err)
			}
			if len(fe.Failed) != 1 || fe.Failed[0] != locs[victim] {
				t.Errorf("failed maps %+v, want just %+v", fe.Failed, locs[victim])
			}
			if got := cnt.get(CounterFailedShuffles); got != int64(cfg.Retries+1) {
				t.Errorf("Failed Shuffles = %d, want %d", got, cfg.Retries+1)
			}
			checkClean(t, cfg)
		})
	}
}

// slowWriter makes a response trickle out, so that requests overlap.
type slowWriter struct{ http.ResponseWriter }

func (s slowWriter) Write(p []byte) (int, error) {
	time.Sleep(2 * time.Millisecond)
	return s.ResponseWriter.Write(p)
}

// TestBusy: servers that serve one request at a time refuse the others
// with 503; the fetchers wait and get everything.
func TestBusy(t *testing.T) {
	job := makeJob(t, spill.None, 10, 2, mixedCounts, 7)
	a := newTracker(t, ServerConfig{MaxConcurrent: 1})
	b := newTracker(t, ServerConfig{MaxConcurrent: 1})
	for _, tt := range []*tracker{a, b} {
		tt.setHook(func(w http.ResponseWriter, r *http.Request) bool {
			tt.srv.ServeHTTP(slowWriter{w}, r)
			return true
		})
	}
	locs := serve(t, job, a, b)
	cnt := &counters{}
	cfg := testConfig(t, job, 1, cnt)
	cfg.ReadTimeout = 10 * time.Second // the time a map may wait for busy servers
	it, err := Fetch(context.Background(), cfg, locs)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, drain(t, it, nil), job.expected(1))
	busy := a.srv.Stats().Busy + b.srv.Stats().Busy
	t.Logf("%d busy answers", busy)
	if busy == 0 {
		t.Error("no 503s: the test did not exercise the limit")
	}
	if got := cnt.get(CounterFailedShuffles); got != 0 {
		t.Errorf("Failed Shuffles = %d, want 0", got)
	}
	if st := a.srv.Stats(); st.Served == 0 || st.Bytes == 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestRerun is the JobTracker's flow: locations arrive over time, one
// map's output is lost, the reducer reports it, the map is re-run
// elsewhere and its new location is added; the shuffle then completes,
// keeping what it had fetched.
func TestRerun(t *testing.T) {
	job := makeJob(t, spill.Snappy, 6, 3, mixedCounts, 8)
	a, b := newTracker(t, ServerConfig{}), newTracker(t, ServerConfig{})
	locs := serve(t, job, a, b)
	const victim = 4 // on a
	a.srv.Remove(job.id, job.maps[victim].attempt)
	cnt := &counters{}
	cfg := testConfig(t, job, 0, cnt)
	failures := make(chan MapLocation, 10)
	cfg.OnFailure = func(loc MapLocation, err error) { failures <- loc }
	var fetched []MapLocation // Fetched's calls are serialized
	var fetchedMu sync.Mutex  // for the test's reads
	cfg.Fetched = func(loc MapLocation) { fetchedMu.Lock(); fetched = append(fetched, loc); fetchedMu.Unlock() }
	s, err := New(cfg, len(locs))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	go func() {
		for _, i := range []int{5, 0, 4, 2, 1, 3} {
			time.Sleep(5 * time.Millisecond)
			s.Add(locs[i])
		}
	}()
	ctx := context.Background()
	_, err = s.Wait(ctx)
	var fe *FetchError
	if !errors.As(err, &fe) || len(fe.Failed) != 1 || fe.Failed[0] != locs[victim] {
		t.Fatalf("got %v, want a *FetchError for map %d", err, victim)
	}
	if loc := <-failures; loc != locs[victim] {
		t.Fatalf("OnFailure for %+v", loc)
	}
	// Wait may have returned before the other locations were added;
	// once they are fetched, Wait reports the same failure again.
	for s.Progress().Fetched < len(locs)-1 {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := s.Wait(ctx); !errors.As(err, &fe) {
		t.Fatalf("second Wait: %v", err)
	}
	// Re-run: the same output as a new attempt on the other tracker.
	m := job.maps[victim]
	rerun := MapLocation{AttemptID: m.attempt[:len(m.attempt)-1] + "1", URL: b.hs.URL, MapIndex: victim}
	if err := b.srv.Add(MapOutputInfo{JobID: job.id, AttemptID: rerun.AttemptID, Path: m.out.Path}); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(rerun); err != nil {
		t.Fatal(err)
	}
	it, err := s.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, drain(t, it, nil), job.expected(0))
	if p := s.Progress(); p.Fetched != len(locs) || p.Failed != 0 || p.Bytes != job.partBytes(0) {
		t.Errorf("progress %+v", p)
	}
	if got := cnt.get(CounterShuffledMaps); got != int64(len(locs)) {
		t.Errorf("Shuffled Maps = %d", got)
	}
	fetchedMu.Lock()
	if n := len(fetched); n != len(locs) || fetched[n-1] != rerun {
		t.Errorf("Fetched with %v, want each map once, the rerun last", fetched)
	}
	fetchedMu.Unlock()
	if err := s.Add(rerun); err != nil {
		t.Errorf("Add after the end: %v", err)
	}
	s.Close()
	checkClean(t, cfg)
	if err := s.Add(rerun); !errors.Is(err, ErrClosed) {
		t.Errorf("Add after Close: %v", err)
	}
}

// TestCancel: the caller's context ends the wait promptly, and Fetch
// leaves nothing behind.
func TestCancel(t *testing.T) {
	job := makeJob(t, spill.None, 4, 2, mixedCounts, 9)
	a := newTracker(t, ServerConfig{})
	locs := serve(t, job, a)
	a.setHook(hang(a, job.maps[1].attempt, true))
	cfg := testConfig(t, job, 1, nil)
	cfg.MemoryBudget = 32 << 10 // the hanging segment goes to disk
	cfg.ReadTimeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Fetch(ctx, cfg, locs)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	checkClean(t, cfg)
}

func TestConfigErrors(t *testing.T) {
	job := &testJob{id: "job_x", secret: []byte("s")}
	for name, mod := range map[string]func(*Config){
		"no job":       func(c *Config) { c.JobID = "" },
		"no secret":    func(c *Config) { c.Secret = nil },
		"reduce":       func(c *Config) { c.Reduce = -1 },
		"name":         func(c *Config) { c.Name = "a/b" },
		"codec":        func(c *Config) { c.Codec = "lzo" },
		"factor":       func(c *Config) { c.SortFactor = 1 },
		"limit":        func(c *Config) { c.MemoryLimitPercent = 0.7 },
		"merge":        func(c *Config) { c.MergePercent = 1.5 },
		"local dirs":   func(c *Config) { c.LocalDirs = nil },
		"copies":       func(c *Config) { c.ParallelCopies = -1 },
		"neg. timeout": func(c *Config) { c.ReadTimeout = -1 },
	} {
		cfg := testConfig(t, job, 0, nil)
		mod(&cfg)
		if s, err := New(cfg, 1); err == nil {
			s.Close()
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	cfg := testConfig(t, job, 0, nil)
	for _, locs := range [][]MapLocation{
		{{AttemptID: "a", URL: "http://x", MapIndex: 1}},
		{{AttemptID: "a", URL: "http://x", MapIndex: 0}, {AttemptID: "b", URL: "http://x", MapIndex: 0}},
		{{AttemptID: "", URL: "http://x", MapIndex: 0}},
	} {
		if _, err := Fetch(context.Background(), cfg, locs); err == nil {
			t.Errorf("Fetch accepted %+v", locs)
		}
	}
	checkClean(t, cfg)
}

func TestFetchErrorMessage(t *testing.T) {
	var fe FetchError
	for i := range 5 {
		fe.Failed = append(fe.Failed, MapLocation{AttemptID: "attempt_" + string(rune('a'+i)), MapIndex: i})
		fe.Errs = append(fe.Errs, spill.ErrCorrupt)
	}
	msg := fe.Error()
	if !bytes.Contains([]byte(msg), []byte("5 map output(s)")) || !bytes.Contains([]byte(msg), []byte("and 2 more")) {
		t.Errorf("message %q", msg)
	}
	if !errors.Is(&fe, spill.ErrCorrupt) {
		t.Error("errors.Is does not see through FetchError")
	}
	if !slices.Equal(fe.Unwrap(), fe.Errs) {
		t.Error("Unwrap")
	}
}

// TestBusyForever: a server that is always full is, after ReadTimeout of
// waiting, as good as one that does not answer.
func TestBusyForever(t *testing.T) {
	job := makeJob(t, spill.None, 2, 1, func(m, p int) int { return 10 }, 10)
	a := newTracker(t, ServerConfig{MaxConcurrent: 1})
	locs := serve(t, job, a)
	a.srv.sem <- struct{}{}
	defer func() { <-a.srv.sem }()
	cnt := &counters{}
	cfg := testConfig(t, job, 0, cnt)
	cfg.ReadTimeout = 100 * time.Millisecond
	start := time.Now()
	_, err := Fetch(context.Background(), cfg, locs)
	var fe *FetchError
	if !errors.As(err, &fe) || len(fe.Failed) != 2 {
		t.Fatalf("got %v, want both maps failed", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
	if got := cnt.get(CounterFailedShuffles); got != 2*int64(cfg.Retries+1) {
		t.Errorf("Failed Shuffles = %d, want %d", got, 2*(cfg.Retries+1))
	}
	checkClean(t, cfg)
}

// TestDeadHost: a TaskTracker that accepts connections but never
// answers holds several maps. A failure to get any response is charged
// to every map queued for that server, so all of them are given up after
// about Retries+1 requests, not that many per map.
func TestDeadHost(t *testing.T) {
	job := makeJob(t, spill.None, 8, 1, func(m, p int) int { return 50 }, 11)
	a, b := newTracker(t, ServerConfig{}), newTracker(t, ServerConfig{})
	locs := serve(t, job, a, b)
	b.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		return true
	})
	cnt := &counters{}
	cfg := testConfig(t, job, 0, cnt)
	cfg.ParallelCopies = 2
	cfg.ConnectTimeout = 100 * time.Millisecond
	cfg.ReadTimeout = 100 * time.Millisecond
	var mu sync.Mutex
	reported := map[MapLocation]int{}
	cfg.OnFailure = func(loc MapLocation, err error) {
		mu.Lock()
		reported[loc]++
		mu.Unlock()
	}
	_, err := Fetch(context.Background(), cfg, locs)
	var fe *FetchError
	if !errors.As(err, &fe) {
		t.Fatalf("got %v, want a *FetchError", err)
	}
	var want []MapLocation
	for _, l := range locs {
		if l.URL == b.hs.URL {
			want = append(want, l)
		}
	}
	if !slices.Equal(fe.Failed, want) {
		t.Errorf("failed %+v, want %+v", fe.Failed, want)
	}
	requests := 0
	for _, m := range job.maps {
		requests += b.count(m.attempt)
	}
	t.Logf("%d requests to the dead server for %d maps", requests, len(want))
	if max := cfg.ParallelCopies * (cfg.Retries + 1); requests > max {
		t.Errorf("%d requests to the dead server, want at most %d", requests, max)
	}
	mu.Lock()
	if len(reported) != len(want) {
		t.Errorf("OnFailure for %v", reported)
	}
	for l, n := range reported {
		if n != 1 {
			t.Errorf("OnFailure called %d times for %+v", n, l)
		}
	}
	mu.Unlock()
	if got := cnt.get(CounterShuffledMaps); got != int64(len(locs)-len(want)) {
		t.Errorf("Shuffled Maps = %d", got)
	}
}

// A partition that fits in the memory budget is not merged to disk at the
// merge threshold; one whose later map outputs turn out larger than the
// first ones' mean is, when they no longer fit, and stays in budget.
func TestMergeOnlyWhenTheRestDoesNotFit(t *testing.T) {
	for _, c := range []struct {
		name   string
		count  func(m, p int) int
		merges bool
	}{
		{"even", func(m, p int) int { return 100 }, false},
		{"growing", func(m, p int) int { return 20 + 40*m }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			job := makeJob(t, spill.None, 12, 1, c.count, 4)
			locs := serve(t, job, newTracker(t, ServerConfig{}))
			cfg := testConfig(t, job, 0, nil)
			total := job.partBytes(0)
			cfg.MemoryBudget = total * 100 / 85 // the whole partition is 85% of it
			if c.merges {
				cfg.MemoryBudget = total * 100 / 130
			}
			cfg.MemoryLimitPercent = 0.4
			cfg.MergePercent = 0.5
			cfg.ParallelCopies = 1
			s := run(t, job, cfg, locs)
			t.Logf("partition %d bytes, budget %d, max in memory %d, %d in-memory merges", total, cfg.MemoryBudget, s.maxUsed, s.memMerges)
			if s.maxUsed > cfg.MemoryBudget {
				t.Errorf("%d bytes in memory, budget %d", s.maxUsed, cfg.MemoryBudget)
			}
			if got := s.memMerges > 0; got != c.merges {
				t.Errorf("%d in-memory merges, want merges: %v", s.memMerges, c.merges)
			}
		})
	}
}

// A partition larger than the memory budget has only what will not fit
// merged to disk at the threshold, not everything held then: the rest
// stays in memory for the final merge.
func TestMergeOnlyTheOverflow(t *testing.T) {
	job := makeJob(t, spill.None, 20, 1, func(m, p int) int { return 100 }, 4)
	locs := serve(t, job, newTracker(t, ServerConfig{}))
	cfg := testConfig(t, job, 0, nil)
	total := job.partBytes(0)
	cfg.MemoryBudget = total / 2
	cfg.MemoryLimitPercent = 0.25
	cfg.MergePercent = 0.66
	cfg.ParallelCopies = 1
	s := run(t, job, cfg, locs)
	seg := total / 20
	t.Logf("partition %d bytes, budget %d, %d in-memory merges of %d bytes", total, cfg.MemoryBudget, s.memMerges, s.memMerged)
	// Merging all it held at each threshold would write about 2/3 of the
	// partition; the overflow is half of it, give or take a segment.
	if s.memMerged < total-cfg.MemoryBudget || s.memMerged > total-cfg.MemoryBudget+2*seg || s.maxUsed > cfg.MemoryBudget {
		t.Errorf("merged %d bytes to disk (max %d in memory); want the overflow, %d bytes, and at most 2 segments (%d) more", s.memMerged, s.maxUsed, total-cfg.MemoryBudget, seg)
	}
}

// The final merge streams every memory segment at once, however many more
// than the merge factor there are: nothing is written to local disk.
func TestFinalMergeOfMemorySegmentsWritesNothing(t *testing.T) {
	job := makeJob(t, spill.None, 12, 1, func(m, p int) int { return 50 }, 5)
	locs := serve(t, job, newTracker(t, ServerConfig{}))
	cfg := testConfig(t, job, 0, nil)
	cfg.SortFactor = 3
	s, it := shuffleAll(t, cfg, locs)
	defer s.Close()
	var files []string
	for _, d := range cfg.LocalDirs {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) > 0 || s.memMerges+s.diskMerges > 0 {
		t.Errorf("final merge of 12 memory segments with factor 3 wrote %v (%d+%d merges)", files, s.memMerges, s.diskMerges)
	}
	checkRecords(t, drain(t, it, cfg.Compare), job.expected(0))
}
