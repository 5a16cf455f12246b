package shell

import (
	"fmt"
	"os"
	"path"
	"time"

	"github.com/stratafs/strata/fs"
)

var cmdMkdir = &command{
	name:  "mkdir",
	usage: "[-p] <path> ...",
	help: `Create a directory in specified location.

-p  Do not fail if the directory already exists`,
	run: func(c *cmdCtx, args []string) error {
		o, args, err := parseOpts(args, 1, unlimited, "p")
		if err != nil {
			return err
		}
		for _, it := range c.expandAll(args, false, false) {
			if it.exists() {
				if !it.isDir() {
					c.failPath(it.disp, fs.ErrNotDir)
				} else if !o["p"] {
					c.failPath(it.disp, os.ErrExist)
				}
				continue
			}
			if !o["p"] {
				ok, err := c.parentExists(it)
				if err != nil {
					c.failPath(it.disp, err)
					continue
				}
				if !ok {
					c.failPath(it.disp, notFound(it.disp))
					continue
				}
			}
			if err := it.fsys.Mkdirs(c.ctx, it.path, 0o777); err != nil {
				c.failPath(it.disp, err)
			}
		}
		return nil
	},
}

var cmdRm = &command{
	name:  "rm",
	usage: "[-f] [-r|-R] [-skipTrash] <src> ...",
	help: `Delete all files that match the specified file pattern. Equivalent to the Unix
command "rm <src>"

-f          If the file does not exist, do not display a diagnostic message or
            modify the exit status to reflect an error.
-[rR]       Recursively deletes directories.
-skipTrash  option bypasses trash, if enabled, and immediately deletes <src>.`,
	run: func(c *cmdCtx, args []string) error {
		o, args, err := parseOpts(args, 1, unlimited, "f", "r", "R", "skipTrash")
		if err != nil {
			return err
		}
		force, recursive := o["f"], o["r"] || o["R"]
		for _, it := range c.expandAll(args, false, force) {
			if !it.exists() {
				if !force {
					c.failPath(it.disp, notFound(it.disp))
				}
				continue
			}
			if it.isDir() && !recursive {
				c.failPath(it.disp, fs.ErrIsDir)
				continue
			}
			if !o["skipTrash"] {
				moved, err := c.moveToTrash(it)
				if err != nil {
					c.failPath(it.disp, err)
					continue
				}
				if moved {
					continue
				}
			}
			if err := it.fsys.Delete(c.ctx, it.path, recursive); err != nil {
				if force && isMissing(err) {
					continue
				}
				c.failPath(it.disp, err)
				continue
			}
			fmt.Fprintf(c.out, "Deleted %s\n", it.disp)
		}
		return nil
	},
}

var cmdRmdir = &command{
	name:  "rmdir",
	usage: "[--ignore-fail-on-non-empty] <dir> ...",
	help:  "Removes the directory entry specified by each directory argument, provided it is\nempty.",
	run: func(c *cmdCtx, args []string) error {
		o, args, err := parseOpts(args, 1, unlimited, "-ignore-fail-on-non-empty")
		if err != nil {
			return err
		}
		for _, it := range c.expandAll(args, false, false) {
			if !it.exists() {
				c.failPath(it.disp, notFound(it.disp))
				continue
			}
			if !it.isDir() {
				c.failPath(it.disp, fs.ErrNotDir)
				continue
			}
			kids, err := it.fsys.List(c.ctx, it.path)
			if err != nil {
				c.failPath(it.disp, err)
				continue
			}
			if len(kids) > 0 {
				if !o["-ignore-fail-on-non-empty"] {
					c.failPath(it.disp, fs.ErrNotEmpty)
				}
				continue
			}
			if err := it.fsys.Delete(c.ctx, it.path, false); err != nil {
				c.failPath(it.disp, err)
			}
		}
		return nil
	},
}

var cmdMv = &command{
	name:  "mv",
	usage: "<src> ... <dst>",
	help: `Move files that match the specified file pattern <src> to a destination <dst>.
When moving multiple files, the destination must be a directory.`,
	run: func(c *cmdCtx, args []string) error {
		_, args, err := parseOpts(args, 2, unlimited)
		if err != nil {
			return err
		}
		dst, err := c.destination(args[len(args)-1], false)
		if err != nil {
			c.fail(message(err))
			return nil
		}
		srcs := c.expandAll(args[:len(args)-1], false, false)
		if !c.checkDestination(dst, len(srcs), false) {
			return nil
		}
		for _, src := range srcs {
			if !src.exists() {
				c.failPath(src.disp, notFound(src.disp))
				continue
			}
			target, err := c.targetFor(dst, src)
			if err != nil {
				c.failPath(dst.disp, err)
				continue
			}
			if src.isDir() && sameFS(src.fsys, target.fsys) && !c.checkNotInside(src, target) {
				continue
			}
			if !sameFS(src.fsys, target.fsys) {
				c.fail((&pathError{disp: src.disp, msg: "Does not match target filesystem"}).Error())
				continue
			}
			if err := src.fsys.Rename(c.ctx, src.path, target.path); err != nil {
				disp := src.disp
				if reason(err) == "File exists" || reason(err) == "Is not a directory" {
					disp = target.disp
				}
				c.failPath(disp, err)
			}
		}
		return nil
	},
}

func sameFS(a, b fs.FileSystem) bool {
	return a == b || fs.Qualify(a, "/") == fs.Qualify(b, "/")
}

// destination expands the last argument of mv/cp/put: a glob must match
// exactly one path (Hadoop's getRemoteDestination); local destinations
// (get) are not globbed.
func (c *cmdCtx) destination(arg string, local bool) (*item, error) {
	if local {
		return c.literal(arg, true)
	}
	items, err := c.expand(arg, false)
	if err != nil {
		return nil, err
	}
	if len(items) > 1 {
		return nil, &pathError{disp: arg, msg: "Too many matches"}
	}
	it := items[0]
	if !it.exists() {
		it.disp = arg // keep "dir/" so that it still represents a directory
	}
	return it, nil
}

// checkDestination applies Hadoop's CommandWithDestination rules: several
// sources need an existing directory; one source needs a directory, a
// missing path whose parent exists, or (with overwrite) a file.
func (c *cmdCtx) checkDestination(dst *item, nsrc int, overwrite bool) bool {
	switch {
	case nsrc > 1:
		if !dst.exists() {
			c.failPath(dst.disp, notFound(dst.disp))
			return false
		}
		if !dst.isDir() {
			c.failPath(dst.disp, fs.ErrNotDir)
			return false
		}
	case dst.exists():
		if !dst.isDir() && !overwrite {
			c.failPath(dst.disp, os.ErrExist)
			return false
		}
	default:
		ok, err := c.parentExists(dst)
		if err != nil {
			c.failPath(dst.disp, err)
			return false
		}
		if !ok {
			c.failPath(dst.disp, notFound(dst.disp))
			return false
		}
	}
	return true
}

// targetFor is Hadoop's getTargetPath for a top-level source: inside dst
// when dst is a directory (or written as one), else dst itself. The target
// is stat'ed.
func (c *cmdCtx) targetFor(dst, src *item) (*item, error) {
	t := &item{fsys: dst.fsys, path: dst.path, disp: dst.disp}
	if dst.isDir() || (!dst.exists() && representsDirectory(dst.disp)) {
		t = dst.child(path.Base(src.path))
	}
	if err := t.refresh(c); err != nil {
		return nil, err
	}
	return t, nil
}

// checkNotInside refuses to move or copy a directory onto or into itself.
func (c *cmdCtx) checkNotInside(src, target *item) bool {
	s, d := fs.Qualify(src.fsys, src.path), fs.Qualify(target.fsys, target.path)
	if s == d {
		c.fail((&pathError{disp: src.disp, target: d, msg: "are identical"}).Error())
		return false
	}
	if len(d) > len(s) && d[:len(s)+1] == s+"/" {
		c.fail((&pathError{disp: src.disp, target: target.disp, msg: "is a subdirectory of itself"}).Error())
		return false
	}
	return true
}

var cmdChmod = &command{
	name:  "chmod",
	usage: "[-R] <MODE[,MODE]... | OCTALMODE> PATH...",
	help: `Changes permissions of a file. This works similar to the shell's chmod command
with a few exceptions.

-R           modifies the files recursively. This is the only option currently
             supported.
<MODE>       Mode is the same as mode used for the shell's command. The only
             letters recognized are 'rwxXt', e.g. +t,a+r,g-w,+rwx,o=r.
<OCTALMODE>  Mode specifed in 3 or 4 digits. If 4 digits, the first may be 1 or
             0 to turn the sticky bit on or off, respectively.  Unlike the
             shell command, it is not possible to specify only part of the
             mode, e.g. 754 is same as u=rwx,g=rx,o=r.

If none of 'augo' is specified, 'a' is assumed and unlike the shell command, no
umask is applied.`,
	run: func(c *cmdCtx, args []string) error {
		// Unknown flags are left in place: "-w" is a mode.
		recursive := false
		rest := append([]string(nil), args...)
		for i := 0; i < len(rest); {
			a := rest[i]
			if len(a) < 2 || a[0] != '-' {
				break
			}
			if a == "--" {
				rest = append(rest[:i], rest[i+1:]...)
				break
			}
			if a == "-R" {
				recursive = true
				rest = append(rest[:i], rest[i+1:]...)
				continue
			}
			i++
		}
		if err := checkCount(rest, 2, unlimited); err != nil {
			return err
		}
		mode, err := parseChmod(rest[0])
		if err != nil {
			return usageError{err.Error()}
		}
		c.walk(c.expandAll(rest[1:], false, false), recursive, func(it *item) {
			perm := mode.apply(it.st.Perm, it.st.IsDir) | it.st.Perm&0o6000
			if perm == it.st.Perm {
				return
			}
			if err := it.fsys.SetPermission(c.ctx, it.path, perm); err != nil {
				c.fail(fmt.Sprintf("changing permissions of '%s': %s", it.disp, bareMessage(err)))
			}
		})
		return nil
	},
}

// walk calls fn for each existing item and, with recursive, everything
// under the directories, parents first (Hadoop's processPaths).
func (c *cmdCtx) walk(items []*item, recursive bool, fn func(*item)) {
	var visit func(it *item)
	visit = func(it *item) {
		fn(it)
		if recursive && it.isDir() {
			kids, err := c.children(it)
			if err != nil {
				c.failPath(it.disp, err)
				return
			}
			for _, k := range kids {
				if c.ctx.Err() != nil {
					return
				}
				visit(k)
			}
		}
	}
	for _, it := range items {
		if !it.exists() {
			c.failPath(it.disp, notFound(it.disp))
			continue
		}
		visit(it)
	}
}

func runChown(c *cmdCtx, args []string, chgrp bool) error {
	o, args, err := parseOpts(args, 2, unlimited, "R")
	if err != nil {
		return err
	}
	var owner, group string
	if chgrp {
		group, err = parseGroup(args[0])
	} else {
		owner, group, err = parseOwner(args[0])
	}
	if err != nil {
		return err
	}
	c.walk(c.expandAll(args[1:], false, false), o["R"], func(it *item) {
		newOwner, newGroup := owner, group
		if newOwner == it.st.Owner {
			newOwner = ""
		}
		if newGroup == it.st.Group {
			newGroup = ""
		}
		if newOwner == "" && newGroup == "" {
			return
		}
		if err := it.fsys.SetOwner(c.ctx, it.path, newOwner, newGroup); err != nil {
			c.fail(fmt.Sprintf("changing ownership of '%s': %s", it.disp, bareMessage(err)))
		}
	})
	return nil
}

var cmdChown = &command{
	name:  "chown",
	usage: "[-R] [OWNER][:[GROUP]] PATH...",
	help: `Changes owner and group of a file. This is similar to the shell's chown command
with a few exceptions.

-R  modifies the files recursively. This is the only option currently
    supported.

If only the owner or group is specified, then only the owner or group is
modified. The owner and group names may only consist of digits, alphabet, and
any of [-_./@a-zA-Z0-9]. The names are case sensitive.

WARNING: Avoid using '.' to separate user name and group though Linux allows it.
If user names have dots in them and you are using local file system, you might
see surprising results since the shell command 'chown' is used for local files.`,
	run: func(c *cmdCtx, args []string) error { return runChown(c, args, false) },
}

var cmdChgrp = &command{
	name:  "chgrp",
	usage: "[-R] GROUP PATH...",
	help:  "This is equivalent to -chown ... :GROUP ...",
	run:   func(c *cmdCtx, args []string) error { return runChown(c, args, true) },
}

var cmdTest = &command{
	name:  "test",
	usage: "-[defswrz] <path>",
	help: `Answer various questions about <path>, with result via exit status.
  -d  return 0 if <path> is a directory.
  -e  return 0 if <path> exists.
  -f  return 0 if <path> is a file.
  -s  return 0 if file <path> is greater         than zero bytes in size.
  -w  return 0 if file <path> exists         and write permission is granted.
  -r  return 0 if file <path> exists         and read permission is granted.
  -z  return 0 if file <path> is         zero bytes in size, else return 1.`,
	run: func(c *cmdCtx, args []string) error {
		o, args, err := parseOpts(args, 1, 1, "e", "d", "f", "s", "z", "w", "r")
		if err != nil {
			return err
		}
		switch len(o) {
		case 0:
			return usageErrorf("No test flag given")
		case 1:
		default:
			return usageErrorf("Only one test flag is allowed")
		}
		var flag string
		for f := range o {
			flag = f
		}
		for _, it := range c.expandAll(args, false, false) {
			ok := false
			if it.exists() {
				st := it.st
				switch flag {
				case "e":
					ok = true
				case "d":
					ok = st.IsDir
				case "f":
					ok = !st.IsDir
				case "s":
					ok = st.Length > 0
				case "z":
					ok = st.Length == 0
				case "w":
					ok = c.canAccess(it, fs.AccessWrite)
				case "r":
					ok = c.canAccess(it, fs.AccessRead)
				}
			}
			if !ok {
				c.exit = exitFailed
			}
		}
		return nil
	},
}

// canAccess asks the file system (fs.Accessor) or, failing that, judges
// from the owner and "other" permission bits.
func (c *cmdCtx) canAccess(it *item, mode uint8) bool {
	if a, ok := it.fsys.(fs.Accessor); ok {
		return a.Access(c.ctx, it.path, mode) == nil
	}
	bits := uint8(it.st.Perm) & 7
	if it.st.Owner == it.fsys.User() {
		bits = uint8(it.st.Perm>>6) & 7
	}
	return bits&mode == mode
}

var cmdTouchz = &command{
	name:  "touchz",
	usage: "<path> ...",
	help: `Creates a file of zero length at <path> with current time as the timestamp of
that <path>. An error is returned if the file exists with non-zero length`,
	run: func(c *cmdCtx, args []string) error {
		_, args, err := parseOpts(args, 1, unlimited)
		if err != nil {
			return err
		}
		for _, it := range c.expandAll(args, false, false) {
			overwrite := false
			if it.exists() {
				if it.isDir() {
					c.failPath(it.disp, fs.ErrIsDir)
					continue
				}
				if it.st.Length != 0 {
					c.fail((&pathError{disp: it.disp, msg: "Not a zero-length file"}).Error())
					continue
				}
				overwrite = true
			} else if ok, err := c.parentExists(it); err != nil || !ok {
				if err == nil {
					err = notFound(it.disp)
				}
				c.failPath(it.disp, err)
				continue
			}
			if err := c.createEmpty(it, overwrite); err != nil {
				c.failPath(it.disp, err)
			}
		}
		return nil
	},
}

func (c *cmdCtx) createEmpty(it *item, overwrite bool) error {
	w, err := it.fsys.Create(c.ctx, it.path, fs.CreateOptions{Overwrite: overwrite})
	if err != nil {
		return err
	}
	return w.Close()
}

var cmdTouch = &command{
	name:  "touch",
	usage: "[-a] [-m] [-t TIMESTAMP ] [-c] <path> ...",
	help: `Updates the access and modification times of the file specified by the <path> to
the current time. If the file does not exist, then a zero length file is created
at <path> with current time as the timestamp of that <path>.
-a Change only the access time
-m Change only the modification time
-t TIMESTAMP Use specified timestamp (in format yyyyMMdd:HHmmss) instead of
current time
-c Do not create any files`,
	run: func(c *cmdCtx, args []string) error {
		ts, args, hasTS, err := popOptionWithArgument("-t", args)
		if err != nil {
			return err
		}
		o, args, err := parseOpts(args, 1, unlimited, "a", "m", "c")
		if err != nil {
			return err
		}
		var when time.Time
		if hasTS {
			when, err = time.ParseInLocation("20060102:150405", ts, time.Local)
			if err != nil {
				return usageErrorf("Unable to parse the specified timestamp %s", ts)
			}
		}
		update := func(it *item) error {
			t := when
			if !hasTS {
				t = time.Now()
			}
			mtime, atime := t, t
			if o["m"] != o["a"] {
				if o["m"] {
					atime = time.Time{}
				} else {
					mtime = time.Time{}
				}
			}
			return it.fsys.SetTimes(c.ctx, it.path, mtime, atime)
		}
		for _, it := range c.expandAll(args, false, false) {
			if it.exists() {
				if it.isDir() {
					c.failPath(it.disp, fs.ErrIsDir)
					continue
				}
				if err := update(it); err != nil {
					c.failPath(it.disp, err)
				}
				continue
			}
			if ok, err := c.parentExists(it); err != nil || !ok {
				if err == nil {
					err = notFound(it.disp)
				}
				c.failPath(it.disp, err)
				continue
			}
			if o["c"] {
				continue
			}
			if err := c.createEmpty(it, false); err != nil {
				c.failPath(it.disp, err)
				continue
			}
			if hasTS {
				if err := update(it); err != nil {
					c.failPath(it.disp, err)
				}
			}
		}
		return nil
	},
}
