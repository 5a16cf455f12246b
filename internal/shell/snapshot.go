package shell

import (
	"context"
	"fmt"

	"github.com/stratafs/strata/fs"
)

// The snapshot commands, as Hadoop's SnapshotCommands: -createSnapshot,
// -deleteSnapshot and -renameSnapshot on a file system that has
// snapshots (HDFS).

// snapshotter is a file system with snapshots (hdfs.Client).
type snapshotter interface {
	CreateSnapshot(ctx context.Context, p, name string) (string, error)
	DeleteSnapshot(ctx context.Context, p, name string) error
	RenameSnapshot(ctx context.Context, p, oldName, newName string) error
}

// snapshotDir resolves arg to an existing directory on a file system with
// snapshots; it reports the failure itself and returns nil.
func (c *cmdCtx) snapshotDir(arg string) (snapshotter, string) {
	it, err := c.literal(arg, false)
	if err != nil {
		c.failPath(arg, err)
		return nil, ""
	}
	if !it.exists() {
		c.failPath(it.disp, notFound(it.disp))
		return nil, ""
	}
	if !it.isDir() {
		c.failPath(it.disp, fs.ErrNotDir)
		return nil, ""
	}
	s, ok := it.fsys.(snapshotter)
	if !ok {
		c.failPath(it.disp, errNotSupported)
		return nil, ""
	}
	return s, it.path
}

var cmdCreateSnapshot = &command{
	name:  "createSnapshot",
	usage: "<snapshotDir> [<snapshotName>]",
	help:  "Create a snapshot on a directory",
	run: func(c *cmdCtx, args []string) error {
		switch {
		case len(args) == 0:
			return usageErrorf("<snapshotDir> is missing.")
		case len(args) > 2:
			return usageErrorf("Too many arguments.")
		}
		name := ""
		if len(args) == 2 {
			name = args[1]
		}
		s, p := c.snapshotDir(args[0])
		if s == nil {
			return nil
		}
		sp, err := s.CreateSnapshot(c.ctx, p, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.out, "Created snapshot %s\n", sp)
		return nil
	},
}

var cmdDeleteSnapshot = &command{
	name:  "deleteSnapshot",
	usage: "<snapshotDir> <snapshotName>",
	help:  "Delete a snapshot from a directory",
	run: func(c *cmdCtx, args []string) error {
		if len(args) != 2 {
			return usageErrorf("Incorrect number of arguments.")
		}
		s, p := c.snapshotDir(args[0])
		if s == nil {
			return nil
		}
		return s.DeleteSnapshot(c.ctx, p, args[1])
	},
}

var cmdRenameSnapshot = &command{
	name:  "renameSnapshot",
	usage: "<snapshotDir> <oldName> <newName>",
	help:  "Rename a snapshot from oldName to newName",
	run: func(c *cmdCtx, args []string) error {
		if len(args) != 3 {
			return usageErrorf("Incorrect number of arguments.")
		}
		s, p := c.snapshotDir(args[0])
		if s == nil {
			return nil
		}
		return s.RenameSnapshot(c.ctx, p, args[1], args[2])
	},
}
