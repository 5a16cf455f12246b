package shell

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/fs"
)

// Trash, as Hadoop's TrashPolicyDefault seen from the shell: `-rm` moves a
// path to <home>/.Trash/Current/<path> when the trash interval is set
// (the server's value when it has one, else fs.trash.interval), and
// `-expunge` deletes expired checkpoints and checkpoints Current.

const (
	keyTrashInterval    = "fs.trash.interval"
	trashDirName        = ".Trash"
	trashCurrentName    = "Current"
	trashCheckpointForm = "060102150405" // Hadoop's yyMMddHHmmss
)

// trashInterval is the interval the trash of fsys runs with: the server's
// (HDFS getServerDefaults), else the client's fs.trash.interval.
func (c *cmdCtx) trashInterval(fsys fs.FileSystem) time.Duration {
	if ti, ok := fsys.(fs.TrashIntervaler); ok {
		if d, err := ti.TrashInterval(c.ctx); err == nil && d > 0 {
			return d
		}
	}
	cf := c.sh.Env.WithDefaults().Conf
	d, err := cf.GetDuration(keyTrashInterval, time.Minute)
	if err != nil {
		return 0
	}
	return d
}

// qualify is p on fsys as a full URI, as Hadoop's makeQualified.
func qualify(fsys fs.FileSystem, p string) string {
	u := fsys.URI()
	if u.Scheme == "file" {
		return "file:" + p
	}
	return u.Scheme + "://" + u.Host + p
}

// moveToTrash moves it to the trash when the trash is on and it is not in
// the trash already; false means the caller deletes it.
func (c *cmdCtx) moveToTrash(it *item) (bool, error) {
	if c.trashInterval(it.fsys) <= 0 {
		return false, nil
	}
	root := path.Join(it.fsys.Home(), trashDirName)
	if it.path == root || strings.HasPrefix(it.path, root+"/") {
		return false, nil // already in the trash
	}
	if strings.HasPrefix(path.Dir(root)+"/", strings.TrimSuffix(it.path, "/")+"/") {
		return false, fmt.Errorf("Cannot move \"%s\" to the trash, as it contains the trash. Consider using -skipTrash option", qualify(it.fsys, it.path))
	}
	dst := path.Join(root, trashCurrentName) + it.path
	var cause error
	// Twice, in case the emptier checkpoints Current between the two steps.
	for attempt := 0; attempt < 2; attempt++ {
		if cause = it.fsys.Mkdirs(c.ctx, path.Dir(dst), 0o700); cause != nil {
			continue
		}
		target := dst
		for {
			if _, err := it.fsys.Stat(c.ctx, target); err != nil {
				break
			}
			target = dst + strconv.FormatInt(time.Now().UnixMilli(), 10)
		}
		if cause = it.fsys.Rename(c.ctx, it.path, target); cause == nil {
			fmt.Fprintf(c.out, "Moved: '%s' to trash at: %s\n", qualify(it.fsys, it.path), qualify(it.fsys, target))
			return true, nil
		}
	}
	return false, fmt.Errorf("Failed to move to trash: %s: %s. Consider using -skipTrash option", qualify(it.fsys, it.path), bareMessage(cause))
}

var cmdExpunge = &command{
	name:  "expunge",
	usage: "[-immediate] [-fs <path>]",
	help: `Delete files from the trash that are older than the retention threshold
-immediate  Delete all files from the trash immediately, regardless of the
            retention threshold.
-fs <path>  Expunge the trash of the given file system.`,
	run: func(c *cmdCtx, args []string) error {
		fsArg, args, _, err := popOptionWithArgument("-fs", args)
		if err != nil {
			return err
		}
		o, _, err := parseOpts(args, 0, 0, "immediate")
		if err != nil {
			return err
		}
		target := "/"
		if fsArg != "" {
			target = fsArg
		}
		fsys, _, err := c.resolve(target, false)
		if err != nil {
			return err
		}
		root := path.Join(fsys.Home(), trashDirName)
		keep := c.trashInterval(fsys)
		now := time.Now()
		sts, err := fsys.List(c.ctx, root)
		if err != nil && !isMissing(err) {
			return err
		}
		for _, st := range sts {
			name := st.Name()
			if !st.IsDir || name == trashCurrentName {
				continue
			}
			t, ok := trashCheckpointTime(name)
			if !ok {
				fmt.Fprintf(c.sh.Stderr, "Unexpected item in trash: %s. Ignoring.\n", path.Join(root, name))
				continue
			}
			if o["immediate"] || now.Add(-keep).After(t) {
				if err := fsys.Delete(c.ctx, path.Join(root, name), true); err != nil {
					return fmt.Errorf("Couldn't delete checkpoint: %s Ignoring.", path.Join(root, name))
				}
				fmt.Fprintf(c.out, "Deleted trash checkpoint: %s\n", path.Join(root, name))
			}
		}
		cur := path.Join(root, trashCurrentName)
		if _, err := fsys.Stat(c.ctx, cur); err != nil {
			return nil // nothing to checkpoint
		}
		base := path.Join(root, now.Format(trashCheckpointForm))
		cp := base
		for attempt := 1; ; attempt++ {
			if _, err := fsys.Stat(c.ctx, cp); err != nil {
				break
			}
			cp = fmt.Sprintf("%s-%d", base, attempt)
		}
		if err := fsys.Rename(c.ctx, cur, cp); err != nil {
			return fmt.Errorf("Failed to checkpoint trash: %s", cp)
		}
		fmt.Fprintf(c.out, "Created trash checkpoint: %s\n", cp)
		return nil
	},
}

// trashCheckpointTime parses a checkpoint's name: yyMMddHHmmss, maybe
// followed by -N.
func trashCheckpointTime(name string) (time.Time, bool) {
	if len(name) < len(trashCheckpointForm) {
		return time.Time{}, false
	}
	if rest := name[len(trashCheckpointForm):]; rest != "" && rest[0] != '-' {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation(trashCheckpointForm, name[:len(trashCheckpointForm)], time.Local)
	return t, err == nil
}
