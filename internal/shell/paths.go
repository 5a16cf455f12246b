package shell

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stratafs/strata/fs"
)

// item is one path a command works on, Hadoop's PathData.
type item struct {
	fsys fs.FileSystem
	path string         // absolute, cleaned path on fsys
	disp string         // how the path is shown: as the user wrote it
	st   *fs.FileStatus // nil when the path does not exist
}

func (it *item) exists() bool { return it.st != nil }
func (it *item) isDir() bool  { return it.st != nil && it.st.IsDir }

// refresh re-reads the status; a missing path leaves st nil.
func (it *item) refresh(c *cmdCtx) error {
	st, err := it.fsys.Stat(c.ctx, it.path)
	if err != nil {
		it.st = nil
		if isMissing(err) {
			return nil
		}
		return err
	}
	it.st = &st
	return nil
}

// child returns the item for name inside it (not stat'ed).
func (it *item) child(name string) *item {
	return &item{fsys: it.fsys, path: path.Join(it.path, name), disp: childDisp(it.disp, name)}
}

// isMissing reports errors meaning "there is nothing at that path"
// (a path through a file included).
func isMissing(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, fs.ErrNotDir)
}

// childDisp is how a directory's child is shown, as Hadoop's
// PathData.getStringForChildPath: "." lists bare names.
func childDisp(parent, name string) string {
	switch {
	case parent == ".":
		return name
	case strings.HasSuffix(parent, "/"):
		return parent + name
	}
	return parent + "/" + name
}

// children lists a directory's entries as items, shown under it.disp.
func (c *cmdCtx) children(it *item) ([]*item, error) {
	sts, err := it.fsys.List(c.ctx, it.path)
	if err != nil {
		return nil, err
	}
	out := make([]*item, 0, len(sts))
	for i := range sts {
		st := &sts[i]
		name := st.Name()
		out = append(out, &item{fsys: it.fsys, path: path.Join(it.path, name), disp: childDisp(it.disp, name), st: st})
	}
	return out, nil
}

// argForm records how a path argument was written, to show the paths it
// expands to the same way (Hadoop's PathData.PathType).
type argForm struct {
	kind   int
	prefix string // formURI: scheme and authority as written ("hdfs://nn:8020", "hdfs:")
}

const (
	formRelative = iota
	formAbsolute
	formURI
)

func formOf(arg string) argForm {
	colon := strings.IndexByte(arg, ':')
	slash := strings.IndexByte(arg, '/')
	if colon > 0 && slash == colon+1 {
		prefix, rest := arg[:colon+1], arg[colon+1:]
		if strings.HasPrefix(rest, "//") && len(rest) > 2 {
			if end := strings.IndexByte(rest[2:], '/'); end >= 0 {
				prefix += rest[:2+end]
			} else {
				prefix += rest
			}
		}
		return argForm{kind: formURI, prefix: prefix}
	}
	if strings.HasPrefix(arg, "/") {
		return argForm{kind: formAbsolute}
	}
	return argForm{kind: formRelative}
}

// display shows abs (on fsys) in the argument's form.
func (f argForm) display(fsys fs.FileSystem, abs string, isDir bool) string {
	switch f.kind {
	case formURI:
		return f.prefix + abs
	case formAbsolute:
		return abs
	}
	return relativize(fsys.Home(), abs, isDir)
}

// relativize gives p relative to the directory cwd, as Hadoop's
// PathData.relativize ("." for cwd itself, "../x" above it).
func relativize(cwd, p string, isDir bool) string {
	if cwd == p {
		return "."
	}
	c := cwd
	if !strings.HasSuffix(c, "/") {
		c += "/"
	}
	q := p
	if isDir && !strings.HasSuffix(q, "/") {
		q += "/"
	}
	lastSep := -1
	for i := 0; i < len(c) && i < len(q); i++ {
		if c[i] != q[i] {
			break
		}
		if c[i] == '/' {
			lastSep = i
		}
	}
	rel := ""
	if lastSep < len(p) {
		rel = p[lastSep+1:]
	}
	// One ".." per directory of cwd below the common ancestor.
	for n := strings.Count(c[lastSep+1:], "/"); n > 0; n-- {
		if rel != "" {
			rel = "/" + rel
		}
		rel = ".." + rel
	}
	if rel == "" {
		rel = "."
	}
	return rel
}

// resolve finds the file system and absolute path of arg. With local set,
// an argument without a scheme is a local path (relative to the working
// directory), as the sources of -put and the destination of -get are.
func (c *cmdCtx) resolve(arg string, local bool) (fs.FileSystem, string, error) {
	if local && formOf(arg).kind != formURI {
		fsys, err := c.cache.Get(c.ctx, "file:///")
		if err != nil {
			return nil, "", err
		}
		return fsys, fs.Abs(fsys, filepath.ToSlash(arg), false), nil
	}
	return c.cache.Resolve(c.ctx, arg)
}

// literal resolves arg without globbing: one item, st nil if missing.
func (c *cmdCtx) literal(arg string, local bool) (*item, error) {
	fsys, abs, err := c.resolve(arg, local)
	if err != nil {
		return nil, err
	}
	it := &item{fsys: fsys, path: abs, disp: arg}
	st, err := fsys.Stat(c.ctx, abs)
	switch {
	case err == nil:
		it.st = &st
		it.disp = formOf(arg).display(fsys, abs, st.IsDir)
	case isMissing(err):
	default:
		return nil, err
	}
	return it, nil
}

// expand expands one argument as Hadoop's PathData.expandAsGlob: a path
// without glob characters gives one item (st nil if it does not exist,
// shown as written); a glob gives its sorted matches, and an error when
// nothing matches.
func (c *cmdCtx) expand(arg string, local bool) ([]*item, error) {
	if arg == "" {
		return nil, errors.New("Can not create a Path from an empty string")
	}
	patterns, err := fs.ExpandBraces(arg)
	if err != nil {
		return nil, err
	}
	glob := len(patterns) > 1
	for _, p := range patterns {
		glob = glob || fs.HasWildcard(p)
	}
	if !glob {
		// Like Hadoop's Globber, a path without wildcards is unescaped.
		it, err := c.literal(fs.UnescapeGlob(arg), local)
		if err != nil {
			return nil, err
		}
		if !it.exists() {
			it.disp = arg
		}
		return []*item{it}, nil
	}
	form := formOf(arg)
	var out []*item
	seen := map[string]bool{}
	for _, p := range patterns {
		fsys, abs, err := c.resolve(p, local)
		if err != nil {
			return nil, err
		}
		sts, err := fs.Glob(c.ctx, fsys, abs)
		if err != nil {
			return nil, err
		}
		for i := range sts {
			st := &sts[i]
			key := fs.Qualify(fsys, st.Path)
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, &item{fsys: fsys, path: st.Path, disp: form.display(fsys, st.Path, st.IsDir), st: st})
		}
	}
	if len(out) == 0 {
		return nil, notFound(arg)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

// expandAll expands every argument, reporting the ones that fail (a glob
// without matches too, unless ignoreMissing) and returning the rest.
func (c *cmdCtx) expandAll(args []string, local, ignoreMissing bool) []*item {
	var out []*item
	for _, a := range args {
		items, err := c.expand(a, local)
		if err != nil {
			var pe *pathError
			if ignoreMissing && errors.As(err, &pe) && pe.msg == "No such file or directory" {
				continue
			}
			c.failPath(a, err)
			continue
		}
		out = append(out, items...)
	}
	return out
}

// path written as a directory, "x/", "." or "..", whether it exists).
func (c *cmdCtx) parentExists(it *item) (bool, error) {
	p := path.Dir(it.path)
	if representsDirectory(it.disp) {
		p = it.path
	}
	_, err := it.fsys.Stat(c.ctx, p)
	if err == nil {
		return true, nil
	}
	if isMissing(err) {
		return false, nil
	}
	return false, err
}

// representsDirectory is Hadoop's PathData.representsDirectory: the path
// was written ending in "/", "." or "..".
func representsDirectory(arg string) bool {
	if i := strings.LastIndexByte(arg, '/'); i >= 0 {
		arg = arg[i+1:]
	}
	return arg == "" || arg == "." || arg == ".."
}
