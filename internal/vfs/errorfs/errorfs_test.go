package errorfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/vfs"
)

func create(t *testing.T, fsys vfs.FS, path string) vfs.File {
	t.Helper()
	f, err := vfs.Create(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestNthWriteUnderDirFailsWithENOSPC(t *testing.T) {
	root := t.TempDir()
	full, other := filepath.Join(root, "full"), filepath.Join(root, "other")
	fsys := Wrap(nil)
	for _, d := range []string{full, other} {
		if err := fsys.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	in := fsys.Inject(Rule{Ops: OpWrite, Path: Under(full), After: 2, Times: 1, Err: syscall.ENOSPC})
	f := create(t, fsys, filepath.Join(full, "a"))
	g := create(t, fsys, filepath.Join(other, "b"))
	for i := 1; i <= 4; i++ {
		if _, err := g.Write([]byte("x")); err != nil {
			t.Fatalf("write %d outside the dir: %v", i, err)
		}
		_, err := f.Write([]byte("y"))
		switch {
		case i == 3 && !errors.Is(err, syscall.ENOSPC):
			t.Fatalf("third write under the dir: %v, want ENOSPC", err)
		case i != 3 && err != nil:
			t.Fatalf("write %d under the dir: %v", i, err)
		}
		if i == 3 {
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Op != "write" || pe.Path != filepath.Join(full, "a") {
				t.Fatalf("error %#v does not name the write and the file", err)
			}
		}
	}
	if in.Seen() != 4 || in.Hits() != 1 {
		t.Fatalf("seen %d hits %d, want 4 and 1", in.Seen(), in.Hits())
	}
	if b, _ := os.ReadFile(filepath.Join(full, "a")); string(b) != "yyy" {
		t.Fatalf("file holds %q: the failed write reached it", b)
	}
}

func TestSyncFailsForEverWithTimesZero(t *testing.T) {
	dir := t.TempDir()
	fsys := Wrap(vfs.Default)
	fsys.Inject(Rule{Ops: OpSync, Err: syscall.EIO})
	f := create(t, fsys, filepath.Join(dir, "x"))
	for i := range 3 {
		if err := f.Sync(); !errors.Is(err, syscall.EIO) {
			t.Fatalf("sync %d: %v, want EIO", i, err)
		}
	}
	if err := vfs.SyncDir(fsys, dir); !errors.Is(err, syscall.EIO) {
		t.Fatalf("directory sync: %v, want EIO", err)
	}
	if _, err := f.Write([]byte("a")); err != nil {
		t.Fatalf("write under a sync rule: %v", err)
	}
	fsys.Clear()
	if err := f.Sync(); err != nil {
		t.Fatalf("sync after Clear: %v", err)
	}
}

func TestShortWriteTearsThenFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x")
	fsys := Wrap(nil)
	fsys.Inject(Rule{Ops: OpWrite, ShortWrite: 3, Times: 1})
	f := create(t, fsys, path)
	n, err := f.WriteAt([]byte("abcdefgh"), 2)
	if n != 3 || !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("torn WriteAt = %d, %v; want 3, ErrShortWrite", n, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "\x00\x00abc" {
		t.Fatalf("file holds %q, want the first 3 bytes at offset 2", b)
	}
	fsys.Inject(Rule{Ops: OpWrite, ShortWrite: 1, Err: syscall.ENOSPC})
	if n, err := f.Write([]byte("zz")); n != 1 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("torn Write = %d, %v; want 1, ENOSPC", n, err)
	}
}

func TestLatencyUsesSleep(t *testing.T) {
	var slept []time.Duration
	fsys := Wrap(nil)
	fsys.Sleep = func(d time.Duration) { slept = append(slept, d) }
	dir := t.TempDir()
	fsys.Inject(Rule{Ops: OpOpen | OpRead, Path: Under(dir), Latency: 5 * time.Millisecond})
	fsys.Inject(Rule{Ops: OpRead, Latency: time.Millisecond, Times: 1})
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := vfs.Open(fsys, filepath.Join(dir, "x"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 4)
	for range 2 {
		if _, err := f.ReadAt(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	want := []time.Duration{5 * time.Millisecond, 6 * time.Millisecond, 5 * time.Millisecond}
	if len(slept) != len(want) {
		t.Fatalf("slept %v, want %v", slept, want)
	}
	for i := range want {
		if slept[i] != want[i] {
			t.Fatalf("slept %v, want %v", slept, want)
		}
	}
}

func TestFSOperationsAndRemove(t *testing.T) {
	dir := t.TempDir()
	fsys := Wrap(nil)
	boom := errors.New("boom")
	cases := []struct {
		op Op
		do func() error
	}{
		{OpOpen, func() error { _, err := vfs.Create(fsys, filepath.Join(dir, "n")); return err }},
		{OpStat, func() error { _, err := fsys.Stat(dir); return err }},
		{OpReadDir, func() error { _, err := fsys.ReadDir(dir); return err }},
		{OpMkdir, func() error { return fsys.MkdirAll(filepath.Join(dir, "d"), 0o755) }},
		{OpMkdir, func() error { return fsys.Mkdir(filepath.Join(dir, "e"), 0o755) }},
		{OpRename, func() error { return fsys.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "b")) }},
		{OpRemove, func() error { return fsys.Remove(filepath.Join(dir, "a")) }},
		{OpRemove, func() error { return fsys.RemoveAll(filepath.Join(dir, "a")) }},
		{OpStatfs, func() error { _, err := fsys.Statfs(dir); return err }},
		{OpLock, func() error { _, err := fsys.Lock(filepath.Join(dir, "lock")); return err }},
	}
	for _, c := range cases {
		in := fsys.Inject(Rule{Ops: c.op, Err: boom})
		if err := c.do(); !errors.Is(err, boom) {
			t.Errorf("%v: %v, want the injected error", c.op, err)
		}
		in.Remove()
		if err := c.do(); errors.Is(err, boom) {
			t.Errorf("%v after Remove still fails", c.op)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "n")); err != nil {
		t.Fatalf("open after Remove did not reach the disk: %v", err)
	}
}

func TestCloseFailsButReleases(t *testing.T) {
	fsys := Wrap(nil)
	f, err := vfs.Create(fsys, filepath.Join(t.TempDir(), "x"))
	if err != nil {
		t.Fatal(err)
	}
	fsys.Inject(Rule{Ops: OpClose, Err: syscall.EIO})
	if err := f.Close(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Close = %v, want EIO", err)
	}
	if _, err := f.(*File).inner.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("inner file still open after a failed Close: %v", err)
	}
}

// TestConcurrentHitsAreExact checks that racing goroutines see exactly
// Times hits after exactly After passes.
func TestConcurrentHitsAreExact(t *testing.T) {
	dir := t.TempDir()
	fsys := Wrap(nil)
	in := fsys.Inject(Rule{Ops: OpWrite, After: 10, Times: 25, Err: syscall.ENOSPC})
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for g := range 8 {
		f := create(t, fsys, filepath.Join(dir, string(rune('a'+g))))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if _, err := f.Write([]byte("x")); err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if failed != 25 || in.Hits() != 25 || in.Seen() != 400 {
		t.Fatalf("failed %d, hits %d, seen %d; want 25, 25, 400", failed, in.Hits(), in.Seen())
	}
}

func TestUnder(t *testing.T) {
	m := Under("/a/b")
	for p, want := range map[string]bool{"/a/b": true, "/a/b/c": true, "/a/b/": true, "/a/bc": false, "/a": false} {
		if m(p) != want {
			t.Errorf("Under(/a/b)(%q) = %v", p, !want)
		}
	}
	if !Under("/")("/x") || !Exact("/a/./b")("/a/b") || Exact("/a")("/a/b") {
		t.Error("Under(/) or Exact wrong")
	}
}
