package spill

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stratafs/strata/internal/vfs"
	"github.com/stratafs/strata/internal/vfs/errorfs"
)

// fullFS makes statfs report the file system under one directory full.
type fullFS struct {
	vfs.FS
	dir atomic.Pointer[string]
}

func (f *fullFS) Statfs(p string) (vfs.DiskUsage, error) {
	du, err := f.FS.Statfs(p)
	if d := f.dir.Load(); d != nil && errorfs.Under(*d)(p) {
		return vfs.DiskUsage{Total: du.Total}, nil
	}
	return du, err
}

// TestLocalDirFull fills the local dir (ENOSPC from errorfs) at each place
// a map task writes: a spill, an intermediate merge pass, the final
// merge's file.out and its index. As Hadoop's MapTask, the task then fails
// — the dir was chosen when the file was created, and a write failing
// later is not moved — with an error that wraps ENOSPC and names the file
// in the dir; Close removes every file the attempt made; nothing panics.
func TestLocalDirFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	recs := randRecords(rng, 5000, 2, 0, 16, 64) // ~25 spills: merge passes at factor 10
	for _, tc := range []struct {
		name string
		path func(attempt string) func(string) bool
	}{
		{"spill", func(a string) func(string) bool { return errorfs.Exact(filepath.Join(a, spillName(3))) }},
		{"merge pass", func(string) func(string) bool {
			return func(p string) bool { return strings.HasPrefix(filepath.Base(p), "merge-") }
		}},
		{"output", func(a string) func(string) bool { return errorfs.Exact(filepath.Join(a, OutputFile)) }},
		{"index", func(a string) func(string) bool { return errorfs.Exact(filepath.Join(a, OutputIndexFile)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			attempt := filepath.Join(dir, "attempt_m_0")
			fsys := errorfs.Wrap(nil)
			in := fsys.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: tc.path(attempt), Err: syscall.ENOSPC})
			c, err := NewCollector(Config{Partitions: 2, SortBytes: 16 << 10, LocalDirs: []string{dir}, Name: "attempt_m_0", FS: fsys})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if err = c.Collect(r.part, r.key, r.value); err != nil {
					break
				}
			}
			if _, cerr := c.Close(); err == nil {
				err = cerr
			} else if cerr == nil {
				t.Fatal("Close succeeded after a failed Collect")
			}
			if in.Hits() == 0 {
				t.Fatal("the fault never fired")
			}
			if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), attempt) {
				t.Fatalf("task error %v; want ENOSPC naming a file in %s", err, attempt)
			}
			if files := listFiles(t, dir); len(files) != 0 {
				t.Fatalf("files left after the failure: %v", files)
			}
		})
	}
}

// TestLocalDirFullMovesToOther gives the task two local dirs, one of them
// full (statfs shows no room, writes fail with ENOSPC): as Hadoop's
// LocalDirAllocator, every spill and the output are placed in the dir
// with room, and the task succeeds.
func TestLocalDirFullMovesToOther(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	recs := randRecords(rng, 3000, 2, 0, 16, 64)
	full, ok := t.TempDir(), t.TempDir()
	efs := errorfs.Wrap(nil)
	in := efs.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: errorfs.Under(full), Err: syscall.ENOSPC})
	fsys := &fullFS{FS: efs}
	fsys.dir.Store(&full)
	c, err := NewCollector(Config{Partitions: 2, SortBytes: 16 << 10, LocalDirs: []string{full, ok}, Name: "attempt_m_1", FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	collectAll(t, c, recs)
	out, err := c.Close()
	if err != nil {
		t.Fatalf("Close with one full dir: %v", err)
	}
	if !errorfs.Under(ok)(out.Path) || in.Hits() != 0 {
		t.Fatalf("output %s, %d writes to the full dir", out.Path, in.Hits())
	}
	if got := readOutput(t, out, None); len(got) != len(recs) {
		t.Fatalf("output has %d records, want %d", len(got), len(recs))
	}
}
