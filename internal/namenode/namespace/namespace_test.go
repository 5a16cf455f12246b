package namespace

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/storage"
)

func newTree() *Tree { return New("hdfs", "supergroup", blockmgmt.NewBlockMap()) }

var perm = Perm{Owner: "alice", Group: "staff", Mode: 0o755}

// history is a sequence of edits touching every kind of op.
func history() []Edit {
	b1 := BlockInfo{ID: blockmgmt.FirstBlockID, GenStamp: 1001}
	b2 := BlockInfo{ID: blockmgmt.FirstBlockID + 1, GenStamp: 1002}
	return []Edit{
		Mkdir(16386, "/a", perm, 1000),
		Mkdir(16387, "/a/b", perm, 1001),
		Mkdir(16388, "/tmp", Perm{Owner: "hdfs", Group: "supergroup", Mode: 0o1777}, 1002),
		AddFile(NewFile{ID: 16389, Path: "/a/f", Perm: Perm{Owner: "alice", Group: "staff", Mode: 0o644}, Mtime: 1003,
			Replication: 2, BlockSize: 1 << 20, ClientName: "c1", ClientMachine: "10.0.0.1"}),
		AddBlock("/a/f", b1, 0),
		AddBlock("/a/f", b2, 1<<20),
		CloseFile("/a/f", 1004, 1004, []BlockInfo{{b1.ID, b1.GenStamp, 1 << 20}, {b2.ID, b2.GenStamp, 100}}),
		ReopenFile("/a/f", "c2", "10.0.0.2", 1005),
		SetGenStamp(1003),
		UpdateBlocks("/a/f", []BlockInfo{{b1.ID, b1.GenStamp, 1 << 20}, {b2.ID, 1003, 200}}, false),
		CloseFile("/a/f", 1006, 1006, []BlockInfo{{b1.ID, b1.GenStamp, 1 << 20}, {b2.ID, 1003, 200}}),
		SetOwner("/a/b", "bob", ""),
		SetPermission("/a/b", 0o700),
		SetTimes("/a/b", 5000, -1),
		SetReplication("/a/f", 3),
		SetStoragePolicy("/a", storage.AllSSDID),
		Rename("/a/b", "/tmp/b", 1007, false),
		AddFile(NewFile{ID: 16390, Path: "/tmp/open", Perm: perm, Mtime: 1008, Replication: 1, BlockSize: 1 << 20, ClientName: "c3"}),
		Mkdir(16391, "/gone", perm, 1009),
		Delete("/gone", 1010),
	}
}

// dump renders the whole tree and its blocks, one inode per line.
func dump(t *Tree) string {
	var b strings.Builder
	var walk func(n *Inode)
	walk = func(n *Inode) {
		fmt.Fprintf(&b, "%s %d %s %s:%s mtime=%d atime=%d", n.Path(), n.ID, ModeString(n.IsDir, n.Mode), n.Owner, n.Group, n.Mtime, n.Atime)
		if !n.IsDir {
			fmt.Fprintf(&b, " repl=%d bs=%d policy=%d", n.Replication(), n.BlockSize(), n.StoragePolicy)
			if n.UC() != nil {
				fmt.Fprintf(&b, " uc=%s@%s", n.UC().ClientName, n.UC().ClientMachine)
			}
			for _, blk := range n.Blocks() {
				fmt.Fprintf(&b, " %s/%d/committed=%v", blk, blk.NumBytes, blk.Committed)
			}
		} else if n.StoragePolicy != 0 {
			fmt.Fprintf(&b, " policy=%d", n.StoragePolicy)
		}
		b.WriteByte('\n')
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(t.Root)
	files, dirs := t.Counts()
	fmt.Fprintf(&b, "files=%d dirs=%d lastInode=%d lastBlock=%d lastGS=%d blocks=%d\n",
		files, dirs, t.LastInodeID(), t.Blocks.LastID(), t.Blocks.LastGenStamp(), t.Blocks.Len())
	return b.String()
}

func apply(t *testing.T, tr *Tree, edits []Edit) {
	t.Helper()
	for i, e := range edits {
		if err := tr.Apply(e); err != nil {
			t.Fatalf("edit %d: %v", i, err)
		}
	}
}

// TestReplayRoundTrip: the tree built by applying edits is rebuilt exactly
// by replaying their records, and by loading an image taken part way and
// replaying the rest.
func TestReplayRoundTrip(t *testing.T) {
	edits := history()
	live := newTree()
	apply(t, live, edits)
	want := dump(live)
	if !strings.Contains(want, "/tmp/b 16387 drwx------ bob:staff mtime=5000") || strings.Contains(want, "/gone") {
		t.Fatalf("unexpected live tree:\n%s", want)
	}

	var recs [][]byte
	for _, e := range edits {
		rec, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	replayed := newTree()
	for i, rec := range recs {
		if err := replayed.ApplyRecord(rec); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if got := dump(replayed); got != want {
		t.Fatalf("replayed tree:\n%s\nwant:\n%s", got, want)
	}

	for _, cut := range []int{0, 5, 10, len(edits)} {
		t.Run(fmt.Sprintf("image after %d edits", cut), func(t *testing.T) {
			first := newTree()
			apply(t, first, edits[:cut])
			var img bytes.Buffer
			if err := first.WriteImage(&img); err != nil {
				t.Fatal(err)
			}
			loaded, err := ReadImage(&img, blockmgmt.NewBlockMap())
			if err != nil {
				t.Fatal(err)
			}
			if got, want := dump(loaded), dump(first); got != want {
				t.Fatalf("image round trip:\n%s\nwant:\n%s", got, want)
			}
			apply(t, loaded, edits[cut:])
			if got := dump(loaded); got != want {
				t.Fatalf("image + edits:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestRemovedBlocks: blocks dropped by edits wait for block management.
func TestRemovedBlocks(t *testing.T) {
	tr := newTree()
	apply(t, tr, history()[:7]) // /a/f closed with two blocks
	if n := len(tr.Blocks.TakeRemoved()); n != 0 {
		t.Fatalf("%d removed blocks before any removal", n)
	}
	f := tr.Lookup("/a/f")
	first := f.Blocks()[0]
	apply(t, tr, []Edit{UpdateBlocks("/a/f", BlockInfos(f.Blocks()[1:]), false)})
	if r := tr.Blocks.TakeRemoved(); len(r) != 1 || r[0] != first || tr.Blocks.Get(first.ID) != nil {
		t.Fatalf("after truncating the first block: removed %v", r)
	}
	apply(t, tr, []Edit{Delete("/a", 2000)})
	if r := tr.Blocks.TakeRemoved(); len(r) != 1 || tr.Blocks.Len() != 0 {
		t.Fatalf("after delete: removed %v, %d left", r, tr.Blocks.Len())
	}
	if files, dirs := tr.Counts(); files != 0 || dirs != 2 {
		t.Errorf("counts after delete: %d files %d dirs", files, dirs)
	}
}

// TestApplyRejects: edits that do not fit the tree fail with ErrReplay.
func TestApplyRejects(t *testing.T) {
	tests := []struct {
		name string
		edit Edit
	}{
		{"mkdir without parent", Mkdir(20000, "/x/y", perm, 1)},
		{"mkdir over a file", Mkdir(20000, "/a/f", perm, 1)},
		{"add file over a directory", AddFile(NewFile{ID: 20000, Path: "/a", Perm: perm, Overwrite: true})},
		{"add file over a file without overwrite", AddFile(NewFile{ID: 20000, Path: "/a/f", Perm: perm})},
		{"close of a missing file", CloseFile("/nope", 1, 1, nil)},
		{"add block to a closed file", AddBlock("/a/f", BlockInfo{ID: 1 << 31, GenStamp: 2000}, 0)},
		{"reopen of an open file", ReopenFile("/tmp/open", "c", "", 1)},
		{"delete of the root", Delete("/", 1)},
		{"rename under itself", Rename("/a", "/a/x", 1, false)},
		{"rename onto an existing name", Rename("/tmp/b", "/a/f", 1, false)},
		{"set replication of a directory", SetReplication("/a", 2)},
		{"set owner of a missing inode", SetOwner("/nope", "x", "")},
		{"empty edit", Edit{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTree()
			apply(t, tr, history())
			if err := tr.Apply(tt.edit); !errors.Is(err, ErrReplay) {
				t.Fatalf("Apply: %v, want ErrReplay", err)
			}
		})
	}
}

func TestCheckPath(t *testing.T) {
	tests := []struct {
		path  string
		limit int
		class string // "" for valid
	}{
		{"/", 255, ""},
		{"/a/b.c", 255, ""},
		{"relative", 255, ipc.ClassInvalidPath},
		{"/a/../b", 255, ipc.ClassInvalidPath},
		{"/a/./b", 255, ipc.ClassInvalidPath},
		{"/a:b", 255, ipc.ClassInvalidPath},
		{"/a//b", 255, ipc.ClassInvalidPath},
		{"/a\x00b", 255, ipc.ClassInvalidPath},
		{"/" + strings.Repeat("x", 8000), 0, ipc.ClassInvalidPath},
		{"/" + strings.Repeat("x", 256), 255, ipc.ClassPathComponentTooLong},
		{"/" + strings.Repeat("x", 255), 255, ""},
		{"/" + strings.Repeat("x", 256), 0, ""},
	}
	for _, tt := range tests {
		err := CheckPath(tt.path, tt.limit)
		if tt.class == "" && err != nil || tt.class != "" && !ipc.IsClass(err, tt.class) {
			t.Errorf("CheckPath(%.20q, %d) = %v, want %s", tt.path, tt.limit, err, tt.class)
		}
	}
}

func TestChecker(t *testing.T) {
	tr := newTree()
	apply(t, tr, history())
	f := tr.Lookup("/a/f") // alice:staff 0644
	tests := []struct {
		name    string
		p       Principal
		enabled bool
		a       Access
		want    bool
	}{
		{"owner reads", Principal{User: "alice"}, true, AccessRead, true},
		{"owner writes", Principal{User: "alice"}, true, AccessWrite, true},
		{"owner cannot execute", Principal{User: "alice"}, true, AccessExecute, false},
		{"group reads", Principal{User: "bob", Groups: []string{"staff"}}, true, AccessRead, true},
		{"group cannot write", Principal{User: "bob", Groups: []string{"staff"}}, true, AccessWrite, false},
		{"other reads", Principal{User: "eve"}, true, AccessRead, true},
		{"other cannot write", Principal{User: "eve"}, true, AccessWrite, false},
		{"superuser writes", Principal{User: "hdfs", Superuser: true}, true, AccessAll, true},
		{"permissions off", Principal{User: "eve"}, false, AccessAll, true},
	}
	for _, tt := range tests {
		c := Checker{P: &tt.p, Enabled: tt.enabled}
		if got := c.Has(f, tt.a); got != tt.want {
			t.Errorf("%s: Has = %v", tt.name, got)
		}
		if err := c.Check(f, tt.a); (err == nil) != tt.want || err != nil && !ipc.IsClass(err, ipc.ClassAccessControl) {
			t.Errorf("%s: Check = %v", tt.name, err)
		}
	}
	// The sticky bit on /tmp: only the owner of the child or the parent.
	tmp, b := tr.Lookup("/tmp"), tr.Lookup("/tmp/b") // b owned by bob
	for user, ok := range map[string]bool{"bob": true, "hdfs": true, "eve": false} {
		c := Checker{P: &Principal{User: user}, Enabled: true}
		if err := c.Sticky(tmp, b); (err == nil) != ok {
			t.Errorf("sticky for %s: %v", user, err)
		}
	}
}

func TestLeases(t *testing.T) {
	m := NewLeaseManager()
	t0 := time.Unix(1_700_000_000, 0)
	m.Add("c1", "/a", t0)
	m.Add("c1", "/b", t0)
	m.Add("c2", "/c", t0.Add(time.Minute))
	if m.SoftExpired("c1", t0.Add(time.Minute), time.Minute) {
		t.Error("soft-expired at the limit")
	}
	if !m.SoftExpired("c1", t0.Add(time.Minute+1), time.Minute) || !m.SoftExpired("nobody", t0, time.Minute) {
		t.Error("not soft-expired past the limit, or for an unknown holder")
	}
	m.Renamed("c1", "/b", "/d")
	exp := m.Expired(t0.Add(90*time.Second), time.Minute)
	if len(exp) != 1 || exp[0].Holder != "c1" || strings.Join(exp[0].Paths, ",") != "/a,/d" {
		t.Fatalf("expired %+v", exp)
	}
	m.Renew("c1", t0.Add(90*time.Second))
	if exp := m.Expired(t0.Add(2*time.Minute), time.Minute); len(exp) != 0 {
		t.Fatalf("expired after renewal: %+v", exp)
	}
	m.RemovePath("/a")
	m.Remove("c1", "/d")
	if m.Count("c1") != 0 || m.Count("c2") != 1 {
		t.Errorf("counts c1 %d c2 %d", m.Count("c1"), m.Count("c2"))
	}
	var holders []string
	for _, e := range m.Expired(t0.Add(time.Hour), time.Minute) {
		holders = append(holders, e.Holder)
	}
	sort.Strings(holders)
	if strings.Join(holders, ",") != "c2" {
		t.Errorf("holders left %v", holders)
	}
}

// FuzzReadImage feeds arbitrary bytes to the image loader: it must return
// a tree or an error, never panic.
func FuzzReadImage(f *testing.F) {
	tr := newTree()
	for _, e := range history() {
		tr.Apply(e)
	}
	var buf bytes.Buffer
	tr.WriteImage(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		loaded, err := ReadImage(bytes.NewReader(data), blockmgmt.NewBlockMap())
		if err == nil && loaded.Root == nil {
			t.Fatal("no error and no root")
		}
	})
}
