package faultmatrix

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

var writtenRE = regexp.MustCompile(`(?m)^written bytes\s+(\d+)`)

// DataNode 0's volume is an emulated disk with 100 ms a request and
// 8 MB/s (strata.media): a replication-3 write through it takes longer
// than through the same cluster without it, and succeeds; the device's
// counters show the bytes it was charged.
func TestSlowDisk(t *testing.T) {
	t.Parallel()
	r := record(t, "slow disk (emulated, 100 ms/request, 8 MB/s)")
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 3, Volumes: disk,
		DataNodeConf: func(i int, vols []string) map[string]string {
			if i != 0 {
				return nil
			}
			return map[string]string{
				"strata.media.dirs":                vols[0] + "=hdd-7200",
				"strata.media.hdd-7200.latency":    "100ms",
				"strata.media.hdd-7200.write.mbps": "8",
				"strata.media.request.bytes":       "256k",
			}
		}})
	ctx := ctxT(t)
	cl := client(t, c)
	size := 2 << 20 * scale()
	r.Running = fmt.Sprintf("%s files (repl 3: every pipeline through the slow DataNode), 3 DataNodes", mib(int64(size)))
	w := newFiles()
	t0 := time.Now()
	if err := w.write(ctx, cl, "/slow/0", size, 3, 1<<20); err != nil {
		t.Fatalf("write through the slow disk: %v", err)
	}
	slow := time.Since(t0)
	// The same write with the slow node out of the cluster.
	c.StopDataNode(0)
	c.WaitFor("datanode 0 declared dead", 30*time.Second, func() bool { return c.LiveDataNodes() == 2 })
	t1 := time.Now()
	if err := w.write(ctx, cl, "/slow/1", size, 2, 1<<20); err != nil {
		t.Fatalf("write without the slow disk: %v", err)
	}
	fast := time.Since(t1)
	out, err := exec.Command(c.Binary(), "media", "stats", c.VolumeDir(0, 0)).CombinedOutput()
	m := writtenRE.FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("media stats: %v\n%s", err, out)
	}
	written, _ := strconv.ParseInt(string(m[1]), 10, 64)
	if written < int64(size) {
		t.Errorf("the emulated disk was charged %d written bytes, want at least the file's %d", written, size)
	}
	// 100 ms per 256 KiB request: at least a second for 2 MiB.
	if min := time.Duration(size/(256<<10)) * 100 * time.Millisecond / 2; slow < min {
		t.Errorf("the write through the slow disk took %v, less than half the model's %v", slow, 2*min)
	}
	c.StartDataNode(0)
	c.WaitDataNodes(3)
	acked, failed := w.count()
	r.Acked = fmt.Sprintf("%d files (%d failed); the write took %s through the slow disk, %s without it (repl 2)", acked, failed, secs(slow), secs(fast))
	n := w.verify(t, ctx, cl)
	r.Survived = fmt.Sprintf("%d/%d files identical; the device was charged %s written", n, acked, mib(written))
	r.Recover = "n/a (no failure: slower)"
}
