package namenode

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
)

// memJournal records appended ops; failSync makes Sync fail.
type memJournal struct {
	recs     [][]byte
	failSync error
}

func (j *memJournal) Append(rec []byte) (uint64, error) {
	j.recs = append(j.recs, append([]byte(nil), rec...))
	return uint64(len(j.recs)), nil
}

func (j *memJournal) Sync(ctx context.Context, txid uint64) error { return j.failSync }

func testNS(t *testing.T) (*Namesystem, *memJournal) {
	t.Helper()
	j := &memJournal{}
	ns := newNamesystem(nsConfig{
		superuser: "hdfs", supergroup: "supergroup", permissions: true,
		maxComponentLength: 255, maxDirItems: 1000, defaultReplication: 3,
		defaultBlockSize: 128 << 20, minBlockSize: 1 << 20, maxReplication: 512, listLimit: 1000,
		leaseSoftLimit: time.Minute, leaseHardLimit: 20 * time.Minute,
		minReplication: 1, heartbeatExpiry: 630 * time.Second, maxReplicationStreams: 2,
		replicationTimeout: 5 * time.Minute, safeModeThreshold: 0.999, safeModeExtension: 30 * time.Second,
	}, j, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ns.groups.Lookup = func(user string) []string {
		switch user {
		case "admin":
			return []string{"admin", "supergroup"}
		case "alice":
			return []string{"alice", "staff"}
		}
		return []string{user}
	}
	return ns, j
}

func as(user string) context.Context {
	return ipc.WithCaller(context.Background(), &ipc.Caller{User: user})
}

func wantClass(t *testing.T, err error, class string) {
	t.Helper()
	if !ipc.IsClass(err, class) {
		t.Fatalf("got %v, want %s", err, class)
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestStickyBit(t *testing.T) {
	ns, _ := testNS(t)
	su := as("hdfs")
	mustOK(t, ns.Mkdirs(su, "/tmp", 0o777, false))
	mustOK(t, ns.SetPermission(su, "/tmp", 0o1777))
	mustOK(t, ns.Mkdirs(as("alice"), "/tmp/a", 0o777, false))
	_, err := ns.Delete(as("bob"), "/tmp/a", true)
	wantClass(t, err, ipc.ClassAccessControl)
	if !strings.Contains(err.Error(), "sticky bit") {
		t.Errorf("message %q does not name the sticky bit", err)
	}
	_, err = ns.Rename(as("bob"), "/tmp/a", "/tmp/b", false, false)
	wantClass(t, err, ipc.ClassAccessControl)
	ok, err := ns.Delete(as("alice"), "/tmp/a", true)
	if !ok || err != nil {
		t.Fatalf("owner delete under sticky dir: %v %v", ok, err)
	}
}

func TestSupergroupIsSuperuser(t *testing.T) {
	ns, _ := testNS(t)
	mustOK(t, ns.Mkdirs(as("hdfs"), "/locked", 0o700, false))
	mustOK(t, ns.Mkdirs(as("admin"), "/locked/x", 0o755, false))
	mustOK(t, ns.SetOwner(as("admin"), "/locked/x", "alice", ""))
	mustOK(t, ns.SetPermission(as("admin"), "/locked", 0o711))
	wantClass(t, ns.Mkdirs(as("alice"), "/locked/y", 0o755, false), ipc.ClassAccessControl)
	// An owner may change the group to one of their own groups only.
	mustOK(t, ns.SetOwner(as("alice"), "/locked/x", "", "staff"))
	wantClass(t, ns.SetOwner(as("alice"), "/locked/x", "", "wheel"), ipc.ClassAccessControl)
}

func TestPermissionsDisabled(t *testing.T) {
	ns, _ := testNS(t)
	ns.cfg.permissions = false
	mustOK(t, ns.Mkdirs(as("hdfs"), "/locked", 0o700, false))
	mustOK(t, ns.Mkdirs(as("bob"), "/locked/x", 0o755, false))
	// Changing owners still needs the superuser, as in HDFS.
	mustOK(t, ns.SetPermission(as("bob"), "/locked", 0o755))
}

func TestLeases(t *testing.T) {
	ns, _ := testNS(t)
	now := time.Unix(1_700_000_000, 0)
	ns.now = func() time.Time { return now }
	su := as("hdfs")
	mustOK(t, ns.Mkdirs(su, "/d", 0o777, false))
	_, err := ns.Create(as("alice"), "/d/f", CreateOptions{ClientName: "c1", Perm: 0o644})
	mustOK(t, err)
	// Another client cannot take the file while c1's lease is fresh.
	_, err = ns.Create(as("bob"), "/d/f", CreateOptions{ClientName: "c2", Overwrite: true, Perm: 0o644})
	wantClass(t, err, ipc.ClassAlreadyBeingCreated)
	// Only the holder completes it.
	_, err = ns.CompleteFile(as("bob"), "/d/f", 0, "c2", nil)
	wantClass(t, err, ipc.ClassLeaseExpired)

	// Past the soft limit another writer may take over.
	now = now.Add(2 * time.Minute)
	st, err := ns.Create(as("alice"), "/d/f", CreateOptions{ClientName: "c2", Overwrite: true, Perm: 0o644})
	mustOK(t, err)
	ok, err := ns.CompleteFile(as("alice"), "/d/f", st.FileID, "c2", nil)
	if !ok || err != nil {
		t.Fatalf("complete by new holder: %v %v", ok, err)
	}
	// A retried complete of a closed file succeeds.
	if ok, err := ns.CompleteFile(as("alice"), "/d/f", st.FileID, "c2", nil); !ok || err != nil {
		t.Errorf("retried complete: %v %v", ok, err)
	}

	// Past the hard limit the NameNode closes abandoned files itself.
	_, err = ns.Create(as("alice"), "/d/g", CreateOptions{ClientName: "c3", Perm: 0o644})
	mustOK(t, err)
	now = now.Add(10 * time.Minute)
	mustOK(t, ns.RenewLease(as("alice"), "c3"))
	now = now.Add(15 * time.Minute)
	ns.expireLeases(context.Background())
	if n := ns.tree.Lookup("/d/g"); n == nil || n.UC() == nil {
		t.Fatal("renewed lease was expired")
	}
	now = now.Add(10 * time.Minute)
	ns.expireLeases(context.Background())
	if n := ns.tree.Lookup("/d/g"); n == nil || n.UC() != nil {
		t.Fatal("file of an expired lease is still open")
	}
}

func TestRenameRules(t *testing.T) {
	ns, _ := testNS(t)
	su := as("hdfs")
	mustOK(t, ns.Mkdirs(su, "/a/b", 0o755, true))
	mustOK(t, ns.Mkdirs(su, "/c/full/x", 0o755, true))
	mustOK(t, ns.Mkdirs(su, "/empty", 0o755, true))
	for _, f := range []string{"/f1", "/f2"} {
		_, err := ns.Create(su, f, CreateOptions{ClientName: "c", Perm: 0o644})
		mustOK(t, err)
		_, err = ns.CompleteFile(su, f, 0, "c", nil)
		mustOK(t, err)
	}
	_, err := ns.Rename(su, "/a", "/a/b/c", false, false)
	wantClass(t, err, ipc.ClassIOException)
	_, err = ns.Rename(su, "/f1", "/f2", false, false)
	wantClass(t, err, ipc.ClassFileAlreadyExists)
	if _, err := ns.Rename(su, "/f1", "/f2", false, true); err != nil {
		t.Fatalf("rename2 overwrite of a file: %v", err)
	}
	_, err = ns.Rename(su, "/a", "/c/full", false, true)
	wantClass(t, err, ipc.ClassIOException) // non-empty destination directory
	_, err = ns.Rename(su, "/a", "/f2", false, true)
	wantClass(t, err, ipc.ClassIOException) // directory onto a file
	_, err = ns.Rename(su, "/a", "/nodir/a", false, false)
	wantClass(t, err, ipc.ClassFileNotFound)
	_, err = ns.Rename(su, "/a", "/f2/a", false, false)
	wantClass(t, err, ipc.ClassParentNotDirectory)
	// The legacy rename moves into an existing directory and reports
	// failures as false.
	ok, err := ns.Rename(su, "/a", "/empty", true, false)
	if !ok || err != nil || ns.tree.Lookup("/empty/a/b") == nil {
		t.Fatalf("legacy rename into dir: %v %v", ok, err)
	}
	if ok, err := ns.Rename(su, "/nope", "/x", true, false); ok || err != nil {
		t.Errorf("legacy rename of missing src: %v %v", ok, err)
	}
}

func TestPathValidationAndLimits(t *testing.T) {
	ns, _ := testNS(t)
	su := as("hdfs")
	for _, p := range []string{"relative", "/a/../b", "/a/./b", "/a:b", "/a//b"} {
		wantClass(t, ns.Mkdirs(su, p, 0o755, true), ipc.ClassInvalidPath)
	}
	wantClass(t, ns.Mkdirs(su, "/"+strings.Repeat("x", 256), 0o755, true), ipc.ClassPathComponentTooLong)
	mustOK(t, ns.Mkdirs(su, "/"+strings.Repeat("x", 255), 0o755, true))
	ns.cfg.maxDirItems = 3
	mustOK(t, ns.Mkdirs(su, "/lim/a", 0o755, true))
	mustOK(t, ns.Mkdirs(su, "/lim/b", 0o755, true))
	mustOK(t, ns.Mkdirs(su, "/lim/c", 0o755, true))
	wantClass(t, ns.Mkdirs(su, "/lim/d", 0o755, true), ipc.ClassMaxDirectoryItems)
	_, err := ns.Create(su, "/x", CreateOptions{ClientName: "c", BlockSize: 1000})
	wantClass(t, err, ipc.ClassIOException)
	_, err = ns.Create(su, "/x", CreateOptions{ClientName: "c", Replication: 1000})
	wantClass(t, err, ipc.ClassIOException)
	_, err = ns.Create(su, "/x", CreateOptions{ClientName: "c", StoragePolicy: "FAST"})
	wantClass(t, err, ipc.ClassIllegalArgument)
}

func TestMkdirsErrors(t *testing.T) {
	ns, _ := testNS(t)
	su := as("hdfs")
	_, err := ns.Create(su, "/file", CreateOptions{ClientName: "c", Perm: 0o644})
	mustOK(t, err)
	wantClass(t, ns.Mkdirs(su, "/file", 0o755, true), ipc.ClassFileAlreadyExists)
	wantClass(t, ns.Mkdirs(su, "/file/sub", 0o755, true), ipc.ClassParentNotDirectory)
	wantClass(t, ns.Mkdirs(su, "/no/such", 0o755, false), ipc.ClassFileNotFound)
	_, err = ns.Create(su, "/file2", CreateOptions{ClientName: "c"})
	mustOK(t, err)
	_, err = ns.Create(su, "/", CreateOptions{ClientName: "c"})
	wantClass(t, err, ipc.ClassFileAlreadyExists)
	// Parents made by mkdir -p get u+wx even under a restrictive mask.
	mustOK(t, ns.Mkdirs(su, "/p/q", 0o444, true))
	if m := ns.tree.Lookup("/p").Mode; m != 0o744 {
		t.Errorf("implicit parent mode %o, want 744", m)
	}
	if m := ns.tree.Lookup("/p/q").Mode; m != 0o444 {
		t.Errorf("target mode %o, want 444", m)
	}
}

func TestSafeModeRefusesChanges(t *testing.T) {
	ns, _ := testNS(t)
	_, err := ns.SafeMode(as("bob"), SafeModeEnter)
	wantClass(t, err, ipc.ClassAccessControl)
	on, err := ns.SafeMode(as("hdfs"), SafeModeEnter)
	if !on || err != nil {
		t.Fatal(on, err)
	}
	wantClass(t, ns.Mkdirs(as("hdfs"), "/x", 0o755, true), ipc.ClassSafeMode)
	if st, err := ns.FileInfo(as("bob"), "/"); err != nil || st == nil {
		t.Errorf("reads in safe mode: %v", err)
	}
	on, _ = ns.SafeMode(as("hdfs"), SafeModeLeave)
	if on {
		t.Fatal("still in safe mode")
	}
	mustOK(t, ns.Mkdirs(as("hdfs"), "/x", 0o755, true))
}

func TestJournalFailureStopsMutations(t *testing.T) {
	ns, j := testNS(t)
	mustOK(t, ns.Mkdirs(as("hdfs"), "/ok", 0o755, true))
	j.failSync = errors.New("disk on fire")
	err := ns.Mkdirs(as("hdfs"), "/lost", 0o755, true)
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("mkdir with failing journal: %v", err)
	}
	j.failSync = nil
	if err := ns.Mkdirs(as("hdfs"), "/later", 0o755, true); err == nil {
		t.Fatal("mutation accepted after the journal failed")
	}
	if st, err := ns.FileInfo(as("hdfs"), "/ok"); err != nil || st == nil {
		t.Errorf("reads after journal failure: %v", err)
	}
}

// TestReplayRebuildsSameTree replays the journal of a sequence of
// operations into a fresh namespace and compares both trees and the image
// round trip.
func TestReplayRebuildsSameTree(t *testing.T) {
	ns, j := testNS(t)
	su := as("hdfs")
	mustOK(t, ns.Mkdirs(su, "/a/b/c", 0o755, true))
	mustOK(t, ns.Mkdirs(su, "/tmp", 0o777, true))
	_, err := ns.Create(as("hdfs"), "/a/f", CreateOptions{ClientName: "c", Perm: 0o640, Replication: 2})
	mustOK(t, err)
	mustOK(t, ns.SetOwner(su, "/a/b", "alice", "staff"))
	mustOK(t, ns.SetTimes(su, "/a/b", 1000, 2000))
	mustOK(t, ns.SetStoragePolicy(su, "/a", "ALL_SSD"))
	_, err = ns.Rename(su, "/a/b/c", "/tmp/c", false, false)
	mustOK(t, err)
	_, err = ns.Delete(su, "/a/b", true)
	mustOK(t, err)
	_, err = ns.SetReplication(su, "/a/f", 5)
	mustOK(t, err)

	fresh := namespace.New("hdfs", "supergroup", blockmgmt.NewBlockMap())
	for i, rec := range j.recs {
		if err := fresh.ApplyRecord(rec); err != nil {
			t.Fatalf("replaying op %d: %v", i, err)
		}
	}
	if got, want := dump(fresh), dump(ns.tree); got != want {
		t.Fatalf("replayed tree differs:\n%s\nwant:\n%s", got, want)
	}
	var buf strings.Builder
	mustOK(t, ns.tree.WriteImage(&buf))
	loaded, err := namespace.ReadImage(strings.NewReader(buf.String()), blockmgmt.NewBlockMap())
	mustOK(t, err)
	if got, want := dump(loaded), dump(ns.tree); got != want {
		t.Fatalf("image round trip differs:\n%s\nwant:\n%s", got, want)
	}
	lf, ld := loaded.Counts()
	_, wd := ns.tree.Counts()
	if loaded.LastInodeID() != ns.tree.LastInodeID() || lf != 1 || ld != wd {
		t.Errorf("counters after image load: last %d/%d files %d dirs %d/%d", loaded.LastInodeID(), ns.tree.LastInodeID(), lf, ld, wd)
	}
}

func dump(ns *namespace.Tree) string {
	var b strings.Builder
	var walk func(n *namespace.Inode)
	walk = func(n *namespace.Inode) {
		uc := ""
		if n.UC() != nil {
			uc = " uc=" + n.UC().ClientName
		}
		b.WriteString(n.Path())
		b.WriteString(" ")
		b.WriteString(namespace.ModeString(n.IsDir, n.Mode))
		b.WriteString(" " + n.Owner + ":" + n.Group)
		b.WriteString(strings.Join([]string{"", itoa(n.ID), itoa(uint64(n.Mtime)), itoa(uint64(n.Atime)), itoa(uint64(n.Replication())), itoa(uint64(n.StoragePolicy))}, " "))
		b.WriteString(uc + "\n")
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(ns.Root)
	return b.String()
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
