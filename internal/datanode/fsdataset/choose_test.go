package fsdataset

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/storage"
)

func TestParseDataDirs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []VolumeConfig
		err  string
	}{
		{in: "/a", want: []VolumeConfig{{"/a", storage.Disk}}},
		{in: "[SSD]/a,[disk]file:///b, /c ,", want: []VolumeConfig{{"/a", storage.SSD}, {"/b", storage.Disk}, {"/c", storage.Disk}}},
		{in: "[ram_disk]file://localhost/r/,[ARCHIVE] /x//y", want: []VolumeConfig{{"/r", storage.RAMDisk}, {"/x/y", storage.Archive}}},
		{in: "file:/d", want: []VolumeConfig{{"/d", storage.Disk}}},
		{in: "data/dn", want: []VolumeConfig{{"data/dn", storage.Disk}}},
		{in: "", err: "lists no directory"},
		{in: " , ", err: "lists no directory"},
		{in: "[FLOPPY]/a", err: `unknown storage type "FLOPPY"`},
		{in: "[SSD/a", err: "missing ']'"},
		{in: "[SSD]", err: "no directory"},
		{in: "hdfs://nn/a", err: `unsupported scheme "hdfs"`},
		{in: "file://otherhost/a", err: "local path"},
	} {
		got, err := ParseDataDirs(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseDataDirs(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("ParseDataDirs(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("ParseDataDirs(%q)[%d] = %v, want %v", tc.in, i, got[i], tc.want[i])
			}
		}
	}
}

// fakeSpace makes each volume report the given free bytes (of 1 TiB).
func fakeSpace(fsys *faultFS, cfg *Config, free ...int64) {
	fsys.statfs = map[string]DiskUsage{}
	for i, f := range free {
		fsys.statfs[cfg.Volumes[i].Path] = DiskUsage{Total: 1 << 40, Free: f}
	}
}

const gib = int64(1) << 30

func TestChooseRoundRobin(t *testing.T) {
	fsys := &faultFS{}
	e := newEnv(t, 4, func(c *Config) {
		c.FS = fsys
		c.Volumes[3].Type = storage.SSD
		c.Reserved = 2 * gib
		fakeSpace(fsys, c, 100*gib, 100*gib, 100*gib, 100*gib)
	})
	need := int64(128 << 20)
	count := func(t storage.Type, n int, want map[int]int) {
		e.t.Helper()
		got := map[int]int{}
		for range n {
			v, err := e.ds.chooseVolume(Block{ID: 1, NumBytes: need}, t, "")
			if err != nil {
				e.t.Fatal(err)
			}
			for i, x := range e.ds.vols {
				if x == v {
					got[i]++
				}
			}
		}
		for i := range 4 {
			if got[i] != want[i] {
				e.t.Fatalf("%v: volume use %v, want %v", t, got, want)
			}
		}
	}
	count(storage.Disk, 6, map[int]int{0: 2, 1: 2, 2: 2})
	count(storage.SSD, 3, map[int]int{3: 3})
	count(0, 3, map[int]int{0: 1, 1: 1, 2: 1}) // unspecified = DISK

	// Volume 1 has 1 GiB free, less than the 2 GiB reserved: skipped.
	fakeSpace(fsys, &e.cfg, 100*gib, 1*gib, 100*gib, 100*gib)
	count(storage.Disk, 6, map[int]int{0: 3, 2: 3})
	if v := e.ds.Volumes()[1]; v.Remaining != 0 || v.Capacity != 1<<40-2*gib {
		t.Fatalf("full volume reported as %+v", v)
	}
	// Room for a small block but not a big one.
	fakeSpace(fsys, &e.cfg, 2*gib+100, 2*gib+100, 2*gib+100, 100*gib)
	need = 50
	count(storage.Disk, 3, map[int]int{0: 1, 1: 1, 2: 1})
	_, err := e.ds.CreateRBW(Block{ID: 9, GenStamp: 1, NumBytes: 128 << 20}, storage.Disk, "")
	mustErrIs(t, err, ErrNoVolume)
	if !strings.Contains(err.Error(), "blk_9_1") || !strings.Contains(err.Error(), "out of space") {
		t.Fatalf("error %v", err)
	}
	_, err = e.ds.CreateRBW(Block{ID: 9, GenStamp: 1}, storage.Archive, "")
	mustErrIs(t, err, ErrNoVolume)
	// An explicit storage ID wins over space and type.
	w, err := e.ds.CreateRBW(Block{ID: 9, GenStamp: 1, NumBytes: 128 << 20}, storage.Disk, e.ds.vols[1].storageID)
	if err != nil {
		t.Fatal(err)
	}
	if w.Info().StorageID != e.ds.vols[1].storageID {
		t.Fatal("storage ID not honoured")
	}
	w.Abort()
}

func TestChooseAvailableSpace(t *testing.T) {
	fsys := &faultFS{}
	e := newEnv(t, 2, func(c *Config) {
		c.FS = fsys
		c.Choosing = AvailableSpace
		fakeSpace(fsys, c, 100*gib, 1*gib)
	})
	e.ds.rng = rand.New(rand.NewPCG(1, 2))
	use := func(n int) [2]int {
		var got [2]int
		for range n {
			v, err := e.ds.chooseVolume(Block{NumBytes: 128 << 20}, storage.Disk, "")
			if err != nil {
				t.Fatal(err)
			}
			if v == e.ds.vols[0] {
				got[0]++
			} else {
				got[1]++
			}
		}
		return got
	}
	// Unbalanced by more than 10 GiB: 75% to the emptier volume.
	got := use(1000)
	if got[0] < 650 || got[0] > 850 {
		t.Fatalf("emptier volume got %d of 1000", got[0])
	}
	t.Logf("available-space: %v", got)
	// Balanced: in turn.
	fakeSpace(fsys, &e.cfg, 100*gib, 95*gib)
	if got := use(10); got != [2]int{5, 5} {
		t.Fatalf("balanced volumes used %v", got)
	}
	// The fuller one cannot take the block: always the emptier one.
	fakeSpace(fsys, &e.cfg, 100*gib, 1<<20)
	if got := use(20); got != [2]int{20, 0} {
		t.Fatalf("volumes used %v", got)
	}
}

func TestVolumePaths(t *testing.T) {
	v := newVolume(OSFS{}, VolumeConfig{Path: "/v"})
	// Hadoop's DatanodeUtil.idToBlockDir.
	for id, want := range map[uint64]string{
		1073741825:            "/v/current/finalized/subdir0/subdir0",
		1073807361:            "/v/current/finalized/subdir1/subdir0",
		1073741825 + 0x1F1F00: "/v/current/finalized/subdir31/subdir31",
		1073741825 + 0x200000: "/v/current/finalized/subdir0/subdir0",
	} {
		if got := v.finDir(id); got != filepath.FromSlash(want) {
			t.Errorf("finDir(%d) = %s, want %s", id, got, want)
		}
	}
}
