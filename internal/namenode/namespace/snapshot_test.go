package namespace

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/namenode/blockmgmt"
)

// snapDump renders every snapshot of every snapshottable directory.
func snapDump(t *Tree) string {
	var b strings.Builder
	for _, d := range t.SnapshotDirs() {
		fmt.Fprintf(&b, "snapshottable %s\n", d.Path())
		for _, s := range d.Snap().Snapshots {
			var walk func(n *Inode)
			walk = func(n *Inode) {
				fmt.Fprintf(&b, "  %s %d len=%d", n.Path(), n.ID, n.Length())
				for _, blk := range n.Blocks() {
					fmt.Fprintf(&b, " %s", blk)
				}
				b.WriteByte('\n')
				for _, c := range n.Children {
					walk(c)
				}
			}
			fmt.Fprintf(&b, " snapshot %d %s ctime=%d\n", s.ID, s.Name, s.Ctime)
			walk(s.Root)
		}
	}
	return b.String()
}

func blk(i int, gs uint64, n int64) BlockInfo {
	return BlockInfo{ID: blockmgmt.FirstBlockID + uint64(i), GenStamp: gs, NumBytes: n}
}

// snapHistory: /d with files f (two blocks) and g; s1 taken; f
// truncated to its first block, g deleted, h created; s2 taken; f
// appended to (its last block grows).
func snapHistory() []Edit {
	fperm := Perm{Owner: "alice", Group: "staff", Mode: 0o644}
	return []Edit{
		Mkdir(16386, "/d", perm, 1000),
		AllowSnapshot("/d"),
		AddFile(NewFile{ID: 16387, Path: "/d/f", Perm: fperm, Mtime: 1001, Replication: 2, BlockSize: 100, ClientName: "c"}),
		CloseFile("/d/f", 1002, 1002, []BlockInfo{blk(0, 1001, 100), blk(1, 1002, 50)}),
		AddFile(NewFile{ID: 16388, Path: "/d/g", Perm: fperm, Mtime: 1003, Replication: 1, BlockSize: 100, ClientName: "c"}),
		CloseFile("/d/g", 1004, 1004, []BlockInfo{blk(2, 1003, 10)}),
		CreateSnapshot("/d", "s1", 1, 2000),
		UpdateBlocks("/d/f", []BlockInfo{blk(0, 1001, 100)}, false),
		Delete("/d/g", 2001),
		AddFile(NewFile{ID: 16389, Path: "/d/h", Perm: fperm, Mtime: 2002, Replication: 1, BlockSize: 100, ClientName: "c"}),
		CloseFile("/d/h", 2003, 2003, nil),
		CreateSnapshot("/d", "s2", 2, 3000),
		ReopenFile("/d/f", "c", "", 3001),
		CloseFile("/d/f", 3002, 3002, []BlockInfo{blk(0, 1005, 100), blk(3, 1006, 30)}),
	}
}

func TestSnapshotTreeSemantics(t *testing.T) {
	tr := newTree()
	apply(t, tr, snapHistory())

	// The snapshots read the old state through .snapshot paths.
	s1f := tr.Lookup("/d/.snapshot/s1/f")
	if s1f == nil || s1f.Length() != 150 || len(s1f.Blocks()) != 2 || !s1f.ReadOnly() {
		t.Fatalf("s1/f = %+v", s1f)
	}
	if g := tr.Lookup("/d/.snapshot/s1/g"); g == nil || g.Length() != 10 {
		t.Fatalf("s1/g = %+v", g)
	}
	if tr.Lookup("/d/.snapshot/s1/h") != nil || tr.Lookup("/d/.snapshot/s2/h") == nil {
		t.Fatal("h should be only in s2")
	}
	// Append after s2: s2 keeps the old length though the block grew
	// (the shared block has the new stamp).
	s2f := tr.Lookup("/d/.snapshot/s2/f")
	if s2f.Length() != 100 || s2f.Blocks()[0].GenStamp != 1005 || len(s2f.Blocks()) != 1 {
		t.Fatalf("s2/f len=%d blocks=%v", s2f.Length(), s2f.Blocks())
	}
	if live := tr.Lookup("/d/f"); live.Length() != 130 || live.ReadOnly() {
		t.Fatalf("live f len=%d", live.Length())
	}
	// Hadoop 3's modification times: the snapshot root and the directory
	// take the creation time.
	if r1, d := tr.Lookup("/d/.snapshot/s1"), tr.Lookup("/d"); r1.Mtime != 2000 || d.Mtime != 3000 {
		t.Fatalf("mtimes: s1 root %d, /d %d", r1.Mtime, d.Mtime)
	}
	if got := s1f.Path(); got != "/d/.snapshot/s1/f" {
		t.Fatalf("path %q", got)
	}
	r := tr.Resolve("/d/.snapshot")
	if !r.Exists() || !r.InSnapshot() || len(r.Target().Children) != 2 || r.Target().Children[0].Name != "s1" {
		t.Fatalf(".snapshot resolves to %+v", r.Target())
	}
	if tr.Resolve("/d/f").InSnapshot() {
		t.Fatal("live path in snapshot")
	}
	// Blocks dropped by the live files are kept: truncated blk1, deleted blk2.
	if rm := tr.Blocks.TakeRemoved(); len(rm) != 0 {
		t.Fatalf("removed %v while snapshots hold them", rm)
	}
	for i := 0; i < 4; i++ {
		if tr.Blocks.Get(blk(i, 0, 0).ID) == nil {
			t.Fatalf("block %d gone", i)
		}
	}
	if f := FileOf(tr.Blocks.Get(blk(2, 0, 0).ID)); f == nil || f.Path() != "/d/.snapshot/s1/g" {
		t.Fatalf("blk2 belongs to %v", f)
	}

	// Image round trip keeps everything, shared blocks shared.
	var img bytes.Buffer
	if err := tr.WriteImage(&img); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadImage(bytes.NewReader(img.Bytes()), blockmgmt.NewBlockMap())
	if err != nil {
		t.Fatal(err)
	}
	if dump(loaded) != dump(tr) || snapDump(loaded) != snapDump(tr) {
		t.Fatalf("image lost snapshots:\n%s\n%s\nvs\n%s\n%s", dump(loaded), snapDump(loaded), dump(tr), snapDump(tr))
	}
	if a, b := loaded.Lookup("/d/f").Blocks()[0], loaded.Lookup("/d/.snapshot/s1/f").Blocks()[0]; a != b {
		t.Fatal("image load does not share the live file's block with the snapshot")
	}

	// Replay of the records gives the same tree.
	replayed := newTree()
	for _, e := range snapHistory() {
		rec, _ := e.Marshal()
		if err := replayed.ApplyRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	if snapDump(replayed) != snapDump(tr) {
		t.Fatalf("replay differs:\n%s\nvs\n%s", snapDump(replayed), snapDump(tr))
	}

	// Rename s2 to s3; delete s1: blk1 and blk2 are only in s1 and go.
	for _, tree := range []*Tree{tr, loaded} {
		apply(t, tree, []Edit{RenameSnapshot("/d", "s2", "s3", 3500), DeleteSnapshot("/d", "s1", 3600)})
		if tree.Lookup("/d/.snapshot/s3/f") == nil || tree.Lookup("/d/.snapshot/s2") != nil {
			t.Fatal("rename did not take")
		}
		if tree.Lookup("/d/.snapshot/s3").Mtime != 3500 || tree.Lookup("/d").Mtime != 3600 {
			t.Fatal("rename and delete mtimes")
		}
		if got := removedIDs(tree); got != fmt.Sprint([]uint64{blk(1, 0, 0).ID, blk(2, 0, 0).ID}) {
			t.Fatalf("removed after deleting s1: %s", got)
		}
		// Deleting the live f leaves blk0 (in s3) and drops blk3 (only live).
		apply(t, tree, []Edit{Delete("/d/f", 4000)})
		if got := removedIDs(tree); got != fmt.Sprint([]uint64{blk(3, 0, 0).ID}) {
			t.Fatalf("removed after deleting f: %s", got)
		}
		b0 := tree.Blocks.Get(blk(0, 0, 0).ID)
		if f := FileOf(b0); f == nil || f.Path() != "/d/.snapshot/s3/f" {
			t.Fatalf("blk0 belongs to %v", f)
		}
		apply(t, tree, []Edit{DeleteSnapshot("/d", "s3", 4100)})
		if got := removedIDs(tree); got != fmt.Sprint([]uint64{blk(0, 0, 0).ID}) {
			t.Fatalf("removed after deleting s3: %s", got)
		}
		if tree.Blocks.Len() != 0 || tree.SnapshotCount() != 0 {
			t.Fatalf("blocks left %d, snapshots %d", tree.Blocks.Len(), tree.SnapshotCount())
		}
		apply(t, tree, []Edit{DisallowSnapshot("/d")})
		if len(tree.SnapshotDirs()) != 0 || tree.Lookup("/d/.snapshot") != nil {
			t.Fatal("still snapshottable")
		}
	}
}

func removedIDs(t *Tree) string {
	var ids []uint64
	for _, b := range t.Blocks.TakeRemoved() {
		ids = append(ids, b.ID)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return fmt.Sprint(ids)
}

func TestSnapshotApplyRejects(t *testing.T) {
	tr := newTree()
	apply(t, tr, []Edit{Mkdir(16386, "/d", perm, 1), Mkdir(16387, "/e", perm, 1), AllowSnapshot("/d"), CreateSnapshot("/d", "s1", 1, 5)})
	for _, e := range []Edit{
		CreateSnapshot("/e", "s1", 2, 5),      // not snapshottable
		CreateSnapshot("/d", "s1", 2, 5),      // name taken
		DeleteSnapshot("/d", "nope", 6),       // missing
		RenameSnapshot("/d", "nope", "x", 6),  // missing
		DisallowSnapshot("/d"),                // has snapshots
		AllowSnapshot("/d/.snapshot/s1"),      // inside a snapshot
		CreateSnapshot("/missing", "s", 3, 5), // no such dir
		RenameSnapshot("/d", "s1", "", 6),     // empty name
		CreateSnapshot("/d/.snapshot", "x", 3, 5),
	} {
		if err := tr.Apply(e); err == nil {
			t.Errorf("%v applied", e.op)
		}
	}
}

func TestSnapshotDiff(t *testing.T) {
	tr := newTree()
	fperm := Perm{Owner: "alice", Group: "staff", Mode: 0o644}
	add := func(id uint64, p string, bs ...BlockInfo) []Edit {
		return []Edit{AddFile(NewFile{ID: id, Path: p, Perm: fperm, Mtime: 1, Replication: 1, BlockSize: 100, ClientName: "c"}), CloseFile(p, 1, 1, bs)}
	}
	var edits []Edit
	edits = append(edits, Mkdir(16386, "/d", perm, 1), Mkdir(16387, "/d/sub", perm, 1), Mkdir(16388, "/d/old", perm, 1), AllowSnapshot("/d"))
	edits = append(edits, add(16389, "/d/keep", blk(0, 1001, 5))...)
	edits = append(edits, add(16390, "/d/grow", blk(1, 1002, 5))...)
	edits = append(edits, add(16391, "/d/gone")...)
	edits = append(edits, add(16392, "/d/moved")...)
	edits = append(edits, add(16393, "/d/old/inner")...)
	edits = append(edits, CreateSnapshot("/d", "s1", 1, 10))
	edits = append(edits, ReopenFile("/d/grow", "c", "", 20), CloseFile("/d/grow", 21, 21, []BlockInfo{blk(1, 1003, 9)}))
	edits = append(edits, Delete("/d/gone", 22), Rename("/d/moved", "/d/sub/moved2", 23, false), Delete("/d/old", 24))
	edits = append(edits, add(16394, "/d/new")...)
	edits = append(edits, Mkdir(16395, "/d/newdir", perm, 25))
	edits = append(edits, add(16396, "/d/newdir/x")...)
	edits = append(edits, CreateSnapshot("/d", "s2", 2, 30))
	apply(t, tr, edits)
	d := tr.Lookup("/d")
	render := func(es []DiffEntry) string {
		var b strings.Builder
		for _, e := range es {
			b.WriteString(e.Type + "\t" + DiffPath(e.Path))
			if e.Type == "R" {
				b.WriteString(" -> " + DiffPath(e.Target))
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	want := "M\t.\n+\t./new\n+\t./newdir\n-\t./gone\nR\t./moved -> ./sub/moved2\n-\t./old\nM\t./grow\nM\t./sub\n"
	for _, to := range []string{"s2", ""} {
		es, err := SnapshotDiff(d, "s1", to)
		if err != nil {
			t.Fatal(err)
		}
		if got := render(es); got != want {
			t.Errorf("diff s1 %q:\n%s\nwant\n%s", to, got, want)
		}
	}
	if es, _ := SnapshotDiff(d, "s2", ""); len(es) != 0 {
		t.Errorf("s2 vs current: %v", es)
	}
	if _, err := SnapshotDiff(d, "s1", "nope"); err == nil {
		t.Error("missing snapshot accepted")
	}
}

func TestDiffOrder(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{{"", "a", true}, {"a", "a/b", true}, {"a/b", "a.b", true}, {"a.b", "a/b", false}, {"\xc3\xa9", "z", true}, {"b", "a/z", false}} {
		if got := pathLess(c.a, c.b); got != c.less {
			t.Errorf("pathLess(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

func TestDefaultSnapshotName(t *testing.T) {
	got := DefaultSnapshotName(time.Date(2024, 3, 5, 7, 8, 9, 12e6, time.UTC))
	if got != "s20240305-070809.012" {
		t.Fatal(got)
	}
}

// TestCopyOnTruncateRecord: the copy source of a truncate inside a held
// block survives the image and replay, and closing the file clears it;
// the held block stays for the snapshot.
func TestCopyOnTruncateRecord(t *testing.T) {
	tr := newTree()
	fperm := Perm{Owner: "alice", Group: "staff", Mode: 0o644}
	held := blk(0, 1001, 100)
	edits := []Edit{
		Mkdir(16386, "/d", perm, 1), AllowSnapshot("/d"),
		AddFile(NewFile{ID: 16387, Path: "/d/f", Perm: fperm, Mtime: 1, Replication: 1, BlockSize: 100, ClientName: "c"}),
		CloseFile("/d/f", 2, 2, []BlockInfo{held}),
		CreateSnapshot("/d", "s1", 1, 3),
		ReopenFile("/d/f", "c", "", 4),
		UpdateBlocks("/d/f", []BlockInfo{blk(1, 1002, 40)}, false),
		CopyOnTruncate("/d/f", held),
	}
	apply(t, tr, edits)
	var img bytes.Buffer
	if err := tr.WriteImage(&img); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadImage(bytes.NewReader(img.Bytes()), blockmgmt.NewBlockMap())
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Tree{tr, loaded} {
		f := x.Lookup("/d/f")
		if f.UC() == nil || f.UC().CopySource == nil || *f.UC().CopySource != held || f.Blocks()[0].Committed {
			t.Fatalf("copy source %+v", f.UC())
		}
		if s := x.Lookup("/d/.snapshot/s1/f"); s.Length() != 100 || s.Blocks()[0].ID != held.ID || x.Blocks.Get(held.ID) == nil {
			t.Fatal("the held block went")
		}
		apply(t, x, []Edit{CloseFile("/d/f", 5, 5, []BlockInfo{blk(1, 1002, 40)})})
		if x.Lookup("/d/f").UC() != nil || len(x.Blocks.TakeRemoved()) != 0 {
			t.Fatal("close after the copy")
		}
	}
	if err := tr.Apply(CopyOnTruncate("/d/f", held)); err == nil {
		t.Fatal("copy source set on a closed file")
	}
}

// TestCopySourceOutlivesSnapshot: deleting the only snapshot holding the
// source of an unfinished copy-on-truncate keeps the source (replicated,
// committed) until the file closes, at runtime and after an image.
func TestCopySourceOutlivesSnapshot(t *testing.T) {
	fperm := Perm{Owner: "alice", Group: "staff", Mode: 0o644}
	held := blk(0, 1001, 100)
	edits := []Edit{
		Mkdir(16386, "/d", perm, 1), AllowSnapshot("/d"),
		AddFile(NewFile{ID: 16387, Path: "/d/f", Perm: fperm, Mtime: 1, Replication: 2, BlockSize: 100, ClientName: "c"}),
		CloseFile("/d/f", 2, 2, []BlockInfo{held}),
		CreateSnapshot("/d", "s1", 1, 3),
		ReopenFile("/d/f", "c", "", 4),
		UpdateBlocks("/d/f", []BlockInfo{blk(1, 1002, 40)}, false),
		CopyOnTruncate("/d/f", held),
		DeleteSnapshot("/d", "s1", 5),
	}
	tr := newTree()
	apply(t, tr, edits)
	var img bytes.Buffer
	if err := tr.WriteImage(&img); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadImage(bytes.NewReader(img.Bytes()), blockmgmt.NewBlockMap())
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range []*Tree{tr, loaded} {
		if gone := x.Blocks.TakeRemoved(); len(gone) != 0 {
			t.Fatalf("tree %d: the copy's source was dropped: %v", i, gone)
		}
		b := x.Blocks.Get(held.ID)
		if b == nil || !b.Committed || b.File == nil || b.WantReplicas() != 2 || b.File.IsUnderConstruction() {
			t.Fatalf("tree %d: source %+v", i, b)
		}
		apply(t, x, []Edit{CloseFile("/d/f", 6, 6, []BlockInfo{blk(1, 1002, 40)})})
		if gone := x.Blocks.TakeRemoved(); len(gone) != 1 || gone[0].ID != held.ID || x.Blocks.Get(held.ID) != nil {
			t.Fatalf("tree %d: source not freed with the close: %v", i, gone)
		}
	}
	// Deleting the file mid-copy frees the source too.
	tr = newTree()
	apply(t, tr, append(edits[:len(edits):len(edits)], Delete("/d/f", 7)))
	if tr.Blocks.Get(held.ID) != nil {
		t.Fatal("source kept after the file went")
	}
}

// TestHeldBlockCommitted: a block a snapshot copy takes over from the
// live file (truncate inside a held last block; append to a held block,
// then delete) is committed, as an image loads it.
func TestHeldBlockCommitted(t *testing.T) {
	fperm := Perm{Owner: "alice", Group: "staff", Mode: 0o644}
	held := blk(0, 1001, 100)
	base := []Edit{
		Mkdir(16386, "/d", perm, 1), AllowSnapshot("/d"),
		AddFile(NewFile{ID: 16387, Path: "/d/f", Perm: fperm, Mtime: 1, Replication: 1, BlockSize: 200, ClientName: "c"}),
		CloseFile("/d/f", 2, 2, []BlockInfo{held}),
		CreateSnapshot("/d", "s1", 1, 3),
		ReopenFile("/d/f", "c", "", 4),
	}
	for name, tail := range map[string][]Edit{
		"truncate": {UpdateBlocks("/d/f", []BlockInfo{blk(1, 1002, 40)}, false), CopyOnTruncate("/d/f", held)},
		"append":   {Delete("/d/f", 5)},
	} {
		tr := newTree()
		apply(t, tr, append(base[:len(base):len(base)], tail...))
		if b := tr.Blocks.Get(held.ID); b == nil || !b.Committed || FileOf(b) == nil || !FileOf(b).ReadOnly() {
			t.Errorf("%s: held block %+v not committed in a snapshot's hands", name, b)
		}
	}
}

// TestHeldReplication: a block is kept at the most replicas any holder
// asks for, and a block only snapshots hold has the same owner after
// edits as after an image (the oldest snapshot's copy).
func TestHeldReplication(t *testing.T) {
	fperm := Perm{Owner: "alice", Group: "staff", Mode: 0o644}
	b0 := blk(0, 1001, 100)
	tr := newTree()
	apply(t, tr, []Edit{
		Mkdir(16386, "/d", perm, 1), AllowSnapshot("/d"),
		AddFile(NewFile{ID: 16387, Path: "/d/f", Perm: fperm, Mtime: 1, Replication: 3, BlockSize: 100, ClientName: "c"}),
		CloseFile("/d/f", 2, 2, []BlockInfo{b0}),
		CreateSnapshot("/d", "z", 1, 3), // replication 3, taken first
		SetReplication("/d/f", 2),
		CreateSnapshot("/d", "a", 2, 4), // replication 2, first by name
		SetReplication("/d/f", 1),
	})
	if got := tr.Blocks.Get(b0.ID).WantReplicas(); got != 3 {
		t.Fatalf("live file at 1, snapshots at 3 and 2: want %d replicas, not 3", got)
	}
	apply(t, tr, []Edit{Delete("/d/f", 5)})
	var img bytes.Buffer
	if err := tr.WriteImage(&img); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadImage(bytes.NewReader(img.Bytes()), blockmgmt.NewBlockMap())
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range []*Tree{tr, loaded} {
		b := x.Blocks.Get(b0.ID)
		if b.WantReplicas() != 3 || FileOf(b).Path() != "/d/.snapshot/z/f" {
			t.Errorf("tree %d: want %d, owner %s", i, b.WantReplicas(), FileOf(b).Path())
		}
	}
	apply(t, tr, []Edit{DeleteSnapshot("/d", "z", 6)})
	if b := tr.Blocks.Get(b0.ID); b.WantReplicas() != 2 || FileOf(b).Path() != "/d/.snapshot/a/f" {
		t.Errorf("after z went: want %d, owner %s", b.WantReplicas(), FileOf(b).Path())
	}
}

// TestImageKeepsLastCommitted: an open file whose last block is committed
// (a truncate inside it being finished by the DataNodes) has it committed
// after an image as after the edits, so a recovery after a restart cuts
// it to the truncate's length rather than finishing it at what the
// replicas hold.
func TestImageKeepsLastCommitted(t *testing.T) {
	fperm := Perm{Owner: "alice", Group: "staff", Mode: 0o644}
	tr := newTree()
	apply(t, tr, []Edit{
		AddFile(NewFile{ID: 16386, Path: "/f", Perm: fperm, Mtime: 1, Replication: 1, BlockSize: 100, ClientName: "c"}),
		CloseFile("/f", 2, 2, []BlockInfo{blk(0, 1001, 100)}),
		ReopenFile("/f", "c", "", 3),
		UpdateBlocks("/f", []BlockInfo{blk(0, 1002, 40)}, true), // truncate to 40
		AddFile(NewFile{ID: 16387, Path: "/g", Perm: fperm, Mtime: 1, Replication: 1, BlockSize: 100, ClientName: "c"}),
		UpdateBlocks("/g", []BlockInfo{blk(1, 1003, 10)}, false), // being written
	})
	var img bytes.Buffer
	if err := tr.WriteImage(&img); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadImage(bytes.NewReader(img.Bytes()), blockmgmt.NewBlockMap())
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range []*Tree{tr, loaded} {
		if !x.Lookup("/f").Blocks()[0].Committed || x.Lookup("/g").Blocks()[0].Committed {
			t.Errorf("tree %d: last blocks committed %v (truncating) and %v (being written)", i, x.Lookup("/f").Blocks()[0].Committed, x.Lookup("/g").Blocks()[0].Committed)
		}
	}
}
