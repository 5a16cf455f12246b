package fsdataset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stratafs/strata/internal/storage"
)

func TestRoundTrip(t *testing.T) {
	e := newEnv(t, 1, nil)
	for i, n := range []int{0, 1, 511, 512, 513, 1<<20 + 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			id := uint64(1073741825 + i)
			data := randBytes(uint64(n), n)
			info := e.write(id, 1001, data)
			want := ReplicaInfo{Block: Block{ID: id, GenStamp: 1001, NumBytes: int64(n)}, State: Finalized,
				StorageID: e.ds.Volumes()[0].StorageID, StorageType: storage.Disk}
			if info != want {
				t.Fatalf("Finalize = %+v, want %+v", info, want)
			}
			if got, _ := e.ds.Get(id); got != want {
				t.Fatalf("Get = %+v", got)
			}
			e.checkReplica(id, data)
			// Files are where Hadoop puts them.
			r := e.replica(id)
			wantDir := filepath.Join(r.vol.path, "current", "finalized",
				fmt.Sprintf("subdir%d", (id>>16)&31), fmt.Sprintf("subdir%d", (id>>8)&31))
			for _, name := range []string{fmt.Sprintf("blk_%d", id), fmt.Sprintf("blk_%d_1001.meta", id)} {
				if _, err := os.Stat(filepath.Join(wantDir, name)); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	// Everything survives a restart.
	e.reopen()
	for i, n := range []int{0, 1, 511, 512, 513, 1<<20 + 1} {
		e.checkReplica(uint64(1073741825+i), randBytes(uint64(n), n))
	}
}

func TestWritePiecesGiveSameMeta(t *testing.T) {
	data := randBytes(7, 3*100000+1234)
	for _, mode := range []string{"pieces", "pieces+flush", "pieces+sync"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t, 1, nil)
			w, err := e.ds.CreateRBW(Block{ID: 1, GenStamp: 1}, storage.Disk, "")
			if err != nil {
				t.Fatal(err)
			}
			sizes := []int{7, 1000, 100000}
			for off, i := 0, 0; off < len(data); i++ {
				n := min(sizes[i%len(sizes)], len(data)-off)
				if k, err := w.Write(data[off : off+n]); err != nil || k != n {
					t.Fatalf("Write = %d, %v", k, err)
				}
				off += n
				if w.BytesWritten() != int64(off) {
					t.Fatalf("BytesWritten %d, want %d", w.BytesWritten(), off)
				}
				switch mode {
				case "pieces+flush":
					err = w.Flush()
				case "pieces+sync":
					err = w.Sync()
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if _, err := w.Finalize(); err != nil {
				t.Fatal(err)
			}
			e.checkReplica(1, data)
		})
	}
}

func TestFlushThenContinueMidChunk(t *testing.T) {
	e := newEnv(t, 1, nil)
	data := randBytes(3, 1100)
	w, err := e.ds.CreateRBW(Block{ID: 9, GenStamp: 5}, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data[:700])
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	// On disk: two checksums, the second of the 188-byte partial chunk.
	gotData, gotMeta := e.files(9)
	if !bytes.Equal(gotData, data[:700]) || !bytes.Equal(gotMeta, expectedMeta(data[:700], 512)) {
		t.Fatalf("after flush: data %d bytes, meta %x", len(gotData), gotMeta)
	}
	if info, _ := e.ds.Get(9); info.NumBytes != 700 || info.State != RBW {
		t.Fatalf("Get = %+v", info)
	}
	e.checkRead(Block{ID: 9, GenStamp: 5}, data[:700])
	w.Write(data[700:])
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	e.checkReplica(9, data)
}

func TestAppend(t *testing.T) {
	for _, first := range []int{1000, 1024, 0, 511} {
		t.Run(fmt.Sprint(first), func(t *testing.T) {
			e := newEnv(t, 1, nil)
			data := randBytes(11, first+1500)
			e.write(1, 100, data[:first])
			e.events.take()
			w, err := e.ds.Append(Block{ID: 1, GenStamp: 100, NumBytes: int64(first)}, 101)
			if err != nil {
				t.Fatal(err)
			}
			if info, _ := e.ds.Get(1); info.State != RBW || info.GenStamp != 101 || info.NumBytes != int64(first) {
				t.Fatalf("after Append: %+v", info)
			}
			// A reader of the old generation stamp may read the newer replica.
			e.checkRead(Block{ID: 1, GenStamp: 100}, data[:first])
			w.Write(data[first : first+700])
			w.Flush()
			w.Write(data[first+700:])
			info, err := w.Finalize()
			if err != nil {
				t.Fatal(err)
			}
			if info.GenStamp != 101 || info.NumBytes != int64(len(data)) {
				t.Fatalf("Finalize = %+v", info)
			}
			e.checkReplica(1, data)
			old := filepath.Join(e.replica(1).vol.finDir(1), "blk_1_100.meta")
			if _, err := os.Stat(old); !os.IsNotExist(err) {
				t.Fatalf("old meta file still there: %v", err)
			}
			evs := e.events.take()
			if len(evs) != 2 || evs[0].Kind != Receiving || evs[1].Kind != Received || evs[1].Info.NumBytes != int64(len(data)) {
				t.Fatalf("events %+v", evs)
			}
			e.reopen()
			e.checkReplica(1, data)
		})
	}
}

func TestAppendRefusals(t *testing.T) {
	e := newEnv(t, 1, nil)
	data := randBytes(1, 1000)
	e.write(1, 100, data)
	_, err := e.ds.Append(Block{ID: 1, GenStamp: 99, NumBytes: 1000}, 101)
	mustErrIs(t, err, ErrGenStamp)
	// An older new stamp is refused; an equal one is allowed (some clients
	// append without a new stamp), see TestAppendSameGenStamp.
	_, err = e.ds.Append(Block{ID: 1, GenStamp: 100, NumBytes: 1000}, 99)
	mustErrIs(t, err, ErrGenStamp)
	_, err = e.ds.Append(Block{ID: 1, GenStamp: 100, NumBytes: 999}, 101)
	mustErrIs(t, err, ErrLength)
	_, err = e.ds.Append(Block{ID: 2, GenStamp: 100}, 101)
	mustErrIs(t, err, ErrReplicaNotFound)
	w, _ := e.ds.CreateRBW(Block{ID: 3, GenStamp: 1}, 0, "")
	_, err = e.ds.Append(Block{ID: 3, GenStamp: 1}, 2)
	mustErrIs(t, err, ErrState)
	w.Abort()

	// A damaged partial last chunk is not appended to.
	r := e.replica(1)
	f, _ := os.OpenFile(r.dataPath(), os.O_WRONLY, 0)
	f.WriteAt([]byte{data[990] ^ 1}, 990)
	f.Close()
	_, err = e.ds.Append(Block{ID: 1, GenStamp: 100, NumBytes: 1000}, 101)
	var ce *CorruptReplicaError
	if !errors.As(err, &ce) || ce.Offset != 512 {
		t.Fatalf("Append of a damaged replica: %v", err)
	}
	if info, _ := e.ds.Get(1); info.State != Finalized || info.GenStamp != 100 {
		t.Fatalf("replica changed: %+v", info)
	}
}

func TestRecoverRBW(t *testing.T) {
	e := newEnv(t, 1, nil)
	data := randBytes(5, 3000)
	b := Block{ID: 7, GenStamp: 10}
	w, err := e.ds.CreateRBW(b, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Flush()

	_, err = e.ds.RecoverRBW(b, 9, 1500)
	mustErrIs(t, err, ErrGenStamp)
	_, err = e.ds.RecoverRBW(Block{ID: 7, GenStamp: 11}, 12, 1500)
	mustErrIs(t, err, ErrGenStamp)

	// Recovery stops the old writer, truncates mid-chunk, renames the meta.
	w.Write([]byte("unflushed")) // the stop flushes it: valid length 3009
	_, err = e.ds.RecoverRBW(b, 11, 3010)
	mustErrIs(t, err, ErrLength)
	if _, err := w.Write([]byte("x")); !errors.Is(err, ErrWriterClosed) {
		t.Fatalf("old writer after recovery: %v", err)
	}
	w2, err := e.ds.RecoverRBW(b, 11, 1500)
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := e.ds.Get(7); info.GenStamp != 11 || info.NumBytes != 1500 || info.State != RBW {
		t.Fatalf("after recovery: %+v", info)
	}
	gotData, gotMeta := e.files(7)
	if !bytes.Equal(gotData, data[:1500]) || !bytes.Equal(gotMeta, expectedMeta(data[:1500], 512)) {
		t.Fatal("files not truncated to 1500 bytes")
	}
	if _, err := os.Stat(filepath.Join(e.replica(7).vol.rbw, "blk_7_10.meta")); !os.IsNotExist(err) {
		t.Fatal("old meta file still there")
	}
	e.checkRead(Block{ID: 7, GenStamp: 11}, data[:1500])
	tail := randBytes(6, 100)
	w2.Write(tail)
	if _, err := w2.Finalize(); err != nil {
		t.Fatal(err)
	}
	e.checkReplica(7, append(data[:1500:1500], tail...))

	// Recovery of a finalized replica is refused.
	_, err = e.ds.RecoverRBW(Block{ID: 7, GenStamp: 11}, 12, 10)
	mustErrIs(t, err, ErrState)
}

func TestRecoverRWRAfterRestart(t *testing.T) {
	e := newEnv(t, 1, nil)
	data := randBytes(8, 5000)
	w, _ := e.ds.CreateRBW(Block{ID: 4, GenStamp: 1}, 0, "")
	w.Write(data)
	e.reopen() // Close stops and flushes the writer
	info, ok := e.ds.Get(4)
	if !ok || info.State != RWR || info.NumBytes != 5000 {
		t.Fatalf("after restart: %+v %v", info, ok)
	}
	e.checkRead(info.Block, data)
	w2, err := e.ds.RecoverRBW(info.Block, 2, 4096)
	if err != nil {
		t.Fatal(err)
	}
	w2.Write(data[4096:])
	if _, err := w2.Finalize(); err != nil {
		t.Fatal(err)
	}
	e.checkReplica(4, data)
}

func TestUpdateFinalizedGenStamp(t *testing.T) {
	e := newEnv(t, 1, nil)
	data := randBytes(2, 777)
	e.write(5, 20, data)
	e.events.take()
	mustErrIs(t, e.ds.UpdateFinalizedGenStamp(Block{ID: 5, GenStamp: 20, NumBytes: 776}, 21), ErrLength)
	mustErrIs(t, e.ds.UpdateFinalizedGenStamp(Block{ID: 5, GenStamp: 21, NumBytes: 777}, 22), ErrGenStamp)
	if err := e.ds.UpdateFinalizedGenStamp(Block{ID: 5, GenStamp: 20, NumBytes: 777}, 21); err != nil {
		t.Fatal(err)
	}
	if evs := e.events.take(); len(evs) != 1 || evs[0].Kind != Received || evs[0].Info.GenStamp != 21 {
		t.Fatalf("events %+v", evs)
	}
	_, err := e.ds.OpenForRead(Block{ID: 5, GenStamp: 22})
	mustErrIs(t, err, ErrGenStamp)
	e.reopen()
	if info, _ := e.ds.Get(5); info.GenStamp != 21 || info.State != Finalized {
		t.Fatalf("after restart: %+v", info)
	}
	e.checkReplica(5, data)
}

func TestReadWhileWriting(t *testing.T) {
	e := newEnv(t, 1, nil)
	data := randBytes(9, 1500)
	b := Block{ID: 3, GenStamp: 1}
	w, _ := e.ds.CreateRBW(b, 0, "")
	w.Write(data[:1000])
	e.checkRead(b, nil) // nothing flushed yet
	w.Flush()
	rr, err := e.ds.OpenForRead(b)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	w.Write(data[1000:])
	w.Flush() // overwrites the checksum slot of chunk 1 on disk
	if rr.Length() != 1000 {
		t.Fatalf("reader length %d", rr.Length())
	}
	sums, err := rr.Checksums(0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sums, expectedMeta(data[:1000], 512)[metaHeaderLen:]) {
		t.Fatal("reader's checksum of its partial last chunk changed under it")
	}
	e.checkRead(b, data) // a new reader sees everything flushed
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	// The old reader keeps working after the files moved.
	got := make([]byte, 1000)
	if n, err := rr.ReadAt(got, 0); n != 1000 || (err != nil && n != 1000) || !bytes.Equal(got, data[:1000]) {
		t.Fatalf("old reader: %d, %v", n, err)
	}
}

// TestConcurrentReaders reads a replica while it is written and flushed, and
// checks every snapshot against its checksums (run with -race).
func TestConcurrentReaders(t *testing.T) {
	e := newEnv(t, 1, nil)
	data := randBytes(10, 600000)
	b := Block{ID: 77, GenStamp: 1}
	w, err := e.ds.CreateRBW(b, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := e.ds.Verify(b); err != nil {
					t.Error(err)
					return
				}
				rr, err := e.ds.OpenForRead(b)
				if err != nil {
					t.Error(err)
					return
				}
				got := make([]byte, rr.Length())
				if n, _ := rr.ReadAt(got, 0); n != len(got) || !bytes.Equal(got, data[:n]) {
					t.Errorf("read %d bytes, mismatch", n)
				}
				rr.Close()
			}
		})
	}
	for off := 0; off < len(data); {
		n := min(3333, len(data)-off)
		w.Write(data[off : off+n])
		off += n
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	close(done)
	wg.Wait()
	e.checkReplica(77, data)
}

func TestCreateRefusals(t *testing.T) {
	e := newEnv(t, 1, nil)
	w, _ := e.ds.CreateRBW(Block{ID: 1, GenStamp: 1}, 0, "")
	_, err := e.ds.CreateRBW(Block{ID: 1, GenStamp: 2}, 0, "")
	mustErrIs(t, err, ErrReplicaExists)
	if want := "blk_1_2"; err == nil || !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Fatalf("error %v does not name %s", err, want)
	}
	w.Finalize()
	_, err = e.ds.CreateRBW(Block{ID: 1, GenStamp: 2}, 0, "")
	mustErrIs(t, err, ErrReplicaExists)
	_, err = e.ds.CreateRBW(Block{ID: 2, GenStamp: 2}, storage.SSD, "")
	mustErrIs(t, err, ErrNoVolume)
	_, err = e.ds.CreateRBW(Block{ID: 2, GenStamp: 2}, 0, "DS-nope")
	mustErrIs(t, err, ErrNoVolume)
}

func TestDeleteAndAbort(t *testing.T) {
	e := newEnv(t, 1, nil)
	data := randBytes(4, 2000)
	e.write(1, 5, data)
	mustErrIs(t, e.ds.Delete(Block{ID: 1, GenStamp: 4}), ErrGenStamp)
	mustErrIs(t, e.ds.Delete(Block{ID: 2, GenStamp: 4}), ErrReplicaNotFound)
	e.events.take()
	r := e.replica(1)
	if err := e.ds.Delete(Block{ID: 1, GenStamp: 6}); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.ds.Get(1); ok {
		t.Fatal("deleted replica still there")
	}
	if _, err := os.Stat(r.dataPath()); !os.IsNotExist(err) {
		t.Fatal("data file still there")
	}
	if evs := e.events.take(); len(evs) != 1 || evs[0].Kind != Deleted || evs[0].Info.ID != 1 {
		t.Fatalf("events %+v", evs)
	}

	// Deleting a replica being written stops its writer.
	w, _ := e.ds.CreateRBW(Block{ID: 2, GenStamp: 1}, 0, "")
	w.Write(data)
	if err := e.ds.Delete(Block{ID: 2, GenStamp: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); !errors.Is(err, ErrWriterClosed) {
		t.Fatalf("Write after Delete: %v", err)
	}
	if _, err := w.Finalize(); !errors.Is(err, ErrWriterClosed) {
		t.Fatalf("Finalize after Delete: %v", err)
	}

	// Abort removes the replica; Close keeps it RBW.
	w, _ = e.ds.CreateRBW(Block{ID: 3, GenStamp: 1}, 0, "")
	w.Write(data)
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.ds.Get(3); ok {
		t.Fatal("aborted replica still there")
	}
	ents, _ := os.ReadDir(e.replica0Vol().rbw)
	if len(ents) != 0 {
		t.Fatalf("rbw not empty after abort: %v", ents)
	}
	w, _ = e.ds.CreateRBW(Block{ID: 4, GenStamp: 1}, 0, "")
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if info, _ := e.ds.Get(4); info.State != RBW || info.NumBytes != 2000 {
		t.Fatalf("closed writer's replica: %+v", info)
	}
	if _, err := w.Finalize(); !errors.Is(err, ErrWriterClosed) {
		t.Fatalf("Finalize after Close: %v", err)
	}
	// Abort after Finalize leaves the replica alone.
	w, _ = e.ds.CreateRBW(Block{ID: 5, GenStamp: 1}, 0, "")
	w.Finalize()
	w.Abort()
	if _, ok := e.ds.Get(5); !ok {
		t.Fatal("Abort after Finalize removed the replica")
	}
}

func (e *env) replica0Vol() *volume { return e.ds.vols[0] }

func TestVerifyFindsFlippedByte(t *testing.T) {
	e := newEnv(t, 1, nil)
	data := randBytes(12, 5000)
	e.write(1, 1, data)
	b := Block{ID: 1, GenStamp: 1}
	if err := e.ds.Verify(b); err != nil {
		t.Fatal(err)
	}
	r := e.replica(1)
	for _, tc := range []struct {
		path     string
		off      int64
		wantOff  int64
		describe string
	}{
		{r.dataPath(), 2600, 2560, "data byte in chunk 5"},
		{r.dataPath(), 4999, 4608, "last byte (partial chunk 9)"},
		{r.dataPath(), 0, 0, "first byte"},
		{r.metaPath(), metaHeaderLen + 4*3 + 2, 3 * 512, "checksum of chunk 3"},
	} {
		f, _ := os.OpenFile(tc.path, os.O_RDWR, 0)
		var one [1]byte
		f.ReadAt(one[:], tc.off)
		f.WriteAt([]byte{one[0] ^ 0x40}, tc.off)
		err := e.ds.Verify(b)
		f.WriteAt(one[:], tc.off)
		f.Close()
		var ce *CorruptReplicaError
		if !errors.As(err, &ce) || ce.Offset != tc.wantOff || ce.Block.ID != 1 {
			t.Fatalf("%s: Verify = %v, want corruption at %d", tc.describe, err, tc.wantOff)
		}
		mustErrIs(t, err, ErrCorrupt)
	}
	if err := e.ds.Verify(b); err != nil {
		t.Fatal(err)
	}
	// A meta file of the wrong length.
	os.Truncate(r.metaPath(), metaHeaderLen+4)
	var ce *CorruptReplicaError
	if err := e.ds.Verify(b); !errors.As(err, &ce) || ce.Reason == "" {
		t.Fatalf("short meta: %v", err)
	}
}

func TestReportAndVolumes(t *testing.T) {
	e := newEnv(t, 2, func(c *Config) { c.Volumes[1].Type = storage.SSD })
	e.write(1, 1, randBytes(1, 1000))
	w, _ := e.ds.CreateRBW(Block{ID: 2, GenStamp: 1}, storage.SSD, "")
	w.Write(randBytes(2, 600))
	w.Flush()
	vols := e.ds.Volumes()
	if len(vols) != 2 || vols[0].Type != storage.Disk || vols[1].Type != storage.SSD {
		t.Fatalf("Volumes %+v", vols)
	}
	if vols[0].NumBlocks != 1 || vols[0].DfsUsed != 1000+metaLen(1000, 512) {
		t.Fatalf("disk volume %+v", vols[0])
	}
	if vols[1].NumBlocks != 1 || vols[1].DfsUsed != 600+metaLen(600, 512) {
		t.Fatalf("ssd volume %+v", vols[1])
	}
	for _, v := range vols {
		if v.Capacity <= 0 || v.Remaining <= 0 || v.Remaining > v.Capacity || v.Failed || len(v.StorageID) != 3+36 {
			t.Fatalf("volume %+v", v)
		}
	}
	rep := e.ds.Report()
	if len(rep) != 2 {
		t.Fatalf("Report %+v", rep)
	}
	if l := rep[vols[0].StorageID]; len(l) != 1 || l[0].ID != 1 || l[0].State != Finalized {
		t.Fatalf("disk report %+v", l)
	}
	if l := rep[vols[1].StorageID]; len(l) != 1 || l[0].ID != 2 || l[0].State != RBW || l[0].NumBytes != 600 || l[0].StorageType != storage.SSD {
		t.Fatalf("ssd report %+v", l)
	}
	e.ds.Delete(Block{ID: 1, GenStamp: 1})
	if v := e.ds.Volumes()[0]; v.NumBlocks != 0 || v.DfsUsed != 0 {
		t.Fatalf("after delete %+v", v)
	}
}

func TestClosedDataset(t *testing.T) {
	e := newEnv(t, 1, nil)
	w, _ := e.ds.CreateRBW(Block{ID: 1, GenStamp: 1}, 0, "")
	e.ds.Close()
	if err := e.ds.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, ErrWriterClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
	_, err := e.ds.CreateRBW(Block{ID: 2, GenStamp: 1}, 0, "")
	mustErrIs(t, err, ErrClosed)
	_, err = e.ds.OpenForRead(Block{ID: 1, GenStamp: 1})
	mustErrIs(t, err, ErrClosed)
}

func TestBlockString(t *testing.T) {
	if s := (Block{ID: 1073741825, GenStamp: 1001}).String(); s != "blk_1073741825_1001" {
		t.Fatal(s)
	}
}

// TestRecoverAfterFailedWrite recovers a replica whose writer hit an I/O
// error: the valid length is recomputed from the files.
func TestRecoverAfterFailedWrite(t *testing.T) {
	fsys := &faultFS{}
	e := newEnv(t, 1, func(c *Config) { c.FS = fsys })
	data := randBytes(1, 200000)
	b := Block{ID: 1, GenStamp: 1}
	w, err := e.ds.CreateRBW(b, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data[:100000])
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fsys.mu.Lock()
	fsys.ops, fsys.failAt = 0, 2 // the meta write of the next write-out
	fsys.mu.Unlock()
	// The write-out happens in Write, on the write-behind goroutine or in
	// Flush (the data fits the buffer): Flush reports it in every case.
	w.Write(data[100000:])
	if err := w.Flush(); err == nil {
		t.Fatal("Flush after an I/O error succeeded")
	}
	if info, _ := e.ds.Get(1); info.NumBytes != 100000 {
		t.Fatalf("visible length moved past the error: %+v", info)
	}
	// Data reached the file beyond the checksums: only the verified
	// prefix counts.
	_, err = e.ds.RecoverRBW(b, 2, 160000)
	mustErrIs(t, err, ErrLength)
	w2, err := e.ds.RecoverRBW(b, 2, 100000)
	if err != nil {
		t.Fatal(err)
	}
	w2.Write(data[100000:])
	if _, err := w2.Finalize(); err != nil {
		t.Fatal(err)
	}
	e.checkReplica(1, data)
}

func TestConcurrentCheckAndClose(t *testing.T) {
	e := newEnv(t, 2, nil)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				if errs := e.ds.CheckVolumes(); len(errs) != 0 && !errors.Is(errs[0], ErrClosed) {
					t.Error(errs)
				}
			}
		})
	}
	for i := range 20 {
		wg.Go(func() {
			w, err := e.ds.CreateRBW(Block{ID: uint64(i), GenStamp: 1}, 0, "")
			if err != nil {
				return
			}
			w.Write(randBytes(uint64(i), 5000))
			w.Finalize()
		})
	}
	e.ds.Close()
	wg.Wait()
	e.open()
	for _, l := range e.ds.Report() {
		for _, r := range l {
			if err := e.ds.Verify(r.Block); err != nil {
				t.Error(err)
			}
		}
	}
}

// TestCloseRecoveryOfRBW: close recovery finalizes a replica that has all
// the data but never got the last packet.
func TestCloseRecoveryOfRBW(t *testing.T) {
	e := newEnv(t, 1, nil)
	data := randBytes(3, 2500)
	b := Block{ID: 8, GenStamp: 4}
	w, _ := e.ds.CreateRBW(b, 0, "")
	w.Write(data)
	w.Flush()
	mustErrIs(t, e.ds.UpdateFinalizedGenStamp(Block{ID: 8, GenStamp: 4, NumBytes: 2400}, 5), ErrLength)
	e.events.take()
	if err := e.ds.UpdateFinalizedGenStamp(Block{ID: 8, GenStamp: 4, NumBytes: 2500}, 5); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); !errors.Is(err, ErrWriterClosed) {
		t.Fatalf("writer after close recovery: %v", err)
	}
	info, _ := e.ds.Get(8)
	if info.State != Finalized || info.GenStamp != 5 || info.NumBytes != 2500 {
		t.Fatalf("after close recovery: %+v", info)
	}
	if evs := e.events.take(); len(evs) != 1 || evs[0].Kind != Received || evs[0].Info != info {
		t.Fatalf("events %+v", evs)
	}
	e.checkReplica(8, data)
	if ents, _ := os.ReadDir(e.ds.vols[0].rbw); len(ents) != 0 {
		t.Fatalf("rbw not empty: %v", ents)
	}
	e.reopen()
	e.checkReplica(8, data)
}

func TestAppendSameGenStamp(t *testing.T) {
	e := newEnv(t, 1, nil)
	data := randBytes(3, 700)
	e.write(1, 100, data)
	w, err := e.ds.Append(Block{ID: 1, GenStamp: 100, NumBytes: 700}, 100)
	if err != nil {
		t.Fatal(err)
	}
	more := randBytes(4, 300)
	if _, err := w.Write(more); err != nil {
		t.Fatal(err)
	}
	info, err := w.Finalize()
	if err != nil || info.GenStamp != 100 || info.NumBytes != 1000 {
		t.Fatalf("%+v %v", info, err)
	}
	if err := e.ds.Verify(Block{ID: 1, GenStamp: 100}); err != nil {
		t.Fatal(err)
	}
}

// TestWriteBehind streams replicas larger than several write-behind
// buffers and writeback windows, with and without direct I/O, in pieces
// that straddle buffers and chunks and with an hflush in the middle: the
// files are exactly the data and its checksums, and a flush makes all of
// it visible at once.
func TestWriteBehind(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			e := newEnv(t, 1, func(c *Config) { c.DirectIO = direct })
			data := randBytes(2, 3*writebackWindow+12345)
			w, err := e.ds.CreateRBW(Block{ID: 1, GenStamp: 1}, 0, "")
			if err != nil {
				t.Fatal(err)
			}
			flushed := false
			for off := 0; off < len(data); {
				n := min(len(data)-off, 70001)
				if _, err := w.Write(data[off : off+n]); err != nil {
					t.Fatal(err)
				}
				off += n
				if !flushed && off > writebackWindow+5 {
					flushed = true
					if err := w.Flush(); err != nil {
						t.Fatal(err)
					}
					if info, _ := e.ds.Get(1); info.NumBytes != int64(off) {
						t.Fatalf("after flush at %d: visible %d", off, info.NumBytes)
					}
				}
			}
			if _, err := w.Finalize(); err != nil {
				t.Fatal(err)
			}
			e.checkReplica(1, data)
		})
	}
}

// TestWriteBehindError fails a write made by the write-behind goroutine:
// a later Write or Finalize reports it, the replica is not finalized and
// its visible length stays where the last flush left it.
func TestWriteBehindError(t *testing.T) {
	fsys := &faultFS{}
	e := newEnv(t, 1, func(c *Config) { c.FS = fsys })
	data := randBytes(3, 8*bufferedBufSize)
	w, err := e.ds.CreateRBW(Block{ID: 1, GenStamp: 1}, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data[:1000])
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fsys.mu.Lock()
	fsys.ops, fsys.failAt = 0, 3 // the second buffer's data write
	fsys.mu.Unlock()
	var werr error
	for off := 1000; off < len(data) && werr == nil; off += 4096 {
		_, werr = w.Write(data[off:min(len(data), off+4096)])
	}
	if _, err := w.Finalize(); err == nil {
		t.Fatal("Finalize after a failed write-behind succeeded")
	}
	info, ok := e.ds.Get(1)
	if !ok {
		t.Fatal("replica gone")
	}
	if info.State == Finalized || info.NumBytes != 1000 {
		t.Fatalf("replica after the failure: %+v", info)
	}
	// Data first, then checksums: no checksum for a chunk the data file
	// does not hold (the failed buffer's checksums were not written).
	gotData, gotMeta := e.files(1)
	if sums := (int64(len(gotMeta)) - metaHeaderLen) / crcLen; sums > numChunks(int64(len(gotData)), DefaultBytesPerChecksum) {
		t.Fatalf("%d checksums for %d bytes of data", sums, len(gotData))
	}
}

// TestWriteVerified writes with the caller's checksums — chunk-aligned
// pieces, a partial last chunk continued by Write, a piece starting
// mid-chunk and one with another chunk size (both computed instead) —
// across write-behind buffers: the meta file is the one Write alone
// would make.
func TestWriteVerified(t *testing.T) {
	e := newEnv(t, 1, nil)
	data := randBytes(4, 3*bufferedBufSize+5000)
	w, err := e.ds.CreateRBW(Block{ID: 1, GenStamp: 1}, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	off := 0
	put := func(n int, verified bool, bpc int) {
		t.Helper()
		p := data[off : off+n]
		var err error
		if verified {
			_, err = w.WriteVerified(p, chunkSums(p, bpc), bpc)
		} else {
			_, err = w.Write(p)
		}
		if err != nil {
			t.Fatal(err)
		}
		off += n
	}
	for range 5 {
		put(64<<10, true, 512)
	}
	put(700, true, 512)  // ends mid-chunk
	put(100, false, 512) // continues that chunk
	put(4000, true, 512) // starts mid-chunk: computed
	put(512-off%512, false, 512)
	put(8192, true, 1024) // another chunk size: computed
	put(len(data)-off, true, 512)
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	e.checkReplica(1, data)
}

// chunkSums is the CRC32C of each bpc-byte chunk of p, as a packet
// carries them.
func chunkSums(p []byte, bpc int) []byte {
	var s []byte
	for len(p) > 0 {
		k := min(len(p), bpc)
		s = binary.BigEndian.AppendUint32(s, crc32c(p[:k]))
		p = p[k:]
	}
	return s
}

// TestRoomCommit fills the writer's buffers in place as the block
// receiver does — whole rooms, pieces of them, one without checksums
// (computed instead) — and checks the files; a closed writer lends no
// room and refuses a commit.
func TestRoomCommit(t *testing.T) {
	e := newEnv(t, 1, nil)
	data := randBytes(5, 5*bufferedBufSize+777)
	w, err := e.ds.CreateRBW(Block{ID: 1, GenStamp: 1}, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	for off, i := 0, 0; off < len(data); i++ {
		room := w.Room()
		if len(room) == 0 {
			t.Fatal("no room in an open writer")
		}
		n := min(len(room), len(data)-off, 64<<10+i*512)
		copy(room, data[off:off+n])
		sums := chunkSums(data[off:off+n], 512)
		if i == 3 {
			sums = nil
		}
		if _, err := w.CommitVerified(n, sums, 512); err != nil {
			t.Fatal(err)
		}
		off += n
	}
	if _, err := w.CommitVerified(bufferedBufSize+1, nil, 512); err == nil {
		t.Fatal("a commit past the room succeeded")
	}
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	e.checkReplica(1, data)
	if room := w.Room(); room != nil {
		t.Fatalf("a finalized writer lent %d bytes", len(room))
	}
	if _, err := w.CommitVerified(0, nil, 512); err == nil {
		t.Fatal("commit on a finalized writer succeeded")
	}
}
