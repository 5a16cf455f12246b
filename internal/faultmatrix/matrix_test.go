package faultmatrix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.RunMain(m)) }

// long says whether the long form runs (STRATA_FAULTMATRIX_LONG=1).
func long() bool { return os.Getenv("STRATA_FAULTMATRIX_LONG") != "" }

// scale is the data multiplier: 1 in the quick form, 8 in the long one.
func scale() int {
	if long() {
		return 8
	}
	return 1
}

// rounds is how many times a kill scenario repeats its fault.
func rounds() int {
	if long() {
		return 3
	}
	return 1
}

// row is one scenario's line of the matrix.
type row struct {
	t        *testing.T
	name     string
	Running  string
	Acked    string
	Survived string
	Recover  string
	start    time.Time
}

var outMu sync.Mutex

// record starts scenario name's row; it is logged (and appended to
// $STRATA_FAULTMATRIX_OUT) when the test ends, with its outcome.
func record(t *testing.T, name string) *row {
	r := &row{t: t, name: name, start: time.Now()}
	t.Cleanup(func() {
		result := "pass"
		switch {
		case t.Failed():
			result = "FAIL"
		case t.Skipped():
			result = "known bug (skipped)"
			if r.Survived == "" {
				return // skipped before it ran (no root, ...): no row
			}
		}
		line := fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", r.name, r.Running, r.Acked, r.Survived, r.Recover, result)
		t.Logf("matrix %s (%.1fs)", line, time.Since(r.start).Seconds())
		if p := os.Getenv("STRATA_FAULTMATRIX_OUT"); p != "" {
			outMu.Lock()
			defer outMu.Unlock()
			f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err == nil {
				fmt.Fprintln(f, line)
				f.Close()
			}
		}
	})
	return r
}

// since formats the time from t0 for the Recover column.
func since(t0 time.Time) string { return secs(time.Since(t0)) }

// secs formats a duration in seconds, two digits below 10 s.
func secs(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// knownBug reports a daemon bug this scenario exposed and that is known
// (docs/RELIABILITY.md lists it): the test skips naming it, or fails with
// STRATA_FAULTMATRIX_STRICT=1.
func knownBug(t *testing.T, r *row, bug string, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf("known bug (%s): %s", bug, fmt.Sprintf(format, args...))
	if r != nil && r.Survived == "" {
		r.Survived = "known bug: " + bug
	} else if r != nil {
		r.Survived += "; known bug: " + bug
	}
	if os.Getenv("STRATA_FAULTMATRIX_STRICT") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// content is the bytes of an n-byte file at path p: a function of p, so
// a check needs only the path and the length.
func content(p string, n int) []byte {
	h := fnv.New64a()
	h.Write([]byte(p))
	x := h.Sum64() | 1
	b := make([]byte, n)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}

func client(t *testing.T, c *testcluster.Processes) *hdfs.Client {
	t.Helper()
	cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: c.Superuser()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func writeFile(ctx context.Context, cl *hdfs.Client, p string, b []byte, repl int, bs int64) error {
	w, err := cl.CreateFile(ctx, p, fs.CreateOptions{CreateParent: true, Replication: repl, BlockSize: bs, Overwrite: true})
	if err != nil {
		return err
	}
	for off := 0; off < len(b); off += 64 << 10 {
		if _, err := w.Write(b[off:min(len(b), off+64<<10)]); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

func readFile(ctx context.Context, cl *hdfs.Client, p string) ([]byte, error) {
	f, err := cl.OpenFile(ctx, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// files is a workload's acknowledged files: path → length, the content
// being content(path, length).
type files struct {
	mu      sync.Mutex
	acked   map[string]int
	order   []string
	failed  int
	lastErr error
	errs    []error
}

func newFiles() *files { return &files{acked: map[string]int{}} }

// write writes one file and records it if its close was acknowledged.
func (w *files) write(ctx context.Context, cl *hdfs.Client, p string, n, repl int, bs int64) error {
	err := writeFile(ctx, cl, p, content(p, n), repl, bs)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.failed++
		w.lastErr = err
		w.errs = append(w.errs, err)
		return err
	}
	if _, ok := w.acked[p]; !ok {
		w.order = append(w.order, p)
	}
	w.acked[p] = n
	return nil
}

// loop writes prefix/000000, prefix/000001, ... of n bytes until stop is
// closed (or ctx ends), pausing pause between files; done is closed when
// it returns.
func (w *files) loop(ctx context.Context, cl *hdfs.Client, prefix string, n, repl int, bs int64, pause time.Duration, stop <-chan struct{}) (done chan struct{}) {
	done = make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			default:
			}
			wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			w.write(wctx, cl, fmt.Sprintf("%s/%06d", prefix, i), n, repl, bs)
			cancel()
			time.Sleep(pause)
		}
	}()
	return done
}

func (w *files) paths() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.order...)
}

func (w *files) count() (acked, failed int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked), w.failed
}

func (w *files) bytes() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var n int64
	for _, l := range w.acked {
		n += int64(l)
	}
	return n
}

// verify reads every acknowledged file back and fails the test for any
// that is missing or differs; it returns how many it checked.
func (w *files) verify(t *testing.T, ctx context.Context, cl *hdfs.Client) int {
	t.Helper()
	w.mu.Lock()
	acked := make(map[string]int, len(w.acked))
	for p, n := range w.acked {
		acked[p] = n
	}
	w.mu.Unlock()
	bad := 0
	for p, n := range acked {
		got, err := readFile(ctx, cl, p)
		if err != nil || !bytes.Equal(got, content(p, n)) {
			bad++
			if bad <= 5 {
				t.Errorf("acknowledged file %s (%d bytes): read %d bytes, err %v, equal %v", p, n, len(got), err, bytes.Equal(got, content(p, n)))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d acknowledged files lost or damaged", bad, len(acked))
	}
	return len(acked)
}

// waitAllReplicated waits until every acknowledged file has n good
// replicas of every block.
func (w *files) waitAllReplicated(c *testcluster.Processes, n int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for _, p := range w.paths() {
		c.WaitReplicated(p, n, time.Until(deadline))
	}
}

// mib formats a byte count.
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// errText is err's message, shortened for a table cell.
func errText(err error) string {
	if err == nil {
		return "none"
	}
	s := err.Error()
	if len(s) > 120 {
		s = "..." + s[len(s)-110:]
	}
	return strings.ReplaceAll(s, "|", "/")
}

var errStop = errors.New("stopped")

// lastFailure is ": <the last write error>" for a table cell, "" when
// no write failed.
func (w *files) lastFailure() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lastErr == nil {
		return ""
	}
	return ": " + errText(w.lastErr)
}

// closeRecoveryBug is how a DataNode refuses a streaming pipeline
// recovery of a replica it already finalized: a client that recovers a
// close-stage failure that way (Hadoop's uses PIPELINE_CLOSE_RECOVERY
// once every packet is acknowledged, as strata's does) fails the write.
const closeRecoveryBug = "it is not being written"

// checkKnownFailures ends a scenario whose workload met a fixed bug again:
// a write that failed although enough DataNodes were live. Called last,
// after every other check.
func (w *files) checkKnownFailures(t *testing.T, r *row) {
	t.Helper()
	w.mu.Lock()
	n := 0
	var last error
	for _, err := range w.errs {
		if strings.Contains(err.Error(), closeRecoveryBug) {
			n++
			last = err
		}
	}
	w.mu.Unlock()
	if n > 0 {
		r.Survived = "close-stage pipeline recovery refused"
		t.Fatalf(
			"%d write(s) failed although live DataNodes held the block: a close-stage pipeline failure was recovered with PIPELINE_SETUP_STREAMING_RECOVERY, which a DataNode that finalized the replica refuses (it takes PIPELINE_CLOSE_RECOVERY): %v", n, last)
	}
}
