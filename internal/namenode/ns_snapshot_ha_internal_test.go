package namenode

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
)

// TestHASnapshots: snapshot edits reach the followers through Tree.Apply,
// so every member has the same namespace (snapshots included, as the
// image digest shows), and after a failover the new active serves the
// snapshots and changes them.
func TestHASnapshots(t *testing.T) {
	g := newHAGroup(t, 3)
	a := g.active(10 * time.Second)
	ctx := context.Background()
	ns := g.nns[a].Namesystem()
	mustOK(t, ns.Mkdirs(ctx, "/d/a", 0o755, true))
	mustOK(t, ns.AllowSnapshot(ctx, "/d"))
	if _, err := ns.CreateSnapshot(ctx, "/d", "s1"); err != nil {
		t.Fatal(err)
	}
	mustOK(t, ns.Mkdirs(ctx, "/d/b", 0o755, true))
	if _, err := ns.Delete(ctx, "/d/a", true); err != nil {
		t.Fatal(err)
	}
	if _, err := ns.CreateSnapshot(ctx, "/d", "s2"); err != nil {
		t.Fatal(err)
	}
	mustOK(t, ns.RenameSnapshot(ctx, "/d", "s2", "s3"))
	// Blocks held by snapshots (the digest covers owners, holders, wanted
	// replicas and commit state): files written by raw edits, as no
	// DataNode runs here; a file whose replication drops below its
	// snapshot's, one deleted after a snapshot, and a copy-on-truncate
	// whose only snapshot is deleted mid-copy.
	bid := func(i uint64) namespace.BlockInfo {
		return namespace.BlockInfo{ID: blockmgmt.FirstBlockID + 100 + i, GenStamp: blockmgmt.FirstGenStamp + 100 + i, NumBytes: 100}
	}
	perm := namespace.Perm{Owner: "hdfs", Group: "supergroup", Mode: 0o644}
	file := func(id uint64, p string, b namespace.BlockInfo) []namespace.Edit {
		return []namespace.Edit{
			namespace.AddFile(namespace.NewFile{ID: id, Path: p, Perm: perm, Mtime: 1, Replication: 3, BlockSize: 100, ClientName: "c"}),
			namespace.CloseFile(p, 2, 2, []namespace.BlockInfo{b}),
		}
	}
	raw := func(ops ...namespace.Edit) {
		t.Helper()
		mustOK(t, ns.mutate(ctx, func() ([]namespace.Edit, error) { return ops, nil }))
	}
	raw(append(append(file(90001, "/d/f", bid(1)), file(90002, "/d/g", bid(2))...), file(90003, "/d/h", bid(3))...)...)
	if _, err := ns.CreateSnapshot(ctx, "/d", "s4"); err != nil {
		t.Fatal(err)
	}
	cut := bid(4)
	cut.NumBytes = 40
	raw(namespace.SetReplication("/d/f", 1), namespace.Delete("/d/g", 3),
		namespace.ReopenFile("/d/h", "c", "", 4), namespace.UpdateBlocks("/d/h", []namespace.BlockInfo{cut}, false),
		namespace.CopyOnTruncate("/d/h", bid(3)))
	if _, err := ns.CreateSnapshot(ctx, "/d", "s5"); err != nil {
		t.Fatal(err)
	}
	blockState := func() string {
		var b bytes.Buffer
		ns.mu.RLock()
		defer ns.mu.RUnlock()
		mustOK(t, ns.tree.WriteBlockState(&b))
		return b.String()
	}
	if got, want := blockState(), `blk_1073741926_1102 want=3 owner=live:/d/f committed=true held=/d/.snapshot/s4/f held=/d/.snapshot/s5/f
blk_1073741927_1103 want=3 owner=snapshot:/d/.snapshot/s4/g committed=true held=/d/.snapshot/s4/g
blk_1073741928_1104 want=3 owner=snapshot:/d/.snapshot/s4/h committed=true held=/d/.snapshot/s4/h
blk_1073741929_1105 want=3 owner=live:/d/h held=/d/.snapshot/s5/h
`; got != want {
		t.Fatalf("block state\n%s\nwant\n%s", got, want)
	}
	g.waitDigests(10 * time.Second)
	mustOK(t, ns.DeleteSnapshot(ctx, "/d", "s4"))
	if got, want := blockState(), `blk_1073741926_1102 want=1 owner=live:/d/f committed=true held=/d/.snapshot/s5/f
blk_1073741928_1104 want=3 owner=copy-source:/d/h committed=true
blk_1073741929_1105 want=3 owner=live:/d/h held=/d/.snapshot/s5/h
`; got != want {
		t.Fatalf("block state after s4 went\n%s\nwant\n%s", got, want)
	}
	// An image loads the same block state.
	var img, loaded bytes.Buffer
	ns.mu.RLock()
	mustOK(t, ns.tree.WriteImage(&img))
	ns.mu.RUnlock()
	tr, err := namespace.ReadImage(&img, blockmgmt.NewBlockMap())
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, tr.WriteBlockState(&loaded))
	if got := blockState(); loaded.String() != got {
		t.Fatalf("block state from the image\n%s\nat run time\n%s", loaded.String(), got)
	}
	g.waitDigests(10 * time.Second)

	g.stop(a)
	b := g.active(10 * time.Second)
	nb := g.nns[b].Namesystem()
	if st, err := nb.FileInfo(ctx, "/d/.snapshot/s1/a"); err != nil || st == nil {
		t.Fatalf("s1/a on the new active: %v %v", st, err)
	}
	if st, _ := nb.FileInfo(ctx, "/d/.snapshot/s3/b"); st == nil {
		t.Fatal("s3/b missing on the new active")
	}
	mustOK(t, nb.DeleteSnapshot(ctx, "/d", "s1"))
	if st, _ := nb.FileInfo(ctx, "/d/.snapshot/s1"); st != nil {
		t.Fatal("s1 still there")
	}
	g.start(a)
	g.waitDigests(10 * time.Second)
}
