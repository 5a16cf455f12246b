package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/testcluster"
)

// snapData is size bytes that differ per seed.
func snapData(seed, size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i*31 + seed*7 + i>>9)
	}
	return b
}

func writeSnapFile(t *testing.T, ctx context.Context, cl *hdfs.Client, p string, data []byte) {
	t.Helper()
	w, err := cl.CreateFile(ctx, p, fs.CreateOptions{})
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

// readBoth reads p with strata's client and colinmarc/hdfs and checks
// both get want.
func readBoth(t *testing.T, ctx context.Context, cl *hdfs.Client, gc *gohdfs.Client, p string, want []byte) {
	t.Helper()
	readBothLimit(t, ctx, cl, gc, p, want, false)
}

// readBothLimit is readBoth; with limit colinmarc/hdfs's reader is cut at
// the file's size. A snapshot of a file appended to since ends inside a
// checksum chunk of a block that goes on; the DataNode sends whole chunks
// (as Hadoop's BlockSender does) and colinmarc/hdfs, unlike DFSClient and
// strata's client, does not stop at the file's length, so its ReadAll
// returns the rest of the chunk, against Hadoop as here.
func readBothLimit(t *testing.T, ctx context.Context, cl *hdfs.Client, gc *gohdfs.Client, p string, want []byte, limit bool) {
	t.Helper()
	f, err := cl.OpenFile(ctx, p)
	if err != nil {
		t.Fatalf("strata open %s: %v", p, err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("strata read %s: %d bytes (err %v), want %d", p, len(got), err, len(want))
	}
	gf, err := gc.Open(p)
	if err != nil {
		t.Fatalf("colinmarc open %s: %v", p, err)
	}
	var r io.Reader = gf
	if limit {
		r = io.LimitReader(gf, gf.Stat().Size())
	}
	got, err = io.ReadAll(r)
	gf.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("colinmarc read %s: %d bytes (err %v), want %d", p, len(got), err, len(want))
	}
	if st, err := gc.Stat(p); err != nil || st.Size() != int64(len(want)) {
		t.Fatalf("colinmarc stat %s: %v size %d, want %d", p, err, st.Size(), len(want))
	}
}

func blockIDs(t *testing.T, ctx context.Context, cl *hdfs.Client, p string) []uint64 {
	t.Helper()
	locs, err := cl.BlockLocations(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, l := range locs {
		ids = append(ids, l.BlockID)
	}
	return ids
}

// TestSnapshots: a snapshot taken before deleting, truncating (at a block
// boundary and inside a block: copy-on-truncate), appending to and
// renaming files reads back the old bytes through strata's client
// and colinmarc/hdfs, is read-only, survives a clean restart (image) and
// a kill -9 (edit log), diffs exactly, and holds its blocks until the
// last snapshot referencing them is deleted.
func TestSnapshots(t *testing.T) {
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1})
	c.WaitDataNodes(1)
	ctx := ctxT(t)
	su := c.Superuser()
	dial := func() (*hdfs.Client, *gohdfs.Client) {
		cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: su, BlockSize: 4096, Replication: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cl.Close() })
		gc, err := gohdfs.NewClient(gohdfs.ClientOptions{Addresses: []string{c.Addr()}, User: su})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { gc.Close() })
		return cl, gc
	}
	cl, gc := dial()

	del, trunc, app, keep, cut := snapData(1, 10000), snapData(2, 10000), snapData(3, 5000), snapData(4, 100), snapData(7, 10000)
	if err := cl.Mkdirs(ctx, "/d", 0o755); err != nil {
		t.Fatal(err)
	}
	writeSnapFile(t, ctx, cl, "/d/del", del)
	writeSnapFile(t, ctx, cl, "/d/trunc", trunc)
	writeSnapFile(t, ctx, cl, "/d/app", app)
	writeSnapFile(t, ctx, cl, "/d/keep", keep)
	writeSnapFile(t, ctx, cl, "/d/cut", cut)
	delBlocks, truncBlocks, cutBlocks := blockIDs(t, ctx, cl, "/d/del"), blockIDs(t, ctx, cl, "/d/trunc"), blockIDs(t, ctx, cl, "/d/cut")
	if len(delBlocks) != 3 || len(truncBlocks) != 3 {
		t.Fatalf("blocks %v %v, want 3 each", delBlocks, truncBlocks)
	}

	// colinmarc/hdfs's snapshot calls.
	if err := gc.AllowSnapshots("/d"); err != nil {
		t.Fatal(err)
	}
	if p, err := gc.CreateSnapshot("/d", "s1"); err != nil || p != "/d/.snapshot/s1" {
		t.Fatalf("CreateSnapshot = %q, %v", p, err)
	}

	// Change the live tree: delete, truncate at a block boundary, append,
	// rename, create.
	if err := cl.Delete(ctx, "/d/del", false); err != nil {
		t.Fatal(err)
	}
	if done, err := cl.Truncate(ctx, "/d/trunc", 4096); err != nil || !done {
		t.Fatalf("truncate: %v %v", done, err)
	}
	// Inside a block s1 holds: the DataNode copies the kept part to a new
	// block (copy-on-truncate) and the held block stays whole.
	if done, err := cl.Truncate(ctx, "/d/cut", 5000); err != nil || done {
		t.Fatalf("truncate inside a block: %v %v", done, err)
	}
	if err := cl.WaitTruncated(ctx, "/d/cut"); err != nil {
		t.Fatal(err)
	}
	if ids := blockIDs(t, ctx, cl, "/d/cut"); len(ids) != 2 || ids[0] != cutBlocks[0] || ids[1] == cutBlocks[1] {
		t.Fatalf("cut's blocks after the truncate %v, before %v", ids, cutBlocks)
	}
	w, err := cl.Append(ctx, "/d/app")
	if err != nil {
		t.Fatal(err)
	}
	more := snapData(5, 3000)
	if _, err := w.Write(more); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cl.Rename(ctx, "/d/keep", "/d/kept"); err != nil {
		t.Fatal(err)
	}
	writeSnapFile(t, ctx, cl, "/d/new", snapData(6, 10))

	checkS1 := func(cl *hdfs.Client, gc *gohdfs.Client) {
		t.Helper()
		readBoth(t, ctx, cl, gc, "/d/.snapshot/s1/del", del)
		readBoth(t, ctx, cl, gc, "/d/.snapshot/s1/trunc", trunc)
		readBothLimit(t, ctx, cl, gc, "/d/.snapshot/s1/app", app, true) // the old length, though the block grew
		readBoth(t, ctx, cl, gc, "/d/.snapshot/s1/keep", keep)
		readBoth(t, ctx, cl, gc, "/d/.snapshot/s1/cut", cut)
		if _, err := gc.Stat("/d/.snapshot/s1/new"); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("s1/new: %v", err)
		}
	}
	checkLive := func(cl *hdfs.Client, gc *gohdfs.Client) {
		t.Helper()
		readBoth(t, ctx, cl, gc, "/d/trunc", trunc[:4096])
		readBoth(t, ctx, cl, gc, "/d/app", append(append([]byte(nil), app...), more...))
		readBoth(t, ctx, cl, gc, "/d/kept", keep)
		readBoth(t, ctx, cl, gc, "/d/cut", cut[:5000])
	}
	checkS1(cl, gc)
	checkLive(cl, gc)

	// Listing .snapshot and a snapshot.
	infos, err := gc.ReadDir("/d/.snapshot")
	if err != nil || len(infos) != 1 || infos[0].Name() != "s1" || !infos[0].IsDir() {
		t.Fatalf("ls /d/.snapshot: %v %v", infos, err)
	}
	infos, err = gc.ReadDir("/d/.snapshot/s1")
	if err != nil || len(infos) != 5 {
		t.Fatalf("ls /d/.snapshot/s1: %v %v", infos, err)
	}

	// Read-only, and the directory cannot go while it has snapshots.
	_, stderr, code := c.Run(su, "dfs", "-mkdir", "/d/.snapshot/s1/x")
	if code == 0 || !strings.Contains(stderr, "Modification on a read-only snapshot is disallowed") {
		t.Fatalf("mkdir in a snapshot: exit %d: %s", code, stderr)
	}
	if err := cl.Delete(ctx, "/d/.snapshot/s1/app", false); err == nil || !strings.Contains(err.Error(), "read-only snapshot") {
		t.Fatalf("delete in a snapshot: %v", err)
	}
	if err := cl.Delete(ctx, "/d", true); err == nil || !strings.Contains(err.Error(), "The directory /d cannot be deleted since /d is snapshottable and already has snapshots") {
		t.Fatalf("delete /d: %v", err)
	}
	if err := gc.DisallowSnapshots("/d"); err == nil || !strings.Contains(err.Error(), "SnapshotException") {
		t.Fatalf("disallow with snapshots: %v", err)
	}
	if _, stderr, code := c.Run(su, "dfsadmin", "-disallowSnapshot", "/d"); code == 0 ||
		stderr != "disallowSnapshot: The directory /d has snapshot(s). Please redo the operation after removing all the snapshots.\n" {
		t.Fatalf("dfsadmin -disallowSnapshot with snapshots: exit %d %q", code, stderr)
	}

	// The diff, through the binary.
	out, stderr, code := c.Run(su, "snapshotDiff", "/d", "s1", ".")
	want := "Difference between snapshot s1 and current directory under directory /d:\n" +
		"M\t.\n+\t./new\n-\t./del\nR\t./keep -> ./kept\nM\t./app\nM\t./cut\nM\t./trunc\n"
	if code != 0 || out != want {
		t.Fatalf("snapshotDiff (exit %d, %s):\n%s\nwant\n%s", code, stderr, out, want)
	}

	// Shell commands: s2 taken and renamed to s3.
	if out, stderr, code := c.Run(su, "dfs", "-createSnapshot", "/d", "s2"); code != 0 || out != "Created snapshot /d/.snapshot/s2\n" {
		t.Fatalf("-createSnapshot: exit %d %q %s", code, out, stderr)
	}
	if _, stderr, code := c.Run(su, "dfs", "-renameSnapshot", "/d", "s2", "s3"); code != 0 {
		t.Fatalf("-renameSnapshot: exit %d %s", code, stderr)
	}
	out, stderr, code = c.Run(su, "lsSnapshottableDir")
	if f := strings.Fields(out); code != 0 || len(f) != 10 || f[0] != "drwxr-xr-x" || f[2] != su || f[7] != "2" || f[8] != "65536" || f[9] != "/d" {
		t.Fatalf("lsSnapshottableDir: exit %d %q %s", code, out, stderr)
	}
	out, _, _ = c.Run(su, "snapshotDiff", "/d", "s1", ".snapshot/s3")
	if out != strings.Replace(want, "current directory", "snapshot s3", 1) {
		t.Fatalf("snapshotDiff s1 s3:\n%s", out)
	}

	// A clean restart (checkpoint image) keeps everything.
	c.StopNameNode()
	c.StartNameNode()
	c.WaitDataNodes(1)
	c.WaitSafeModeOff()
	cl, gc = dial()
	checkS1(cl, gc)
	checkLive(cl, gc)
	readBoth(t, ctx, cl, gc, "/d/.snapshot/s3/app", append(append([]byte(nil), app...), more...))

	// Deleting the live app leaves it in s1 and s3; a snapshot op then
	// kill -9: the edit log replays it.
	appBlocks := blockIDs(t, ctx, cl, "/d/app")
	if err := cl.Delete(ctx, "/d/app", false); err != nil {
		t.Fatal(err)
	}
	if _, err := gc.CreateSnapshot("/d", "s4"); err != nil {
		t.Fatal(err)
	}
	c.KillNameNode()
	c.StartNameNode()
	c.WaitDataNodes(1)
	c.WaitSafeModeOff()
	cl, gc = dial()
	checkS1(cl, gc)
	readBoth(t, ctx, cl, gc, "/d/.snapshot/s3/app", append(append([]byte(nil), app...), more...))
	if _, err := gc.Stat("/d/.snapshot/s4/app"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("s4/app after kill -9: %v", err)
	}
	if _, err := gc.Stat("/d/.snapshot/s4/kept"); err != nil {
		t.Fatalf("s4/kept after kill -9: %v", err)
	}

	// Blocks go only with the last snapshot holding them.
	hasReplica := func(id uint64) bool { return c.ReplicaFile(0, id) != "" }
	time.Sleep(time.Second) // time for a wrong deletion to reach the DataNode
	for _, id := range append(append(append(append([]uint64(nil), delBlocks...), truncBlocks...), appBlocks...), cutBlocks...) {
		if !hasReplica(id) {
			t.Fatalf("blk_%d deleted while a snapshot holds it", id)
		}
	}
	if err := gc.DeleteSnapshot("/d", "s1"); err != nil {
		t.Fatal(err)
	}
	gone := append(append(append([]uint64(nil), delBlocks...), truncBlocks[1:]...), cutBlocks[1:]...)
	c.WaitFor("replicas of blocks only s1 held deleted", 30*time.Second, func() bool {
		for _, id := range gone {
			if hasReplica(id) {
				return false
			}
		}
		return true
	})
	for _, id := range append([]uint64{truncBlocks[0], cutBlocks[0]}, appBlocks...) {
		if !hasReplica(id) {
			t.Fatalf("blk_%d deleted with s1 but still held", id)
		}
	}
	readBoth(t, ctx, cl, gc, "/d/.snapshot/s3/app", append(append([]byte(nil), app...), more...))
	if err := gc.DeleteSnapshot("/d", "s3"); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("replicas of app deleted with s3", 30*time.Second, func() bool {
		for _, id := range appBlocks {
			if hasReplica(id) {
				return false
			}
		}
		return true
	})
	if !hasReplica(truncBlocks[0]) {
		t.Fatal("the live trunc's block went")
	}
	for _, s := range []string{"s4"} {
		if err := gc.DeleteSnapshot("/d", s); err != nil {
			t.Fatal(err)
		}
	}
	if _, stderr, code := c.Run(su, "dfsadmin", "-disallowSnapshot", "/d"); code != 0 {
		t.Fatalf("-disallowSnapshot: %s", stderr)
	}
	if out, _, _ := c.Run(su, "lsSnapshottableDir"); out != "" {
		t.Fatalf("lsSnapshottableDir after disallow: %q", out)
	}
	if err := cl.Delete(ctx, "/d", true); err != nil {
		t.Fatal(err)
	}
	c.StopNameNode()
}

// TestSnapshotCopyOnTruncateResumes: a copy-on-truncate that no DataNode
// carried out (the only one was down) survives a kill -9 of the NameNode
// in the edit log; lease recovery then copies the kept part instead of
// cutting the block the snapshot holds.
func TestSnapshotCopyOnTruncateResumes(t *testing.T) {
	for _, deleteSnapshot := range []bool{false, true} {
		name := "snapshot kept"
		if deleteSnapshot {
			name = "snapshot deleted mid-copy"
		}
		t.Run(name, func(t *testing.T) { copyOnTruncateResumes(t, deleteSnapshot) })
	}
}

// copyOnTruncateResumes is TestSnapshotCopyOnTruncateResumes; with
// deleteSnapshot the only snapshot holding the copy's source is deleted
// while the copy waits: the source (and its replica) stays until the
// file closes, so the copy still has the bytes to copy.
func copyOnTruncateResumes(t *testing.T, deleteSnapshot bool) {
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1})
	c.WaitDataNodes(1)
	ctx := ctxT(t)
	su := c.Superuser()
	cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: su, BlockSize: 4096, Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	data := snapData(8, 10000)
	if err := cl.Mkdirs(ctx, "/d", 0o755); err != nil {
		t.Fatal(err)
	}
	writeSnapFile(t, ctx, cl, "/d/f", data)
	if err := cl.AllowSnapshot(ctx, "/d"); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateSnapshot(ctx, "/d", "s1"); err != nil {
		t.Fatal(err)
	}
	// The DataNode goes before the NameNode notices: the copy command is
	// queued for a node that never takes it.
	c.StopDataNode(0)
	if done, err := cl.Truncate(ctx, "/d/f", 5000); err != nil || done {
		t.Fatalf("truncate: %v %v", done, err)
	}
	srcBlock := blockIDs(t, ctx, cl, "/d/.snapshot/s1/f")[1]
	if deleteSnapshot {
		if err := cl.DeleteSnapshot(ctx, "/d", "s1"); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	c.KillNameNode()
	c.StartDataNode(0)
	c.StartNameNode()
	c.WaitDataNodes(1)
	c.WaitSafeModeOff()

	cl, err = hdfs.New(hdfs.Options{Addr: c.Addr(), User: su})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var resp hdfspb.RecoverLeaseResponseProto
	req := &hdfspb.RecoverLeaseRequestProto{Src: proto.String("/d/f"), ClientName: proto.String("DFSClient_recoverer")}
	if err := cl.Call(ctx, "recoverLease", req, &resp); err != nil {
		t.Fatal(err)
	}
	if err := cl.WaitTruncated(ctx, "/d/f"); err != nil {
		t.Fatal(err)
	}
	gc, err := gohdfs.NewClient(gohdfs.ClientOptions{Addresses: []string{c.Addr()}, User: su})
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	readBoth(t, ctx, cl, gc, "/d/f", data[:5000])
	if !deleteSnapshot {
		readBoth(t, ctx, cl, gc, "/d/.snapshot/s1/f", data)
		c.StopNameNode()
		return
	}
	c.WaitFor("the copy's source freed once the file closed", 30*time.Second, func() bool { return c.ReplicaFile(0, srcBlock) == "" })
	c.StopNameNode()
}

// TestSnapshotReplication: a block is kept at the most replicas any of
// its holders asks for (Hadoop's getPreferredBlockReplication): lowering
// the live file's replication below its snapshot's, then deleting the
// live file, keeps every replica, across a restart (image); deleting the
// snapshot frees them.
func TestSnapshotReplication(t *testing.T) {
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 3})
	c.WaitDataNodes(3)
	ctx := ctxT(t)
	su := c.Superuser()
	cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: su, BlockSize: 4096, Replication: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Mkdirs(ctx, "/d", 0o755); err != nil {
		t.Fatal(err)
	}
	data := snapData(9, 10000)
	writeSnapFile(t, ctx, cl, "/d/f", data)
	ids := blockIDs(t, ctx, cl, "/d/f")
	everywhere := func() bool {
		for _, id := range ids {
			for dn := 0; dn < 3; dn++ {
				if c.ReplicaFile(dn, id) == "" {
					return false
				}
			}
		}
		return true
	}
	c.WaitFor("three replicas of every block", 30*time.Second, everywhere)
	if err := cl.AllowSnapshot(ctx, "/d"); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateSnapshot(ctx, "/d", "s1"); err != nil {
		t.Fatal(err)
	}
	if err := cl.SetReplication(ctx, "/d/f", 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // ten replication passes: time for a wrong deletion
	if !everywhere() {
		t.Fatal("replicas the replication-3 snapshot holds were deleted after setReplication 1 on the live file")
	}
	if err := cl.Delete(ctx, "/d/f", false); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	c.StopNameNode()
	c.StartNameNode()
	c.WaitDataNodes(3)
	c.WaitSafeModeOff()
	time.Sleep(2 * time.Second)
	if !everywhere() {
		t.Fatal("replicas of blocks only the snapshot holds were deleted")
	}
	cl, err = hdfs.New(hdfs.Options{Addr: c.Addr(), User: su})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	f, err := cl.OpenFile(ctx, "/d/.snapshot/s1/f")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("snapshot read: %d bytes, %v", len(got), err)
	}
	if err := cl.DeleteSnapshot(ctx, "/d", "s1"); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("replicas freed with the snapshot", 30*time.Second, func() bool {
		for _, id := range ids {
			for dn := 0; dn < 3; dn++ {
				if c.ReplicaFile(dn, id) != "" {
					return false
				}
			}
		}
		return true
	})
	c.StopNameNode()
}
