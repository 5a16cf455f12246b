package namenode

import (
	"context"
	"testing"

	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/storage"
)

// applyEdits puts edits straight into ns's tree (the state a history of
// client calls would leave), with the quota upkeep Apply does.
func applyEdits(t *testing.T, ns *Namesystem, edits ...namespace.Edit) {
	t.Helper()
	ns.mu.Lock()
	defer ns.mu.Unlock()
	for i, e := range edits {
		if err := ns.tree.Apply(e); err != nil {
			t.Fatalf("edit %d: %v", i, err)
		}
	}
}

var quotaTestPerm = namespace.Perm{Owner: "hdfs", Group: "supergroup", Mode: 0o755}

// closedFile is the edits of a closed file at p with blocks of the given
// lengths.
func closedFile(id uint64, p string, repl int, blockSize int64, lengths ...int64) []namespace.Edit {
	edits := []namespace.Edit{namespace.AddFile(namespace.NewFile{ID: id, Path: p, Perm: quotaTestPerm, Mtime: 1,
		Replication: repl, BlockSize: blockSize, ClientName: "c"})}
	var bs []namespace.BlockInfo
	var prev int64
	for i, l := range lengths {
		b := namespace.BlockInfo{ID: blockmgmt.FirstBlockID + id*16 + uint64(i), GenStamp: 1000 + id*16 + uint64(i)}
		edits = append(edits, namespace.AddBlock(p, b, prev))
		b.NumBytes, prev = l, l
		bs = append(bs, b)
	}
	return append(edits, namespace.CloseFile(p, 2, 2, bs))
}

// A rename charges the moved subtree under the destination's storage
// policy (Hadoop's verifyQuotaForRename): a HOT file moved into an
// ALL_SSD directory needs SSD quota there; one with a policy of its own
// keeps it.
func TestRenameQuotaUsesTheDestinationPolicy(t *testing.T) {
	ns, _ := testNS(t)
	ctx := context.Background()
	edits := []namespace.Edit{
		namespace.Mkdir(16386, "/hot", quotaTestPerm, 1),
		namespace.Mkdir(16387, "/ssd", quotaTestPerm, 1),
		namespace.SetStoragePolicy("/ssd", storage.AllSSDID),
		namespace.SetQuota("/ssd", 0, 500, storage.SSD),
	}
	edits = append(edits, closedFile(16388, "/hot/f", 1, 1<<20, 1000)...)
	edits = append(edits, closedFile(16389, "/hot/own", 1, 1<<20, 1000)...)
	edits = append(edits, namespace.SetStoragePolicy("/hot/own", storage.HotID))
	applyEdits(t, ns, edits...)

	_, err := ns.Rename(ctx, "/hot/f", "/ssd/f", false, false)
	wantClass(t, err, ClassTypeQuotaExceeded)
	qu, err := ns.QuotaUsage(ctx, "/ssd")
	mustOK(t, err)
	if qu.TypeConsumed[storage.SSD] != 0 {
		t.Fatalf("refused rename left SSD usage %d", qu.TypeConsumed[storage.SSD])
	}
	// A file with its own HOT policy stays on DISK: no SSD charge.
	_, err = ns.Rename(ctx, "/hot/own", "/ssd/own", false, false)
	mustOK(t, err)
	if qu, _ := ns.QuotaUsage(ctx, "/ssd"); qu.TypeConsumed[storage.SSD] != 0 || qu.TypeConsumed[storage.Disk] != 1000 {
		t.Fatalf("usage after moving a file with its own policy: %+v", qu)
	}
	mustOK(t, ns.tree.VerifyQuotas())
}

// getContentSummary's space and getQuotaUsage's agree for a directory
// with an open file (its last block charged in full in both, as Hadoop).
func TestContentSummarySpaceEqualsQuotaUsage(t *testing.T) {
	ns, _ := testNS(t)
	ctx := context.Background()
	applyEdits(t, ns,
		namespace.Mkdir(16386, "/d", quotaTestPerm, 1),
		namespace.SetQuota("/d", 100, 1<<30, 0),
		namespace.AddFile(namespace.NewFile{ID: 16387, Path: "/d/open", Perm: quotaTestPerm, Mtime: 1, Replication: 2, BlockSize: 1 << 20, ClientName: "c"}),
		namespace.AddBlock("/d/open", namespace.BlockInfo{ID: blockmgmt.FirstBlockID, GenStamp: 1}, 0),
		namespace.AddBlock("/d/open", namespace.BlockInfo{ID: blockmgmt.FirstBlockID + 1, GenStamp: 2}, 1<<20),
	)
	applyEdits(t, ns, closedFile(16388, "/d/closed", 3, 1<<20, 700)...)
	for _, p := range []string{"/d", "/"} {
		sum, err := ns.ContentSummary(ctx, p)
		mustOK(t, err)
		qu, err := ns.QuotaUsage(ctx, p)
		mustOK(t, err)
		if want := int64(2*(1<<20)*2 + 3*700); sum.SpaceConsumed != want || qu.SpaceConsumed != want {
			t.Errorf("%s: content summary space %d, quota usage space %d, want both %d", p, sum.SpaceConsumed, qu.SpaceConsumed, want)
		}
	}
}

// Truncating in the middle of a block reopens the file with that block
// charged in full (Hadoop's computeQuotaDeltaForTruncate), so it is
// checked against the quota first.
func TestMidBlockTruncateChecksQuota(t *testing.T) {
	ns, _ := testNS(t)
	ctx := context.Background()
	const mib = 1 << 20
	applyEdits(t, ns, namespace.Mkdir(16386, "/d", quotaTestPerm, 1))
	applyEdits(t, ns, closedFile(16387, "/d/f", 2, mib, mib, mib/2)...)
	applyEdits(t, ns, namespace.SetQuota("/d", 100, 2*(mib+mib/2), 0)) // exactly its usage
	_, err := ns.Truncate(ctx, "/d/f", mib+10, "c")
	wantClass(t, err, ClassDSQuotaExceeded)
	// At a block boundary nothing is charged in full: allowed.
	done, err := ns.Truncate(ctx, "/d/f", mib, "c")
	mustOK(t, err)
	if !done {
		t.Fatal("truncate at a block boundary not done at once")
	}
	if qu, _ := ns.QuotaUsage(ctx, "/d"); qu.SpaceConsumed != 2*mib {
		t.Fatalf("usage after truncate %d", qu.SpaceConsumed)
	}
	mustOK(t, ns.tree.VerifyQuotas())
}
