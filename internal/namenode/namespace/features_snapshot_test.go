package namespace

import (
	"bytes"
	"testing"

	"github.com/stratafs/strata/internal/namenode/blockmgmt"
)

// TestSnapshotKeepsAttributesAndConcatTarget: a snapshot keeps the
// extended attributes a file had when it was taken (a later setXAttr that
// replaces the value must not show through), keeps them across an image,
// holds no quota of its own, and a concat onto a file a snapshot has
// leaves the snapshot's blocks as they were.
func TestSnapshotKeepsAttributesAndConcatTarget(t *testing.T) {
	fperm := Perm{Owner: "alice", Group: "staff", Mode: 0o644}
	tr := newTree()
	apply(t, tr, []Edit{
		Mkdir(16386, "/d", perm, 1000),
		SetQuota("/d", 100, -1, 0),
		AllowSnapshot("/d"),
		AddFile(NewFile{ID: 16387, Path: "/d/t", Perm: fperm, Mtime: 1001, Replication: 1, BlockSize: 100, ClientName: "c"}),
		CloseFile("/d/t", 1002, 1002, []BlockInfo{blk(0, 1001, 100)}),
		AddFile(NewFile{ID: 16388, Path: "/d/s", Perm: fperm, Mtime: 1003, Replication: 1, BlockSize: 100, ClientName: "c"}),
		SetXAttr("/d/t", XAttr{NS: XAttrUser, Name: "a", Value: []byte("old")}),
		CreateSnapshot("/d", "s1", 1, 2000),
		CloseFile("/d/s", 2001, 2001, []BlockInfo{blk(1, 1004, 40)}),
		SetXAttr("/d/t", XAttr{NS: XAttrUser, Name: "a", Value: []byte("new")}),
		Concat("/d/t", []string{"/d/s"}, 2002),
	})
	check := func(tr *Tree, what string) {
		t.Helper()
		snap := tr.Lookup("/d/.snapshot/s1/t")
		if snap == nil || len(snap.XAttrs()) != 1 || string(snap.XAttrs()[0].Value) != "old" {
			t.Fatalf("%s: the snapshot's xattrs are %+v, want a=old", what, snap)
		}
		if live := tr.Lookup("/d/t"); len(live.XAttrs()) != 1 || string(live.XAttrs()[0].Value) != "new" || len(live.Blocks()) != 2 {
			t.Fatalf("%s: live /d/t = %+v", what, live)
		}
		if len(snap.Blocks()) != 1 || snap.Length() != 100 || !tr.SnapshotHolds(snap.Blocks()[0]) {
			t.Fatalf("%s: the snapshot's blocks changed with the concat: %+v", what, snap.Blocks())
		}
		if tr.Lookup("/d/.snapshot/s1").Quota() != nil {
			t.Fatalf("%s: the snapshot's root has the live directory's quota", what)
		}
	}
	check(tr, "after the edits")
	var img bytes.Buffer
	if err := tr.WriteImage(&img); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadImage(bytes.NewReader(img.Bytes()), blockmgmt.NewBlockMap())
	if err != nil {
		t.Fatal(err)
	}
	check(loaded, "after an image")
}
