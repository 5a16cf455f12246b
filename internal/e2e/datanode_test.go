package e2e

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/testcluster"
)

// TestKill9DataNodeDuringWrite runs NameNode and DataNodes as processes,
// kills (SIGKILL) a DataNode in the middle of a replication-3 write, and
// checks that the write completes, the file reads back, and the NameNode
// restores 3 replicas on the remaining nodes.
func TestKill9DataNodeDuringWrite(t *testing.T) {
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 4})
	ctx := ctxT(t)
	cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: "root", BlockSize: 1 << 20, Replication: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	data := make([]byte, 12<<20)
	for i := range data {
		data[i] = byte(i*7 + i>>11)
	}
	w, err := cl.CreateFile(ctx, "/killed", fs.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	half := len(data) / 2
	if _, err := w.Write(data[:half]); err != nil {
		t.Fatal(err)
	}
	// Kill (SIGKILL) the first DataNode of the block being written.
	locs, err := cl.BlockLocations(ctx, "/killed")
	if err != nil || len(locs) == 0 {
		t.Fatalf("no blocks after writing half: %v", err)
	}
	victim := c.DataNodeByAddr(locs[len(locs)-1].Hosts[0])
	if victim < 0 {
		t.Fatalf("pipeline node %s is none of the DataNodes", locs[len(locs)-1].Hosts[0])
	}
	c.KillDataNode(victim)
	if _, err := w.Write(data[half:]); err != nil {
		t.Fatalf("write after kill -9 of a DataNode: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close after kill -9 of a DataNode: %v", err)
	}
	f, err := cl.OpenFile(ctx, "/killed")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (err %v), want the %d written", len(got), err, len(data))
	}
	// Once the dead node is detected, every block has 3 replicas again.
	c.WaitReplicated("/killed", 3, 60*time.Second)
	out, _, code := c.Run(c.Superuser(), "fsck", "/killed")
	if code != 0 || !bytes.Contains([]byte(out), []byte("is HEALTHY")) {
		t.Errorf("fsck after recovery (exit %d):\n%s", code, out)
	}
	c.StopNameNode()
}
