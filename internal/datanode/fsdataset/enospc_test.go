package fsdataset

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/vfs"
	"github.com/stratafs/strata/internal/vfs/errorfs"
)

// fullFS reports the file system under dir as full, as statfs does once a
// disk has filled.
type fullFS struct {
	vfs.FS
	dir atomic.Pointer[string] // nil: nothing is full
}

func (f *fullFS) Statfs(p string) (DiskUsage, error) {
	du, err := f.FS.Statfs(p)
	if d := f.dir.Load(); d != nil && errorfs.Under(*d)(p) && err == nil {
		du.Free = 0
	}
	return du, err
}

// TestVolumeOutOfSpace fills one of two volumes under a replica being
// written: every write of a replica file in its rbw directory fails with
// ENOSPC (errorfs). The behaviour decided, as Hadoop's: the write fails
// for good with an error naming the block, the volume and ENOSPC; the
// replica is never finalized (Finalize fails, no file reaches finalized/)
// and Abort removes its files; ENOSPC is not a disk failure, so the
// volume stays in service (its disk check, a small write outside rbw,
// passes) and keeps serving its replicas; and once statfs shows it full,
// new replicas of its type go to the other volume (round-robin skips
// volumes without room), so the client's retry moves the write there.
func TestVolumeOutOfSpace(t *testing.T) {
	efs := errorfs.Wrap(OSFS{})
	ffs := &fullFS{FS: efs}
	e := newEnv(t, 2, func(c *Config) { c.FS = ffs })
	a, b := e.ds.vols[0], e.ds.vols[1]
	old := randBytes(7, 5000)
	w, err := e.ds.CreateRBW(Block{ID: 1, GenStamp: 1}, 0, a.storageID)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(old)
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}

	data := randBytes(8, 3<<20) // more than the writer buffers: it must write out
	// After 0: the new meta file's header write fails, so CreateRBW does;
	// After 1: a write-out of data fails mid-replica.
	for after := range 2 {
		in := efs.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: errorfs.Under(a.rbw), After: after, Err: syscall.ENOSPC})
		w, err := e.ds.CreateRBW(Block{ID: 2, GenStamp: 1}, 0, a.storageID)
		if err == nil {
			if _, err = w.Write(data); err == nil {
				_, err = w.Finalize()
			} else if _, ferr := w.Finalize(); ferr == nil {
				t.Fatal("Finalize succeeded after a failed write")
			}
			if info, ok := e.ds.Get(2); ok && info.State == Finalized {
				t.Fatal("half-written replica is finalized")
			}
			if aerr := w.Abort(); aerr != nil {
				t.Fatalf("Abort: %v", aerr)
			}
		} else if after != 0 {
			t.Fatalf("CreateRBW failed although its header write was let through: %v", err)
		}
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "blk_2_1") || !strings.Contains(err.Error(), a.path) {
			t.Fatalf("after %d: write to a full volume: %v; want ENOSPC naming blk_2_1 and %s", after, err, a.path)
		}
		if in.Hits() == 0 {
			t.Fatal("no write hit the full volume")
		}
		in.Remove()
		if _, ok := e.ds.Get(2); ok {
			t.Fatalf("after %d: failed replica still in the dataset", after)
		}
		filepath.WalkDir(a.path, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasPrefix(d.Name(), "blk_2") {
				t.Errorf("after %d: left behind: %s", after, p)
			}
			return nil
		})
	}
	efs.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: errorfs.Under(a.rbw), Err: syscall.ENOSPC})

	if errs := e.ds.CheckVolumes(); len(errs) != 0 {
		t.Fatalf("CheckVolumes took the full volume out: %v", errs)
	}
	if e.ds.Volumes()[0].Failed {
		t.Fatal("full volume marked failed")
	}
	e.checkReplica(1, old)

	// The disk now reports itself full: the retry lands on the other volume.
	ffs.dir.Store(&a.path)
	w, err = e.ds.CreateRBW(Block{ID: 2, GenStamp: 2, NumBytes: int64(len(data))}, storage.Disk, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Info().StorageID; got != b.storageID {
		t.Fatalf("retry placed on %s, want the volume with room %s", got, b.storageID)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	e.checkReplica(2, data)
	if _, err := os.Stat(a.path); err != nil {
		t.Fatal(err)
	}
}
