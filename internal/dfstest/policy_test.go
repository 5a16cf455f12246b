package dfstest

import (
	"context"
	"testing"
	"time"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/testcluster"
)

func blockOf(b hdfs.BlockLocation) fsdataset.Block {
	return fsdataset.Block{ID: b.BlockID, GenStamp: b.GenStamp, NumBytes: b.Length}
}

func countTypes(ts []storage.Type, want storage.Type) int {
	n := 0
	for _, t := range ts {
		if t == want {
			n++
		}
	}
	return n
}

// TestStoragePolicyPlacementAndMover: ALL_SSD puts every replica on SSD,
// ONE_SSD exactly one; changing the policy and asking for it to be
// satisfied (what strata mover does) moves the replicas.
func TestStoragePolicyPlacementAndMover(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 3})
	cl := c.Client(c.Superuser())
	ctx := context.Background()
	for _, d := range []string{"/hot", "/allssd", "/onessd"} {
		if err := cl.Mkdirs(ctx, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.SetStoragePolicy(ctx, "/allssd", "ALL_SSD"); err != nil {
		t.Fatal(err)
	}
	if err := cl.SetStoragePolicy(ctx, "/onessd", "ONE_SSD"); err != nil {
		t.Fatal(err)
	}
	data := randBytes(2*smallBlock+1, 6)
	for _, d := range []string{"/hot", "/allssd", "/onessd"} {
		writeFile(t, cl, d+"/f", data, 3)
	}
	check := func(p string, ssd int) {
		t.Helper()
		for i, b := range c.BlockReplicas(p) {
			if len(b) != 3 || countTypes(b, storage.SSD) != ssd {
				t.Errorf("%s block %d: replicas on %v, want 3 with %d on SSD", p, i, b, ssd)
			}
		}
	}
	check("/hot/f", 0)
	check("/allssd/f", 3)
	check("/onessd/f", 1)

	// Change /hot to ALL_SSD and satisfy the policy: replicas move.
	if err := cl.SetStoragePolicy(ctx, "/hot", "ALL_SSD"); err != nil {
		t.Fatal(err)
	}
	if err := cl.SatisfyStoragePolicy(ctx, "/hot"); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("/hot/f to move to SSD", 60*time.Second, func() bool {
		for _, b := range c.BlockReplicas("/hot/f") {
			if len(b) != 3 || countTypes(b, storage.SSD) != 3 {
				return false
			}
		}
		return true
	})
	if got := readFile(t, cl, "/hot/f"); string(got) != string(data) {
		t.Fatal("data changed by the move")
	}
}
