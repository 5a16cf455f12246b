package datanode

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/storage"
)

// TestCopyOnTruncate: the kept part of a replica becomes a new finalized
// replica, the source stays whole, a repeated command does nothing, and a
// corrupt source is not copied.
func TestCopyOnTruncate(t *testing.T) {
	ds, err := fsdataset.Open(fsdataset.Config{Volumes: []fsdataset.VolumeConfig{{Path: t.TempDir(), Type: storage.Disk}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	d := &DataNode{data: ds}
	data := make([]byte, 3000)
	for i := range data {
		data[i] = byte(i * 13)
	}
	src := fsdataset.Block{ID: 100, GenStamp: 1001}
	w, err := ds.CreateRBW(src, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	read := func(b fsdataset.Block) []byte {
		rr, err := ds.OpenForRead(b)
		if err != nil {
			t.Fatal(err)
		}
		defer rr.Close()
		got := make([]byte, rr.Length())
		if _, err := rr.ReadAt(got, 0); err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		return got
	}
	rc := &dnpb.RecoverCommand{Block: &dnpb.Replica{BlockId: proto.Uint64(100), GenStamp: proto.Uint64(1001)},
		NewGenStamp: proto.Uint64(1002), NewLength: proto.Int64(1500), NewBlockId: proto.Uint64(101)}
	for i := 0; i < 2; i++ { // the second time: already done
		if err := d.recoverReplica(rc); err != nil {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	if got := read(fsdataset.Block{ID: 101, GenStamp: 1002}); !bytes.Equal(got, data[:1500]) {
		t.Fatalf("copy has %d bytes", len(got))
	}
	if info, _ := ds.Get(101); info.State != fsdataset.Finalized || info.GenStamp != 1002 {
		t.Fatalf("copy %+v", info)
	}
	if got := read(src); !bytes.Equal(got, data) {
		t.Fatal("the source changed")
	}
	if err := ds.Verify(fsdataset.Block{ID: 101, GenStamp: 1002}); err != nil {
		t.Fatalf("copy's checksums: %v", err)
	}

	// Flip a byte of the source's data file in the first chunk.
	rr, err := ds.OpenForRead(src)
	if err != nil {
		t.Fatal(err)
	}
	path := rr.DataFile().Name()
	rr.Close()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{data[10] ^ 0xff}, 10); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rc.NewBlockId, rc.NewGenStamp = proto.Uint64(102), proto.Uint64(1003)
	var ce *fsdataset.CorruptReplicaError
	if err := d.recoverReplica(rc); !errors.As(err, &ce) {
		t.Fatalf("copy of a corrupt replica: %v", err)
	}
	if info, ok := ds.Get(102); ok {
		t.Fatalf("a failed copy left %+v", info)
	}
}

// TestCopyOnTruncateChecksTail: a corrupt byte in the chunk the copy
// ends inside (kept in part) is found, not copied; a copy command
// repeated while the first copy runs leaves that copy's replica alone.
func TestCopyOnTruncateChecksTail(t *testing.T) {
	ds, err := fsdataset.Open(fsdataset.Config{Volumes: []fsdataset.VolumeConfig{{Path: t.TempDir(), Type: storage.Disk}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	d := &DataNode{data: ds}
	data := bytes.Repeat([]byte("0123456789"), 300)
	src := fsdataset.Block{ID: 100, GenStamp: 1001}
	w, err := ds.CreateRBW(src, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	rr, err := ds.OpenForRead(src)
	if err != nil {
		t.Fatal(err)
	}
	path, bpc := rr.DataFile().Name(), rr.BytesPerChecksum()
	rr.Close()
	// The copy keeps 1500 bytes: its last chunk starts at 1024 with the
	// default 512-byte chunks. Corrupt a kept byte of it.
	if bpc != 512 {
		t.Fatalf("bytes per checksum %d", bpc)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{'x'}, 1200); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rc := &dnpb.RecoverCommand{Block: &dnpb.Replica{BlockId: proto.Uint64(100), GenStamp: proto.Uint64(1001)},
		NewGenStamp: proto.Uint64(1002), NewLength: proto.Int64(1500), NewBlockId: proto.Uint64(101)}
	var ce *fsdataset.CorruptReplicaError
	if err := d.recoverReplica(rc); !errors.As(err, &ce) {
		t.Fatalf("copy with a corrupt tail chunk: %v", err)
	}
	if _, ok := ds.Get(101); ok {
		t.Fatal("a corrupt copy was left")
	}

	// A copy in progress (its replica being written) is not removed by
	// a repeated command.
	w, err = ds.CreateRBW(fsdataset.Block{ID: 101, GenStamp: 1002}, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	d.copying = map[uint64]bool{101: true}
	if err := d.recoverReplica(rc); !errors.Is(err, errCopyRunning) {
		t.Fatalf("repeat during a copy: %v", err)
	}
	if info, ok := ds.Get(101); !ok || info.State == fsdataset.Finalized {
		t.Fatalf("the running copy's replica: %+v %v", info, ok)
	}
}
