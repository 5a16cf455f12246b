package fsdataset

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/storage"
)

func appendToFile(t *testing.T, path string, p []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(p); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestRestartScan(t *testing.T) {
	e := newEnv(t, 1, nil)
	v := e.ds.vols[0]
	good := randBytes(1, 3000)
	e.write(1, 1, good)

	// 2: RBW with data written beyond its checksums (torn tail).
	rbw2 := randBytes(2, 2000)
	w2, _ := e.ds.CreateRBW(Block{ID: 2, GenStamp: 1}, 0, "")
	w2.Write(rbw2)
	w2.Flush()
	// 3: RBW flushed mid-chunk, then more data reached the data file but
	// not the checksum: the stored checksum covers a prefix of the chunk.
	rbw3 := randBytes(3, 700)
	w3, _ := e.ds.CreateRBW(Block{ID: 3, GenStamp: 1}, 0, "")
	w3.Write(rbw3)
	w3.Flush()
	// 4: RBW whose last whole chunk is garbage.
	rbw4 := randBytes(4, 2048)
	w4, _ := e.ds.CreateRBW(Block{ID: 4, GenStamp: 1}, 0, "")
	w4.Write(rbw4)
	w4.Flush()
	// 5: finalized, then the data grows: inconsistent with its meta.
	e.write(5, 1, randBytes(5, 1000))
	// 6: finalized with a truncated meta file.
	e.write(6, 1, randBytes(6, 1000))
	// 7: finalized, then a crash mid-append: data moved to rbw, meta not.
	data7 := randBytes(7, 1500)
	e.write(7, 1, data7)
	// 8: finalized with a damaged meta header.
	e.write(8, 1, randBytes(8, 100))
	// 9: RBW whose meta header never made it to disk.
	w9, _ := e.ds.CreateRBW(Block{ID: 9, GenStamp: 1}, 0, "")
	w9.Write(randBytes(9, 100))
	w9.Flush()

	paths := map[uint64][2]string{}
	for _, id := range []uint64{2, 3, 4, 5, 6, 7, 8, 9} {
		r := e.replica(id)
		paths[id] = [2]string{r.dataPath(), r.metaPath()}
	}
	if err := e.ds.Close(); err != nil {
		t.Fatal(err)
	}
	appendToFile(t, paths[2][0], []byte("torn tail that has no checksum"))
	appendToFile(t, paths[3][0], randBytes(33, 100))
	f, _ := os.OpenFile(paths[4][0], os.O_WRONLY, 0)
	f.WriteAt(bytes.Repeat([]byte{0xEE}, 512), 1536)
	f.Close()
	appendToFile(t, paths[5][0], randBytes(55, 600)) // 1600 bytes need 4 checksums, the meta has 2
	os.Truncate(paths[6][1], metaHeaderLen+1)
	os.Rename(paths[7][0], filepath.Join(v.rbw, "blk_7"))
	f, _ = os.OpenFile(paths[8][1], os.O_WRONLY, 0)
	f.WriteAt([]byte{0, 9}, 0) // version 9
	f.Close()
	os.Truncate(paths[9][1], 3)
	// Strays: a temporary file, data without meta, meta without data, and
	// an unknown file, which is left alone.
	os.WriteFile(filepath.Join(v.rbw, "blk_10.tmp"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(v.rbw, "blk_11"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(v.rbw, "blk_12_1.meta"), metaHeader(512), 0o644)
	os.WriteFile(filepath.Join(v.rbw, "notes.txt"), []byte("x"), 0o644)

	e.open()
	e.checkReplica(1, good)
	check := func(id uint64, st ReplicaState, data []byte) {
		t.Helper()
		info, ok := e.ds.Get(id)
		if !ok || info.State != st || info.NumBytes != int64(len(data)) {
			t.Fatalf("blk_%d after restart: %+v %v, want %s with %d bytes", id, info, ok, st, len(data))
		}
		d, m := e.files(id)
		if !bytes.Equal(d, data) || !bytes.Equal(m, expectedMeta(data, 512)) {
			t.Fatalf("blk_%d: files not truncated to the verified length", id)
		}
		e.checkRead(info.Block, data)
	}
	check(2, RWR, rbw2)
	check(3, RWR, rbw3)
	check(4, RWR, rbw4[:1536])
	check(7, RWR, data7)
	for _, id := range []uint64{5, 6, 8, 9, 10, 11, 12} {
		if info, ok := e.ds.Get(id); ok {
			t.Errorf("blk_%d served after restart: %+v", id, info)
		}
	}
	corrupt, _ := os.ReadDir(filepath.Join(v.cur, "corrupt"))
	var names []string
	for _, c := range corrupt {
		names = append(names, c.Name())
	}
	want := []string{"blk_5", "blk_5_1.meta", "blk_6", "blk_6_1.meta", "blk_8", "blk_8_1.meta"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("corrupt dir holds %v, want %v", names, want)
	}
	rbw, _ := os.ReadDir(v.rbw)
	names = nil
	for _, c := range rbw {
		names = append(names, c.Name())
	}
	want = []string{"blk_2", "blk_2_1.meta", "blk_3", "blk_3_1.meta", "blk_4", "blk_4_1.meta", "blk_7", "blk_7_1.meta", "notes.txt"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("rbw holds %v, want %v", names, want)
	}
	for _, msg := range []string{"moving damaged replica file aside", "truncating replica being written", "interrupted move", "stray temporary file", "ignoring unexpected file"} {
		if !strings.Contains(e.log.String(), msg) {
			t.Errorf("log lacks %q", msg)
		}
	}
	// A recovered RWR replica finalizes normally.
	w, err := e.ds.RecoverRBW(Block{ID: 3, GenStamp: 1}, 2, 700)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(randBytes(34, 10))
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	e.checkReplica(3, append(rbw3, randBytes(34, 10)...))
}

func TestRestartInterruptedFinalize(t *testing.T) {
	// Finalize renames the meta file first: a crash between the renames
	// leaves data in rbw and meta in finalized. The replica comes back as
	// one RWR replica, never two.
	e := newEnv(t, 1, nil)
	data := randBytes(1, 5000)
	w, _ := e.ds.CreateRBW(Block{ID: 1, GenStamp: 3}, 0, "")
	w.Write(data)
	w.Sync()
	v := e.ds.vols[0]
	e.ds.Close()
	dst := v.finDir(1)
	os.MkdirAll(dst, 0o755)
	os.Rename(filepath.Join(v.rbw, "blk_1_3.meta"), filepath.Join(dst, "blk_1_3.meta"))
	e.open()
	if info, _ := e.ds.Get(1); info.State != RWR || info.NumBytes != 5000 || len(e.ds.Report()[v.storageID]) != 1 {
		t.Fatalf("after restart: %+v", info)
	}
	e.checkReplica(1, data)
}

func TestRestartDuplicates(t *testing.T) {
	e := newEnv(t, 2, nil)
	a, b := e.ds.vols[0], e.ds.vols[1]
	data := randBytes(1, 3000)
	// blk_1 finalized on a with GS 1, a copy on b with GS 2: b's wins.
	w, _ := e.ds.CreateRBW(Block{ID: 1, GenStamp: 1}, 0, a.storageID)
	w.Write(data)
	w.Finalize()
	// blk_2 finalized on a, an RBW copy with the same GS on b: a's wins.
	w, _ = e.ds.CreateRBW(Block{ID: 2, GenStamp: 5}, 0, a.storageID)
	w.Write(data)
	w.Finalize()
	e.ds.Close()
	copyFile := func(src, dst string) {
		t.Helper()
		p, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(filepath.Join(a.finDir(1), "blk_1"), filepath.Join(b.finDir(1), "blk_1"))
	copyFile(filepath.Join(a.finDir(1), "blk_1_1.meta"), filepath.Join(b.finDir(1), "blk_1_2.meta"))
	copyFile(filepath.Join(a.finDir(2), "blk_2"), filepath.Join(b.rbw, "blk_2"))
	copyFile(filepath.Join(a.finDir(2), "blk_2_5.meta"), filepath.Join(b.rbw, "blk_2_5.meta"))
	e.open()
	if info, _ := e.ds.Get(1); info.StorageID != b.storageID || info.GenStamp != 2 || info.State != Finalized {
		t.Fatalf("blk_1: %+v", info)
	}
	if info, _ := e.ds.Get(2); info.StorageID != a.storageID || info.State != Finalized {
		t.Fatalf("blk_2: %+v", info)
	}
	for _, p := range []string{filepath.Join(a.finDir(1), "blk_1"), filepath.Join(a.finDir(1), "blk_1_1.meta"), filepath.Join(b.rbw, "blk_2")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("duplicate %s not removed", p)
		}
	}
	e.checkReplica(1, data)
	e.checkReplica(2, data)
	if !strings.Contains(e.log.String(), "two volumes") {
		t.Error("duplicates not logged")
	}
}

func TestDatanodeUUID(t *testing.T) {
	e := newEnv(t, 2, nil)
	uuid := e.ds.DatanodeUUID()
	ids := []string{e.ds.vols[0].storageID, e.ds.vols[1].storageID}
	if len(uuid) != 36 || ids[0] == ids[1] || !strings.HasPrefix(ids[0], "DS-") {
		t.Fatalf("uuid %q, storage IDs %v", uuid, ids)
	}
	ver, err := os.ReadFile(filepath.Join(e.cfg.Volumes[0].Path, "current", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range []string{"storageID=" + ids[0], "datanodeUuid=" + uuid, "storageType=DISK", "layoutVersion=1", "cTime=0"} {
		if !strings.Contains(string(ver), kv+"\n") {
			t.Errorf("VERSION lacks %s:\n%s", kv, ver)
		}
	}

	// Stable across restarts; a new volume joins with the same UUID.
	e.ds.Close()
	e.cfg.Volumes = append(e.cfg.Volumes, VolumeConfig{Path: filepath.Join(t.TempDir(), "new"), Type: storage.SSD})
	e.open()
	if e.ds.DatanodeUUID() != uuid || e.ds.vols[0].storageID != ids[0] || e.ds.vols[1].storageID != ids[1] {
		t.Fatal("identity changed across a restart")
	}
	ver, _ = os.ReadFile(filepath.Join(e.cfg.Volumes[2].Path, "current", "VERSION"))
	if !strings.Contains(string(ver), "datanodeUuid="+uuid+"\n") || !strings.Contains(string(ver), "storageType=SSD\n") {
		t.Fatalf("new volume's VERSION:\n%s", ver)
	}

	// A second Open of the same volumes is refused.
	_, err = Open(e.cfg)
	mustErrIs(t, err, ErrInUse)

	// A volume of another DataNode is refused.
	other := newEnv(t, 1, nil)
	otherPath := other.cfg.Volumes[0].Path
	other.ds.Close()
	e.ds.Close()
	cfg := e.cfg
	cfg.Volumes = append(append([]VolumeConfig{}, e.cfg.Volumes...), VolumeConfig{Path: otherPath, Type: storage.Disk})
	_, err = Open(cfg)
	mustErrIs(t, err, ErrDatanodeUUID)
	if !strings.Contains(err.Error(), otherPath) || !strings.Contains(err.Error(), other.ds.DatanodeUUID()) {
		t.Fatalf("error does not say which volume: %v", err)
	}
	// The refused Open released the locks.
	e.open()
}

func TestOpenConfigErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"no volumes", Config{}},
		{"twice", Config{Volumes: []VolumeConfig{{Path: dir}, {Path: dir + "/"}}}},
		{"tolerated too high", Config{Volumes: []VolumeConfig{{Path: dir}}, FailedVolumesTolerated: 1}},
		{"tolerated too low", Config{Volumes: []VolumeConfig{{Path: dir}}, FailedVolumesTolerated: -2}},
		{"policy", Config{Volumes: []VolumeConfig{{Path: dir}}, Choosing: "random"}},
	} {
		if _, err := Open(tc.cfg); err == nil {
			t.Errorf("%s: Open succeeded", tc.name)
		}
	}
	// A volume whose VERSION is damaged fails; with nothing tolerated,
	// Open fails.
	os.MkdirAll(filepath.Join(dir, "current"), 0o755)
	os.WriteFile(filepath.Join(dir, "current", "VERSION"), []byte("layoutVersion=7\n"), 0o644)
	_, err := Open(Config{Volumes: []VolumeConfig{{Path: dir, Type: storage.Disk}}})
	mustErrIs(t, err, ErrTooManyFailed)
	if !strings.Contains(err.Error(), "layoutVersion") {
		t.Fatalf("error does not say why: %v", err)
	}
	if errors.Is(err, ErrInUse) {
		t.Fatal("wrong error")
	}
}
