package namenode_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"

	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/testcluster"
)

// These tests drive the NameNode with github.com/colinmarc/hdfs/v2, an
// HDFS client written against Hadoop, as an external user would.

func goClient(t *testing.T, c *testcluster.Cluster, user string) *gohdfs.Client {
	t.Helper()
	cl, err := gohdfs.NewClient(gohdfs.ClientOptions{Addresses: []string{c.Addr()}, User: user})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func TestGoClientMetadata(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{})
	su := goClient(t, c, c.Superuser())

	if err := su.MkdirAll("/a/b/c", 0o755); err != nil {
		t.Fatal(err)
	}
	fi, err := su.Stat("/a/b/c")
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() || fi.Name() != "c" || fi.Mode().Perm() != 0o755 {
		t.Errorf("stat /a/b/c: dir=%v name=%q mode=%v", fi.IsDir(), fi.Name(), fi.Mode())
	}
	if owner := fi.(*gohdfs.FileInfo).Owner(); owner != c.Superuser() {
		t.Errorf("owner %q, want %q", owner, c.Superuser())
	}
	// mkdir -p of an existing directory is fine; of a file is not.
	if err := su.MkdirAll("/a/b", 0o755); err != nil {
		t.Errorf("MkdirAll existing: %v", err)
	}
	if err := su.CreateEmptyFile("/a/file"); err != nil {
		t.Fatal(err)
	}
	if err := su.Mkdir("/a/file", 0o755); !errors.Is(err, os.ErrExist) {
		t.Errorf("mkdir over a file: %v, want ErrExist", err)
	}
	if err := su.CreateEmptyFile("/a/file"); !errors.Is(err, os.ErrExist) {
		t.Errorf("create existing file: %v, want ErrExist", err)
	}
	if _, err := su.Stat("/nope"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat missing: %v, want ErrNotExist", err)
	}
	if err := su.Mkdir("/x/y", 0o755); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("mkdir without parent: %v, want ErrNotExist", err)
	}

	// Rename a directory, then remove it recursively.
	if err := su.Rename("/a/b", "/a/moved"); err != nil {
		t.Fatal(err)
	}
	if _, err := su.Stat("/a/moved/c"); err != nil {
		t.Errorf("after rename: %v", err)
	}
	if _, err := su.Stat("/a/b"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("old name after rename: %v", err)
	}
	if err := su.Rename("/nope", "/a/x"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("rename missing: %v, want ErrNotExist", err)
	}
	if err := su.Remove("/a"); err == nil {
		t.Error("removing a non-empty directory without recursion succeeded")
	}
	if err := su.RemoveAll("/a"); err != nil {
		t.Fatal(err)
	}
	if _, err := su.Stat("/a/moved/c"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after RemoveAll: %v", err)
	}
	if err := su.Remove("/a"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("remove missing: %v, want ErrNotExist", err)
	}

	// chmod, chown, chtimes.
	if err := su.MkdirAll("/p", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := su.Chmod("/p", 0o1750); err != nil {
		t.Fatal(err)
	}
	if err := su.Chown("/p", "alice", "staff"); err != nil {
		t.Fatal(err)
	}
	mt := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := su.Chtimes("/p", mt, mt); err != nil {
		t.Fatal(err)
	}
	fi, err = su.Stat("/p")
	if err != nil {
		t.Fatal(err)
	}
	h := fi.(*gohdfs.FileInfo)
	if h.Mode().Perm() != 0o750 || h.Owner() != "alice" || h.OwnerGroup() != "staff" || !h.ModTime().Equal(mt) {
		t.Errorf("after chmod/chown/chtimes: mode=%v owner=%s group=%s mtime=%v", h.Mode(), h.Owner(), h.OwnerGroup(), h.ModTime())
	}

	cs, err := su.GetContentSummary("/")
	if err != nil {
		t.Fatal(err)
	}
	if cs.DirectoryCount() != 2 || cs.FileCount() != 0 {
		t.Errorf("content summary of /: %d dirs %d files, want 2, 0", cs.DirectoryCount(), cs.FileCount())
	}
	if _, err := su.StatFs(); err != nil {
		t.Errorf("StatFs: %v", err)
	}
}

func TestGoClientLargeListing(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{})
	su := goClient(t, c, c.Superuser())
	const n = 2500
	if err := su.MkdirAll("/big", 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := su.CreateEmptyFile(fmt.Sprintf("/big/f%05d", i)); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := su.ReadDir("/big")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != n {
		t.Fatalf("listed %d entries, want %d", len(entries), n)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	if !sort.StringsAreSorted(names) || names[0] != "f00000" || names[n-1] != fmt.Sprintf("f%05d", n-1) {
		t.Errorf("listing not complete and in order: first %s last %s", names[0], names[n-1])
	}
	seen := map[string]bool{}
	for _, nm := range names {
		if seen[nm] {
			t.Fatalf("%s listed twice", nm)
		}
		seen[nm] = true
	}
}

func TestGoClientPermissions(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{})
	su := goClient(t, c, c.Superuser())
	bob := goClient(t, c, "bob")
	eve := goClient(t, c, "eve")

	for _, d := range []string{"/restricted", "/shared"} {
		if err := su.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := su.Chmod("/shared", 0o777); err != nil {
		t.Fatal(err)
	}
	if err := bob.Mkdir("/restricted/x", 0o755); !errors.Is(err, os.ErrPermission) {
		t.Errorf("bob mkdir in root-owned 755 dir: %v, want ErrPermission", err)
	}
	if err := bob.MkdirAll("/shared/bob", 0o700); err != nil {
		t.Fatalf("bob mkdir in 777 dir: %v", err)
	}
	if err := bob.CreateEmptyFile("/shared/bob/own"); err != nil {
		t.Fatal(err)
	}
	fi, err := bob.Stat("/shared/bob")
	if err != nil {
		t.Fatal(err)
	}
	if o := fi.(*gohdfs.FileInfo).Owner(); o != "bob" {
		t.Errorf("new dir owned by %q, want bob", o)
	}
	// eve can't look inside bob's 700 directory, nor change it.
	if _, err := eve.ReadDir("/shared/bob"); !errors.Is(err, os.ErrPermission) {
		t.Errorf("eve lists bob's 700 dir: %v, want ErrPermission", err)
	}
	if err := eve.CreateEmptyFile("/shared/bob/f"); !errors.Is(err, os.ErrPermission) {
		t.Errorf("eve creates in bob's 700 dir: %v, want ErrPermission", err)
	}
	if err := eve.Chmod("/shared/bob", 0o777); !errors.Is(err, os.ErrPermission) {
		t.Errorf("eve chmods bob's dir: %v, want ErrPermission", err)
	}
	// Deleting a non-empty directory needs access to everything inside.
	if err := eve.RemoveAll("/shared/bob"); !errors.Is(err, os.ErrPermission) {
		t.Errorf("eve removes bob's non-empty dir: %v, want ErrPermission", err)
	}
	if _, err := su.Stat("/shared/bob"); err != nil {
		t.Errorf("bob's dir gone after eve's attempt: %v", err)
	}
	// Only the superuser changes owners.
	if err := bob.Chown("/shared/bob", "eve", ""); !errors.Is(err, os.ErrPermission) {
		t.Errorf("bob chowns to eve: %v, want ErrPermission", err)
	}
	if err := su.Chown("/shared/bob", "eve", "eve"); err != nil {
		t.Errorf("superuser chown: %v", err)
	}
	// The owner can chmod; then others may enter.
	if err := eve.Chmod("/shared/bob", 0o755); err != nil {
		t.Errorf("owner chmod: %v", err)
	}
	if _, err := bob.ReadDir("/shared/bob"); err != nil {
		t.Errorf("bob lists 755 dir: %v", err)
	}
	// Rename out of a directory one can't write to.
	if err := su.CreateEmptyFile("/restricted/file"); err != nil {
		t.Fatal(err)
	}
	if err := bob.Rename("/restricted/file", "/shared/stolen"); !errors.Is(err, os.ErrPermission) {
		t.Errorf("bob renames out of root's dir: %v, want ErrPermission", err)
	}
}

func TestNamespaceSurvivesRestart(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{})
	su := goClient(t, c, c.Superuser())
	for i := 0; i < 50; i++ {
		if err := su.MkdirAll(fmt.Sprintf("/r/d%02d/sub", i), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	if err := su.Chown("/r/d07", "alice", "g"); err != nil {
		t.Fatal(err)
	}
	if err := su.Rename("/r/d08", "/r/renamed"); err != nil {
		t.Fatal(err)
	}
	if err := su.RemoveAll("/r/d09"); err != nil {
		t.Fatal(err)
	}
	c.RestartNameNode()
	su2 := goClient(t, c, c.Superuser())
	entries, err := su2.ReadDir("/r")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 49 {
		t.Errorf("%d entries after restart, want 49", len(entries))
	}
	fi, err := su2.Stat("/r/d07")
	if err != nil {
		t.Fatal(err)
	}
	if o := fi.(*gohdfs.FileInfo).Owner(); o != "alice" {
		t.Errorf("owner after restart %q", o)
	}
	if _, err := su2.Stat("/r/renamed/sub"); err != nil {
		t.Errorf("renamed dir after restart: %v", err)
	}
	if _, err := su2.Stat("/r/d09"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("deleted dir after restart: %v", err)
	}
}

// TestPeriodicCheckpoint checks that the NameNode saves images as edits
// accumulate, drops the log segments they cover, and restarts from them.
func TestPeriodicCheckpoint(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{NameNode: func(nc *namenode.Config) { nc.CheckpointTxns = 50 }})
	su := goClient(t, c, c.Superuser())
	for i := 0; i < 300; i++ {
		if err := su.MkdirAll(fmt.Sprintf("/cp/d%03d", i), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cur := filepath.Join(c.Dir(), "name", "current")
	deadline := time.Now().Add(10 * time.Second)
	var images []string
	for time.Now().Before(deadline) {
		images, _ = filepath.Glob(filepath.Join(cur, "fsimage_*"))
		if len(images) >= 2 && !strings.HasSuffix(images[len(images)-1], "0000000000000000000") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(images) < 2 {
		t.Fatalf("no checkpoint after 300 mkdirs with checkpoint.txns=50: %v", images)
	}
	segs, _ := filepath.Glob(filepath.Join(cur, "edits_*"))
	if len(segs) > 4 {
		t.Errorf("old edit segments not purged: %d left", len(segs))
	}
	if st := c.NameNode().Status(); st.Checkpoints == 0 {
		t.Error("status reports no checkpoints")
	}
	c.RestartNameNode()
	su2 := goClient(t, c, c.Superuser())
	entries, err := su2.ReadDir("/cp")
	if err != nil || len(entries) != 300 {
		t.Fatalf("after restart from checkpoint: %d entries, %v", len(entries), err)
	}
}
