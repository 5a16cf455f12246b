package editlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// logBuf collects slog output for assertions.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newLogger() (*slog.Logger, *logBuf) {
	lb := &logBuf{}
	return slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug})), lb
}

func formatted(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "name")
	if _, err := Format(dir, false); err != nil {
		t.Fatal(err)
	}
	return dir
}

type rec struct {
	txid uint64
	data string
}

type loaded struct {
	imageTxID uint64
	image     string
	imageSeen bool
	recs      []rec
}

// openLoad opens and loads dir, collecting what Load delivers.
func openLoad(t testing.TB, dir string, opts Options) (*Log, loaded, error) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger, _ = newLogger()
	}
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	var got loaded
	err = l.Load(func(txid uint64, r io.Reader) error {
		b, err := io.ReadAll(r)
		got.imageTxID, got.image, got.imageSeen = txid, string(b), true
		return err
	}, func(txid uint64, b []byte) error {
		got.recs = append(got.recs, rec{txid, string(b)})
		return nil
	})
	return l, got, err
}

func mustOpenLoad(t testing.TB, dir string, opts Options) (*Log, loaded) {
	t.Helper()
	l, got, err := openLoad(t, dir, opts)
	if err != nil {
		l.Close()
		t.Fatalf("Load: %v", err)
	}
	return l, got
}

func payload(i uint64) string {
	if i%10 == 7 {
		return "" // empty records are legal
	}
	return fmt.Sprintf("rec-%d-%s", i, bytes.Repeat([]byte{'x'}, int(i%37)))
}

func appendSync(t testing.TB, l *Log, from, to uint64) {
	t.Helper()
	for i := from; i <= to; i++ {
		txid, err := l.Append([]byte(payload(i)))
		if err != nil {
			t.Fatal(err)
		}
		if txid != i {
			t.Fatalf("Append returned txid %d, want %d", txid, i)
		}
	}
	if err := l.Sync(context.Background(), to); err != nil {
		t.Fatal(err)
	}
}

func checkRecs(t testing.TB, got []rec, from, to uint64) {
	t.Helper()
	want := int(to - from + 1)
	if from > to {
		want = 0
	}
	if len(got) != want {
		t.Fatalf("replayed %d records, want %d (%d..%d)", len(got), want, from, to)
	}
	for i, r := range got {
		tx := from + uint64(i)
		if r.txid != tx || r.data != payload(tx) {
			t.Fatalf("record %d: got (%d, %q), want (%d, %q)", i, r.txid, r.data, tx, payload(tx))
		}
	}
}

func segPath(dir string, start uint64) string {
	return filepath.Join(dir, currentDir, inProgressName(start))
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// recordOffsets returns the offset of every record in a segment file and
// the end of the last one (where preallocated zeros may start).
func recordOffsets(t testing.TB, path string) (offs []int64, end int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	off := int64(segmentHeaderSize)
	for off+recordHeaderSize <= int64(len(b)) && !allZero(b[off:off+recordHeaderSize]) {
		offs = append(offs, off)
		off += recordHeaderSize + int64(be.Uint32(b[off:]))
	}
	return offs, off
}

func dataEnd(t testing.TB, path string) int64 {
	t.Helper()
	_, end := recordOffsets(t, path)
	return end
}

func listNames(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, currentDir))
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range ents {
		n = append(n, e.Name())
	}
	return n
}

func has(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// faultFile fails the Nth write or fsync counted across all files sharing
// its counters (1-based; 0 = never).
type faults struct {
	writes, syncs         atomic.Int64
	failWrite, failSync   int64
	errWrite, errSyncFail error
}

type faultFile struct {
	segmentFile
	f *faults
}

func (ff *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if n := ff.f.writes.Add(1); n == ff.f.failWrite {
		// Half a write, then the error, as a full disk might do.
		w, _ := ff.segmentFile.WriteAt(p[:len(p)/2], off)
		return w, ff.f.errWrite
	}
	return ff.segmentFile.WriteAt(p, off)
}

func (ff *faultFile) Sync() error {
	if n := ff.f.syncs.Add(1); n == ff.f.failSync {
		return ff.f.errSyncFail
	}
	return ff.segmentFile.Sync()
}

func (f *faults) wrap(sf segmentFile) segmentFile { return &faultFile{sf, f} }

var errInjected = errors.New("injected I/O error")

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))
