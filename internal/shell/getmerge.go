package shell

import (
	"io"

	"github.com/stratafs/strata/fs"
)

var cmdGetmerge = &command{
	name:  "getmerge",
	usage: "[-nl] [-skip-empty-file] <src> <localdst>",
	help: `Get all the files in the directories that match the source file pattern and
merge and sort them to only one file on local fs. <src> is kept.
-nl               Add a newline character at the end of each file.
-skip-empty-file  Do not add new line character for empty file.`,
	run: func(c *cmdCtx, args []string) error {
		o, args, err := parseOpts(args, 2, unlimited, "nl", "skip-empty-file")
		if err != nil {
			return err
		}
		dst, err := c.literal(args[len(args)-1], true)
		if err != nil {
			return err
		}
		if dst.isDir() {
			return &pathError{disp: dst.disp, msg: "Is a directory"}
		}
		// The sources first: files as they are, a directory's files (not
		// its subdirectories) in name order.
		var files []*item
		for _, it := range c.expandAll(args[:len(args)-1], false, false) {
			if !it.exists() {
				c.failPath(it.disp, notFound(it.disp))
				continue
			}
			if !it.isDir() {
				files = append(files, it)
				continue
			}
			kids, err := c.children(it)
			if err != nil {
				c.failPath(it.disp, err)
				continue
			}
			for _, k := range kids {
				if !k.isDir() {
					files = append(files, k)
				}
			}
		}
		if c.errs > 0 {
			return nil
		}
		w, err := dst.fsys.Create(c.ctx, dst.path, fs.CreateOptions{Overwrite: true, CreateParent: true})
		if err != nil {
			c.failPath(dst.disp, err)
			return nil
		}
		for _, f := range files {
			if o["skip-empty-file"] && f.st.Length == 0 {
				continue
			}
			if err := copyInto(c, w, f); err != nil {
				w.Close()
				c.failPath(f.disp, err)
				return nil
			}
			if o["nl"] {
				if _, err := io.WriteString(w, "\n"); err != nil {
					w.Close()
					c.failPath(dst.disp, err)
					return nil
				}
			}
		}
		if err := w.Close(); err != nil {
			c.failPath(dst.disp, err)
		}
		return nil
	},
}

func copyInto(c *cmdCtx, w io.Writer, f *item) error {
	r, err := f.fsys.Open(c.ctx, f.path)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(w, r)
	return err
}

// Hadoop's -moveToLocal refuses to run ("not implemented yet"); strata's
// does what its name says, as -moveFromLocal the other way: -get, then
// the sources are deleted once copied.
var cmdMoveToLocal = &command{
	name:  "moveToLocal",
	usage: "<src> <localdst>",
	help:  "Same as -get, except that the source is deleted after it's copied.",
	run: func(c *cmdCtx, args []string) error {
		_, args, err := parseOpts(args, 2, unlimited)
		if err != nil {
			return err
		}
		dst, err := c.destination(args[len(args)-1], true)
		if err != nil {
			c.fail(message(err))
			return nil
		}
		cp := &copier{c: c, move: true}
		cp.run(c.expandAll(args[:len(args)-1], false, false), dst)
		return nil
	},
}
