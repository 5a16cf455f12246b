package namenode_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/testcluster"
)

// Inode paths reach an inode through any rename, in every kind of call.
func TestInodePaths(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 1})
	c.WaitDataNodes(1)
	ctx := context.Background()
	su := c.Client(c.Superuser())
	if err := su.Mkdirs(ctx, "/a/b", 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := su.Stat(ctx, "/a/b")
	if err != nil {
		t.Fatal(err)
	}
	if err := su.Rename(ctx, "/a", "/moved"); err != nil {
		t.Fatal(err)
	}
	byID := hdfs.InodePath(dir.FileID)

	// getFileInfo answers with the current full path.
	st, err := su.StatInode(ctx, dir.FileID)
	if err != nil || st.Path != "/moved/b" || !st.IsDir {
		t.Fatalf("StatInode = %+v, %v; want /moved/b", st, err)
	}
	// Create, list, rename and delete below an inode path.
	w, err := su.Create(ctx, byID+"/f", fs.CreateOptions{Perm: 0o644, Replication: 1})
	if err != nil {
		t.Fatalf("create under %s: %v", byID, err)
	}
	if _, err := w.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	list, err := su.List(ctx, byID)
	if err != nil || len(list) != 1 || list[0].Name() != "f" || list[0].Length != 5 {
		t.Fatalf("list %s = %+v, %v", byID, list, err)
	}
	if _, err := su.Stat(ctx, "/moved/b/f"); err != nil {
		t.Fatalf("file made through the inode path: %v", err)
	}
	if err := su.Rename(ctx, byID+"/f", byID+"/g"); err != nil {
		t.Fatalf("rename under the inode path: %v", err)
	}
	// ".." is the parent.
	parent, err := su.Stat(ctx, byID+"/..")
	if err != nil || !parent.IsDir {
		t.Fatalf("stat %s/..: %+v, %v", byID, parent, err)
	}
	if p, err := su.StatInode(ctx, parent.FileID); err != nil || p.Path != "/moved" {
		t.Fatalf("parent resolves to %q, %v; want /moved", p.Path, err)
	}
	// Permissions are checked on the real path.
	if err := su.SetPermission(ctx, "/moved", 0o700); err != nil {
		t.Fatal(err)
	}
	other := c.Client("someone")
	if _, err := other.Stat(ctx, byID+"/g"); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("another user through the inode path: %v, want permission denied", err)
	}
	// Unknown and malformed ids.
	for _, p := range []string{hdfs.InodePath(1 << 40), "/.reserved/.inodes/xyz"} {
		_, err := su.Stat(ctx, p)
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("stat %s: %v, want not found", p, err)
		}
		if !strings.Contains(err.Error(), "inode path") {
			t.Fatalf("stat %s: %v, want Hadoop's message", p, err)
		}
	}
	if err := su.Delete(ctx, byID+"/g", false); err != nil {
		t.Fatalf("delete through the inode path: %v", err)
	}
	// Edits logged through inode paths replay.
	c.RestartNameNode()
	if _, err := su.Stat(ctx, "/moved/b/g"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after restart, deleted file: %v", err)
	}
	if st, err := su.StatInode(ctx, dir.FileID); err != nil || st.Path != "/moved/b" {
		t.Fatalf("after restart, StatInode = %+v, %v", st, err)
	}
}
