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

// The first DataNode of a write pipeline (the one the client talks to) is
// cut off mid-write. No DataNode is upstream of it to notice: only the
// client's ack read timeout (dfs.client.socket-timeout plus 5 s a
// pipeline node, Hadoop's DataStreamer) ends the wait, blames the first
// node and recovers the pipeline on the other two.
func TestPartitionFirstPipelineNode(t *testing.T) {
	t.Parallel()
	r := record(t, "network partition of the first pipeline DataNode mid-write")
	const socketTimeout = 2 * time.Second
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 4, Volumes: disk, Hosts: true,
		Conf: map[string]string{"dfs.client.socket-timeout": fmt.Sprint(socketTimeout.Milliseconds())}})
	ctx := ctxT(t)
	cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: c.Superuser(), SocketTimeout: socketTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	size := 1 << 20
	r.Running = fmt.Sprintf("a %s file (repl 3, 1 MiB block), dfs.client.socket-timeout %v; NameNode and 4 DataNodes each in its own netns", mib(int64(size)), socketTimeout)
	p := "/cutfirst"
	data := content(p, size)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fw, err := cl.CreateFile(wctx, p, fs.CreateOptions{Replication: 3, BlockSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	half := len(data) / 2
	if _, err := fw.Write(data[:half]); err != nil {
		t.Fatal(err)
	}
	if err := fw.Flush(); err != nil {
		t.Fatal(err)
	}
	locs, err := cl.BlockLocations(ctx, p)
	if err != nil || len(locs) != 1 || len(locs[0].Hosts) != 3 {
		t.Fatalf("locations after writing half: %v %v", locs, err)
	}
	victim := c.DataNodeByAddr(locs[0].Hosts[0])
	others := []string{testcluster.NameNodeHost, testcluster.ClientHost}
	for i := 0; i < c.NumDataNodes(); i++ {
		if i != victim {
			others = append(others, testcluster.DataNodeHost(i))
		}
	}
	c.Partition([]string{testcluster.DataNodeHost(victim)}, others)
	t0 := time.Now()
	// The client waits socketTimeout + 3 × 5 s for an ack; allow as
	// much again for the recovery and the rest of the write.
	wait := socketTimeout + 3*5*time.Second
	bound := 2 * wait
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
		t.Fatalf("the write through datanode %d (the first of the pipeline, cut off mid-write) made no progress in %v: the client did not time out waiting for its acks", victim, bound)
	}
	closed := since(t0)
	r.Acked = fmt.Sprintf("the file (close acknowledged %s after the cut)", closed)
	got, err := readFile(ctx, cl, p)
	if err != nil || string(got) != string(data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
	locs, err = cl.BlockLocations(ctx, p)
	if err != nil || len(locs) != 1 {
		t.Fatalf("locations after the write: %v %v", locs, err)
	}
	for _, h := range locs[0].Hosts {
		if c.DataNodeByAddr(h) == victim {
			t.Errorf("the partitioned datanode %d is still a location of the block: %v", victim, locs[0].Hosts)
		}
	}
	r.Recover = fmt.Sprintf("write done %s after the cut (the ack timeout is %v)", closed, wait)
	c.Heal()
	c.WaitDataNodes(4)
	r.Survived = "the file reads back identical, without the cut-off node; it rejoins after the heal"
}
