package shell

import (
	"context"
	"strings"
	"testing"
)

// TestHDFSSnapshots: -createSnapshot, -renameSnapshot and -deleteSnapshot
// with Hadoop's output, argument checks and errors; the snapshot reads
// back through -cat and -ls.
func TestHDFSSnapshots(t *testing.T) {
	e, c := hdfsSetup(t)
	e.ok("-mkdir", "-p", "/d")
	e.write("a", "old\n")
	e.ok("-put", "a", "/d/f")
	e.fails(1, []string{"createSnapshot: Directory is not a snapshottable directory: /d"}, "-createSnapshot", "/d", "s1")
	cl := c.Client(c.Superuser())
	if err := cl.AllowSnapshot(context.Background(), "/d"); err != nil {
		t.Fatal(err)
	}
	if out := e.ok("-createSnapshot", "/d", "s1"); out != "Created snapshot /d/.snapshot/s1\n" {
		t.Fatalf("createSnapshot: %q", out)
	}
	e.ok("-rm", "/d/f")
	equalLines(t, "cat snapshot", e.ok("-cat", "/d/.snapshot/s1/f"), "old")
	e.fails(1, []string{"createSnapshot: Failed to add snapshot: there is already a snapshot with the same name \"s1\"."}, "-createSnapshot", "/d", "s1")
	e.fails(1, []string{"createSnapshot: `/nope': No such file or directory"}, "-createSnapshot", "/nope")
	e.fails(1, []string{"rm: Modification on a read-only snapshot is disallowed"}, "-rm", "/d/.snapshot/s1/f")
	e.ok("-renameSnapshot", "/d", "s1", "s2")
	if f := e.lsFields("/d/.snapshot/s2/f"); len(f) == 0 || f[len(f)-1] != "/d/.snapshot/s2/f" {
		t.Fatalf("ls in the renamed snapshot: %q", f)
	}
	e.fails(1, []string{"deleteSnapshot: Cannot delete snapshot s1 from path /d: the snapshot does not exist."}, "-deleteSnapshot", "/d", "s1")
	e.ok("-deleteSnapshot", "/d", "s2")
	e.fails(1, []string{"cat: `/d/.snapshot/s2/f': No such file or directory"}, "-cat", "/d/.snapshot/s2/f")

	if _, errOut, code := e.run("-createSnapshot"); code != 255 || !strings.Contains(errOut, "-createSnapshot: <snapshotDir> is missing.") {
		t.Fatalf("no arguments: %d %q", code, errOut)
	}
	if _, errOut, code := e.run("-deleteSnapshot", "/d"); code != 255 || !strings.Contains(errOut, "-deleteSnapshot: Incorrect number of arguments.") {
		t.Fatalf("one argument: %d %q", code, errOut)
	}
	if _, errOut, code := e.run("-renameSnapshot", "/d", "a"); code != 255 || !strings.Contains(errOut, "-renameSnapshot: Incorrect number of arguments.") {
		t.Fatalf("two arguments: %d %q", code, errOut)
	}
}
