package shell

import (
	"errors"
	"fmt"
	"os"
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
	// Hadoop's TrashPolicyDefault.moveToTrash: the item goes to exactly
	// Current/<its path>. A file where a directory of that path must be
	// (a path trashed before one under it) and a name already taken get a
	// timestamp appended.
	base := path.Join(root, trashCurrentName) + path.Dir(it.path)
	var cause error
	// Twice, in case the emptier checkpoints Current between the two steps.
	for attempt, conflicts := 0, 0; attempt < 2; attempt++ {
		if cause = it.fsys.Mkdirs(c.ctx, base, 0o700); cause != nil {
			if conflicts < maxTrashConflicts && (errors.Is(cause, os.ErrExist) || errors.Is(cause, fs.ErrNotDir)) {
				moved, ok, err := c.trashDirConflict(it.fsys, base)
				if ok {
					base, cause = moved, nil
					conflicts++
					attempt-- // a conflict is not a failed attempt
					continue
				}
				if err != nil {
					cause = err
				}
			}
			break
		}
		target, err := c.renameTo(it.fsys, it.path, path.Join(base, path.Base(it.path)), trashStamp)
		if cause = err; err == nil {
			fmt.Fprintf(c.out, "Moved: '%s' to trash at: %s\n", qualify(it.fsys, it.path), qualify(it.fsys, target))
			return true, nil
		}
	}
	return false, fmt.Errorf("Failed to move to trash: %s: %s. Consider using -skipTrash option", qualify(it.fsys, it.path), bareMessage(cause))
}

// maxTrashConflicts bounds the names tried for one trash move or
// checkpoint (Hadoop tries until one is free).
const maxTrashConflicts = 1000

// trashDirConflict is base with its deepest existing component renamed
// with the current time in milliseconds appended, as Hadoop's moveToTrash
// on FileAlreadyExistsException; ok is false when that component is not
// a file (Mkdirs failed for another reason).
func (c *cmdCtx) trashDirConflict(fsys fs.FileSystem, base string) (string, bool, error) {
	for p := base; p != "/" && p != "."; p = path.Dir(p) {
		st, err := fsys.Stat(c.ctx, p)
		if err == nil {
			if st.IsDir {
				return "", false, nil
			}
			return p + strconv.FormatInt(time.Now().UnixMilli(), 10) + base[len(p):], true, nil
		}
		if !isMissing(err) {
			return "", false, err
		}
	}
	return "", false, nil
}

// trashStamp is the name moveToTrash tries after orig is taken: orig with
// the time in milliseconds appended.
func trashStamp(orig string, _ int) string {
	return orig + strconv.FormatInt(time.Now().UnixMilli(), 10)
}

// renameTo renames src to exactly dst, never into a directory that
// appeared there (Hadoop's rename with Rename.TO_TRASH / Rename.NONE);
// while the name is taken, it tries next(dst, attempt) for attempt 1, 2,
// ... It returns the name used.
func (c *cmdCtx) renameTo(fsys fs.FileSystem, src, dst string, next func(string, int) string) (string, error) {
	target := dst
	for attempt := 1; ; attempt++ {
		err := exactRename(c, fsys, src, target)
		if err == nil {
			return target, nil
		}
		if !errors.Is(err, os.ErrExist) || attempt > maxTrashConflicts {
			return "", err
		}
		target = next(dst, attempt)
	}
}

// exactRename is fs.ExactRenamer's rename without overwrite, or for a
// file system without one, a rename refused when dst exists.
func exactRename(c *cmdCtx, fsys fs.FileSystem, src, dst string) error {
	if r, ok := fsys.(fs.ExactRenamer); ok {
		return r.Rename2(c.ctx, src, dst, false)
	}
	if _, err := fsys.Stat(c.ctx, dst); err == nil {
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: os.ErrExist}
	}
	return fsys.Rename(c.ctx, src, dst)
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
		now := time.Now()
		// Hadoop's expunge deletes the expired checkpoints, then
		// checkpoints Current; expungeImmediately checkpoints Current
		// first, then deletes every checkpoint, Current's too.
		if o["immediate"] {
			if err := c.trashCheckpoint(fsys, root, now); err != nil {
				return err
			}
			return c.deleteTrashCheckpoints(fsys, root, now, 0, true)
		}
		if err := c.deleteTrashCheckpoints(fsys, root, now, c.trashInterval(fsys), false); err != nil {
			return err
		}
		return c.trashCheckpoint(fsys, root, now)
	},
}

// deleteTrashCheckpoints deletes the checkpoints under root older than
// keep at now, or all of them with all (Hadoop's deleteCheckpoint).
func (c *cmdCtx) deleteTrashCheckpoints(fsys fs.FileSystem, root string, now time.Time, keep time.Duration, all bool) error {
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
		if all || now.Add(-keep).After(t) {
			if err := fsys.Delete(c.ctx, path.Join(root, name), true); err != nil {
				return fmt.Errorf("Couldn't delete checkpoint: %s Ignoring.", path.Join(root, name))
			}
			fmt.Fprintf(c.out, "Deleted trash checkpoint: %s\n", path.Join(root, name))
		}
	}
	return nil
}

// trashCheckpoint renames root/Current to root/<now as yyMMddHHmmss>,
// with -1, -2, ... appended while that name is taken (Hadoop's
// createCheckpoint).
func (c *cmdCtx) trashCheckpoint(fsys fs.FileSystem, root string, now time.Time) error {
	cur := path.Join(root, trashCurrentName)
	if _, err := fsys.Stat(c.ctx, cur); err != nil {
		return nil // nothing to checkpoint
	}
	base := path.Join(root, now.Format(trashCheckpointForm))
	cp, err := c.renameTo(fsys, cur, base, func(b string, attempt int) string { return fmt.Sprintf("%s-%d", b, attempt) })
	if err != nil {
		if isMissing(err) {
			return nil // checkpointed by someone else meanwhile
		}
		return fmt.Errorf("Failed to checkpoint trash: %s", base)
	}
	fmt.Fprintf(c.out, "Created trash checkpoint: %s\n", cp)
	return nil
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
