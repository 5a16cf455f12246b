package fsdataset

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stratafs/strata/internal/storage"
)

func TestMoveReplicaAcrossStorageTypes(t *testing.T) {
	dir := t.TempDir()
	var events []ReplicaEvent
	cfg := DefaultConfig([]VolumeConfig{{Path: filepath.Join(dir, "disk"), Type: storage.Disk}, {Path: filepath.Join(dir, "ssd"), Type: storage.SSD}})
	cfg.OnChange = func(e ReplicaEvent) { events = append(events, e) }
	d, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("strata"), 50000)
	w, err := d.CreateRBW(Block{ID: 42, GenStamp: 1001}, storage.Disk, "")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	events = nil
	info, err := d.MoveReplica(Block{ID: 42, GenStamp: 1001}, storage.SSD)
	if err != nil {
		t.Fatal(err)
	}
	if info.StorageType != storage.SSD || info.NumBytes != int64(len(data)) {
		t.Fatalf("moved replica: %+v", info)
	}
	if len(events) != 2 || events[0].Kind != Received || events[0].Info.StorageType != storage.SSD || events[1].Kind != Deleted || events[1].Info.StorageType != storage.Disk {
		t.Fatalf("events: %+v", events)
	}
	if err := d.Verify(Block{ID: 42, GenStamp: 1001}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	// After a restart the replica is found once, on the SSD volume.
	d2, err := Open(DefaultConfig(cfg.Volumes))
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	got, ok := d2.Get(42)
	if !ok || got.StorageType != storage.SSD || got.State != Finalized {
		t.Fatalf("after restart: %+v %v", got, ok)
	}
	r, err := d2.OpenForRead(Block{ID: 42, GenStamp: 1001})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(data))
	if _, err := r.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, data) {
		t.Fatal("data differs after move", err)
	}
	r.Close()
}
