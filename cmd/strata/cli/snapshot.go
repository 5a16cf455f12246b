package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
)

// The snapshot tools outside `dfs`: `lsSnapshottableDir`, `snapshotDiff`
// and `dfsadmin -allowSnapshot / -disallowSnapshot`, with the output of
// Hadoop's LsSnapshottableDir, SnapshotDiff and DFSAdmin.

func init() {
	register(command{name: "lsSnapshottableDir", summary: "list the snapshottable directories you own (all for the superuser)", run: runLsSnapshottableDir})
	register(command{name: "snapshotDiff", summary: "snapshotDiff <snapshotDir> <from> <to>: the differences between two snapshots", run: runSnapshotDiff})
}

func runLsSnapshottableDir(ctx context.Context, env *Env, args []string) int {
	if len(args) != 0 {
		fmt.Fprintln(env.Stderr, "Usage: \nlsSnapshottableDir: \n\tGet the list of snapshottable directories that are owned by the current user.\n\tReturn all the snapshottable directories if the current user is a super user.")
		return 1
	}
	c, err := hdfsClient(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "lsSnapshottableDir: %v\n", err)
		return 1
	}
	defer c.Close()
	dirs, err := c.SnapshottableDirs(ctx)
	if err != nil {
		fmt.Fprintf(env.Stderr, "lsSnapshottableDir: %s\n", errText(err))
		return 1
	}
	fmt.Fprint(env.Stdout, formatSnapshottable(dirs, time.Local))
	return 0
}

// formatSnapshottable prints dirs as Hadoop's
// SnapshottableDirectoryStatus.print: permission, replication (0), owner,
// group, length (0), modification time, snapshot count, snapshot quota
// and path, each column as wide as its widest value.
func formatSnapshottable(dirs []hdfs.SnapshottableDir, loc *time.Location) string {
	if len(dirs) == 0 {
		return ""
	}
	var wOwner, wGroup, wNum, wQuota int
	for _, d := range dirs {
		wOwner = max(wOwner, len(d.Owner))
		wGroup = max(wGroup, len(d.Group))
		wNum = max(wNum, len(strconv.Itoa(d.Snapshots)))
		wQuota = max(wQuota, len(strconv.Itoa(d.Quota)))
	}
	var b strings.Builder
	for _, d := range dirs {
		mtime := time.UnixMilli(d.Mtime).In(loc).Format("2006-01-02 15:04")
		fmt.Fprintf(&b, "d%s 0 %-*s %-*s 0 %s %*d %*d %s\n", fs.PermString(d.Mode), wOwner, d.Owner, wGroup, d.Group, mtime, wNum, d.Snapshots, wQuota, d.Quota, d.Path)
	}
	return b.String()
}

const snapshotDiffUsage = "Usage: \nsnapshotDiff <snapshotDir> <from> <to>:\n\tGet the difference between two snapshots, \n\tor between a snapshot and the current tree of a directory.\n\tFor <from>/<to>, users can use \".\" to present the current status,\n\tand use \".snapshot/snapshot_name\" to present a snapshot,\n\twhere \".snapshot/\" can be omitted\n"

func runSnapshotDiff(ctx context.Context, env *Env, args []string) int {
	if len(args) != 3 {
		fmt.Fprint(env.Stderr, snapshotDiffUsage)
		return 1
	}
	c, err := hdfsClient(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "snapshotDiff: %v\n", err)
		return 1
	}
	defer c.Close()
	dir, from, to := args[0], snapshotName(args[1]), snapshotName(args[2])
	es, err := c.SnapshotDiff(ctx, dir, from, to)
	if err != nil {
		fmt.Fprintf(env.Stderr, "snapshotDiff: %s\n", errText(err))
		return 1
	}
	fmt.Fprint(env.Stdout, formatSnapshotDiff(dir, from, to, es))
	return 0
}

// snapshotName is Hadoop's SnapshotDiff.getSnapshotName: "." is the
// current tree (""), ".snapshot/" is optional.
func snapshotName(s string) string {
	if s == "." || s == "" {
		return ""
	}
	return strings.TrimPrefix(s, ".snapshot/")
}

// formatSnapshotDiff prints a diff report as Hadoop's
// SnapshotDiffReport.toString.
func formatSnapshotDiff(dir, from, to string, es []hdfs.SnapshotDiffEntry) string {
	label := func(s string) string {
		if s == "" {
			return "current directory"
		}
		return "snapshot " + s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Difference between %s and %s under directory %s:\n", label(from), label(to), dir)
	rel := func(p string) string {
		if p == "" {
			return "."
		}
		return "./" + p
	}
	for _, e := range es {
		fmt.Fprintf(&b, "%s\t%s", e.Type, rel(e.Path))
		if e.Type == "R" {
			fmt.Fprintf(&b, " -> %s", rel(e.Target))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// dfsadminSnapshot runs `dfsadmin -allowSnapshot|-disallowSnapshot <dir>`.
func dfsadminSnapshot(ctx context.Context, env *Env, args []string) int {
	allow := args[0] == "-allowSnapshot"
	if len(args) != 2 {
		fmt.Fprintf(env.Stderr, "Usage: strata dfsadmin [%s <snapshotDir>]\n", args[0])
		return 255
	}
	c, err := hdfsClient(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "dfsadmin: %v\n", err)
		return 1
	}
	defer c.Close()
	op, verb := c.DisallowSnapshot, "Disallowing"
	if allow {
		op, verb = c.AllowSnapshot, "Allowing"
	}
	if err := op(ctx, args[1]); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %s\n", strings.TrimPrefix(args[0], "-"), errText(err))
		return 1
	}
	fmt.Fprintf(env.Stdout, "%s snapshot on %s succeeded\n", verb, args[1])
	return 0
}
