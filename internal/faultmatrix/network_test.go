package faultmatrix

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/testcluster"
)

// The NameNode and DataNodes run on hosts of their own (network
// namespaces on a bridge); the link between the NameNode and one
// DataNode is cut while a writer runs: the NameNode declares the
// DataNode dead after the expiry and re-replicates its blocks from the
// others; after the heal it rejoins, and every acknowledged file reads
// back.
func TestPartitionNameNodeFromDataNode(t *testing.T) {
	t.Parallel()
	r := record(t, "network partition: NameNode / one DataNode")
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 3, Volumes: disk, Hosts: true})
	ctx := ctxT(t)
	cl := client(t, c)
	w := newFiles()
	for i := 0; i < 6*scale(); i++ {
		if err := w.write(ctx, cl, fmt.Sprintf("/pre/%03d", i), 256<<10, 2, 64<<10); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	done := w.loop(ctx, cl, "/bg", 128<<10, 2, 64<<10, 20*time.Millisecond, stop)
	r.Running = fmt.Sprintf("%d files of 256 KiB (repl 2, 64 KiB blocks) and a writer loop; NameNode and 3 DataNodes each in its own netns", 6*scale())
	victim := 0
	c.Partition([]string{testcluster.NameNodeHost}, []string{testcluster.DataNodeHost(victim)})
	t0 := time.Now()
	c.WaitFor("the partitioned datanode declared dead", 30*time.Second, func() bool { return c.LiveDataNodes() == 2 })
	dead := since(t0)
	// Writes go on during the partition (the client still reaches every
	// DataNode); once the writer has made some more, stop it.
	before, _ := w.count()
	c.WaitFor("writes during the partition", 30*time.Second, func() bool { n, _ := w.count(); return n > before+3 })
	close(stop)
	<-done
	w.waitAllReplicated(c, 2, 60*time.Second)
	rerepl := since(t0)
	c.Heal()
	t1 := time.Now()
	c.WaitDataNodes(3)
	rejoined := since(t1)
	// Its replicas count again: the excess copies are removed, every
	// block back at exactly 2.
	w.waitAllReplicated(c, 2, 60*time.Second)
	r.Recover = fmt.Sprintf("declared dead after %s, every block at 2 live replicas after %s; rejoined %s after the heal, excess replicas gone after %s", dead, rerepl, rejoined, since(t1))
	acked, failed := w.count()
	r.Acked = fmt.Sprintf("%d files, %s (%d writes failed%s)", acked, mib(w.bytes()), failed, w.lastFailure())
	n := w.verify(t, ctx, cl)
	r.Survived = fmt.Sprintf("%d/%d files identical after the heal", n, acked)
	w.checkKnownFailures(t, r)
}

// A DataNode's host is cut off from every other host (NameNode, client,
// DataNodes) in the middle of a write through it: the write completes
// on the others (pipeline recovery), and the NameNode re-replicates the
// block once it declares the node dead.
func TestPartitionDataNodeMidWrite(t *testing.T) {
	t.Parallel()
	r := record(t, "network partition of a DataNode mid-write")
	// A short dfs.client.socket-timeout (Hadoop's default is 60 s) for
	// the client and the DataNodes, so that the silent node is given up
	// on in seconds: a DataNode waits for its mirror's ack 3 s plus 5 s a
	// downstream node, the client 3 s plus 5 s a pipeline node.
	const socketTimeout = 3 * time.Second
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 4, Volumes: disk, Hosts: true,
		Conf: map[string]string{"dfs.client.socket-timeout": fmt.Sprint(socketTimeout.Milliseconds())}})
	ctx := ctxT(t)
	cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: c.Superuser(), SocketTimeout: socketTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	size := 2 << 20 * scale()
	r.Running = fmt.Sprintf("a %s file (repl 3, 1 MiB blocks); NameNode and 4 DataNodes each in its own netns", mib(int64(size)))
	p := "/cut"
	data := content(p, size)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fw, err := cl.CreateFile(wctx, p, fs.CreateOptions{Replication: 3, BlockSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	half := len(data)/2 + 1000
	if _, err := fw.Write(data[:half]); err != nil {
		t.Fatal(err)
	}
	locs, err := cl.BlockLocations(ctx, p)
	if err != nil || len(locs) == 0 {
		t.Fatalf("no blocks after writing half: %v", err)
	}
	hosts := locs[len(locs)-1].Hosts
	victim := c.DataNodeByAddr(hosts[len(hosts)-1])
	others := []string{testcluster.NameNodeHost, testcluster.ClientHost}
	for i := 0; i < c.NumDataNodes(); i++ {
		if i != victim {
			others = append(others, testcluster.DataNodeHost(i))
		}
	}
	c.Partition([]string{testcluster.DataNodeHost(victim)}, others)
	t0 := time.Now()
	// Hadoop's client gives up on a pipeline node that stops answering
	// after dfs.client.socket-timeout (plus 5 s a node; the node before
	// the silent one reports it first) and recovers the pipeline without
	// it; allow some margin before calling the write stuck.
	bound := 20 * time.Second
	if long() {
		bound = 120 * time.Second
	}
	werr := make(chan error, 1)
	go func() {
		_, err := fw.Write(data[half:])
		if err == nil {
			err = fw.Close()
		}
		werr <- err
	}()
	select {
	case err := <-werr:
		if err != nil {
			t.Fatalf("write after the partition of datanode %d: %v", victim, err)
		}
	case <-time.After(bound):
		cancel()
		<-werr
		r.Acked = "nothing: the write hung"
		t.Fatalf("the write through datanode %d (cut off mid-write) made no progress in %v: the write pipeline did not time out on the silent node (dfs.client.socket-timeout %v)", victim, bound, socketTimeout)
	}
	closed := since(t0)
	r.Acked = fmt.Sprintf("the file (close acknowledged %s after the cut)", closed)
	c.WaitFor("the partitioned datanode declared dead", 30*time.Second, func() bool { return c.LiveDataNodes() == 3 })
	c.WaitReplicated(p, 3, 60*time.Second)
	r.Recover = fmt.Sprintf("write done %s after the cut, 3 live replicas after %s", closed, since(t0))
	got, err := readFile(ctx, cl, p)
	if err != nil || string(got) != string(data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
	c.Heal()
	c.WaitDataNodes(4)
	r.Survived = "the file reads back identical; the DataNode rejoins after the heal"
}

// A DataNode's link is shaped to 16 Mbit/s (tc tbf on its veth pair):
// writes through it slow down and succeed, and once the limit is lifted
// they are fast again.
func TestSlowLink(t *testing.T) {
	t.Parallel()
	r := record(t, "slow link (tc tbf, 16 Mbit/s to one DataNode)")
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 3, Volumes: disk, Hosts: true})
	ctx := ctxT(t)
	cl := client(t, c)
	size := 2 << 20 * scale()
	r.Running = fmt.Sprintf("%s files (repl 3: every pipeline through the shaped DataNode); NameNode and 3 DataNodes each in its own netns", mib(int64(size)))
	w := newFiles()
	c.Shape(testcluster.DataNodeHost(0), 16<<20)
	t0 := time.Now()
	if err := w.write(ctx, cl, "/link/0", size, 3, 1<<20); err != nil {
		t.Fatalf("write through the slow link: %v", err)
	}
	slow := time.Since(t0)
	c.Shape(testcluster.DataNodeHost(0), 0)
	t1 := time.Now()
	if err := w.write(ctx, cl, "/link/1", size, 3, 1<<20); err != nil {
		t.Fatalf("write after the limit was lifted: %v", err)
	}
	fast := time.Since(t1)
	// 16 Mbit/s is 2 MB/s: the file crosses the shaped link at least once.
	if min := time.Duration(float64(size) / (2 << 20) * float64(time.Second) / 2); slow < min {
		t.Errorf("the write through a 16 Mbit/s link took %v, less than half of the %v its bytes need", slow, 2*min)
	}
	acked, failed := w.count()
	r.Acked = fmt.Sprintf("%d files (%d failed); the write took %s through the shaped link, %s after", acked, failed, secs(slow), secs(fast))
	n := w.verify(t, ctx, cl)
	r.Survived = fmt.Sprintf("%d/%d files identical", n, acked)
	r.Recover = "n/a (no failure: slower)"
}
