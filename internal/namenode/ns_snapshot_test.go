package namenode

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

func wantMsg(t *testing.T, err error, class, msg string) {
	t.Helper()
	wantClass(t, err, class)
	if !strings.Contains(err.Error(), msg) {
		t.Fatalf("error %q does not say %q", err, msg)
	}
}

// TestSnapshotOps: the snapshot operations' checks and Hadoop's messages,
// and the guard on modifications under .snapshot.
func TestSnapshotOps(t *testing.T) {
	ns, _ := testNS(t)
	ns.now = func() time.Time { return time.Date(2024, 3, 5, 7, 8, 9, 12e6, time.Local) }
	su, alice := as("hdfs"), as("alice")
	mustOK(t, ns.Mkdirs(su, "/d/sub", 0o755, true))
	mustOK(t, ns.Mkdirs(su, "/e", 0o755, false))
	mustOK(t, ns.SetOwner(su, "/d", "alice", ""))

	wantMsg(t, ns.AllowSnapshot(alice, "/d"), ipc.ClassAccessControl, "Superuser privilege is required")
	_, err := ns.CreateSnapshot(alice, "/d", "s1")
	wantMsg(t, err, namespace.ClassSnapshot, "Directory is not a snapshottable directory: /d")
	mustOK(t, ns.AllowSnapshot(su, "/d"))
	mustOK(t, ns.AllowSnapshot(su, "/d")) // again: nothing changes
	wantMsg(t, ns.AllowSnapshot(su, "/d/sub"), namespace.ClassSnapshot, "Nested snapshottable directories not allowed: path=/d/sub, the ancestor /d is already a snapshottable directory.")
	wantMsg(t, ns.AllowSnapshot(su, "/"), namespace.ClassSnapshot, "the subdirectory /d is already")

	if st, err := ns.FileInfo(alice, "/d"); err != nil || !st.SnapshotEnabled {
		t.Fatalf("/d not flagged snapshot-enabled: %+v %v", st, err)
	}
	if p := fileStatusProto(&FileStatus{IsDir: true, SnapshotEnabled: true}, false); p.GetFlags() != 8 {
		t.Fatalf("flags %d, want SNAPSHOT_ENABLED (8)", p.GetFlags())
	}
	p, err := ns.CreateSnapshot(alice, "/d", "s1")
	if err != nil || p != "/d/.snapshot/s1" {
		t.Fatalf("createSnapshot = %q, %v", p, err)
	}
	_, err = ns.CreateSnapshot(alice, "/d", "s1")
	wantMsg(t, err, namespace.ClassSnapshot, `Failed to add snapshot: there is already a snapshot with the same name "s1".`)
	_, err = ns.CreateSnapshot(as("bob"), "/d", "x")
	wantClass(t, err, ipc.ClassAccessControl)
	if p, err := ns.CreateSnapshot(alice, "/d", ""); err != nil || p != "/d/.snapshot/s20240305-070809.012" {
		t.Fatalf("default name: %q %v", p, err)
	}
	_, err = ns.CreateSnapshot(alice, "/d", "a/b")
	wantMsg(t, err, ipc.ClassIllegalArgument, `Snapshot name cannot contain "/"`)

	wantMsg(t, ns.RenameSnapshot(alice, "/d", "nope", "x"), namespace.ClassSnapshot, "The snapshot nope does not exist for directory /d")
	wantMsg(t, ns.RenameSnapshot(alice, "/d", "s1", "s20240305-070809.012"), namespace.ClassSnapshot, "The snapshot s20240305-070809.012 already exists for directory /d")
	mustOK(t, ns.RenameSnapshot(alice, "/d", "s20240305-070809.012", "s2"))
	wantMsg(t, ns.DeleteSnapshot(alice, "/d", "nope"), namespace.ClassSnapshot, "Cannot delete snapshot nope from path /d: the snapshot does not exist.")

	// Reads through .snapshot; the directory itself cannot go.
	st, err := ns.FileInfo(alice, "/d/.snapshot/s1/sub")
	if err != nil || st == nil || !st.IsDir {
		t.Fatalf("stat in snapshot: %+v %v", st, err)
	}
	l, err := ns.List(alice, "/d/.snapshot", "")
	if err != nil || len(l.Entries) != 2 || l.Entries[0].Name != "s1" || l.Entries[1].Name != "s2" {
		t.Fatalf("ls .snapshot: %+v %v", l, err)
	}
	_, err = ns.Delete(su, "/d", true)
	wantMsg(t, err, namespace.ClassSnapshot, "The directory /d cannot be deleted since /d is snapshottable and already has snapshots")
	mustOK(t, ns.Mkdirs(su, "/p/q", 0o755, true))
	mustOK(t, ns.AllowSnapshot(su, "/p/q"))
	if _, err := ns.CreateSnapshot(su, "/p/q", "s"); err != nil {
		t.Fatal(err)
	}
	_, err = ns.Delete(su, "/p", true)
	wantMsg(t, err, namespace.ClassSnapshot, "The directory /p/q cannot be deleted since /p/q is snapshottable")
	_, err = ns.Rename(su, "/d", "/e/d", false, false)
	wantMsg(t, err, namespace.ClassSnapshot, "cannot be deleted since /d is snapshottable")
	wantMsg(t, ns.DisallowSnapshot(su, "/d"), namespace.ClassSnapshot, "The directory /d has snapshot(s). Please redo the operation after removing all the snapshots.")

	// Modifications under .snapshot are refused before any handler runs.
	for _, req := range []proto.Message{
		&hdfspb.MkdirsRequestProto{Src: proto.String("/d/.snapshot/s1/x")},
		&hdfspb.DeleteRequestProto{Src: proto.String("/d/.snapshot/s1")},
		&hdfspb.Rename2RequestProto{Src: proto.String("/d/sub"), Dst: proto.String("/d/.snapshot/s1/y")},
		&hdfspb.CreateSnapshotRequestProto{SnapshotRoot: proto.String("/d/.snapshot/s1")},
	} {
		wantMsg(t, ns.checkSnapshotWrite(req), namespace.ClassSnapshotAccessControl, "Modification on a read-only snapshot is disallowed")
	}
	wantMsg(t, ns.checkSnapshotWrite(&hdfspb.MkdirsRequestProto{Src: proto.String("/e/.snapshot")}), ipc.ClassIllegalArgument, `".snapshot" is a reserved name.`)
	mustOK(t, ns.checkSnapshotWrite(&hdfspb.MkdirsRequestProto{Src: proto.String("/e/snapshot")}))
	// The same without the RPC guard (WebHDFS calls the Namesystem): the
	// edits are refused before they apply.
	wantMsg(t, ns.Mkdirs(su, "/d/.snapshot/s1/x/y", 0o755, true), namespace.ClassSnapshotAccessControl, "read-only snapshot")
	_, err = ns.Delete(su, "/d/.snapshot/s1/sub", true)
	wantMsg(t, err, namespace.ClassSnapshotAccessControl, "read-only snapshot")
	_, err = ns.Rename(su, "/d/sub", "/d/.snapshot/s1/z", false, false)
	wantMsg(t, err, namespace.ClassSnapshotAccessControl, "read-only snapshot")
	wantMsg(t, ns.SetPermission(su, "/d/.snapshot/s1", 0o700), namespace.ClassSnapshotAccessControl, "read-only snapshot")
	wantMsg(t, ns.Mkdirs(su, "/e/.snapshot", 0o755, false), ipc.ClassIllegalArgument, `".snapshot" is a reserved name.`)
	if l, _ := ns.List(su, "/d/.snapshot/s1", ""); len(l.Entries) != 1 {
		t.Fatalf("the snapshot changed: %+v", l)
	}

	mustOK(t, ns.DeleteSnapshot(su, "/p/q", "s"))
	dirs := ns.SnapshottableDirs(alice)
	if len(dirs) != 1 || dirs[0].Snapshots != 2 || dirs[0].ParentPath != "/" || dirs[0].Status.Name != "d" {
		t.Fatalf("snapshottable dirs: %+v", dirs)
	}
	if len(ns.SnapshottableDirs(as("bob"))) != 0 {
		t.Fatal("bob sees alice's snapshottable directory")
	}
	mustOK(t, ns.Mkdirs(su, "/d/new", 0o755, false))
	r, err := ns.SnapshotDiff(alice, "/d", "s1", "")
	if err != nil || len(r.Entries) != 2 || r.Entries[0].Type != "M" || r.Entries[0].Path != "" || r.Entries[1].Type != "+" || r.Entries[1].Path != "new" {
		t.Fatalf("diff: %+v %v", r, err)
	}
	_, err = ns.SnapshotDiff(alice, "/d", "s1", "s9")
	wantMsg(t, err, namespace.ClassSnapshot, "Cannot find the snapshot of directory /d with name s9")

	mustOK(t, ns.DeleteSnapshot(alice, "/d", "s1"))
	mustOK(t, ns.DeleteSnapshot(alice, "/d", "s2"))
	mustOK(t, ns.DisallowSnapshot(su, "/d"))
	if ok, err := ns.Delete(su, "/d", true); !ok || err != nil {
		t.Fatalf("delete after the snapshots: %v %v", ok, err)
	}
	// A live ".snapshot" left from before (an old image) may be renamed
	// away, not made anew.
	mustOK(t, ns.Mkdirs(su, "/old", 0o755, false))
	ns.mu.Lock()
	err = ns.tree.Apply(namespace.Mkdir(ns.tree.AllocInodeID(), "/old/.snapshot", namespace.Perm{Owner: "hdfs", Group: "supergroup", Mode: 0o755}, 1))
	ns.mu.Unlock()
	mustOK(t, err)
	mustOK(t, ns.checkSnapshotWrite(&hdfspb.Rename2RequestProto{Src: proto.String("/old/.snapshot"), Dst: proto.String("/old/renamed")}))
	if _, err := ns.Rename(su, "/old/.snapshot", "/old/renamed", false, false); err != nil {
		t.Fatal(err)
	}
	wantMsg(t, ns.Mkdirs(su, "/old/.snapshot", 0o755, false), ipc.ClassIllegalArgument, "reserved name")
}

// TestSnapshotDiffListing: Hadoop 3 clients rebuild the report from
// getSnapshotDiffReportListing with SnapshotDiffReportGenerator; done the
// same way here, it gives getSnapshotDiffReport's entries in its order.
func TestSnapshotDiffListing(t *testing.T) {
	ns, _ := testNS(t)
	su := as("hdfs")
	for _, p := range []string{"/d/a", "/d/b", "/d/c/x"} {
		mustOK(t, ns.Mkdirs(su, p, 0o755, true))
	}
	mustOK(t, ns.AllowSnapshot(su, "/d"))
	if _, err := ns.CreateSnapshot(su, "/d", "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := ns.Rename(su, "/d/a", "/d/c/a2", false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ns.Delete(su, "/d/b", true); err != nil {
		t.Fatal(err)
	}
	mustOK(t, ns.Mkdirs(su, "/d/n/deep", 0o755, true))
	mustOK(t, ns.SetPermission(su, "/d/c/x", 0o700))

	c := &clientProtocol{ns: ns}
	full, err := c.getSnapshotDiffReport(su, &hdfspb.GetSnapshotDiffReportRequestProto{SnapshotRoot: proto.String("/d"), FromSnapshot: proto.String("s1"), ToSnapshot: proto.String("")})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range full.GetDiffReport().GetDiffReportEntries() {
		want = append(want, e.GetModificationLabel()+" "+string(e.GetFullpath())+" "+string(e.GetTargetPath()))
	}
	// The rename's target in c is not listed as created.
	if strings.Join(want, "|") != "M  |+ n |R a c/a2|- b |M c |M c/x " {
		t.Fatalf("report %q", want)
	}

	// Pages of at most limit entries, gathered as DistributedFileSystem
	// does until the cursor is ("", -1).
	listing := func(limit int) (*hdfspb.SnapshotDiffReportListingProto, int) {
		ns.cfg.snapshotDiffLimit = limit
		all := &hdfspb.SnapshotDiffReportListingProto{}
		cur := &hdfspb.SnapshotDiffReportCursorProto{StartPath: []byte{}, Index: proto.Int32(-1)}
		for pages := 1; ; pages++ {
			lr, err := c.getSnapshotDiffReportListing(su, &hdfspb.GetSnapshotDiffReportListingRequestProto{SnapshotRoot: proto.String("/d"), FromSnapshot: proto.String("s1"), ToSnapshot: proto.String(""), Cursor: cur})
			if err != nil {
				t.Fatal(err)
			}
			l := lr.GetDiffReport()
			if n := len(l.GetModifiedEntries()) + len(l.GetCreatedEntries()) + len(l.GetDeletedEntries()); n > limit || !l.GetIsFromEarlier() {
				t.Fatalf("page %d of limit %d has %d entries", pages, limit, n)
			}
			all.ModifiedEntries = append(all.ModifiedEntries, l.GetModifiedEntries()...)
			all.CreatedEntries = append(all.CreatedEntries, l.GetCreatedEntries()...)
			all.DeletedEntries = append(all.DeletedEntries, l.GetDeletedEntries()...)
			cur = l.GetCursor()
			if cur.GetIndex() == -1 && len(cur.GetStartPath()) == 0 {
				return all, pages
			}
			if pages > 100 {
				t.Fatal("the listing does not end")
			}
		}
	}
	if _, pages := listing(1000); pages != 1 {
		t.Fatalf("%d pages for 6 entries", pages)
	}
	l, pages := listing(2)
	if pages != 3 {
		t.Fatalf("%d pages of 2 for 6 entries", pages)
	}
	// SnapshotDiffReportGenerator, for isFromEarlier.
	renamed := map[uint64]*hdfspb.SnapshotDiffReportListingEntryProto{}
	var created []*hdfspb.SnapshotDiffReportListingEntryProto
	created = append(created, l.GetCreatedEntries()...)
	for _, e := range l.GetDeletedEntries() {
		if e.GetIsReference() {
			renamed[e.GetFileId()] = e
		}
	}
	var got []string
	for _, m := range l.GetModifiedEntries() {
		got = append(got, "M "+string(m.GetFullpath())+" ")
		if !m.GetIsReference() {
			continue
		}
		for _, e := range created {
			if e.GetDirId() == m.GetDirId() && renamed[e.GetFileId()] == nil {
				got = append(got, "+ "+string(e.GetFullpath())+" ")
			}
		}
		for _, e := range l.GetDeletedEntries() {
			if e.GetDirId() != m.GetDirId() {
				continue
			}
			if e.GetIsReference() {
				got = append(got, "R "+string(e.GetFullpath())+" "+string(e.GetTargetPath()))
			} else {
				got = append(got, "- "+string(e.GetFullpath())+" ")
			}
		}
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("listing rebuilds\n%q\nthe report is\n%q", got, want)
	}
}

// TestRenameNestsSnapshottable: a snapshottable directory (or one holding
// one) cannot be moved below another, with or without snapshots.
func TestRenameNestsSnapshottable(t *testing.T) {
	ns, _ := testNS(t)
	su := as("hdfs")
	mustOK(t, ns.Mkdirs(su, "/a", 0o755, false))
	mustOK(t, ns.Mkdirs(su, "/b/inner", 0o755, true))
	mustOK(t, ns.Mkdirs(su, "/c", 0o755, false))
	mustOK(t, ns.AllowSnapshot(su, "/a"))
	mustOK(t, ns.AllowSnapshot(su, "/b/inner"))
	if _, err := ns.CreateSnapshot(su, "/a", "s1"); err != nil {
		t.Fatal(err)
	}
	msg := "Unable to rename because /b has snapshottable descendant directories and /a is a descendant of a snapshottable directory, and HDFS does not support nested snapshottable directory."
	_, err := ns.Rename(su, "/b", "/a/b", false, false)
	wantMsg(t, err, namespace.ClassSnapshot, msg)
	_, err = ns.Rename(su, "/b/inner", "/a/inner", true, false)
	wantClass(t, err, namespace.ClassSnapshot)
	mustOK(t, ns.AllowSnapshot(su, "/c"))
	_, err = ns.Rename(su, "/b", "/c/b", false, false) // /c has no snapshots
	wantClass(t, err, namespace.ClassSnapshot)
	if ok, err := ns.Rename(su, "/b", "/moved", false, false); err != nil || !ok {
		t.Fatalf("plain rename of a snapshottable holder: %v %v", ok, err)
	}
	mustOK(t, ns.Mkdirs(su, "/a/x", 0o755, false))
	if ok, err := ns.Rename(su, "/a/x", "/a/y", false, false); err != nil || !ok {
		t.Fatalf("rename inside a snapshottable directory: %v %v", ok, err)
	}
}

// TestSnapshotSizeLimits: a snapshot that would copy more inodes than
// strata.namenode.snapshot.max-copied-inodes, or take all snapshots past
// strata.namenode.snapshot.max-total-inodes, is refused before any copy;
// a whole diff report larger than a reply may be is refused.
func TestSnapshotSizeLimits(t *testing.T) {
	ns, _ := testNS(t)
	su := as("hdfs")
	mustOK(t, ns.Mkdirs(su, "/d/a/b", 0o755, true)) // /d, a, b: 3 inodes
	mustOK(t, ns.AllowSnapshot(su, "/d"))
	ns.cfg.snapshotMaxCopied, ns.cfg.snapshotMaxTotalInodes = 2, 100
	_, err := ns.CreateSnapshot(su, "/d", "s1")
	wantMsg(t, err, namespace.ClassSnapshot, "Failed to add snapshot s1 of /d: the directory has more than 2 inodes to copy (strata.namenode.snapshot.max-copied-inodes)")
	if ns.tree.SnapshotCount() != 0 || ns.tree.SnapshotInodes() != 0 {
		t.Fatal("a refused snapshot was taken")
	}
	ns.cfg.snapshotMaxCopied, ns.cfg.snapshotMaxTotalInodes = 3, 7
	for _, name := range []string{"s1", "s2"} {
		if _, err := ns.CreateSnapshot(su, "/d", name); err != nil {
			t.Fatal(err)
		}
	}
	_, err = ns.CreateSnapshot(su, "/d", "s3")
	wantMsg(t, err, namespace.ClassSnapshot, "snapshots would hold more than 7 inodes (strata.namenode.snapshot.max-total-inodes); they hold 6")
	mustOK(t, ns.DeleteSnapshot(su, "/d", "s1"))
	if _, err := ns.CreateSnapshot(su, "/d", "s3"); err != nil {
		t.Fatalf("after a delete: %v", err)
	}

	mustOK(t, ns.Mkdirs(su, "/d/new", 0o755, false))
	c := &clientProtocol{ns: ns}
	ns.cfg.maxReplyBytes = 20
	_, err = c.getSnapshotDiffReport(su, &hdfspb.GetSnapshotDiffReportRequestProto{SnapshotRoot: proto.String("/d"), FromSnapshot: proto.String("s2"), ToSnapshot: proto.String("")})
	wantMsg(t, err, ipc.ClassIOException, "more than one reply may carry")
}
