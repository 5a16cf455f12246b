package shuffle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/media"
	"github.com/stratafs/strata/internal/spill"
	"github.com/stratafs/strata/internal/vfs"
)

// Counter names: the values of package mapreduce's constants
// ShuffledMaps, ReduceShuffleBytes and MergedMapOutputs, and Hadoop's
// FAILED_SHUFFLE display name (repeated here so that mapreduce may import
// this package).
const (
	CounterShuffledMaps       = "Shuffled Maps"
	CounterReduceShuffleBytes = "Reduce shuffle bytes"
	CounterMergedMapOutputs   = "Merged Map outputs"
	CounterFailedShuffles     = "Failed Shuffles"
)

// Defaults of Config, Hadoop's where Hadoop has one. Those with a key
// are the values in conf's table, which DefaultConfig reads (a test checks
// that they agree); the others have no key.
const (
	DefaultParallelCopies     = 5                       // mapreduce.reduce.shuffle.parallelcopies
	DefaultMemoryBudget       = 256 << 20               // strata's stand-in for input.buffer.percent × heap
	DefaultMemoryLimitPercent = 0.25                    // mapreduce.reduce.shuffle.memory.limit.percent
	DefaultMergePercent       = 0.66                    // mapreduce.reduce.shuffle.merge.percent
	DefaultSortFactor         = spill.DefaultSortFactor // mapreduce.task.io.sort.factor
	DefaultConnectTimeout     = 180 * time.Second       // mapreduce.reduce.shuffle.connect.timeout
	DefaultReadTimeout        = 180 * time.Second       // mapreduce.reduce.shuffle.read.timeout
	DefaultRetries            = 3
	DefaultRetryBackoff       = time.Second
	DefaultMaxBackoff         = 30 * time.Second
)

var (
	// ErrTimeout is wrapped by the error of a fetch that got no response
	// within ConnectTimeout+ReadTimeout, or no body bytes for ReadTimeout.
	ErrTimeout = errors.New("shuffle: timed out")
	// ErrClosed is returned by Add and Wait after Close.
	ErrClosed = errors.New("shuffle: closed")
)

// MapLocation says where a finished map attempt's output can be fetched:
// what the JobTracker's map completion events carry.
type MapLocation struct {
	AttemptID string // the map attempt, e.g. attempt_202401011200_0001_m_000003_0
	URL       string // the TaskTracker's shuffle server, e.g. http://host:13562
	MapIndex  int    // the map task's number, 0 ≤ MapIndex < the job's map count
}

// Config configures one reduce attempt's shuffle. Fields marked "0 means"
// take the Default* value when zero. Nothing can change once the Shuffle
// exists.
type Config struct {
	// JobID names the job on the servers (required).
	JobID string
	// Secret is the job's shuffle secret (internal/jobtoken, the
	// JobTracker's per-job key; required): every request carries the
	// UrlHash it signs and every reply must carry a valid ReplyHash, or
	// the fetch fails.
	Secret []byte
	// Reduce is this reduce task's partition (≥ 0).
	Reduce int
	// ParallelCopies is how many fetches run at once
	// (mapreduce.reduce.shuffle.parallelcopies). 0 means 5.
	ParallelCopies int
	// MemoryBudget, in bytes, is the memory for fetched segments held in
	// memory (Hadoop: mapreduce.reduce.shuffle.input.buffer.percent of the
	// heap). It is never exceeded. 0 means 256 MiB.
	MemoryBudget int64
	// MemoryLimitPercent (mapreduce.reduce.shuffle.memory.limit.percent):
	// a segment larger than this fraction of MemoryBudget is fetched
	// straight to disk. In (0, MergePercent); 0 means 0.25.
	MemoryLimitPercent float64
	// MergePercent (mapreduce.reduce.shuffle.merge.percent): when the
	// segments held in memory reach this fraction of MemoryBudget they are
	// merged into one disk segment, unless the rest of the partition is
	// expected to fit in the budget too. In (0, 1]; 0 means 0.66.
	MergePercent float64
	// SortFactor (mapreduce.task.io.sort.factor) is the merge width: disk
	// segments are merged in the background, SortFactor at a time, once
	// there are 2×SortFactor−1, and the final merge reads at most
	// SortFactor at once. ≥ 2; 0 means 10.
	SortFactor int
	// Compare orders keys, as the map side did; nil means bytes.Compare.
	Compare func(a, b []byte) int
	// Codec is the job's map-output codec (the servers send segments as
	// stored); merges write their output with it too.
	Codec spill.Codec
	// LocalDirs are mapreduce.cluster.local.dir. The shuffle works in
	// <dir>/<Name>/ of each (round-robin); dirs that cannot be created are
	// skipped, at least one must work.
	LocalDirs []string
	// Name is unique to the reduce attempt (e.g. attempt_..._r_000002_0);
	// it becomes a directory name.
	Name string
	// ConnectTimeout (mapreduce.reduce.shuffle.connect.timeout) bounds
	// connecting; with ReadTimeout it also bounds waiting for the response
	// headers. 0 means 180 s.
	ConnectTimeout time.Duration
	// ReadTimeout (mapreduce.reduce.shuffle.read.timeout) bounds waiting
	// for the response headers after connecting and for each read of the
	// body. 0 means 180 s.
	ReadTimeout time.Duration
	// Retries is how many times a failed fetch is retried against the
	// same server before the map is reported as failed. 0 means 3;
	// negative means no retries.
	Retries int
	// RetryBackoff is the wait before the first retry; it doubles for each
	// further one, up to MaxBackoff, with jitter (half to all of it).
	// 0 means 1 s.
	RetryBackoff time.Duration
	// MaxBackoff caps every wait before a retry, including one asked for
	// by a busy server's Retry-After. 0 means 30 s.
	MaxBackoff time.Duration
	// Client makes the requests. nil means a client of the Shuffle's own
	// with ConnectTimeout, ParallelCopies idle connections per server,
	// no proxy and no transparent compression. A client's own Timeout
	// must allow for the largest segment.
	Client *http.Client
	// Counters, if set, receives counter increments (the Counter* names).
	// Calls are serialized, from the Shuffle's goroutines.
	Counters func(name string, delta int64)
	// Fetched, if set, is called with each map output fetched, after its
	// counters and serialized with Counters. A map may come twice (a
	// rerun attempt's output): count distinct MapIndex values.
	Fetched func(loc MapLocation)
	// OnFailure, if set, is called once each time a map attempt is given
	// up on (every retry failed): the moment to report a fetch failure to
	// the JobTracker. It runs on a fetcher goroutine and may call Add, but
	// not Wait or Close.
	OnFailure func(loc MapLocation, err error)
	// Logger receives a line for each failed fetch and merge. nil: none.
	Logger *slog.Logger
	// FS is the file system of the local dirs; nil means media.Default()
	// (the OS, with emulated media where configured). Tests inject faults
	// here (vfs/errorfs).
	FS vfs.FS
}

// DefaultConfig returns the defaults: ConfigFrom of an empty
// configuration (conf's table), and the Default constants for the fields
// without a key. The caller sets JobID, Reduce, Compare, LocalDirs and
// Name.
func DefaultConfig() Config {
	c, err := ConfigFrom(conf.New())
	if err != nil {
		panic("shuffle: the defaults in conf's table do not parse: " + err.Error())
	}
	return c
}

// The keys ConfigFrom reads besides spill.CodecFrom's; their defaults are
// in conf's table.
const (
	KeyParallelCopies     = "mapreduce.reduce.shuffle.parallelcopies"
	KeyMemoryLimitPercent = "mapreduce.reduce.shuffle.memory.limit.percent"
	KeyMergePercent       = "mapreduce.reduce.shuffle.merge.percent"
	KeySortFactor         = "mapreduce.task.io.sort.factor"
	KeyConnectTimeout     = "mapreduce.reduce.shuffle.connect.timeout"
	KeyReadTimeout        = "mapreduce.reduce.shuffle.read.timeout"
)

// ConfigFrom reads a reduce's shuffle settings from Hadoop's keys (unset
// keys take conf's table's defaults): ParallelCopies, MemoryLimitPercent,
// MergePercent, SortFactor, ConnectTimeout, ReadTimeout and Codec
// (spill.CodecFrom). MemoryBudget, which Hadoop derives from the heap, and
// the retry settings take their Default constants. Bad values are
// reported together; the Config is not validated (New does).
func ConfigFrom(c *conf.Configuration) (Config, error) {
	r := conf.NewReader(c, "shuffle")
	cfg := Config{MemoryBudget: DefaultMemoryBudget, Retries: DefaultRetries, RetryBackoff: DefaultRetryBackoff, MaxBackoff: DefaultMaxBackoff}
	cfg.ParallelCopies = int(r.Int(KeyParallelCopies))
	cfg.MemoryLimitPercent = r.Float(KeyMemoryLimitPercent)
	cfg.MergePercent = r.Float(KeyMergePercent)
	cfg.SortFactor = int(r.Int(KeySortFactor))
	cfg.ConnectTimeout = r.Duration(KeyConnectTimeout, time.Millisecond)
	cfg.ReadTimeout = r.Duration(KeyReadTimeout, time.Millisecond)
	codec, err := spill.CodecFrom(c)
	r.AddAs(err)
	cfg.Codec = codec
	return cfg, r.Err()
}

// withDefaults returns c with its "0 means" fields given DefaultConfig's
// values.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	setDefault(&c.ParallelCopies, d.ParallelCopies)
	setDefault(&c.MemoryBudget, d.MemoryBudget)
	setDefault(&c.MemoryLimitPercent, d.MemoryLimitPercent)
	setDefault(&c.MergePercent, d.MergePercent)
	setDefault(&c.SortFactor, d.SortFactor)
	setDefault(&c.ConnectTimeout, d.ConnectTimeout)
	setDefault(&c.ReadTimeout, d.ReadTimeout)
	setDefault(&c.Retries, d.Retries)
	setDefault(&c.RetryBackoff, d.RetryBackoff)
	setDefault(&c.MaxBackoff, d.MaxBackoff)
	return c
}

// Validate reports the first field out of range.
func (c *Config) Validate() error {
	switch {
	case c.JobID == "":
		return errors.New("shuffle: no job ID")
	case len(c.Secret) == 0:
		return errors.New("shuffle: no job token (the job's shuffle secret)")
	case c.Reduce < 0:
		return fmt.Errorf("shuffle: reduce %d is negative", c.Reduce)
	case c.Name == "" || c.Name == "." || c.Name == ".." || strings.ContainsAny(c.Name, `/\`):
		return fmt.Errorf("shuffle: bad attempt name %q", c.Name)
	case c.ParallelCopies < 1:
		return fmt.Errorf("shuffle: %s: %d parallel copies", KeyParallelCopies, c.ParallelCopies)
	case c.MemoryBudget < 0:
		return fmt.Errorf("shuffle: memory budget %d", c.MemoryBudget)
	case !(c.MergePercent > 0 && c.MergePercent <= 1):
		return fmt.Errorf("shuffle: %s: merge percent %v not in (0, 1]", KeyMergePercent, c.MergePercent)
	case !(c.MemoryLimitPercent > 0 && c.MemoryLimitPercent < c.MergePercent):
		return fmt.Errorf("shuffle: %s: memory limit percent %v not in (0, merge percent %v)", KeyMemoryLimitPercent, c.MemoryLimitPercent, c.MergePercent)
	case c.SortFactor < 2:
		return fmt.Errorf("shuffle: %s: sort factor %d is less than 2", KeySortFactor, c.SortFactor)
	case c.ConnectTimeout < 0 || c.ReadTimeout < 0 || c.RetryBackoff < 0 || c.MaxBackoff < 0:
		return errors.New("shuffle: negative timeout or backoff")
	}
	if _, err := spill.ParseCodec(string(c.Codec)); err != nil {
		return fmt.Errorf("shuffle: %w", err)
	}
	return nil
}

// FetchError lists the map attempts that could not be fetched, each with
// its last error; the JobTracker should re-run those maps. errors.Is
// sees through it (spill.ErrCorrupt, ErrTimeout, ...).
type FetchError struct {
	Failed []MapLocation
	Errs   []error // Errs[i] is why Failed[i] failed
}

func (e *FetchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "shuffle: could not fetch %d map output(s):", len(e.Failed))
	for i, l := range e.Failed {
		if i == 3 {
			fmt.Fprintf(&b, " (and %d more)", len(e.Failed)-i)
			break
		}
		sep := ";"
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&b, "%s %s (map %d): %v", sep, l.AttemptID, l.MapIndex, e.Errs[i])
	}
	return b.String()
}

func (e *FetchError) Unwrap() []error { return e.Errs }

// Progress is a snapshot of a Shuffle, for status reports.
type Progress struct {
	Maps    int   // maps of the job
	Fetched int   // maps fetched
	Failed  int   // maps given up on and not replaced by Add
	Bytes   int64 // bytes fetched (Reduce shuffle bytes)
}

const (
	stUnknown  = iota // no location yet
	stQueued          // waiting for a fetcher (maybe until notBefore)
	stFetching        // a fetcher has it
	stDone            // fetched
	stFailed          // given up; waiting for Add
)

type mapState struct {
	loc       MapLocation
	state     int
	attempts  int           // failed fetches of loc
	busy      time.Duration // waited on busy servers for loc
	notBefore time.Time
	seq       uint64       // queue order
	next      *MapLocation // a replacement added while fetching
	err       error        // why it failed
}

// Shuffle is one reduce attempt's shuffle: it fetches partition
// Config.Reduce of every map output with ParallelCopies fetchers, keeps
// small segments in memory and writes large ones to local disk, merges
// them as they arrive, and Wait returns the final merge.
//
// Lifecycle: New starts the fetchers; Add gives map locations as they
// become known (in any order, any number of times); Wait blocks until
// every map is fetched — then it returns the merged records — or until
// some maps have failed and nothing else is in progress, when it returns
// a *FetchError and the Shuffle stays usable: Add new locations (re-run
// attempts) for the failed maps and call Wait again. Close stops
// everything and removes the local files, except those of an iterator
// Wait returned, which removes them when closed. Add, Progress and Close
// are safe to call from any goroutine; Wait from one at a time.
type Shuffle struct {
	cfg       Config
	maxSingle int64 // larger segments go to disk
	mergeAt   int64 // in-memory merge threshold
	dirs      []string
	fs        vfs.FS // never nil
	client    *http.Client
	transport *http.Transport // ours, if cfg.Client was nil
	log       *slog.Logger
	ctx       context.Context // cancelled by Close
	cancel    context.CancelFunc
	wg        sync.WaitGroup // fetchers and merges
	closeOnce sync.Once
	fileSeq   atomic.Int64

	cntMu sync.Mutex

	mu      sync.Mutex
	cond    sync.Cond
	maps    []mapState
	queue   []int // indices of maps in stQueued
	seq     uint64
	active  int
	done    int
	failed  int
	bytes   int64
	perHost map[string]int // running fetches per server
	timer   *time.Timer
	timerAt time.Time
	timerID uint64

	memInflight int64      // reserved by running fetches
	memHeld     int64      // held by fetched segments, merging ones included
	memPending  int64      // held by pending
	pending     []*segment // fetched memory segments not being merged
	disk        []*segment // disk segments not being merged
	memMerging  bool
	diskMerging bool

	err    error // fatal: local disk or merge failure
	closed bool
	handed bool // Wait returned the final iterator, which owns the files

	// statistics for tests
	maxUsed    int64
	memMerges  int
	memMerged  int64 // bytes of the segments merged from memory to disk
	diskMerges int
	stalls     int
}

// New checks cfg, creates the attempt's directories and starts the
// fetchers for a job of numMaps maps. Nothing is fetched until Add.
func New(cfg Config, numMaps int) (*Shuffle, error) {
	if numMaps < 0 {
		return nil, fmt.Errorf("shuffle: %d maps", numMaps)
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	codec, err := spill.ParseCodec(string(cfg.Codec))
	if err != nil {
		return nil, fmt.Errorf("shuffle: %w", err)
	}
	cfg.Codec = codec
	s := &Shuffle{
		fs:        orDefault(cfg.FS),
		cfg:       cfg,
		maxSingle: int64(float64(cfg.MemoryBudget) * cfg.MemoryLimitPercent),
		mergeAt:   int64(float64(cfg.MemoryBudget) * cfg.MergePercent),
		log:       cfg.Logger,
		maps:      make([]mapState, numMaps),
		perHost:   map[string]int{},
	}
	s.cond.L = &s.mu
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, d := range cfg.LocalDirs {
		p := filepath.Join(d, cfg.Name)
		if err := s.fs.MkdirAll(p, 0o755); err != nil {
			s.log.Warn("shuffle: local dir not usable", "dir", d, "err", err)
			continue
		}
		s.dirs = append(s.dirs, p)
	}
	if len(s.dirs) == 0 {
		return nil, fmt.Errorf("shuffle: no usable local dir among %q", cfg.LocalDirs)
	}
	s.client = cfg.Client
	if s.client == nil {
		s.transport = &http.Transport{
			DialContext:           (&net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost:   cfg.ParallelCopies,
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: cfg.ReadTimeout,
			DisableCompression:    true,
			ReadBufferSize:        64 << 10,
		}
		s.client = &http.Client{Transport: s.transport}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for range cfg.ParallelCopies {
		s.wg.Add(1)
		go s.fetcher()
	}
	return s, nil
}

func setDefault[T comparable](p *T, def T) {
	var zero T
	if *p == zero {
		*p = def
	}
}

// Add tells the Shuffle where map loc.MapIndex's output is. A map already
// fetched ignores it. For a map that failed, or is waiting to be fetched,
// loc replaces the old location and gets a fresh set of retries; for one
// being fetched, loc is used if that fetch fails. Adding the location
// that failed again retries it.
func (s *Shuffle) Add(loc MapLocation) error {
	if loc.AttemptID == "" || loc.URL == "" {
		return fmt.Errorf("shuffle: map location needs an attempt and a URL (got %+v)", loc)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if loc.MapIndex < 0 || loc.MapIndex >= len(s.maps) {
		return fmt.Errorf("shuffle: map index %d out of range [0, %d)", loc.MapIndex, len(s.maps))
	}
	m := &s.maps[loc.MapIndex]
	switch m.state {
	case stDone:
		return nil
	case stFetching:
		if loc.AttemptID != m.loc.AttemptID || loc.URL != m.loc.URL {
			m.next = &loc
		}
		return nil
	case stFailed:
		s.failed--
		m.err = nil
	}
	m.loc, m.attempts, m.busy, m.next, m.notBefore = loc, 0, 0, nil, time.Time{}
	if m.state != stQueued {
		s.enqueue(loc.MapIndex, time.Time{})
	}
	s.cond.Broadcast()
	return nil
}

// enqueue queues map i (not queued) to be fetched at or after at.
func (s *Shuffle) enqueue(i int, at time.Time) {
	m := &s.maps[i]
	m.state, m.notBefore = stQueued, at
	s.seq++
	m.seq = s.seq
	s.queue = append(s.queue, i)
}

// Progress returns how far the shuffle has got.
func (s *Shuffle) Progress() Progress {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Progress{Maps: len(s.maps), Fetched: s.done, Failed: s.failed, Bytes: s.bytes}
}

func (s *Shuffle) broadcast() {
	s.mu.Lock()
	s.cond.Broadcast()
	s.mu.Unlock()
}

func (s *Shuffle) count(name string, n int64) {
	if s.cfg.Counters == nil || n == 0 {
		return
	}
	s.cntMu.Lock()
	defer s.cntMu.Unlock()
	s.cfg.Counters(name, n)
}

// wakeAt makes sure waiters are woken at t. s.mu is held.
func (s *Shuffle) wakeAt(t time.Time) {
	if s.timer != nil && !s.timerAt.After(t) {
		return
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	s.timerID++
	id := s.timerID
	s.timerAt = t
	s.timer = time.AfterFunc(time.Until(t), func() {
		s.mu.Lock()
		if s.timerID == id {
			s.timer = nil
		}
		s.cond.Broadcast()
		s.mu.Unlock()
	})
}

// next waits for a map to fetch: the first ready one (by queue order)
// among those whose server has the fewest running fetches. It returns
// false when the fetchers should stop.
func (s *Shuffle) next() (int, MapLocation, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.closed || s.err != nil || s.done == len(s.maps) {
			return 0, MapLocation{}, false
		}
		now := time.Now()
		best := -1
		var earliest time.Time
		for qi, i := range s.queue {
			m := &s.maps[i]
			if m.notBefore.After(now) {
				if earliest.IsZero() || m.notBefore.Before(earliest) {
					earliest = m.notBefore
				}
				continue
			}
			if best < 0 {
				best = qi
				continue
			}
			b := &s.maps[s.queue[best]]
			if h, hb := s.perHost[m.loc.URL], s.perHost[b.loc.URL]; h < hb || h == hb && m.seq < b.seq {
				best = qi
			}
		}
		if best >= 0 {
			i := s.queue[best]
			s.queue = slices.Delete(s.queue, best, best+1)
			m := &s.maps[i]
			m.state = stFetching
			s.active++
			s.perHost[m.loc.URL]++
			return i, m.loc, true
		}
		if !earliest.IsZero() {
			s.wakeAt(earliest)
		}
		s.cond.Wait()
	}
}

func (s *Shuffle) fetcher() {
	defer s.wg.Done()
	for {
		i, loc, ok := s.next()
		if !ok {
			return
		}
		seg, err := s.fetch(loc)
		s.finish(i, loc, seg, err)
	}
}

// backoff returns the jittered wait before retry number n (from 1).
func (s *Shuffle) backoff(n int) time.Duration {
	d := s.cfg.RetryBackoff
	for i := 1; i < n && d < s.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return jitter(min(d, s.cfg.MaxBackoff))
}

func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// finish records the outcome of fetching map i from loc.
func (s *Shuffle) finish(i int, loc MapLocation, seg *segment, err error) {
	s.mu.Lock()
	m := &s.maps[i]
	s.active--
	if s.perHost[loc.URL]--; s.perHost[loc.URL] == 0 {
		delete(s.perHost, loc.URL)
	}
	s.cond.Broadcast()
	if err == nil {
		m.state, m.next = stDone, nil
		s.done++
		s.bytes += seg.size
		s.addSegment(seg)
		s.mu.Unlock()
		s.count(CounterShuffledMaps, 1)
		s.count(CounterReduceShuffleBytes, seg.size)
		if f := s.cfg.Fetched; f != nil {
			s.cntMu.Lock()
			f(loc)
			s.cntMu.Unlock()
		}
		return
	}
	var o outcome
	s.failure(i, loc, err, &o)
	s.mu.Unlock()
	s.count(CounterFailedShuffles, o.failed)
	if f := s.cfg.OnFailure; f != nil {
		for _, g := range o.gaveUp {
			f(g.loc, g.err)
		}
	}
}

// outcome is what failure decided, for finish to report without s.mu.
type outcome struct {
	failed int64       // failed fetches to count
	gaveUp []failedMap // maps given up on
}

type failedMap struct {
	loc MapLocation
	err error
}

// failure decides what to do after fetching map i from loc failed with
// err: wait and retry, try a new location, or give up. When no HTTP
// response was had at all, every map queued for the same server is
// charged a failed fetch too, as Hadoop's fetcher does: a dead
// TaskTracker is given up on after Retries+1 attempts, not that many per
// map. s.mu is held.
func (s *Shuffle) failure(i int, loc MapLocation, err error, o *outcome) {
	m := &s.maps[i]
	if s.closed {
		m.state = stQueued // but not in the queue: nothing runs any more
		return
	}
	var le *localError
	if errors.As(err, &le) {
		s.fatal(err)
		s.enqueue(i, time.Time{})
		return
	}
	var be *busyError
	if errors.As(err, &be) && m.busy < s.cfg.ReadTimeout {
		wait := be.retryAfter
		if wait <= 0 {
			wait = s.cfg.RetryBackoff
		}
		wait = jitter(min(wait, s.cfg.MaxBackoff))
		m.busy += wait
		s.enqueue(i, time.Now().Add(wait))
		return
	}
	s.charge(i, fmt.Errorf("shuffle: fetching %s from %s: %w", loc.AttemptID, loc.URL, err), o)
	var ce *connError
	if !errors.As(err, &ce) {
		return
	}
	for _, j := range slices.Clone(s.queue) {
		if q := &s.maps[j]; j != i && q.loc.URL == loc.URL {
			s.charge(j, fmt.Errorf("shuffle: fetching %s from %s: %w", q.loc.AttemptID, q.loc.URL, err), o)
		}
	}
}

// charge counts a failed fetch of map i: it is retried after a backoff,
// moved to its new location, or given up. i is either being fetched
// (and not queued) or queued. s.mu is held.
func (s *Shuffle) charge(i int, err error, o *outcome) {
	m := &s.maps[i]
	queued := m.state == stQueued
	o.failed++
	m.attempts++
	if m.next != nil && !queued { // (Add replaces a queued map's location directly)
		s.log.Info("shuffle: fetch failed; trying the map's new location", "map", m.loc.AttemptID, "new", m.next.AttemptID, "err", err)
		m.loc, m.attempts, m.busy, m.next = *m.next, 0, 0, nil
		s.enqueue(i, time.Time{})
		return
	}
	if m.attempts <= s.cfg.Retries {
		at := time.Now().Add(s.backoff(m.attempts))
		s.log.Info("shuffle: fetch failed; will retry", "map", m.loc.AttemptID, "attempt", m.attempts, "at", at, "err", err)
		if !queued {
			s.enqueue(i, at)
		} else if at.After(m.notBefore) {
			m.notBefore = at
		}
		return
	}
	s.log.Warn("shuffle: giving up on map output", "map", m.loc.AttemptID, "url", m.loc.URL, "attempts", m.attempts, "err", err)
	if queued {
		s.queue = slices.DeleteFunc(s.queue, func(j int) bool { return j == i })
	}
	m.state, m.err = stFailed, err
	s.failed++
	o.gaveUp = append(o.gaveUp, failedMap{m.loc, err})
}

// fatal records an error that ends the shuffle. s.mu is held.
func (s *Shuffle) fatal(err error) {
	if s.err == nil && !s.closed {
		s.log.Error("shuffle: failed", "err", err)
		s.err = err
	}
}

// Wait blocks until every map has been fetched and returns an Iterator
// over all their records in key order (the final merge, spill.Merge of
// the memory and disk segments, streaming). Records with equal keys come
// in no particular order across maps; within one map they keep the map's
// order. Closing the Iterator removes the shuffle's local files.
//
// It returns a *FetchError as soon as some maps have failed and nothing
// else is queued or being fetched (maps with no location yet are not
// waited for then); the Shuffle stays usable. It returns ctx's error when
// ctx is done (the fetches go on until Close), and any other error when
// the shuffle cannot go on (a local disk or merge failure; Close then).
func (s *Shuffle) Wait(ctx context.Context) (spill.Iterator, error) {
	stop := context.AfterFunc(ctx, s.broadcast)
	defer stop()
	s.mu.Lock()
	for {
		var err error
		switch {
		case s.err != nil:
			err = s.err
		case s.closed:
			err = ErrClosed
		case s.handed:
			err = errors.New("shuffle: Wait already returned the merged output")
		case ctx.Err() != nil:
			err = ctx.Err()
		case s.done == len(s.maps) && !s.memMerging && !s.diskMerging:
			return s.finalMerge() // unlocks
		case s.failed > 0 && len(s.queue) == 0 && s.active == 0:
			fe := &FetchError{}
			for i := range s.maps {
				if m := &s.maps[i]; m.state == stFailed {
					fe.Failed = append(fe.Failed, m.loc)
					fe.Errs = append(fe.Errs, m.err)
				}
			}
			err = fe
		}
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.cond.Wait()
	}
}

// Close stops the fetchers and merges, waits for them, and removes the
// attempt's local files and directories — unless Wait returned the final
// Iterator, which then owns them. Safe to call more than once.
func (s *Shuffle) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		s.mu.Lock()
		s.closed = true
		if s.timer != nil {
			s.timer.Stop()
			s.timer = nil
		}
		s.cond.Broadcast()
		s.mu.Unlock()
		s.wg.Wait()
		if s.transport != nil {
			s.transport.CloseIdleConnections()
		}
		s.mu.Lock()
		handed := s.handed
		segs := append(s.pending, s.disk...)
		s.pending, s.disk = nil, nil
		s.mu.Unlock()
		if !handed {
			for _, seg := range segs {
				if seg.it != nil {
					seg.it.Close()
				}
			}
			removeDirs(s.fs, s.dirs)
		}
	})
	return nil
}

func removeDirs(fsys vfs.FS, dirs []string) error {
	var errs []error
	for _, d := range dirs {
		if err := fsys.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Fetch fetches partition cfg.Reduce of every map in locs (whose
// MapIndex values must be 0 … len(locs)−1, each once) and returns the
// merged records, as New, Add and Wait do; on error nothing is left on
// disk. Maps that could not be fetched are reported with a *FetchError.
func Fetch(ctx context.Context, cfg Config, locs []MapLocation) (spill.Iterator, error) {
	seen := make([]bool, len(locs))
	for _, l := range locs {
		if l.MapIndex < 0 || l.MapIndex >= len(locs) || seen[l.MapIndex] {
			return nil, fmt.Errorf("shuffle: map indices must be 0 … %d, each once (got %d)", len(locs)-1, l.MapIndex)
		}
		seen[l.MapIndex] = true
	}
	s, err := New(cfg, len(locs))
	if err != nil {
		return nil, err
	}
	for _, l := range locs {
		if err := s.Add(l); err != nil {
			s.Close()
			return nil, err
		}
	}
	it, err := s.Wait(ctx)
	s.Close()
	return it, err
}

// orDefault is fsys, or the process's file system (emulated media
// included) when fsys is nil.
func orDefault(fsys vfs.FS) vfs.FS {
	if fsys == nil {
		return media.Default()
	}
	return fsys
}
