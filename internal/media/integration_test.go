package media_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/media"
	"github.com/stratafs/strata/internal/spill"
)

// emulated installs a device (costing next to nothing) on a new
// directory and returns it.
func emulated(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p := media.Params{ReadMBps: 1e6, WriteMBps: 1e6, Latency: time.Microsecond, QueueDepth: 1}
	if err := media.Install(&media.Table{Devices: []media.Device{{Dir: dir, Preset: "test", Params: p}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { media.Install(nil) })
	return dir
}

// TestMapOutputPaysDevice checks that map-side spills, the map output and
// its index go through the device of their local dir.
func TestMapOutputPaysDevice(t *testing.T) {
	dir := emulated(t)
	cfg := spill.DefaultConfig()
	cfg.Partitions = 2
	cfg.LocalDirs = []string{dir}
	cfg.Name = "attempt_1_0001_m_000000_0"
	cfg.SortBytes = spill.MinSortBytes
	c, err := spill.NewCollector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	value := make([]byte, 1000)
	for i := range 5000 {
		if err := c.Collect(i%2, fmt.Appendf(nil, "key%06d", i), value); err != nil {
			t.Fatal(err)
		}
	}
	out, err := c.Close()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(out.Path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := media.ReadStats(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Spills are written and read back, then the output is written.
	if st.WriteBytes < uint64(fi.Size()) || st.ReadBytes == 0 {
		t.Errorf("device counted %d bytes written and %d read for a %d-byte map output", st.WriteBytes, st.ReadBytes, fi.Size())
	}
	before := st.ReadBytes
	if _, err := spill.ReadIndex(out.IndexPath); err != nil {
		t.Fatal(err)
	}
	if st, _ := media.ReadStats(dir); st.ReadBytes == before {
		t.Error("reading the map output index did not pay the device")
	}
}

// TestDataNodeFilesPayDevice checks the DataNode's file system: files in
// an emulated directory pay it, others stay *os.File (for sendfile and
// short-circuit reads).
func TestDataNodeFilesPayDevice(t *testing.T) {
	dir := emulated(t)
	f, err := fsdataset.OSFS{}.OpenFile(filepath.Join(dir, "blk_1"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.(*os.File); ok {
		t.Error("a block file in an emulated directory is a plain *os.File")
	}
	if _, err := f.WriteAt(make([]byte, 3000), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if st, _ := media.ReadStats(dir); st.WriteBytes != 3000 {
		t.Errorf("device counted %d bytes written, want 3000", st.WriteBytes)
	}
	g, err := fsdataset.OSFS{}.OpenFile(filepath.Join(t.TempDir(), "blk_2"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, ok := g.(*os.File); !ok {
		t.Errorf("a block file outside emulated directories is %T, want *os.File", g)
	}
}
