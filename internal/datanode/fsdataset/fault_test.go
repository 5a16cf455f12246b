package fsdataset

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/storage"
)

func TestVolumeDiesDuringWrite(t *testing.T) {
	fsys := &faultFS{}
	e := newEnv(t, 2, func(c *Config) {
		c.FS = fsys
		c.FailedVolumesTolerated = 1
	})
	a, b := e.ds.vols[0], e.ds.vols[1]
	data := randBytes(1, 300000)
	for id, v := range map[uint64]*volume{1: a, 2: b} {
		w, err := e.ds.CreateRBW(Block{ID: id, GenStamp: 1}, 0, v.storageID)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		if _, err := w.Finalize(); err != nil {
			t.Fatal(err)
		}
	}
	w, err := e.ds.CreateRBW(Block{ID: 3, GenStamp: 1}, 0, a.storageID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data[:1000]); err != nil {
		t.Fatal(err)
	}
	e.events.take()

	fsys.kill(a.path)
	_, err = w.Write(data) // fills the buffer: the write-out fails
	if err == nil {
		err = w.Flush()
	}
	if err == nil || !strings.Contains(err.Error(), "blk_3_1") {
		t.Fatalf("write on a dead volume: %v", err)
	}
	// Reads on the dead volume fail too.
	if _, err := e.ds.OpenForRead(Block{ID: 1, GenStamp: 1}); err == nil {
		t.Fatal("read from a dead volume succeeded")
	}

	errs := e.ds.CheckVolumes()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), a.path) {
		t.Fatalf("CheckVolumes = %v", errs)
	}
	if err := e.ds.Failed(); err != nil {
		t.Fatalf("one failure tolerated, Failed = %v", err)
	}
	vols := e.ds.Volumes()
	if !vols[0].Failed || vols[1].Failed || vols[0].StorageID != a.storageID {
		t.Fatalf("Volumes %+v", vols)
	}
	for _, id := range []uint64{1, 3} {
		if _, ok := e.ds.Get(id); ok {
			t.Errorf("blk_%d still served from the failed volume", id)
		}
	}
	evs := e.events.take()
	if len(evs) != 2 || evs[0].Kind != Deleted || evs[1].Kind != Deleted {
		t.Fatalf("events %+v", evs)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("writer on the failed volume still writes")
	}
	if _, err := w.Finalize(); err == nil {
		t.Fatal("writer on the failed volume finalized")
	}
	// The other volume keeps serving, and takes the new replicas.
	e.checkReplica(2, data)
	w, err = e.ds.CreateRBW(Block{ID: 4, GenStamp: 1}, storage.Disk, "")
	if err != nil {
		t.Fatal(err)
	}
	if w.Info().StorageID != b.storageID {
		t.Fatal("new replica placed on the failed volume")
	}
	w.Write(data)
	w.Finalize()
	e.checkReplica(4, data)
	rep := e.ds.Report()
	if _, ok := rep[a.storageID]; ok || len(rep[b.storageID]) != 2 {
		t.Fatalf("Report %+v", rep)
	}
	_, err = e.ds.CreateRBW(Block{ID: 5, GenStamp: 1}, 0, a.storageID)
	mustErrIs(t, err, ErrNoVolume)
	if errs := e.ds.CheckVolumes(); len(errs) != 0 {
		t.Fatalf("second check: %v", errs)
	}
	if !strings.Contains(e.log.String(), "volume taken out of service") {
		t.Error("failure not logged")
	}

	// Restart with the volume still dead: it counts as failed at Open.
	e.reopen()
	if v := e.ds.Volumes(); !v[0].Failed || v[1].Failed || e.ds.Failed() != nil {
		t.Fatalf("after restart: %+v", v)
	}
	e.checkReplica(2, data)
}

func TestTooManyFailedVolumes(t *testing.T) {
	fsys := &faultFS{}
	e := newEnv(t, 2, func(c *Config) { c.FS = fsys })
	fsys.kill(e.cfg.Volumes[1].Path)
	if errs := e.ds.CheckVolumes(); len(errs) != 1 {
		t.Fatalf("CheckVolumes = %v", errs)
	}
	err := e.ds.Failed()
	mustErrIs(t, err, ErrTooManyFailed)
	if !strings.Contains(err.Error(), e.cfg.Volumes[1].Path) || !strings.Contains(err.Error(), "tolerated is 0") {
		t.Fatalf("Failed = %v", err)
	}
	e.ds.Close()
	_, err = Open(e.cfg)
	mustErrIs(t, err, ErrTooManyFailed)

	// -1: as long as one volume works.
	e.cfg.FailedVolumesTolerated = -1
	e.open()
	fsys.kill(e.cfg.Volumes[0].Path)
	e.ds.CheckVolumes()
	mustErrIs(t, e.ds.Failed(), ErrTooManyFailed)
}

// TestFailNthOp fails each mutating file operation (write, sync, rename,
// ...) of a replica's life in turn, then restarts: what comes back is
// always a verified prefix of the data, or the whole finalized replica,
// never damage and never two replicas.
func TestFailNthOp(t *testing.T) {
	data := randBytes(1, 200000)
	for n := 1; ; n++ {
		fsys := &faultFS{}
		e := newEnv(t, 1, func(c *Config) {
			c.FS = fsys
			c.Logger = slog.New(slog.DiscardHandler)
		})
		fsys.mu.Lock()
		fsys.ops, fsys.failAt = 0, n
		fsys.mu.Unlock()
		b := Block{ID: 1, GenStamp: 1}
		err := func() error {
			w, err := e.ds.CreateRBW(b, 0, "")
			if err != nil {
				return err
			}
			for _, piece := range [][]byte{data[:70001], data[70001:140000], data[140000:]} {
				if _, err := w.Write(piece); err != nil {
					return err
				}
				if err := w.Flush(); err != nil {
					return err
				}
			}
			_, err = w.Finalize()
			return err
		}()
		fsys.mu.Lock()
		fired := fsys.ops >= n
		fsys.failAt = 0
		fsys.mu.Unlock()
		if fired != (err != nil) {
			t.Fatalf("fault at op %d: fired %v, error %v", n, fired, err)
		}
		e.reopen()
		info, ok := e.ds.Get(1)
		if ok {
			if err := e.ds.Verify(info.Block); err != nil {
				t.Fatalf("fault at op %d: %v", n, err)
			}
			rr, err := e.ds.OpenForRead(info.Block)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, rr.Length())
			rr.ReadAt(got, 0)
			rr.Close()
			if !bytes.Equal(got, data[:len(got)]) {
				t.Fatalf("fault at op %d: replica is not a prefix of the data", n)
			}
			if info.State == Finalized && len(got) != len(data) {
				t.Fatalf("fault at op %d: finalized with %d bytes", n, len(got))
			}
		}
		t.Logf("fault at op %d: %v → after restart: present %v, %s, %d bytes", n, err, ok, info.State, info.NumBytes)
		if rep := e.ds.Report(); len(rep[e.ds.vols[0].storageID]) > 1 {
			t.Fatalf("fault at op %d: %d replicas", n, len(rep))
		}
		if !fired {
			if !ok || info.State != Finalized {
				t.Fatal("no fault, yet no finalized replica")
			}
			return
		}
		if n > 100 {
			t.Fatal("too many writes")
		}
	}
}

func TestDirectIO(t *testing.T) {
	data := randBytes(1, 3<<20+777)
	run := func(t *testing.T, e *env) bool {
		w, err := e.ds.CreateRBW(Block{ID: 1, GenStamp: 1}, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		sizes := []int{7, 1000, 100000, 1<<20 + 3}
		for off, i := 0, 0; off < len(data)-5000; i++ {
			n := min(sizes[i%len(sizes)], len(data)-5000-off)
			if _, err := w.Write(data[off : off+n]); err != nil {
				t.Fatal(err)
			}
			off += n
			if i%3 == 0 {
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				e.checkRead(Block{ID: 1, GenStamp: 1}, data[:off])
			}
		}
		if _, err := w.Finalize(); err != nil {
			t.Fatal(err)
		}
		e.checkReplica(1, data[:len(data)-5000])
		// Append from an unaligned length.
		w, err = e.ds.Append(Block{ID: 1, GenStamp: 1, NumBytes: int64(len(data) - 5000)}, 2)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data[len(data)-5000 : len(data)-100])
		w.Flush()
		w.Write(data[len(data)-100:])
		if _, err := w.Finalize(); err != nil {
			t.Fatal(err)
		}
		e.checkReplica(1, data)
		return !e.ds.vols[0].noDirect.Load()
	}
	t.Run("tempdir", func(t *testing.T) {
		e := newEnv(t, 1, func(c *Config) { c.DirectIO = true })
		t.Logf("direct I/O on %s: used %v", e.cfg.Volumes[0].Path, run(t, e))
	})
	t.Run("shm", func(t *testing.T) {
		dir, err := os.MkdirTemp("/dev/shm", "fsdataset")
		if err != nil {
			t.Skip("no /dev/shm")
		}
		defer os.RemoveAll(dir)
		e := newEnv(t, 1, func(c *Config) {
			c.DirectIO = true
			c.Volumes[0].Path = dir
		})
		t.Logf("direct I/O on tmpfs %s: used %v", dir, run(t, e))
	})
	for _, mode := range []string{"refused-open", "refused-write"} {
		t.Run(mode, func(t *testing.T) {
			fsys := &faultFS{noDirect: mode == "refused-open", directWrite: mode == "refused-write"}
			e := newEnv(t, 1, func(c *Config) {
				c.DirectIO = true
				c.FS = fsys
			})
			if run(t, e) {
				t.Fatal("direct I/O still used")
			}
			if n := strings.Count(e.log.String(), "direct I/O refused"); n != 1 {
				t.Fatalf("fallback logged %d times", n)
			}
		})
	}
}

func TestAlignedBuffers(t *testing.T) {
	for _, size := range []int{directBufSize, bufferedBufSize} {
		for range 3 {
			b := getBuf(size)
			if len(b) != 0 || cap(b) != size {
				t.Fatalf("getBuf(%d): len %d cap %d", size, len(b), cap(b))
			}
			b = b[:1]
			if p := fmt.Sprintf("%p", &b[0]); p == "" {
				t.Fatal()
			}
			putBuf(b)
		}
	}
}

func BenchmarkWrite(b *testing.B) {
	const replica, piece = 128 << 20, 64 << 10
	buf := randBytes(1, piece)
	for _, bc := range []struct {
		name          string
		direct, flush bool
	}{
		{"buffered", false, false},
		{"direct", true, false},
		{"buffered-flush-per-write", false, true},
		{"direct-flush-per-write", true, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := newEnv(b, 1, func(c *Config) {
				c.DirectIO = bc.direct
				c.Logger = slog.New(slog.DiscardHandler)
			})
			b.SetBytes(replica)
			id := uint64(0)
			for b.Loop() {
				id++
				w, err := e.ds.CreateRBW(Block{ID: id, GenStamp: 1}, 0, "")
				if err != nil {
					b.Fatal(err)
				}
				for range replica / piece {
					if _, err := w.Write(buf); err != nil {
						b.Fatal(err)
					}
					if bc.flush {
						if err := w.Flush(); err != nil {
							b.Fatal(err)
						}
					}
				}
				if _, err := w.Finalize(); err != nil {
					b.Fatal(err)
				}
				if err := e.ds.Delete(Block{ID: id, GenStamp: 1}); err != nil {
					b.Fatal(err)
				}
			}
			if bc.direct && e.ds.vols[0].noDirect.Load() {
				b.Log("direct I/O refused by this file system: buffered figures")
			}
		})
	}
}
