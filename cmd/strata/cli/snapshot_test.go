package cli

import (
	"testing"
	"time"

	"github.com/stratafs/strata/hdfs"
)

func TestSnapshotFormats(t *testing.T) {
	got := formatSnapshotDiff("/d", "s1", "", []hdfs.SnapshotDiffEntry{{Type: "M", Path: ""}, {Type: "+", Path: "a/b"}, {Type: "R", Path: "x", Target: "y/x"}})
	want := "Difference between snapshot s1 and current directory under directory /d:\nM\t.\n+\t./a/b\nR\t./x -> ./y/x\n"
	if got != want {
		t.Errorf("diff:\n%q\nwant\n%q", got, want)
	}
	if got := formatSnapshotDiff("/d", "", "s2", nil); got != "Difference between current directory and snapshot s2 under directory /d:\n" {
		t.Errorf("empty diff %q", got)
	}
	for in, want := range map[string]string{".": "", "": "", ".snapshot/s1": "s1", "s2": "s2"} {
		if got := snapshotName(in); got != want {
			t.Errorf("snapshotName(%q) = %q", in, got)
		}
	}
	mtime := time.Date(2024, 3, 5, 7, 8, 0, 0, time.UTC).UnixMilli()
	got = formatSnapshottable([]hdfs.SnapshottableDir{
		{Path: "/d", Owner: "alice", Group: "supergroup", Mode: 0o755, Mtime: mtime, Snapshots: 2, Quota: 65536},
		{Path: "/tmp/e", Owner: "hdfs", Group: "g", Mode: 0o1777, Mtime: mtime, Snapshots: 10, Quota: 65536},
	}, time.UTC)
	want = "drwxr-xr-x 0 alice supergroup 0 2024-03-05 07:08  2 65536 /d\n" +
		"drwxrwxrwt 0 hdfs  g          0 2024-03-05 07:08 10 65536 /tmp/e\n"
	if got != want {
		t.Errorf("lsSnapshottableDir:\n%s\nwant\n%s", got, want)
	}
}
