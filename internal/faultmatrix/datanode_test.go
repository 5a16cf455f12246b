package faultmatrix

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/testcluster"
)

// disk is one DISK volume per DataNode: less to start and scan.
var disk = []storage.Type{storage.Disk}

// A DataNode in the pipeline of a file being written is killed (SIGKILL)
// half-way through; the write completes on the others, every
// acknowledged file reads back, and the NameNode restores 3 replicas.
func TestDataNodeKillMidWrite(t *testing.T) {
	t.Parallel()
	r := record(t, "DataNode kill -9 mid-write")
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 4, Volumes: disk})
	ctx := ctxT(t)
	cl := client(t, c)
	w := newFiles()
	stop := make(chan struct{})
	done := w.loop(ctx, cl, "/bg", 64<<10, 3, 64<<10, 20*time.Millisecond, stop)
	size := 3 << 20 * scale()
	r.Running = fmt.Sprintf("a %s file (repl 3, 1 MiB blocks) and a loop of 64 KiB files, 4 DataNodes", mib(int64(size)))
	var t0 time.Time
	for round := 0; round < rounds(); round++ {
		p := fmt.Sprintf("/big%d", round)
		data := content(p, size)
		fw, err := cl.CreateFile(ctx, p, fs.CreateOptions{Replication: 3, BlockSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		half := len(data) / 2
		if _, err := fw.Write(data[:half]); err != nil {
			t.Fatal(err)
		}
		locs, err := cl.BlockLocations(ctx, p)
		if err != nil || len(locs) == 0 {
			t.Fatalf("no blocks after writing half: %v", err)
		}
		victim := c.DataNodeByAddr(locs[len(locs)-1].Hosts[0])
		if victim < 0 {
			t.Fatalf("pipeline node %s is none of the DataNodes", locs[len(locs)-1].Hosts[0])
		}
		c.KillDataNode(victim)
		t0 = time.Now()
		if _, err := fw.Write(data[half:]); err != nil {
			t.Fatalf("write after kill -9 of datanode %d: %v", victim, err)
		}
		if err := fw.Close(); err != nil {
			t.Fatalf("close after kill -9 of datanode %d: %v", victim, err)
		}
		w.mu.Lock()
		w.acked[p], w.order = size, append(w.order, p)
		w.mu.Unlock()
		c.WaitFor("the killed datanode declared dead", 30*time.Second, func() bool { return c.LiveDataNodes() == 3 })
		close(stop)
		<-done
		w.waitAllReplicated(c, 3, 60*time.Second)
		r.Recover = since(t0) + " to 3 replicas of every block"
		if round+1 < rounds() {
			c.StartDataNode(victim)
			c.WaitDataNodes(4)
			stop = make(chan struct{})
			done = w.loop(ctx, cl, fmt.Sprintf("/bg%d", round+1), 64<<10, 3, 64<<10, 20*time.Millisecond, stop)
		}
	}
	acked, failed := w.count()
	r.Acked = fmt.Sprintf("%d files, %s (%d writes failed%s)", acked, mib(w.bytes()), failed, w.lastFailure())
	n := w.verify(t, ctx, cl)
	r.Survived = fmt.Sprintf("%d/%d files read back identical", n, acked)
	w.checkKnownFailures(t, r)
}

// A DataNode dies (SIGKILL) while readers and a writer run: reads fail
// over, the NameNode declares it dead and re-replicates its blocks; when
// it comes back it rejoins.
func TestDataNodeLossReReplication(t *testing.T) {
	t.Parallel()
	r := record(t, "DataNode loss and re-replication")
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 4, Volumes: disk})
	ctx := ctxT(t)
	cl := client(t, c)
	w := newFiles()
	for i := 0; i < 8*scale(); i++ {
		if err := w.write(ctx, cl, fmt.Sprintf("/pre/%03d", i), 256<<10, 2, 64<<10); err != nil {
			t.Fatal(err)
		}
	}
	r.Running = fmt.Sprintf("%d files of 256 KiB (repl 2, 64 KiB blocks), a reader over them and a writer loop, 4 DataNodes", 8*scale())
	stop := make(chan struct{})
	done := w.loop(ctx, cl, "/bg", 128<<10, 2, 64<<10, 20*time.Millisecond, stop)
	readErrs, wrong, reads := 0, 0, 0
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		for {
			for _, p := range w.paths()[:8*scale()] {
				select {
				case <-stop:
					return
				default:
				}
				got, err := readFile(ctx, cl, p)
				reads++
				if err != nil {
					readErrs++
				} else if string(got) != string(content(p, 256<<10)) {
					wrong++
				}
			}
		}
	}()
	c.KillDataNode(1)
	t0 := time.Now()
	c.WaitFor("datanode 1 declared dead", 30*time.Second, func() bool { return c.LiveDataNodes() == 3 })
	dead := since(t0)
	close(stop)
	<-done
	<-readDone
	w.waitAllReplicated(c, 2, 60*time.Second)
	r.Recover = fmt.Sprintf("dead after %s, re-replicated after %s", dead, since(t0))
	c.StartDataNode(1)
	t1 := time.Now()
	c.WaitDataNodes(4)
	r.Recover += fmt.Sprintf(", rejoined %s after restart", since(t1))
	acked, failed := w.count()
	r.Acked = fmt.Sprintf("%d files, %s (%d writes failed%s)", acked, mib(w.bytes()), failed, w.lastFailure())
	n := w.verify(t, ctx, cl)
	r.Survived = fmt.Sprintf("%d/%d files identical; %d reads during the loss: %d errors, %d wrong", n, acked, reads, readErrs, wrong)
	if wrong > 0 {
		t.Errorf("%d reads returned wrong data", wrong)
	}
	w.checkKnownFailures(t, r)
}

// One replica of a block is damaged on disk: reads return the right
// bytes (the client fails over and reports it), the NameNode replaces the
// replica, and the new copy is good (the block reads back after the other
// original holder dies).
func TestReplicaCorruption(t *testing.T) {
	t.Parallel()
	r := record(t, "replica corruption")
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 3, Volumes: disk})
	ctx := ctxT(t)
	cl := client(t, c)
	w := newFiles()
	size := 600 << 10 * scale()
	if size > 1<<20 {
		size = 1<<20 - 4096 // one block
	}
	if err := w.write(ctx, cl, "/c", size, 2, 1<<20); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := w.loop(ctx, cl, "/bg", 64<<10, 2, 64<<10, 20*time.Millisecond, stop)
	r.Running = fmt.Sprintf("a %s one-block file (repl 2) and a writer loop, 3 DataNodes", mib(int64(size)))
	locs, err := cl.BlockLocations(ctx, "/c")
	if err != nil || len(locs) != 1 || len(locs[0].Hosts) != 2 {
		t.Fatalf("locations of /c: %v %v", locs, err)
	}
	bad, good := c.DataNodeByAddr(locs[0].Hosts[0]), c.DataNodeByAddr(locs[0].Hosts[1])
	c.CorruptReplica(bad, locs[0].BlockID, int64(size/2))
	t0 := time.Now()
	// Read until the damaged replica has been hit and reported (the client
	// may read the good one first).
	c.WaitFor("a reader to meet and report the damaged replica", 60*time.Second, func() bool {
		got, err := readFile(ctx, cl, "/c")
		if err != nil || string(got) != string(content("/c", size)) {
			t.Fatalf("read with one damaged replica: %v", err)
		}
		l, err := cl.BlockLocations(ctx, "/c")
		if err != nil {
			return false
		}
		for _, h := range l[0].Hosts {
			if c.DataNodeByAddr(h) == bad {
				return false
			}
		}
		return true
	})
	c.WaitReplicated("/c", 2, 60*time.Second)
	r.Recover = since(t0) + " to 2 good replicas"
	close(stop)
	<-done
	c.KillDataNode(good)
	got, err := readFile(ctx, cl, "/c")
	if err != nil || string(got) != string(content("/c", size)) {
		t.Fatalf("read from the re-replicated copy alone: %d bytes, %v", len(got), err)
	}
	acked, failed := w.count()
	r.Acked = fmt.Sprintf("%d files (%d writes failed%s)", acked, failed, w.lastFailure())
	r.Survived = "the block reads back from the new replica alone (other original holder killed)"
	w.checkKnownFailures(t, r)
}

// A DataNode volume fails (its directory becomes a file) and the DataNode
// restarts with it gone, tolerating one failed volume: it reports the
// failure, its lost replicas are re-replicated, nothing acknowledged is
// lost.
func TestVolumeFailure(t *testing.T) {
	t.Parallel()
	r := record(t, "volume failure")
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 3, Volumes: []storage.Type{storage.Disk, storage.Disk},
		Conf: map[string]string{"dfs.datanode.failed.volumes.tolerated": "1"}})
	ctx := ctxT(t)
	cl := client(t, c)
	w := newFiles()
	for i := 0; i < 8*scale(); i++ {
		if err := w.write(ctx, cl, fmt.Sprintf("/pre/%03d", i), 192<<10, 2, 64<<10); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	done := w.loop(ctx, cl, "/bg", 64<<10, 2, 64<<10, 20*time.Millisecond, stop)
	r.Running = fmt.Sprintf("%d files of 192 KiB (repl 2, 64 KiB blocks) and a writer loop; 3 DataNodes of 2 volumes, 1 failure tolerated", 8*scale())
	c.FailVolume(0, 0)
	c.RestartDataNode(0)
	t0 := time.Now()
	st := c.DataNodeStatus(0)
	failedVols := 0
	for _, v := range st.Volumes {
		if v.Failed {
			failedVols++
		}
	}
	if failedVols != 1 {
		t.Errorf("datanode 0 reports %d failed volumes, want 1: %+v", failedVols, st.Volumes)
	}
	close(stop)
	<-done
	w.waitAllReplicated(c, 2, 60*time.Second)
	r.Recover = since(t0) + " from the restart to 2 replicas of every block"
	if !c.DataNodeProcess(0).Running() {
		t.Error("datanode 0 stopped with one failed volume of two (one tolerated)")
	}
	acked, failed := w.count()
	r.Acked = fmt.Sprintf("%d files, %s (%d writes failed%s)", acked, mib(w.bytes()), failed, w.lastFailure())
	n := w.verify(t, ctx, cl)
	r.Survived = fmt.Sprintf("%d/%d files identical; the DataNode serves on its other volume", n, acked)
	w.checkKnownFailures(t, r)
}

// DataNode 0's only volume is a small tmpfs that fills up while files are
// written: writes go on on the others, the DataNode stays up, and once
// the files are deleted it takes new blocks again.
func TestDataNodeDiskFull(t *testing.T) {
	t.Parallel()
	r := record(t, "DataNode disk full")
	const volSize = 2 << 20
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 3, Volumes: disk,
		VolumeSize: func(i, v int) int64 {
			if i == 0 {
				return volSize
			}
			return 0
		}})
	ctx := ctxT(t)
	cl := client(t, c)
	w := newFiles()
	n := 12 * scale()
	r.Running = fmt.Sprintf("%d files of 512 KiB (repl 2, 128 KiB blocks); datanode 0's volume a 2 MiB tmpfs", n)
	var lastErr error
	for i := 0; i < n; i++ {
		if err := w.write(ctx, cl, fmt.Sprintf("/full/%03d", i), 512<<10, 2, 128<<10); err != nil {
			lastErr = err
		}
	}
	acked, failed := w.count()
	r.Acked = fmt.Sprintf("%d of %d files (%d failed, last error %s)", acked, n, failed, errText(lastErr))
	for _, err := range w.errs {
		if !strings.Contains(err.Error(), closeRecoveryBug) {
			t.Errorf("a write failed with two DataNodes of free space: %v", err)
		}
	}
	used := dirBytes(c.VolumeDir(0, 0))
	if !c.DataNodeProcess(0).Running() {
		t.Fatal("datanode 0 exited when its disk filled")
	}
	verified := w.verify(t, ctx, cl)
	// Free the space: the DataNode must take blocks again.
	if err := cl.Delete(ctx, "/full", true); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	c.WaitFor("datanode 0's replicas deleted", 30*time.Second, func() bool { return dirBytes(c.VolumeDir(0, 0)) < volSize/4 })
	onDN0 := false
	for i := 0; i < 20 && !onDN0; i++ {
		p := fmt.Sprintf("/again/%03d", i)
		if err := w.write(ctx, cl, p, 64<<10, 2, 64<<10); err != nil {
			t.Fatalf("write after freeing space: %v", err)
		}
		locs, err := cl.BlockLocations(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range locs[0].Hosts {
			onDN0 = onDN0 || c.DataNodeByAddr(h) == 0
		}
	}
	if !onDN0 {
		t.Error("datanode 0 took no new block after its disk was freed")
	}
	r.Recover = since(t0) + " from the delete to a new block on datanode 0"
	r.Survived = fmt.Sprintf("%d/%d files identical; datanode 0 up with %s used of 2 MiB; it takes blocks again after the delete", verified, acked, mib(used))
	w.checkKnownFailures(t, r)
}

// dirBytes is the bytes of the regular files under dir.
func dirBytes(dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		p := dir + "/" + e.Name()
		if e.IsDir() {
			n += dirBytes(p)
		} else if fi, err := e.Info(); err == nil && !strings.HasPrefix(e.Name(), ".") {
			n += fi.Size()
		}
	}
	return n
}
