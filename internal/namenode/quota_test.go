package namenode_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/testcluster"
)

// TestQuotaUsageMatchesRecount drives a workload of every namespace
// change that moves usage through real clients and checks after each
// step, and after restarts, that the usage kept incrementally equals a
// recount of the tree.
func TestQuotaUsageMatchesRecount(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: c.Superuser()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	verify := func(step string) {
		t.Helper()
		if err := c.NameNode().Namesystem().VerifyQuotas(); err != nil {
			t.Fatalf("after %s: %v", step, err)
		}
	}
	const mib = 1 << 20
	write := func(p string, n, repl int) {
		t.Helper()
		w, err := cl.Create(ctx, p, fs.CreateOptions{Replication: repl, BlockSize: mib, CreateParent: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(bytes.Repeat([]byte{'x'}, n)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"/a/b", "/c", "/out"} {
		if err := cl.Mkdirs(ctx, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(step string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		verify(step)
	}
	must("setQuota /a", cl.SetQuota(ctx, "/a", 100, 100*mib))
	must("setQuota /a/b", cl.SetQuota(ctx, "/a/b", hdfs.QuotaDontSet, 50*mib))
	must("type quota /c", cl.SetQuotaByStorageType(ctx, "/c", "DISK", 40*mib))
	write("/a/b/f", 2*mib+100, 2)
	verify("write f")
	write("/a/b/g", 300, 3)
	write("/a/b/h", 700, 2)
	verify("write g, h")
	must("setReplication", cl.SetReplication(ctx, "/a/b/g", 1))
	w, err := cl.AppendFile(ctx, "/a/b/f")
	must("append open", err)
	w.Write([]byte("more"))
	must("append close", w.Close())
	done, err := cl.Truncate(ctx, "/a/b/f", mib+10)
	must("truncate", err)
	if !done {
		must("truncate wait", cl.WaitTruncated(ctx, "/a/b/f"))
	}
	must("rename across", cl.Rename(ctx, "/a/b/h", "/c/h"))
	must("concat", cl.Concat(ctx, "/a/b/f", []string{"/a/b/g"}))
	must("setStoragePolicy", cl.SetStoragePolicy(ctx, "/c", "ONE_SSD"))
	must("delete", cl.Delete(ctx, "/c/h", false))
	// An open file is charged a full block per allocated block.
	open, err := cl.CreateFile(ctx, "/a/open", fs.CreateOptions{Replication: 3, BlockSize: mib})
	must("create open", err)
	open.Write([]byte("abc"))
	if err := open.Flush(); err != nil {
		t.Fatal(err)
	}
	verify("open file")
	qu, err := cl.QuotaUsage(ctx, "/a")
	if err != nil {
		t.Fatal(err)
	}
	// /a, /a/b, /a/b/f (1 MiB+10, then g's 300 bytes, at replication 2),
	// /a/open (one block charged in full at replication 3).
	if qu.FileAndDirectoryCount != 4 || qu.SpaceConsumed != 2*(mib+310)+3*mib || qu.Quota != 100 || qu.SpaceQuota != 100*mib {
		t.Fatalf("usage of /a: %+v", qu)
	}
	if err := open.Close(); err != nil {
		t.Fatal(err)
	}
	verify("close open file")
	before := map[string]fs.QuotaUsage{}
	for _, d := range []string{"/a", "/a/b", "/c"} {
		before[d], _ = cl.QuotaUsage(ctx, d)
	}
	if before["/c"].TypeQuota["DISK"] != 40*mib {
		t.Fatalf("type quota of /c: %+v", before["/c"])
	}
	for _, restart := range []func(){c.RestartNameNode, func() { c.KillNameNode(); c.StartNameNode() }} {
		restart()
		verify("restart")
		for d, want := range before {
			got, err := cl.QuotaUsage(ctx, d)
			if err != nil || got.FileAndDirectoryCount != want.FileAndDirectoryCount || got.SpaceConsumed != want.SpaceConsumed ||
				got.Quota != want.Quota || got.SpaceQuota != want.SpaceQuota || got.TypeQuota["DISK"] != want.TypeQuota["DISK"] {
				t.Fatalf("%s after restart: %+v, %v; want %+v", d, got, err, want)
			}
		}
	}
}

// TestQuotaErrorsThroughGoHDFS: an unmodified HDFS client sees the quota
// exceptions and getContentSummary's quota fields.
func TestQuotaErrorsThroughGoHDFS(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 1})
	ctx := context.Background()
	cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: c.Superuser()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.Mkdirs(ctx, "/q", 0o777); err != nil {
		t.Fatal(err)
	}
	if err := cl.SetPermission(ctx, "/q", 0o777); err != nil {
		t.Fatal(err)
	}
	if err := cl.SetQuota(ctx, "/q", 2, 5<<20); err != nil {
		t.Fatal(err)
	}
	g := goClient(t, c, "bob")
	if err := g.Mkdir("/q/a", 0o755); err != nil {
		t.Fatal(err)
	}
	err = g.Mkdir("/q/b", 0o755)
	if err == nil || !strings.Contains(err.Error(), "NSQuotaExceededException") && !strings.Contains(err.Error(), "NameSpace quota") {
		t.Fatalf("mkdir over quota through colinmarc/hdfs: %v", err)
	}
	cs, err := g.GetContentSummary("/q")
	if err != nil || cs.NameQuota() != 2 || cs.SpaceQuota() != 5<<20 || cs.DirectoryCount() != 2 {
		t.Fatalf("content summary: %+v %v", cs, err)
	}
	// Bad values are Hadoop's IllegalArgumentException; a file is no
	// directory; types without quota are refused.
	for _, tc := range []struct {
		err  error
		want string
	}{
		{cl.SetQuota(ctx, "/q", -5, hdfs.QuotaDontSet), "Illegal value for nsQuota or ssQuota : -5 and 9223372036854775807"},
		{cl.SetQuota(ctx, "/", hdfs.QuotaReset, hdfs.QuotaDontSet), "Cannot clear namespace quota on root."},
		{cl.SetQuotaByStorageType(ctx, "/q", "PROVIDED", 5), "Failed to set quota by storage type"},
	} {
		var re *hdfs.RemoteError
		if !errors.As(tc.err, &re) || !strings.Contains(re.Message, tc.want) {
			t.Errorf("got %v, want %q", tc.err, tc.want)
		}
	}
}
