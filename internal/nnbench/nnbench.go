// Package nnbench is a NameNode load generator in the manner of Hadoop's
// NNThroughputBenchmark (and NNBench's operation names), run as `strata
// nnbench`: T threads, each with its own HDFS client and so its own IPC
// connection, issue N metadata operations in total against a live
// NameNode over real RPC, and the throughput and latency distribution of
// each operation is reported.
//
// Operations (each call is one RPC, timed on its own):
//
//	mkdirs        mkdirs of a new directory (parents exist)
//	create_write  create + complete of an empty file (no block, no DataNode traffic)
//	fileStatus    getFileInfo of an existing file
//	open_read     getBlockLocations of an existing file
//	rename        rename2 of an existing file to <name>.r
//	delete        delete of an existing file
//
// "all" runs them in that order on the same files: create_write makes
// them, fileStatus and open_read read them, rename renames them and delete
// removes the renamed files. A single operation that needs files creates
// them first, untimed, as NNThroughputBenchmark does.
//
// Layout: files are <base>/files/t<thread>/d<k>/f<j> and directories
// <base>/dirs/t<thread>/d<k>/dir<j>, k = j / filesPerDir, so that no
// directory grows beyond filesPerDir entries; the t/d directories are made
// before timing. Leftovers of an earlier run with -keep are removed first.
// Afterwards, unless Keep is set, everything the run created is deleted:
// the base directory itself (and any parents the run made) when it did not
// exist before, else its files and dirs subdirectories.
package nnbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
)

// Operation names.
const (
	OpMkdirs      = "mkdirs"
	OpCreateWrite = "create_write"
	OpFileStatus  = "fileStatus"
	OpOpenRead    = "open_read"
	OpRename      = "rename"
	OpDelete      = "delete"
	OpAll         = "all"
)

// AllOps is the order "all" runs the operations in.
var AllOps = []string{OpMkdirs, OpCreateWrite, OpFileStatus, OpOpenRead, OpRename, OpDelete}

// aliases are Hadoop's names (NNThroughputBenchmark's and NNBench's).
var aliases = map[string]string{"create": OpCreateWrite, "open": OpOpenRead, "delete_op": OpDelete, "rename_op": OpRename, "filestatus": OpFileStatus}

// DefaultBaseDir is where the benchmark works unless told otherwise.
const DefaultBaseDir = "/benchmarks/NNBench"

// DefaultFilesPerDir bounds the entries of one benchmark directory.
const DefaultFilesPerDir = 1000

// Config is one benchmark run.
type Config struct {
	// Addr is the NameNode's RPC host:port; used when Addrs is empty.
	Addr string
	// Addrs are every NameNode of an HA nameservice, which each client
	// fails over among (hdfs.Options.Addrs).
	Addrs []string
	// User is the user to act as; "" means fs.CurrentUser().
	User string
	// Umask for the directories and files created (default 022).
	Umask uint16
	// Replication and BlockSize of the created files; 0 means 3 and
	// 128 MiB. They are passed explicitly so that no create asks the
	// NameNode for its defaults.
	Replication int
	BlockSize   int64
	// Op is one of the Op* names (or a Hadoop alias: create, open).
	Op string
	// Threads is the number of concurrent clients (default 1).
	Threads int
	// Ops is the number of operations of each kind, spread over the
	// threads as NNThroughputBenchmark spreads them (default 1000).
	Ops int
	// FilesPerDir is the most entries a benchmark directory gets (default
	// 1000).
	FilesPerDir int
	// BaseDir is the directory the benchmark works in (default
	// /benchmarks/NNBench); relative to /user/<User> unless absolute.
	BaseDir string
	// Keep leaves the files and directories in place.
	Keep bool
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// UsageError is a wrong command line.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usage is the command's argument synopsis.
const Usage = "-op create_write|open_read|rename|delete|mkdirs|fileStatus|all [-threads T] [-ops N] [-filesPerDir P] [-baseDir DIR] [-keep]"

// ParseArgs reads the command line into a Config (without Addr, Addrs
// and User).
// -files, -dirs and -numberOfFiles are accepted for -ops, -keepResults for
// -keep.
func ParseArgs(args []string) (Config, error) {
	c := Config{Threads: 1, Ops: 1000, FilesPerDir: DefaultFilesPerDir, BaseDir: DefaultBaseDir}
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", &UsageError{Msg: a + " needs a value"}
			}
			i++
			return args[i], nil
		}
		number := func() (int, error) {
			v, err := value()
			if err != nil {
				return 0, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return 0, &UsageError{Msg: fmt.Sprintf("%s %q: want a number >= 1", a, v)}
			}
			return n, nil
		}
		var err error
		switch a {
		case "-op":
			c.Op, err = value()
		case "-threads":
			c.Threads, err = number()
		case "-ops", "-files", "-dirs", "-numberOfFiles":
			c.Ops, err = number()
		case "-filesPerDir", "-dirsPerDir":
			c.FilesPerDir, err = number()
		case "-baseDir":
			c.BaseDir, err = value()
		case "-keep", "-keepResults":
			c.Keep = true
		default:
			return c, &UsageError{Msg: "unknown argument " + strconv.Quote(a)}
		}
		if err != nil {
			return c, err
		}
	}
	if c.Op == "" {
		return c, &UsageError{Msg: "no operation: -op is required"}
	}
	if _, err := opsOf(c.Op); err != nil {
		return c, err
	}
	return c, nil
}

// opsOf returns the operations op names, in order.
func opsOf(op string) ([]string, error) {
	if op == OpAll {
		return AllOps, nil
	}
	if a, ok := aliases[strings.ToLower(op)]; ok {
		op = a
	}
	if slices.Contains(AllOps, op) {
		return []string{op}, nil
	}
	return nil, &UsageError{Msg: fmt.Sprintf("unknown operation %q (want %s or all)", op, strings.Join(AllOps, ", "))}
}

// Result is the measurement of one operation.
type Result struct {
	Op          string
	Threads     int
	FilesPerDir int
	// Latencies of the operations executed, sorted.
	Latencies []time.Duration
	// Elapsed is from the start of the first thread to the end of the
	// last.
	Elapsed time.Duration
}

// NumOps is the number of operations executed.
func (r *Result) NumOps() int { return len(r.Latencies) }

// OpsPerSec is operations over the elapsed time.
func (r *Result) OpsPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(len(r.Latencies)) / r.Elapsed.Seconds()
}

// Average is the mean latency.
func (r *Result) Average() time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	var sum time.Duration
	for _, l := range r.Latencies {
		sum += l
	}
	return sum / time.Duration(len(r.Latencies))
}

// Percentile is the nearest-rank p-th percentile latency (0 < p <= 100).
func (r *Result) Percentile(p float64) time.Duration {
	n := len(r.Latencies)
	if n == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(n))) - 1
	return r.Latencies[min(max(i, 0), n-1)]
}

// ms formats a duration in milliseconds with three decimals.
func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }

// Lines is the report of the operation in NNThroughputBenchmark's form
// (printResults: the inputs, then printStats), with the latency
// percentiles added. Elapsed Time is in whole ms and Ops per sec is
// printed as a Java double, as Hadoop prints them (the rate is computed
// from the exact elapsed time, Hadoop's from whole ms); Average Time and
// the percentiles are ms with three decimals (Hadoop's Average Time is
// whole ms, 0 for any fast NameNode).
func (r *Result) Lines() []string {
	what, per := "nrFiles", "nrFilesPerDir"
	if r.Op == OpMkdirs {
		what, per = "nrDirs", "nrDirsPerDir"
	}
	return []string{
		"--- " + r.Op + " inputs ---",
		fmt.Sprintf("%s = %d", what, r.NumOps()),
		fmt.Sprintf("nrThreads = %d", r.Threads),
		fmt.Sprintf("%s = %d", per, r.FilesPerDir),
		"--- " + r.Op + " stats  ---",
		fmt.Sprintf("# operations: %d", r.NumOps()),
		fmt.Sprintf("Elapsed Time: %d", r.Elapsed.Milliseconds()),
		" Ops per sec: " + javaDouble(r.OpsPerSec()),
		"Average Time: " + ms(r.Average()),
		" Latency p50: " + ms(r.Percentile(50)),
		" Latency p90: " + ms(r.Percentile(90)),
		" Latency p99: " + ms(r.Percentile(99)),
		" Latency max: " + ms(r.Percentile(100)),
	}
}

// SummaryHeader and SummaryLine are the table printed after all
// operations: one line per operation, times in ms.
const SummaryHeader = "op             threads      ops   elapsed ms        ops/s     avg ms     p50 ms     p90 ms     p99 ms     max ms"

// SummaryLine is r's row of the summary table.
func (r *Result) SummaryLine() string {
	return fmt.Sprintf("%-12s %9d %8d %12d %12.1f %10s %10s %10s %10s %10s", r.Op, r.Threads, r.NumOps(), r.Elapsed.Milliseconds(), r.OpsPerSec(),
		ms(r.Average()), ms(r.Percentile(50)), ms(r.Percentile(90)), ms(r.Percentile(99)), ms(r.Percentile(100)))
}

// javaDouble formats f as Java's Double.toString: the shortest decimal
// that reads back as f, with at least one fraction digit, in scientific
// notation ("1.0E7") below 10^-3 and from 10^7 on.
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// opsPerThread spreads n operations over t threads as
// NNThroughputBenchmark.benchmark does: thread i gets the remaining
// operations divided by the remaining threads, at least one while any
// remain.
func opsPerThread(n, t int) []int {
	out := make([]int, t)
	scheduled := 0
	for i := 0; i < t && scheduled < n; i++ {
		out[i] = max((n-scheduled)/(t-i), 1)
		scheduled += out[i]
	}
	return out
}

// bench is one run's state.
type bench struct {
	cfg     Config
	clients []*hdfs.Client
	per     []int // operations per thread
	base    string
	log     io.Writer
	// suffix is appended to file names once they are renamed.
	suffix string
	// filesExist says the benchmark files exist (with suffix).
	filesExist bool
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "INFO nnbench: "+format+"\n", args...)
}

// sub is a directory directly under the base directory.
func (b *bench) sub(kind string) string { return strings.TrimSuffix(b.base, "/") + "/" + kind }

func (b *bench) threadDir(kind string, t int) string {
	return fmt.Sprintf("%s/t%d", b.sub(kind), t)
}

func (b *bench) file(t, j int) string {
	return fmt.Sprintf("%s/d%d/f%d%s", b.threadDir("files", t), j/b.cfg.FilesPerDir, j, b.suffix)
}

func (b *bench) dir(t, j int) string {
	return fmt.Sprintf("%s/d%d/dir%d", b.threadDir("dirs", t), j/b.cfg.FilesPerDir, j)
}

// Run runs the benchmark, printing each operation's report to out as it
// finishes and the summary table at the end, and returns the results. On
// an error it stops, cleans up (unless Keep) and returns the error with
// the results so far.
func Run(ctx context.Context, cfg Config, out io.Writer) ([]*Result, error) {
	ops, err := opsOf(cfg.Op)
	if err != nil {
		return nil, err
	}
	if cfg.Addr == "" && len(cfg.Addrs) == 0 {
		return nil, errors.New("nnbench: no NameNode address")
	}
	if cfg.User == "" {
		cfg.User = fs.CurrentUser()
	}
	cfg.Threads = max(cfg.Threads, 1)
	if cfg.Ops < 1 {
		cfg.Ops = 1000
	}
	if cfg.FilesPerDir < 1 {
		cfg.FilesPerDir = DefaultFilesPerDir
	}
	if cfg.Replication == 0 {
		cfg.Replication = 3
	}
	if cfg.BlockSize == 0 {
		cfg.BlockSize = 128 << 20
	}
	if cfg.BaseDir == "" {
		cfg.BaseDir = DefaultBaseDir
	}
	b := &bench{cfg: cfg, per: opsPerThread(cfg.Ops, cfg.Threads), log: cfg.Log}
	if b.log == nil {
		b.log = io.Discard
	}
	b.base = cfg.BaseDir
	if !path.IsAbs(b.base) {
		b.base = path.Join("/user", cfg.User, b.base)
	}
	b.base = path.Clean(b.base)
	for i := 0; i < cfg.Threads; i++ {
		c, err := hdfs.New(hdfs.Options{Addr: cfg.Addr, Addrs: cfg.Addrs, User: cfg.User, Umask: cfg.Umask, Replication: cfg.Replication, BlockSize: cfg.BlockSize})
		if err != nil {
			return nil, err
		}
		defer c.Close()
		b.clients = append(b.clients, c)
	}

	created, err := b.prepare(ctx, ops)
	if created != "" && !cfg.Keep {
		defer b.cleanup(created)
	}
	if err != nil {
		return nil, err
	}
	var results []*Result
	for _, op := range ops {
		r, err := b.runOp(ctx, op)
		if err != nil {
			return results, err
		}
		results = append(results, r)
		fmt.Fprintln(out, strings.Join(r.Lines(), "\n"))
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, SummaryHeader)
	for _, r := range results {
		fmt.Fprintln(out, r.SummaryLine())
	}
	return results, nil
}

// prepare connects every client (untimed), removes leftovers and makes
// the per-thread directories. It returns what cleanup must delete: the
// topmost directory the run creates, or the base directory's files and
// dirs subdirectories (as "base/{files,dirs}") when the base existed.
func (b *bench) prepare(ctx context.Context, ops []string) (created string, err error) {
	c := b.clients[0]
	// The topmost missing ancestor of base is what the run creates.
	p := b.base
	for p != "/" {
		if _, err := c.Stat(ctx, p); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("nnbench: %s: %w", p, err)
		}
		created = p
		p = path.Dir(p)
	}
	if created == "" {
		created = b.sub("{files,dirs}")
		for _, kind := range []string{"files", "dirs"} {
			d := b.sub(kind)
			if err := c.Delete(ctx, d, true); err == nil {
				b.logf("removed %s left by an earlier run", d)
			} else if !errors.Is(err, os.ErrNotExist) {
				return created, fmt.Errorf("nnbench: %w", err)
			}
		}
	}
	kinds := []string{"files"}
	if slices.Contains(ops, OpMkdirs) {
		kinds = append(kinds, "dirs")
	}
	b.logf("preparing %s with %d threads", b.base, b.cfg.Threads)
	// Connect every client and make its directories, untimed.
	_, err = b.phase(ctx, "prepare", func(c *hdfs.Client, t, _ int) error {
		for _, kind := range kinds {
			for k := 0; k*b.cfg.FilesPerDir < max(b.per[t], 1); k++ {
				d := fmt.Sprintf("%s/d%d", b.threadDir(kind, t), k)
				if err := c.Mkdirs(ctx, d, 0); err != nil {
					return err
				}
			}
		}
		return nil
	}, onePerThread(b.cfg.Threads))
	return created, err
}

func onePerThread(t int) []int {
	out := make([]int, t)
	for i := range out {
		out[i] = 1
	}
	return out
}

// cleanup deletes what the run created, with a fresh context so that an
// interrupted run still cleans up.
func (b *bench) cleanup(created string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	targets := []string{created}
	if created == b.sub("{files,dirs}") {
		targets = []string{b.sub("files"), b.sub("dirs")}
	}
	for _, p := range targets {
		if err := b.clients[0].Delete(ctx, p, true); err != nil && !errors.Is(err, os.ErrNotExist) {
			b.logf("cleanup: %v", err)
		} else if err == nil {
			b.logf("deleted %s", p)
		}
	}
}

// createFiles makes the benchmark files, untimed.
func (b *bench) createFiles(ctx context.Context) error {
	b.logf("creating %d files (untimed)", b.cfg.Ops)
	_, err := b.phase(ctx, "create", func(c *hdfs.Client, t, j int) error { return createEmpty(ctx, c, b.file(t, j)) }, b.per)
	if err == nil {
		b.filesExist = true
	}
	return err
}

func createEmpty(ctx context.Context, c *hdfs.Client, p string) error {
	w, err := c.CreateFile(ctx, p, fs.CreateOptions{})
	if err != nil {
		return err
	}
	return w.Close()
}

// runOp measures op, creating the files it needs first.
func (b *bench) runOp(ctx context.Context, op string) (*Result, error) {
	if op != OpMkdirs && op != OpCreateWrite && !b.filesExist {
		if err := b.createFiles(ctx); err != nil {
			return nil, err
		}
	}
	var f func(c *hdfs.Client, t, j int) error
	switch op {
	case OpMkdirs:
		f = func(c *hdfs.Client, t, j int) error { return c.Mkdirs(ctx, b.dir(t, j), 0) }
	case OpCreateWrite:
		if b.filesExist {
			// Only reachable if create_write is asked twice; start anew.
			return nil, errors.New("nnbench: files exist already")
		}
		f = func(c *hdfs.Client, t, j int) error { return createEmpty(ctx, c, b.file(t, j)) }
	case OpFileStatus:
		f = func(c *hdfs.Client, t, j int) error {
			st, err := c.Stat(ctx, b.file(t, j))
			if err == nil && st.IsDir {
				err = fmt.Errorf("%s is a directory", st.Path)
			}
			return err
		}
	case OpOpenRead:
		f = func(c *hdfs.Client, t, j int) error {
			_, err := c.BlockLocations(ctx, b.file(t, j))
			return err
		}
	case OpRename:
		f = func(c *hdfs.Client, t, j int) error {
			src := b.file(t, j)
			return c.Rename2(ctx, src, src+".r", false)
		}
	case OpDelete:
		f = func(c *hdfs.Client, t, j int) error { return c.Delete(ctx, b.file(t, j), false) }
	default:
		return nil, fmt.Errorf("nnbench: unknown operation %q", op)
	}
	b.logf("starting %d %s(s) on %d threads", b.cfg.Ops, op, b.cfg.Threads)
	r, err := b.phase(ctx, op, f, b.per)
	if err != nil {
		return nil, err
	}
	switch op {
	case OpCreateWrite:
		b.filesExist = true
	case OpRename:
		b.suffix += ".r"
	case OpDelete:
		b.filesExist = false
	}
	return r, nil
}

// phase runs f(client of t, t, j) for j < per[t] on one goroutine per
// thread, all released at once, timing each call. The first error stops
// every thread.
func (b *bench) phase(ctx context.Context, name string, f func(c *hdfs.Client, t, j int) error, per []int) (*Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lat := make([][]time.Duration, len(per))
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	startCh := make(chan struct{})
	for t := range per {
		lat[t] = make([]time.Duration, 0, per[t])
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-startCh
			c := b.clients[t]
			for j := 0; j < per[t]; j++ {
				if ctx.Err() != nil {
					return
				}
				s := time.Now()
				err := f(c, t, j)
				d := time.Since(s)
				if err != nil {
					once.Do(func() {
						firstErr = fmt.Errorf("nnbench: %s (thread %d, op %d): %w", name, t, j, err)
						cancel()
					})
					return
				}
				lat[t] = append(lat[t], d)
			}
		}()
	}
	start := time.Now()
	close(startCh)
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		return nil, firstErr
	}
	r := &Result{Op: name, Threads: len(per), FilesPerDir: b.cfg.FilesPerDir, Elapsed: elapsed}
	for _, l := range lat {
		r.Latencies = append(r.Latencies, l...)
	}
	slices.Sort(r.Latencies)
	return r, nil
}
