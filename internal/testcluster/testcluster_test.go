package testcluster_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/datanode"
	_ "github.com/stratafs/strata/internal/examples" // registers wordcount
	"github.com/stratafs/strata/internal/localcluster/trackers"
	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/mapreduce"
)

func TestMain(m *testing.M) { os.Exit(testcluster.RunMain(m)) }

// impls runs f against a cluster of each implementation.
func impls(t *testing.T, cfg testcluster.Config, f func(t *testing.T, h testcluster.Harness)) {
	t.Run("inprocess", func(t *testing.T) { f(t, testcluster.New(t, cfg)) })
	t.Run("process", func(t *testing.T) { f(t, testcluster.NewProcess(t, cfg)) })
}

func data(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31) ^ seed ^ byte(i>>9)
	}
	return b
}

func write(t *testing.T, cl *hdfs.Client, p string, b []byte, repl int, blockSize int64) {
	t.Helper()
	w, err := cl.CreateFile(context.Background(), p, fs.CreateOptions{CreateParent: true, Replication: repl, BlockSize: blockSize})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func read(cl *hdfs.Client, p string) ([]byte, error) {
	f, err := cl.OpenFile(context.Background(), p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// A NameNode stopped cleanly, and one killed with SIGKILL, comes back with
// every acknowledged directory and file, on the same address.
func TestRestartNameNodeKeepsNamespace(t *testing.T) {
	impls(t, testcluster.Config{DataNodes: 1}, func(t *testing.T, h testcluster.Harness) {
		ctx := context.Background()
		cl := h.Client(h.Superuser())
		want := data(5000, 1)
		write(t, cl, "/d/f", want, 1, 1<<20)
		if err := cl.Mkdirs(ctx, "/e", 0o755); err != nil {
			t.Fatal(err)
		}
		addr := h.Addr()
		h.RestartNameNode()
		if h.Addr() != addr {
			t.Fatalf("NameNode moved from %s to %s", addr, h.Addr())
		}
		h.WaitDataNodes(1)
		h.WaitSafeModeOff()
		cl = h.Client(h.Superuser())
		if got, err := read(cl, "/d/f"); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("after restart /d/f reads %d bytes, %v", len(got), err)
		}
		if err := cl.Mkdirs(ctx, "/after-restart", 0o755); err != nil {
			t.Fatal(err)
		}
		if _, ok := h.(*testcluster.Cluster); ok {
			return // kill -9 is the process implementation's
		}
		h.KillNameNode()
		h.StartNameNode()
		h.WaitSafeModeOff()
		cl = h.Client(h.Superuser())
		for _, p := range []string{"/d/f", "/e", "/after-restart"} {
			if _, err := cl.Stat(ctx, p); err != nil {
				t.Errorf("after kill -9 %s: %v", p, err)
			}
		}
	})
}

// SIGKILL of the first DataNode of a write's pipeline: the write completes
// through pipeline recovery and reads back; the killed node restarts on
// its transfer address.
func TestKillDataNodeMidWrite(t *testing.T) {
	p := testcluster.NewProcess(t, testcluster.Config{DataNodes: 3})
	ctx := context.Background()
	cl := p.Client(p.Superuser())
	want := data(3<<20, 2)
	w, err := cl.CreateFile(ctx, "/w", fs.CreateOptions{Replication: 2, BlockSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	half := len(want) / 2
	if _, err := w.Write(want[:half]); err != nil {
		t.Fatal(err)
	}
	locs, err := cl.BlockLocations(ctx, "/w")
	if err != nil || len(locs) == 0 {
		t.Fatalf("no blocks after half the write: %v", err)
	}
	victim := p.DataNodeByAddr(locs[len(locs)-1].Hosts[0])
	if victim < 0 {
		t.Fatalf("pipeline node %s is none of the DataNodes", locs[len(locs)-1].Hosts[0])
	}
	addr := p.DataNodeAddr(victim)
	p.KillDataNode(victim)
	if p.DataNodeProcess(victim).Running() {
		t.Fatal("the killed DataNode still runs")
	}
	if _, err := w.Write(want[half:]); err != nil {
		t.Fatalf("write after kill -9: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close after kill -9: %v", err)
	}
	if got, err := read(cl, "/w"); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(want))
	}
	p.StartDataNode(victim)
	if p.DataNodeAddr(victim) != addr {
		t.Errorf("restarted DataNode serves at %s, not %s", p.DataNodeAddr(victim), addr)
	}
	p.WaitDataNodes(3)
}

// A corrupted replica fails a read from that DataNode alone (replication
// 1: the read fails with a checksum error) and, with a good replica
// elsewhere, the client fails over and reports it, and the NameNode stops
// listing the bad one.
func TestCorruptReplica(t *testing.T) {
	impls(t, testcluster.Config{DataNodes: 2}, func(t *testing.T, h testcluster.Harness) {
		ctx := context.Background()
		cl := h.Client(h.Superuser())
		one := data(20000, 3)
		write(t, cl, "/one", one, 1, 1<<20)
		locs, err := cl.BlockLocations(ctx, "/one")
		if err != nil || len(locs) != 1 {
			t.Fatal(locs, err)
		}
		i := h.DataNodeByAddr(locs[0].Hosts[0])
		if h.ReplicaFile(i, locs[0].BlockID) == "" || h.ReplicaFile(1-i, locs[0].BlockID) != "" {
			t.Fatalf("ReplicaFile does not find the single replica on datanode %d only", i)
		}
		h.CorruptReplica(i, locs[0].BlockID, 777)
		if _, err := read(cl, "/one"); err == nil || !strings.Contains(strings.ToLower(err.Error()), "checksum") {
			t.Fatalf("reading the only, corrupt replica: %v, want a checksum error", err)
		}

		two := data(20000, 4)
		write(t, cl, "/two", two, 2, 1<<20)
		locs, _ = cl.BlockLocations(ctx, "/two")
		bad := locs[0].Hosts[0]
		h.CorruptReplica(h.DataNodeByAddr(bad), locs[0].BlockID, 10)
		reported := false
		for n := 0; n < 40 && !reported; n++ {
			if got, err := read(cl, "/two"); err != nil || !bytes.Equal(got, two) {
				t.Fatalf("read %d with one corrupt replica: %v", n, err)
			}
			bs, _ := cl.BlockLocations(ctx, "/two")
			reported = len(bs) == 1 && len(bs[0].Hosts) == 1 && bs[0].Hosts[0] != bad
		}
		if !reported {
			t.Fatal("40 reads never reported the corrupt replica")
		}
	})
}

// A failed volume is taken out of service: the DataNode reports it
// failed and the NameNode forgets the replicas on it; past the tolerated
// number the DataNode stops.
func TestFailVolume(t *testing.T) {
	t.Run("tolerated", func(t *testing.T) {
		c := testcluster.New(t, testcluster.Config{DataNodes: 1, Conf: map[string]string{"dfs.datanode.failed.volumes.tolerated": "1"}})
		cl := c.Client(c.Superuser())
		write(t, cl, "/v", data(3000, 5), 1, 1<<20)
		locs, _ := cl.BlockLocations(context.Background(), "/v")
		file := c.ReplicaFile(0, locs[0].BlockID)
		v := 0
		if !strings.HasPrefix(file, c.VolumeDir(0, 0)+string(os.PathSeparator)) {
			v = 1
		}
		c.FailVolume(0, v)
		st := c.DataNodeStatus(0)
		if !st.Volumes[v].Failed || st.Volumes[1-v].Failed {
			t.Fatalf("volume %d failed, DataNode reports %+v", v, st.Volumes)
		}
		c.WaitReplicated("/v", 0, 10*time.Second)
		if c.DataNode(0) == nil {
			t.Fatal("the DataNode stopped with a tolerated failure")
		}
	})
	t.Run("not tolerated", func(t *testing.T) {
		c := testcluster.New(t, testcluster.Config{DataNodes: 1})
		c.FailVolume(0, 1)
		if c.DataNode(0) != nil {
			t.Fatal("the DataNode runs on with a failed volume and none tolerated")
		}
		c.WaitFor("the NameNode to declare the DataNode dead", 10*time.Second, func() bool { return c.LiveDataNodes() == 0 })
	})
	t.Run("process restart", func(t *testing.T) {
		p := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1, Conf: map[string]string{"dfs.datanode.failed.volumes.tolerated": "1"}})
		p.FailVolume(0, 0)
		p.RestartDataNode(0)
		if st := p.DataNodeStatus(0); !st.Volumes[0].Failed || st.Volumes[1].Failed {
			t.Fatalf("after a restart on a failed volume the DataNode reports %+v", st.Volumes)
		}
	})
}

// In process, MapReduce runs a job on HDFS through the JobTracker and a
// TaskTracker, and again after the TaskTracker is killed and restarted.
func TestMapReduceInProcess(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 1, MapReduce: true, Trackers: trackers.Start})
	if c.NumTaskTrackers() != 1 || c.JobTrackerAddr() == "" {
		t.Fatalf("%d TaskTrackers, JobTracker %q", c.NumTaskTrackers(), c.JobTrackerAddr())
	}
	cl := c.Client(c.Superuser())
	write(t, cl, "/in/a", []byte(strings.Repeat("ssd disk ssd\n", 100)), 1, 1<<20)
	run := func(out string) {
		t.Helper()
		jc := c.ClientConf()
		job, err := mapreduce.NewJob("wordcount", []string{"/in", out}, jc)
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := mapreduce.Submit(ctx, job, fs.Env{Conf: jc, User: c.Superuser()}, &log); err != nil {
			t.Fatalf("job: %v\n%s", err, log.String())
		}
		if got, err := read(cl, out+"/part-r-00000"); err != nil || string(got) != "disk\t100\nssd\t200\n" {
			t.Fatalf("output %q, %v", got, err)
		}
	}
	run("/out1")
	c.KillTaskTracker(0)
	c.StartTaskTracker(0)
	run("/out2")
}

// The process implementation refuses Go-configuration hooks, and the
// in-process one a cluster without HDFS: each says so instead of
// silently doing something else.
func TestUnsupportedConfig(t *testing.T) {
	for name, f := range map[string]func(tb testing.TB){
		"process hook": func(tb testing.TB) {
			testcluster.NewProcess(tb, testcluster.Config{DataNode: func(int, *datanode.Config) {}})
		},
		"in-process no HDFS": func(tb testing.TB) { testcluster.New(tb, testcluster.Config{NoHDFS: true}) },
		"in-process hosts":   func(tb testing.TB) { testcluster.New(tb, testcluster.Config{Hosts: true}) },
		"in-process tmpfs":   func(tb testing.TB) { testcluster.New(tb, testcluster.Config{NameDirSize: 1 << 20}) },
		"hosts without HDFS": func(tb testing.TB) {
			testcluster.NewProcess(tb, testcluster.Config{NoHDFS: true, MapReduce: true, Hosts: true})
		},
		"in-process MapReduce without trackers": func(tb testing.TB) {
			testcluster.New(tb, testcluster.Config{DataNodes: 1, MapReduce: true})
		},
	} {
		ft := &fatalTB{TB: t}
		func() {
			defer func() { recover() }()
			f(ft)
		}()
		if !ft.fatal {
			t.Errorf("%s: no failure", name)
		}
	}
}

var errFatal = errors.New("fatal")

// fatalTB records a Fatal instead of ending the test.
type fatalTB struct {
	testing.TB
	fatal bool
}

func (f *fatalTB) Fatal(args ...any)                 { f.fatal = true; panic(errFatal) }
func (f *fatalTB) Fatalf(format string, args ...any) { f.fatal = true; panic(errFatal) }
func (f *fatalTB) Helper()                           {}

// testcluster, and so localcluster under it, must not depend on the
// MapReduce engine: the engine's own in-package tests build clusters with
// testcluster, and a dependency would be an import cycle.
func TestImportsNoMapReduce(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/stratafs/strata/internal/testcluster").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/stratafs/strata/mapreduce" {
			t.Fatalf("testcluster depends on %s", dep)
		}
	}
}

// With Config.Hosts every HDFS daemon is on a host of its own, advertises
// that host's address, and Partition/Heal cut and restore the NameNode's
// link to a DataNode: it is declared dead, then rejoins.
func TestHostsPartition(t *testing.T) {
	h := testcluster.NewProcess(t, testcluster.Config{DataNodes: 2, Hosts: true})
	if !strings.HasPrefix(h.Addr(), h.HostAddr(testcluster.NameNodeHost)+":") {
		t.Fatalf("NameNode at %s, its host is %s", h.Addr(), h.HostAddr(testcluster.NameNodeHost))
	}
	cl := h.Client(h.Superuser())
	write(t, cl, "/p", data(3000, 3), 2, 1<<20)
	locs, err := cl.BlockLocations(context.Background(), "/p")
	if err != nil || len(locs) != 1 {
		t.Fatalf("locations: %v %v", locs, err)
	}
	for i := 0; i < 2; i++ {
		if want := h.HostAddr(testcluster.DataNodeHost(i)) + ":9866"; h.DataNodeAddr(i) != want {
			t.Fatalf("datanode %d serves at %s, want %s", i, h.DataNodeAddr(i), want)
		}
	}
	for _, a := range locs[0].Hosts {
		if h.DataNodeByAddr(a) < 0 {
			t.Fatalf("block location %s is no DataNode's host address", a)
		}
	}
	h.Partition([]string{testcluster.NameNodeHost}, []string{testcluster.DataNodeHost(1)})
	h.WaitFor("datanode 1 declared dead", 30*time.Second, func() bool { return h.LiveDataNodes() == 1 })
	if got, err := read(cl, "/p"); err != nil || !bytes.Equal(got, data(3000, 3)) {
		t.Fatalf("read during the partition: %v", err)
	}
	h.Heal()
	h.WaitDataNodes(2)
}

// Config.NameDirSize and Config.VolumeSize give the name directory and
// chosen volumes tmpfs disks of those sizes; Config.DataNodeConf gives
// one DataNode its own keys.
func TestSmallDisksAndNodeKeys(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("tmpfs mounts need root")
	}
	h := testcluster.NewProcess(t, testcluster.Config{DataNodes: 2, Volumes: []storage.Type{storage.Disk},
		NameDirSize: 8 << 20,
		VolumeSize: func(i, v int) int64 {
			if i == 1 {
				return 4 << 20
			}
			return 0
		},
		DataNodeConf: func(i int, vols []string) map[string]string {
			return map[string]string{"dfs.datanode.du.reserved": fmt.Sprint(1000 + i)}
		}})
	size := func(dir string) (int64, bool) {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		return int64(st.Blocks) * int64(st.Bsize), st.Type == 0x01021994 // TMPFS_MAGIC
	}
	for _, c := range []struct {
		dir  string
		size int64
		tmp  bool
	}{{h.NameDir(), 8 << 20, true}, {h.VolumeDir(1, 0), 4 << 20, true}, {h.VolumeDir(0, 0), 0, false}} {
		n, tmp := size(c.dir)
		if tmp != c.tmp || c.tmp && n != c.size {
			t.Errorf("%s: tmpfs %v of %d bytes, want tmpfs %v of %d", c.dir, tmp, n, c.tmp, c.size)
		}
	}
	for i := 0; i < 2; i++ {
		if args := strings.Join(h.DataNodeProcess(i).Args(), " "); !strings.Contains(args, fmt.Sprintf("dfs.datanode.du.reserved=%d", 1000+i)) {
			t.Errorf("datanode %d runs without its own key: %s", i, args)
		}
	}
	cl := h.Client(h.Superuser())
	write(t, cl, "/small", data(5000, 9), 2, 1<<20)
	h.WaitReplicated("/small", 2, 30*time.Second)
}

// An in-process HA nameservice: when the active NameNode stops, another
// is elected and the same client keeps working — it reads what it wrote
// before and writes more.
func TestHAInProcessFailover(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{NameNodes: 3, DataNodes: 3})
	if c.NumNameNodes() != 3 || c.URI() != "hdfs://ns1" || c.Addr() != c.NameNodeAt(0).RPCAddr() {
		t.Fatalf("%d NameNodes, URI %s, Addr %s", c.NumNameNodes(), c.URI(), c.Addr())
	}
	if got := c.ClientConf().Get("fs.defaultFS"); got != "hdfs://ns1" {
		t.Fatalf("client fs.defaultFS %s", got)
	}
	cl := c.Client(c.Superuser())
	before := data(300<<10, 1)
	write(t, cl, "/ha/before", before, 3, 128<<10)
	a := c.ActiveNameNode()

	start := time.Now()
	c.StopNameNode()
	if c.NameNodeAt(a) != nil {
		t.Fatalf("StopNameNode left the active, member %d, running", a)
	}
	got, err := read(cl, "/ha/before")
	if err != nil || !bytes.Equal(got, before) {
		t.Fatalf("read after failover: %d bytes, %v", len(got), err)
	}
	readAfter := time.Since(start)
	after := data(200<<10, 2)
	write(t, cl, "/ha/after", after, 3, 128<<10)
	b := c.ActiveNameNode()
	if b == a {
		t.Fatalf("member %d still active after it stopped", a)
	}
	t.Logf("failover from nn%d to nn%d: first read after %v, read and write after %v", a+1, b+1, readAfter, time.Since(start))

	// The old active rejoins as a standby; the namespace holds both files.
	c.StartNameNode()
	if c.NameNodeAt(a) == nil {
		t.Fatalf("StartNameNode did not start member %d", a)
	}
	if got, err := read(cl, "/ha/after"); err != nil || !bytes.Equal(got, after) {
		t.Fatalf("read /ha/after: %d bytes, %v", len(got), err)
	}
}
