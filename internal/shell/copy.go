package shell

import (
	"io"
	"os"
	"strconv"
	"time"

	"github.com/stratafs/strata/fs"
)

var cmdCat = &command{
	name:  "cat",
	usage: "[-ignoreCrc] <src> ...",
	help: `Fetch all files that match the file pattern <src> and display their content on
stdout.`,
	run: func(c *cmdCtx, args []string) error {
		_, args, err := parseOpts(args, 1, unlimited, "ignoreCrc")
		if err != nil {
			return err
		}
		for _, it := range c.expandAll(args, false, false) {
			c.dump(it, 0, -1)
		}
		return nil
	},
}

// dump copies the file's bytes [off, off+n) (n < 0: to the end) to the
// output and returns the offset reached; a directory or missing path is
// reported.
func (c *cmdCtx) dump(it *item, off, n int64) int64 {
	if !it.exists() {
		c.failPath(it.disp, notFound(it.disp))
		return off
	}
	if it.isDir() {
		c.failPath(it.disp, fs.ErrIsDir)
		return off
	}
	f, err := it.fsys.Open(c.ctx, it.path)
	if err != nil {
		c.failPath(it.disp, err)
		return off
	}
	defer f.Close()
	if off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			c.failPath(it.disp, err)
			return off
		}
	}
	var r io.Reader = f
	if n >= 0 {
		r = io.LimitReader(f, n)
	}
	copied, err := io.Copy(c.out, r)
	if err != nil {
		c.failPath(it.disp, err)
	}
	return off + copied
}

// one expands the single file argument of -head and -tail.
func (c *cmdCtx) one(arg string) *item {
	items, err := c.expand(arg, false)
	if err != nil {
		c.failPath(arg, err)
		return nil
	}
	return items[0]
}

var cmdHead = &command{
	name:  "head",
	usage: "<file>",
	help:  "Show the first 1KB of the file.",
	run: func(c *cmdCtx, args []string) error {
		_, args, err := parseOpts(args, 1, 1)
		if err != nil {
			return err
		}
		if it := c.one(args[0]); it != nil {
			c.dump(it, 0, 1024)
		}
		return nil
	},
}

// tailDelay is how often -tail -f looks for new data without -s (Hadoop:
// every 5 s; strata polls every second).
var tailDelay = time.Second

var cmdTail = &command{
	name:  "tail",
	usage: "[-f] [-s <sleep interval>] <file>",
	help: `Show the last 1KB of the file.

-f  Shows appended data as the file grows.
-s  With -f , defines the sleep interval between iterations in milliseconds
    (default 1000).`,
	run: func(c *cmdCtx, args []string) error {
		sleep, args, hasSleep, err := popOptionWithArgument("-s", args)
		if err != nil {
			return err
		}
		o, args, err := parseOpts(args, 1, 1, "f")
		if err != nil {
			return err
		}
		delay := tailDelay
		if hasSleep {
			ms, err := strconv.ParseInt(sleep, 10, 64)
			if err != nil || ms <= 0 {
				return usageErrorf("Invalid sleep interval %s", sleep)
			}
			delay = time.Duration(ms) * time.Millisecond
		}
		it := c.one(args[0])
		if it == nil {
			return nil
		}
		off := int64(0)
		if it.exists() && it.st.Length > 1024 {
			off = it.st.Length - 1024
		}
		off = c.dump(it, off, -1)
		for o["f"] && c.errs == 0 {
			c.out.Flush()
			select {
			case <-c.ctx.Done():
				return nil
			case <-time.After(delay):
			}
			if err := it.refresh(c); err != nil {
				c.failPath(it.disp, err)
				return nil
			}
			if it.exists() && it.st.Length < off {
				off = 0 // truncated or replaced
			}
			off = c.dump(it, off, -1)
		}
		return nil
	},
}

// copier copies files and trees between file systems, Hadoop's
// CommandWithDestination (-put, -get, -cp, -moveFromLocal).
type copier struct {
	c         *cmdCtx
	overwrite bool // -f
	preserve  bool // -p: times, ownership, permission
	direct    bool // -d: no <dst>._COPYING_ temporary
	lazy      bool // -l: replication 1
	move      bool // delete sources once copied
	// nosync: -get and -copyToLocal leave writeback to the kernel, as cp
	// and Hadoop's -get do; a move (-moveToLocal) syncs before it deletes
	// the source.
	nosync bool
}

func (cp *copier) run(srcs []*item, dst *item) {
	c := cp.c
	if !c.checkDestination(dst, len(srcs), cp.overwrite) {
		return
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
		cp.copy(src, target)
	}
}

// copy copies src (a file or, recursively, a directory) to target, which
// has been stat'ed. It reports errors and returns whether all went well.
func (cp *copier) copy(src, target *item) bool {
	c := cp.c
	if c.ctx.Err() != nil {
		return false
	}
	if cp.move && target.isDir() {
		c.failPath(target.disp, os.ErrExist)
		return false
	}
	ok := true
	if src.isDir() {
		if target.exists() {
			if !target.isDir() {
				c.failPath(target.disp, fs.ErrNotDir)
				return false
			}
		} else if err := target.fsys.Mkdirs(c.ctx, target.path, 0o777); err != nil {
			c.failPath(target.disp, err)
			return false
		}
		kids, err := c.children(src)
		if err != nil {
			c.failPath(src.disp, err)
			return false
		}
		for _, k := range kids {
			t := target.child(k.st.Name())
			if err := t.refresh(c); err != nil {
				c.failPath(t.disp, err)
				ok = false
				continue
			}
			ok = cp.copy(k, t) && ok
		}
	} else {
		ok = cp.copyFile(src, target)
	}
	if ok && cp.preserve {
		ok = cp.preserveAttrs(src, target)
	}
	if ok && cp.move {
		if err := src.fsys.Delete(c.ctx, src.path, false); err != nil {
			c.fail("remove " + pathMessage(src.disp, err))
			ok = false
		}
	}
	return ok
}

func (cp *copier) copyFile(src, target *item) bool {
	c := cp.c
	if target.exists() && (target.isDir() || !cp.overwrite) {
		c.failPath(target.disp, os.ErrExist)
		return false
	}
	f, err := src.fsys.Open(c.ctx, src.path)
	if err != nil {
		c.failPath(src.disp, err)
		return false
	}
	defer f.Close()
	return cp.write(f, src.st.Length, target)
}

// write stores r's bytes (total of them, -1 if unknown) at target,
// through <target>._COPYING_ unless -d, replacing an existing file. A
// failed or interrupted copy removes what it wrote, so that no partial
// file remains under the target's name.
func (cp *copier) write(r io.Reader, total int64, target *item) bool {
	c := cp.c
	if target.exists() && (target.isDir() || !cp.overwrite) {
		c.failPath(target.disp, os.ErrExist)
		return false
	}
	tmp := target.path
	if !cp.direct {
		tmp += "._COPYING_"
	}
	opts := fs.CreateOptions{Overwrite: true, CreateParent: true, NoSync: cp.nosync && !cp.move}
	if cp.lazy {
		opts.Replication = 1
	}
	w, err := target.fsys.Create(c.ctx, tmp, opts)
	if err != nil {
		c.failPath(target.disp, err)
		return false
	}
	p := c.startProgress(target.disp, total)
	_, err = io.Copy(w, p.reader(r))
	p.finish()
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil && !cp.direct {
		if target.exists() {
			err = target.fsys.Delete(c.ctx, target.path, false)
		}
		if err == nil {
			err = target.fsys.Rename(c.ctx, tmp, target.path)
		}
	}
	if err != nil {
		// The context may be cancelled (Ctrl-C): clean up regardless.
		ctx, cancel := c.cleanupCtx()
		target.fsys.Delete(ctx, tmp, false)
		cancel()
		if c.ctx.Err() == nil {
			c.failPath(target.disp, err)
		}
		return false
	}
	return true
}

func (cp *copier) preserveAttrs(src, target *item) bool {
	c, st := cp.c, src.st
	err := target.fsys.SetTimes(c.ctx, target.path, st.ModTime, st.AccessTime)
	if err == nil {
		err = target.fsys.SetOwner(c.ctx, target.path, st.Owner, st.Group)
	}
	if err == nil {
		err = target.fsys.SetPermission(c.ctx, target.path, st.Perm)
	}
	if err != nil {
		c.failPath(target.disp, err)
		return false
	}
	return true
}

// runPut is -put, -copyFromLocal and -moveFromLocal: local sources (not
// globbed, "-" for stdin) to a destination on the default file system.
func runPut(c *cmdCtx, args []string, move bool) error {
	cp := &copier{c: c, move: move}
	if !move {
		var err error
		for _, opt := range []string{"-t", "-q"} { // thread count, queue size: copies are sequential
			if _, args, _, err = popOptionWithArgument(opt, args); err != nil {
				return err
			}
		}
		o, rest, err := parseOpts(args, 1, unlimited, "f", "p", "l", "d")
		if err != nil {
			return err
		}
		args = rest
		cp.overwrite, cp.preserve, cp.lazy, cp.direct = o["f"], o["p"], o["l"], o["d"]
	} else if _, rest, err := parseOpts(args, 1, unlimited); err != nil {
		return err
	} else {
		args = rest
	}
	dstArg := "."
	if len(args) >= 2 {
		dstArg, args = args[len(args)-1], args[:len(args)-1]
	}
	dst, err := c.destination(dstArg, false)
	if err != nil {
		c.fail(message(err))
		return nil
	}
	if len(args) == 1 && args[0] == "-" && !move {
		target, err := c.targetFor(dst, &item{path: "/-"})
		if err != nil {
			c.failPath(dst.disp, err)
			return nil
		}
		cp.write(c.sh.Stdin, -1, target)
		return nil
	}
	var srcs []*item
	for _, a := range args {
		it, err := c.literal(a, true)
		if err != nil {
			c.failPath(a, err)
			continue
		}
		srcs = append(srcs, it)
	}
	cp.run(srcs, dst)
	return nil
}

const putHelp = `Copy files from the local file system into fs. Copying fails if the file already
exists, unless the -f flag is given.
Flags:

-p  Preserves access and modification times, ownership and the mode.
-f  Overwrites the destination if it already exists.
-l  Allow DataNode to lazily persist the file to disk. Forces
       replication factor of 1. This flag will result in reduced
       durability. Use with care.

-d  Skip creation of temporary file(<dst>._COPYING_).`

var cmdPut = &command{
	name:  "put",
	usage: "[-f] [-p] [-l] [-d] <localsrc> ... <dst>",
	help:  putHelp,
	run:   func(c *cmdCtx, args []string) error { return runPut(c, args, false) },
}

var cmdCopyFromLocal = &command{
	name:  "copyFromLocal",
	usage: "[-f] [-p] [-l] [-d] <localsrc> ... <dst>",
	help:  putHelp,
	run:   func(c *cmdCtx, args []string) error { return runPut(c, args, false) },
}

var cmdMoveFromLocal = &command{
	name:  "moveFromLocal",
	usage: "<localsrc> ... <dst>",
	help:  "Same as -put, except that the source is deleted after it's copied.",
	run:   func(c *cmdCtx, args []string) error { return runPut(c, args, true) },
}

// runGet is -get and -copyToLocal: sources on the default file system
// (globbed) to a local destination ("." by default).
func runGet(c *cmdCtx, args []string) error {
	o, args, err := parseOpts(args, 1, unlimited, "f", "p", "ignoreCrc", "crc")
	if err != nil {
		return err
	}
	dstArg := "."
	if len(args) >= 2 {
		dstArg, args = args[len(args)-1], args[:len(args)-1]
	}
	dst, err := c.destination(dstArg, true)
	if err != nil {
		c.fail(message(err))
		return nil
	}
	cp := &copier{c: c, overwrite: o["f"], preserve: o["p"], nosync: true}
	cp.run(c.expandAll(args, false, false), dst)
	return nil
}

const getHelp = `Copy files that match the file pattern <src> to the local name.  <src> is kept.
When copying multiple files, the destination must be a directory. Passing -f
overwrites the destination if it already exists and -p preserves access and
modification times, ownership and the mode.`

var cmdGet = &command{
	name:  "get",
	usage: "[-f] [-p] [-ignoreCrc] [-crc] <src> ... <localdst>",
	help:  getHelp,
	run:   runGet,
}

var cmdCopyToLocal = &command{
	name:  "copyToLocal",
	usage: "[-f] [-p] [-ignoreCrc] [-crc] <src> ... <localdst>",
	help:  "Identical to the -get command.",
	run:   runGet,
}

var cmdCp = &command{
	name:  "cp",
	usage: "[-f] [-p] [-d] <src> ... <dst>",
	help: `Copy files that match the file pattern <src> to a destination.  When copying
multiple files, the destination must be a directory. Passing -p preserves
timestamps, ownership and permission. Passing -f overwrites the destination if
it already exists. Passing -d will skip creation of temporary
file(<dst>._COPYING_).`,
	run: func(c *cmdCtx, args []string) error {
		o, args, err := parseOpts(args, 2, unlimited, "f", "p", "d")
		if err != nil {
			return err
		}
		dst, err := c.destination(args[len(args)-1], false)
		if err != nil {
			c.fail(message(err))
			return nil
		}
		cp := &copier{c: c, overwrite: o["f"], preserve: o["p"], direct: o["d"]}
		cp.run(c.expandAll(args[:len(args)-1], false, false), dst)
		return nil
	},
}
