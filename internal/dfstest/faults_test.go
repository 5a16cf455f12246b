package dfstest

import (
	"bytes"
	"context"
	"github.com/stratafs/strata/internal/storage"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/testcluster"
)

func writeFile(t *testing.T, cl *hdfs.Client, p string, data []byte, repl int) {
	t.Helper()
	w, err := cl.CreateFile(context.Background(), p, fs.CreateOptions{CreateParent: true, BlockSize: smallBlock, Replication: repl})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, cl *hdfs.Client, p string) []byte {
	t.Helper()
	f, err := cl.OpenFile(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("reading %s: %v", p, err)
	}
	return b
}

// TestDataNodeDiesDuringWrite stops a DataNode of the pipeline halfway
// through a multi-block write: the write completes, the data reads back,
// and once the dead node is detected every block has 3 replicas again.
func TestDataNodeDiesDuringWrite(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 4})
	cl := c.Client(c.Superuser())
	data := randBytes(6*smallBlock+4321, 9)
	w, err := cl.CreateFile(context.Background(), "/big", fs.CreateOptions{BlockSize: smallBlock, Replication: 3})
	if err != nil {
		t.Fatal(err)
	}
	half := len(data) / 2
	for off := 0; off < half; off += 64 << 10 {
		if _, err := w.Write(data[off:min(half, off+64<<10)]); err != nil {
			t.Fatal(err)
		}
	}
	// Kill a node of the current pipeline.
	locs := c.BlockReplicasDetail("/big")
	victim := -1
	if len(locs) > 0 {
		last := locs[len(locs)-1]
		if len(last) > 0 {
			victim = c.DataNodeIndex(last[0])
		}
	}
	if victim < 0 {
		victim = 1
	}
	c.StopDataNode(victim)
	if _, err := w.Write(data[half:]); err != nil {
		t.Fatalf("write after a DataNode died: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close after a DataNode died: %v", err)
	}
	if got := readFile(t, cl, "/big"); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, not the %d written", len(got), len(data))
	}
	c.WaitFor("the NameNode to declare the node dead", 30*time.Second, func() bool {
		return c.NameNode().Status().LiveDataNodes == 3
	})
	c.WaitReplicated("/big", 3, 30*time.Second)
	if got := readFile(t, cl, "/big"); !bytes.Equal(got, data) {
		t.Fatal("data changed after re-replication")
	}
}

// TestDeadDataNodeBlocksReReplicated stops a DataNode holding replicas:
// the NameNode declares it dead and copies all its blocks elsewhere.
func TestDeadDataNodeBlocksReReplicated(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 4})
	cl := c.Client(c.Superuser())
	files := map[string][]byte{}
	for i, p := range []string{"/r/a", "/r/b", "/r/c"} {
		files[p] = randBytes(2*smallBlock+100*i, uint64(i))
		writeFile(t, cl, p, files[p], 2)
	}
	// Stop a node that holds replicas of /r/a's first block.
	victim := c.DataNodeIndex(c.BlockReplicasDetail("/r/a")[0][0])
	c.StopDataNode(victim)
	c.WaitFor("the NameNode to declare the node dead", 30*time.Second, func() bool {
		return c.NameNode().Status().LiveDataNodes == 3
	})
	for p := range files {
		c.WaitReplicated(p, 2, 30*time.Second)
	}
	for p, want := range files {
		if got := readFile(t, cl, p); !bytes.Equal(got, want) {
			t.Fatalf("%s changed", p)
		}
		for _, b := range c.BlockReplicasDetail(p) {
			for _, uuid := range b {
				if c.DataNodeIndex(uuid) == victim || c.DataNodeIndex(uuid) < 0 {
					t.Errorf("%s still lists the dead node", p)
				}
			}
		}
	}
}

// TestCorruptReplicaReadAndReplaced flips a byte in a replica on disk: a
// read still returns the right data (from another replica), the bad
// replica is reported, and the NameNode replaces it.
func TestCorruptReplicaReadAndReplaced(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 3})
	cl := c.Client(c.Superuser())
	data := randBytes(smallBlock/2, 4)
	writeFile(t, cl, "/c", data, 3)
	locs, err := cl.BlockLocations(context.Background(), "/c")
	if err != nil || len(locs) != 1 {
		t.Fatal(locs, err)
	}
	first := c.DataNodeIndex(locs[0].DatanodeIDs[0])
	c.CorruptReplica(first, locs[0].BlockID, 1000)
	// Readers pick replicas at random among equals: read until one hits
	// the bad copy. Every read must return the right data.
	hit := false
	for i := 0; i < 60 && !hit; i++ {
		if got := readFile(t, cl, "/c"); !bytes.Equal(got, data) {
			t.Fatal("read returned corrupt data")
		}
		bs, _ := cl.BlockLocations(context.Background(), "/c")
		hit = len(bs) == 1 && !contains(bs[0].DatanodeIDs, locs[0].DatanodeIDs[0])
	}
	if !hit {
		t.Fatal("60 reads never reported the corrupt replica")
	}
	// The corrupt replica is deleted and replaced from a good one.
	c.WaitFor("the corrupt replica to be replaced", 30*time.Second, func() bool {
		bs, _ := cl.BlockLocations(context.Background(), "/c")
		if len(bs) != 1 || len(bs[0].Hosts) != 3 {
			return false
		}
		// Every listed replica must now verify.
		for _, uuid := range bs[0].DatanodeIDs {
			i := c.DataNodeIndex(uuid)
			if i < 0 || c.DataNode(i).Dataset().Verify(blockOf(bs[0])) != nil {
				return false
			}
		}
		return true
	})
}

// TestNameNodeRestartWithDataNodes restarts the NameNode while DataNodes
// run: after safe mode ends, every block is back and clients work.
func TestNameNodeRestartWithDataNodes(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 3})
	cl := c.Client(c.Superuser())
	data := randBytes(3*smallBlock+5, 5)
	writeFile(t, cl, "/keep", data, 3)
	c.RestartNameNode()
	cl2 := c.Client(c.Superuser())
	c.WaitFor("safe mode to end", 30*time.Second, func() bool {
		on, err := cl2.SafeMode(context.Background(), "get")
		return err == nil && !on
	})
	if got := readFile(t, cl2, "/keep"); !bytes.Equal(got, data) {
		t.Fatal("data lost across a NameNode restart")
	}
	writeFile(t, cl2, "/after", data[:1000], 3)
	c.WaitReplicated("/keep", 3, 10*time.Second)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestBlockScannerFindsCorruptReplica: nobody reads the file, the
// DataNode's own scanner finds the flipped byte and the NameNode replaces
// the replica.
func TestBlockScannerFindsCorruptReplica(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 3, DataNode: func(i int, dc *datanode.Config) {
		dc.ScanPeriod = 300 * time.Millisecond
		dc.ScanBytesPerSecond = 1 << 30
	}})
	cl := c.Client(c.Superuser())
	data := randBytes(smallBlock/3, 8)
	writeFile(t, cl, "/s", data, 3)
	locs, _ := cl.BlockLocations(context.Background(), "/s")
	bad := c.DataNodeIndex(locs[0].DatanodeIDs[1])
	c.CorruptReplica(bad, locs[0].BlockID, 7)
	c.WaitFor("the scanner to report and the NameNode to replace the replica", 30*time.Second, func() bool {
		return c.DataNode(bad).Dataset().Verify(blockOf(locs[0])) == nil
	})
	c.WaitReplicated("/s", 3, 30*time.Second)
	if got := readFile(t, cl, "/s"); !bytes.Equal(got, data) {
		t.Fatal("data changed")
	}
}

// TestFailedVolumeTakenOutOfService destroys one volume of a DataNode:
// with one failure tolerated the node keeps serving from its other volume,
// and the replicas that were on the lost volume are copied elsewhere.
func TestFailedVolumeTakenOutOfService(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 4, DataNode: func(i int, dc *datanode.Config) {
		dc.FailedVolumesTolerated = 1
	}})
	cl := c.Client(c.Superuser())
	data := randBytes(3*smallBlock, 31)
	writeFile(t, cl, "/v", data, 3)
	// Find a DataNode with replicas and the volume they are on.
	locs, _ := cl.BlockLocations(context.Background(), "/v")
	i := c.DataNodeIndex(locs[0].DatanodeIDs[0])
	file := c.ReplicaFile(i, locs[0].BlockID)
	v := 0
	if !strings.HasPrefix(file, c.VolumeDir(i, 0)+string(filepath.Separator)) {
		v = 1
	}
	c.FailVolume(i, v)
	if c.DataNode(i) == nil {
		t.Fatal("one failed volume with one tolerated stopped the DataNode")
	}
	c.WaitReplicated("/v", 3, 30*time.Second)
	for _, b := range c.BlockReplicasDetail("/v") {
		if contains(b, c.DataNode(i).UUID()) && c.ReplicaFile(i, locs[0].BlockID) == file {
			t.Errorf("a replica on the failed volume is still listed")
		}
	}
	if got := readFile(t, cl, "/v"); !bytes.Equal(got, data) {
		t.Fatal("data lost with a failed volume")
	}
	// The DataNode still takes writes on its remaining volume.
	writeFile(t, cl, "/v2", data[:1000], 4)
}

// TestPipelineWritesTakeVolumesInTurn: a DataNode with two volumes puts
// a file's blocks on them in turn, whatever storage the NameNode named
// (Hadoop's round-robin volume choosing ignores the storage ID), so a
// JBOD node's disks share its writes evenly.
func TestPipelineWritesTakeVolumesInTurn(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 1, Volumes: []storage.Type{storage.Disk, storage.Disk}})
	cl := c.Client(c.Superuser())
	writeFile(t, cl, "/rr", randBytes(8*smallBlock, 5), 1)
	locs, err := cl.BlockLocations(context.Background(), "/rr")
	if err != nil || len(locs) != 8 {
		t.Fatalf("%d blocks, %v", len(locs), err)
	}
	var on [2]int
	for _, l := range locs {
		if strings.HasPrefix(c.ReplicaFile(0, l.BlockID), c.VolumeDir(0, 0)+string(filepath.Separator)) {
			on[0]++
		} else {
			on[1]++
		}
	}
	if on[0] != 4 || on[1] != 4 {
		t.Errorf("blocks per volume %v, want 4 and 4", on)
	}
}
