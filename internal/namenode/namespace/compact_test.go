package namespace

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/proto/namenodepb"
)

// The index against a map, through puts, replacements and deletes, in and
// out of the dense range, across page boundaries.
func TestInodeIndex(t *testing.T) {
	var x inodeIndex
	want := map[uint64]*Inode{}
	rng := rand.New(rand.NewPCG(1, 2))
	ids := []uint64{0, 1, rootInodeID - 1, rootInodeID + indexPageSize*indexMaxPages, 1 << 62}
	for i := 0; i < 5000; i++ {
		ids = append(ids, rootInodeID+uint64(rng.IntN(4*indexPageSize)))
	}
	for i := 0; i < 20000; i++ {
		id := ids[rng.IntN(len(ids))]
		if rng.IntN(3) == 0 {
			x.del(id)
			delete(want, id)
		} else {
			n := &Inode{ID: id}
			x.put(id, n)
			want[id] = n
		}
		if x.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", i, x.len(), len(want))
		}
	}
	for _, id := range ids {
		if got := x.get(id); got != want[id] {
			t.Fatalf("get(%d) = %p, want %p", id, got, want[id])
		}
	}
	seen := 0
	x.each(func(n *Inode) {
		if want[n.ID] != n {
			t.Fatalf("each gave %d, not indexed", n.ID)
		}
		seen++
	})
	if seen != len(want) {
		t.Fatalf("each gave %d inodes, want %d", seen, len(want))
	}
	checkPages(t, &x)
	for id := range want {
		x.del(id)
		checkPages(t, &x)
	}
	if len(x.sparse) != 0 || len(x.demoted) != 0 || x.len() != 0 {
		t.Fatalf("empty index keeps %d in the map, %d demoted pages, len %d", len(x.sparse), len(x.demoted), x.len())
	}
}

// checkPages: every page but the last holds more than indexPageLow
// inodes, and demoted counts the map's ids of each page that has none.
func checkPages(t *testing.T, x *inodeIndex) {
	t.Helper()
	for i, pg := range x.pages {
		if pg != nil && i < len(x.pages)-1 && pg.used <= indexPageLow {
			t.Fatalf("page %d of %d kept with %d inodes", i, len(x.pages), pg.used)
		}
	}
	counts := map[uint64]int{}
	for id := range x.sparse {
		if p, _, dense := indexSlot(id); dense {
			if x.page(p) != nil {
				t.Fatalf("id %d in the map and its page", id)
			}
			counts[p]++
		}
	}
	if len(counts) != len(x.demoted) {
		t.Fatalf("demoted %v, map holds %v", x.demoted, counts)
	}
	for p, c := range counts {
		if x.demoted[p] != c {
			t.Fatalf("demoted %v, map holds %v", x.demoted, counts)
		}
	}
}

// TestInodeIndexChurn: creating inodes in id order and deleting most of
// them leaves no page pinned by a few survivors, and the survivors are
// still found; ids put back into a thinned page's range (a replay) bring
// its inodes back into a page.
func TestInodeIndexChurn(t *testing.T) {
	var x inodeIndex
	live := map[uint64]*Inode{}
	id := uint64(rootInodeID)
	for i := 0; i < 100*indexPageSize; i++ {
		id++
		n := &Inode{ID: id}
		x.put(id, n)
		if i%64 == 0 {
			live[id] = n // one in 64 survives
		} else {
			x.del(id)
		}
	}
	checkPages(t, &x)
	pages := 0
	for _, pg := range x.pages {
		if pg != nil {
			pages++
		}
	}
	if pages > 1 || x.len() != len(live) {
		t.Fatalf("%d pages for %d survivors (len %d)", pages, len(live), x.len())
	}
	for id, n := range live {
		if x.get(id) != n {
			t.Fatalf("survivor %d lost", id)
		}
	}
	// Puts into the first page's range (a replay) stay in the map until
	// it holds 2*indexPageLow of the page's ids, then come back into a
	// page.
	back := uint64(rootInodeID + 2)
	for x.page(0) == nil {
		if back >= rootInodeID+indexPageSize {
			t.Fatalf("page 0 not made again after puts up to %d (%v demoted)", back, x.demoted)
		}
		n := &Inode{ID: back}
		x.put(back, n)
		live[back] = n
		back++
	}
	// Its two survivors and the puts: the page comes back with the put
	// after the map held 2*indexPageLow.
	if got, puts := x.pages[0].used, int(back-rootInodeID-2); got != 2+puts || got != 2*indexPageLow+1 {
		t.Fatalf("page 0 made again with %d inodes after %d puts, want %d", got, puts, 2*indexPageLow+1)
	}
	for id, n := range live {
		if x.get(id) != n {
			t.Fatalf("inode %d lost after the puts", id)
		}
	}
	checkPages(t, &x)
}

func TestInterner(t *testing.T) {
	in := interner{}
	a := in.of(string([]byte("alice")))
	b := in.ofBytes([]byte("alice"))
	if a != "alice" || b != "alice" || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Fatalf("interned %q %q", a, b)
	}
	if len(in) != 1 {
		t.Fatalf("%d strings kept for one", len(in))
	}
	if in.ofBytes([]byte("bob")) != "bob" || len(in) != 2 {
		t.Fatal("second string")
	}
}

// The interner stops growing at internMax strings: new ones are returned
// as themselves, known ones still shared.
func TestInternerCap(t *testing.T) {
	in := interner{}
	alice := in.of(string([]byte("alice")))
	for i := 0; len(in) < internMax; i++ {
		in.of(fmt.Sprintf("user%d", i))
	}
	s := string([]byte("mallory"))
	if got := in.of(s); got != s || len(in) != internMax {
		t.Fatalf("of past the cap: %q, %d strings kept", got, len(in))
	}
	if got := in.ofBytes([]byte("eve")); got != "eve" || len(in) != internMax {
		t.Fatalf("ofBytes past the cap: %q, %d strings kept", got, len(in))
	}
	if _, ok := in["mallory"]; ok {
		t.Fatal("a string past the cap was kept")
	}
	if got := in.ofBytes([]byte("alice")); unsafe.StringData(got) != unsafe.StringData(alice) {
		t.Fatal("a known string is no longer shared past the cap")
	}
}

// A loaded tree shares one owner and one group string between its inodes.
func TestImageInternsOwners(t *testing.T) {
	tr := newTree()
	for i, p := range []string{"/a", "/b", "/c"} {
		if err := tr.Apply(Mkdir(uint64(16386+i), p, perm, 1)); err != nil {
			t.Fatal(err)
		}
	}
	var img bytes.Buffer
	if err := tr.WriteImage(&img); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadImage(&img, blockmgmt.NewBlockMap())
	if err != nil {
		t.Fatal(err)
	}
	a, c := loaded.Lookup("/a"), loaded.Lookup("/c")
	if a.Owner != "alice" || len(loaded.names) != 4 { // hdfs, supergroup, alice, staff
		t.Fatalf("owner %q, %d names", a.Owner, len(loaded.names))
	}
	if unsafeData(a.Owner) != unsafeData(c.Owner) || unsafeData(a.Group) != unsafeData(c.Group) {
		t.Fatal("owner or group strings not shared")
	}
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }

// imageInode.decode agrees with proto.Unmarshal on every record it takes,
// and refuses the records it does not.
func TestImageInodeDecode(t *testing.T) {
	recs := []*namenodepb.Inode{
		{Id: proto.Uint64(rootInodeID), Name: []byte{}, IsDir: proto.Bool(true), Perm: &namenodepb.PermStatus{Owner: proto.String("hdfs"), Group: proto.String("supergroup"), Mode: proto.Uint32(0o755)}},
		{Id: proto.Uint64(16386), Parent: proto.Uint64(rootInodeID), Name: []byte("d"), IsDir: proto.Bool(true), Mtime: proto.Int64(-5), Atime: proto.Int64(7), StoragePolicy: proto.Uint32(12)},
		{Id: proto.Uint64(16387), Parent: proto.Uint64(16386), Name: []byte("f"), IsDir: proto.Bool(false), Replication: proto.Uint32(3), BlockSize: proto.Uint64(128 << 20),
			Blocks: []*namenodepb.Block{{Id: proto.Uint64(1<<30 + 1), GenStamp: proto.Uint64(1001), NumBytes: proto.Uint64(5)}, {Id: proto.Uint64(1<<30 + 2)}}},
		{Id: proto.Uint64(16388)}, // no perm: zero owner, group, mode
	}
	for i, rec := range recs {
		b, err := proto.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		var r imageInode
		if !r.decode(b) {
			t.Fatalf("record %d refused", i)
		}
		if r.id != rec.GetId() || r.parent != rec.GetParent() || r.hasParent != (rec.Parent != nil) || string(r.name) != string(rec.GetName()) ||
			r.isDir != rec.GetIsDir() || string(r.owner) != rec.GetPerm().GetOwner() || string(r.group) != rec.GetPerm().GetGroup() ||
			r.mode != rec.GetPerm().GetMode() || r.mtime != rec.GetMtime() || r.atime != rec.GetAtime() || r.replication != rec.GetReplication() ||
			r.blockSize != rec.GetBlockSize() || r.storagePolicy != rec.GetStoragePolicy() {
			t.Fatalf("record %d decoded as %+v, want %v", i, r, rec)
		}
		want := blockInfos(rec.GetBlocks())
		if len(r.blocks) != len(want) {
			t.Fatalf("record %d: blocks %v, want %v", i, r.blocks, want)
		}
		for j := range want {
			if r.blocks[j] != want[j] {
				t.Fatalf("record %d: blocks %v, want %v", i, r.blocks, want)
			}
		}
	}
	refused := []*namenodepb.Inode{
		{Id: proto.Uint64(1), Uc: &namenodepb.FileUnderConstruction{ClientName: proto.String("c")}},
		{Id: proto.Uint64(1), Xattrs: []*namenodepb.XAttr{{}}},
		{Id: proto.Uint64(1), NsQuota: proto.Int64(5)},
		{Id: proto.Uint64(1), Snapshottable: proto.Bool(true)},
		{Id: proto.Uint64(1), SnapshotLength: proto.Uint64(1)},
	}
	for i, rec := range refused {
		b, _ := proto.Marshal(rec)
		var r imageInode
		if r.decode(b) {
			t.Errorf("record %d (%v) taken by the fast path", i, rec)
		}
	}
	// Wrong wire types, a repeated perm, an unknown field in a block, a
	// truncated record: all left to proto.Unmarshal.
	for i, b := range [][]byte{
		protowire.AppendBytes(protowire.AppendTag(nil, inodeID, protowire.BytesType), []byte("x")),
		append(protowire.AppendBytes(protowire.AppendTag(nil, inodePerm, protowire.BytesType), nil), protowire.AppendBytes(protowire.AppendTag(nil, inodePerm, protowire.BytesType), nil)...),
		protowire.AppendBytes(protowire.AppendTag(nil, inodeBlocks, protowire.BytesType), protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 1)),
		protowire.AppendTag(nil, inodeMtime, protowire.VarintType),
	} {
		var r imageInode
		if r.decode(b) {
			t.Errorf("odd record %d taken by the fast path", i)
		}
	}
}

// Copy's side structs and block list are its own.
func TestInodeCopy(t *testing.T) {
	n := &Inode{ID: 1}
	n.SetReplication(2)
	n.SetBlockList([]*blockmgmt.Block{{ID: 1}})
	n.setQuota(newQuota())
	c := n.Copy()
	c.SetReplication(3)
	c.SetBlockList(append(c.Blocks(), &blockmgmt.Block{ID: 2}))
	c.Blocks()[0] = &blockmgmt.Block{ID: 9}
	c.setQuota(nil)
	if n.Replication() != 2 || len(n.Blocks()) != 1 || n.Blocks()[0].ID != 1 || n.Quota() == nil {
		t.Fatalf("changing the copy changed the original: repl %d blocks %v quota %v", n.Replication(), n.Blocks(), n.Quota())
	}
	d := &Inode{ID: 2, IsDir: true}
	if d.Blocks() != nil || d.UC() != nil || d.Replication() != 0 || d.XAttrs() != nil || d.file != nil || d.extra != nil {
		t.Fatal("a directory has file attributes")
	}
	d.SetUC(nil)
	d.setQuota(nil)
	if d.file != nil || d.extra != nil {
		t.Fatal("clearing an unset attribute allocated its side struct")
	}
}
