package namenode

import (
	"context"
	"testing"
	"time"
)

// TestHASnapshots: snapshot edits reach the followers through Tree.Apply,
// so every member has the same namespace (snapshots included, as the
// image digest shows), and after a failover the new active serves the
// snapshots and changes them.
func TestHASnapshots(t *testing.T) {
	g := newHAGroup(t, 3)
	a := g.active(10 * time.Second)
	ctx := context.Background()
	ns := g.nns[a].Namesystem()
	mustOK(t, ns.Mkdirs(ctx, "/d/a", 0o755, true))
	mustOK(t, ns.AllowSnapshot(ctx, "/d"))
	if _, err := ns.CreateSnapshot(ctx, "/d", "s1"); err != nil {
		t.Fatal(err)
	}
	mustOK(t, ns.Mkdirs(ctx, "/d/b", 0o755, true))
	if _, err := ns.Delete(ctx, "/d/a", true); err != nil {
		t.Fatal(err)
	}
	if _, err := ns.CreateSnapshot(ctx, "/d", "s2"); err != nil {
		t.Fatal(err)
	}
	mustOK(t, ns.RenameSnapshot(ctx, "/d", "s2", "s3"))
	g.waitDigests(10 * time.Second)

	g.stop(a)
	b := g.active(10 * time.Second)
	nb := g.nns[b].Namesystem()
	if st, err := nb.FileInfo(ctx, "/d/.snapshot/s1/a"); err != nil || st == nil {
		t.Fatalf("s1/a on the new active: %v %v", st, err)
	}
	if st, _ := nb.FileInfo(ctx, "/d/.snapshot/s3/b"); st == nil {
		t.Fatal("s3/b missing on the new active")
	}
	mustOK(t, nb.DeleteSnapshot(ctx, "/d", "s1"))
	if st, _ := nb.FileInfo(ctx, "/d/.snapshot/s1"); st != nil {
		t.Fatal("s1 still there")
	}
	g.start(a)
	g.waitDigests(10 * time.Second)
}
