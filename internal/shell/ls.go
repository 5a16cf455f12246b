package shell

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/storage"
)

var cmdLs = &command{
	name:  "ls",
	usage: "[-C] [-d] [-h] [-q] [-R] [-t] [-S] [-r] [-u] [<path> ...]",
	help: `List the contents that match the specified file pattern. If path is not
specified, the contents of /user/<currentUser> will be listed. For a directory a
list of its direct children is returned (unless -d option is specified).

Directory entries are of the form:
	permissions - userId groupId sizeOfDirectory(in bytes)
modificationDate(yyyy-MM-dd HH:mm) directoryName

and file entries are of the form:
	permissions numberOfReplicas userId groupId sizeOfFile(in bytes)
modificationDate(yyyy-MM-dd HH:mm) fileName

  -C  Display the paths of files and directories only.
  -d  Directories are listed as plain files.
  -h  Formats the sizes of files in a human-readable fashion
      rather than a number of bytes.
  -q  Print ? instead of non-printable characters.
  -R  Recursively list the contents of directories.
  -t  Sort files by modification time (most recent first).
  -S  Sort files by size.
  -r  Reverse the order of the sort.
  -u  Use time of last access instead of modification for
      display and sorting.`,
	run: runLs,
}

type lister struct {
	c          *cmdCtx
	pathOnly   bool
	dirRecurse bool
	recursive  bool
	human      bool
	hideNonPr  bool
	reverse    bool
	byTime     bool
	bySize     bool
	atime      bool
	// Column widths grow over the whole run, as in Hadoop's Ls.
	maxRepl, maxLen, maxOwner, maxGroup int
}

func runLs(c *cmdCtx, args []string) error {
	o, args, err := parseOpts(args, 0, unlimited, "C", "d", "h", "q", "R", "t", "S", "r", "u")
	if err != nil {
		return err
	}
	l := &lister{
		c:          c,
		pathOnly:   o["C"],
		dirRecurse: !o["d"],
		human:      o["h"],
		hideNonPr:  o["q"],
		reverse:    o["r"],
		byTime:     o["t"],
		bySize:     !o["t"] && o["S"],
		atime:      o["u"],
		maxRepl:    3,
		maxLen:     10,
	}
	l.recursive = o["R"] && l.dirRecurse
	if len(args) == 0 {
		args = []string{"."}
	}
	for _, it := range c.expandAll(args, false, false) {
		if !it.exists() {
			c.failPath(it.disp, notFound(it.disp))
			continue
		}
		if l.dirRecurse && it.isDir() {
			l.recurse(it)
		} else {
			l.list(nil, []*item{it})
		}
	}
	return nil
}

func (l *lister) recurse(dir *item) {
	kids, err := l.c.children(dir)
	if err != nil {
		l.c.failPath(dir.disp, err)
		return
	}
	l.list(dir, kids)
}

func (l *lister) list(parent *item, items []*item) {
	c := l.c
	if parent != nil {
		if !l.recursive && len(items) > 0 && !l.pathOnly {
			fmt.Fprintf(c.out, "Found %d items\n", len(items))
		}
		l.sort(items)
	}
	if !l.pathOnly {
		for _, it := range items {
			st := it.st
			l.maxRepl = max(l.maxRepl, len(strconv.Itoa(st.Replication)))
			l.maxLen = max(l.maxLen, len(strconv.FormatInt(st.Length, 10)))
			l.maxOwner = max(l.maxOwner, len(st.Owner))
			l.maxGroup = max(l.maxGroup, len(st.Group))
		}
	}
	for _, it := range items {
		l.print(it)
		if l.recursive && it.isDir() {
			l.recurse(it)
		}
	}
}

func (l *lister) sort(items []*item) {
	var less func(a, b *item) bool
	switch {
	case l.byTime:
		less = func(a, b *item) bool {
			ta, tb := a.st.ModTime, b.st.ModTime
			if l.atime {
				ta, tb = a.st.AccessTime, b.st.AccessTime
			}
			return millis(ta) > millis(tb)
		}
	case l.bySize:
		less = func(a, b *item) bool { return a.st.Length > b.st.Length }
	default:
		less = func(a, b *item) bool { return a.path < b.path }
	}
	sort.SliceStable(items, func(i, j int) bool {
		if l.reverse {
			return less(items[j], items[i])
		}
		return less(items[i], items[j])
	})
}

func (l *lister) print(it *item) {
	name := it.disp
	if l.hideNonPr {
		name = printable(name)
	}
	if l.pathOnly {
		fmt.Fprintln(l.c.out, name)
		return
	}
	st := it.st
	var b strings.Builder
	repl := "-"
	if st.IsDir {
		b.WriteByte('d')
	} else {
		b.WriteByte('-')
		repl = strconv.Itoa(st.Replication)
	}
	b.WriteString(permString(st.Perm))
	if st.HasACL {
		b.WriteByte('+')
	} else {
		b.WriteByte(' ')
	}
	fmt.Fprintf(&b, "%*s ", l.maxRepl, repl)
	if l.maxOwner > 0 {
		fmt.Fprintf(&b, "%-*s ", l.maxOwner, st.Owner)
	} else {
		b.WriteString(st.Owner)
	}
	if l.maxGroup > 0 {
		fmt.Fprintf(&b, "%-*s ", l.maxGroup, st.Group)
	} else {
		b.WriteString(st.Group)
	}
	size := strconv.FormatInt(st.Length, 10)
	if l.human {
		size = humanSize(st.Length)
	}
	fmt.Fprintf(&b, "%*s ", l.maxLen, size)
	t := st.ModTime
	if l.atime {
		t = st.AccessTime
	}
	b.WriteString(hadoopTime(t).Local().Format("2006-01-02 15:04"))
	b.WriteByte(' ')
	b.WriteString(name)
	fmt.Fprintln(l.c.out, b.String())
}

var cmdDu = &command{
	name:  "du",
	usage: "[-s] [-h] [-v] [-x] <path> ...",
	help: `Show the amount of space, in bytes, used by the files that match the specified
file pattern. The following flags are optional:

-s  Rather than showing the size of each individual file that matches the
    pattern, shows the total (summary) size.
-h  Formats the sizes of files in a human-readable fashion rather than a number
    of bytes.
-v  option displays a header line.
-x  Excludes snapshots from being counted.

Note that, even without the -s option, this only shows size summaries one level
deep into a directory.

The output is in the form
	size	disk space consumed	name(full path)`,
	run: func(c *cmdCtx, args []string) error {
		o, args, err := parseOpts(args, 0, unlimited, "h", "s", "v", "x")
		if err != nil {
			return err
		}
		format := func(n int64) string {
			if o["h"] {
				return humanSize(n)
			}
			return strconv.FormatInt(n, 10)
		}
		if len(args) == 0 {
			args = []string{"."}
		}
		t := &table{}
		if o["v"] {
			t.add("SIZE", "DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS", "FULL_PATH_NAME")
			t.header = true
		}
		row := func(it *item) {
			cs, err := it.fsys.ContentSummary(c.ctx, it.path)
			if err != nil {
				c.failPath(it.disp, err)
				return
			}
			t.add(format(cs.Length), format(cs.SpaceConsumed), it.disp)
		}
		for _, it := range c.expandAll(args, false, false) {
			if !it.exists() {
				c.failPath(it.disp, notFound(it.disp))
				continue
			}
			if !o["s"] && it.isDir() {
				kids, err := c.children(it)
				if err != nil {
					c.failPath(it.disp, err)
					continue
				}
				for _, k := range kids {
					row(k)
				}
				continue
			}
			row(it)
		}
		t.print(c.out)
		return nil
	},
}

var cmdDf = &command{
	name:  "df",
	usage: "[-h] [<path> ...]",
	help: `Shows the capacity, free and used space of the filesystem. If the filesystem has
multiple partitions, and no path to a particular partition is specified, then
the status of the root partitions will be shown.

-h  Formats the sizes of files in a human-readable fashion rather than a number
    of bytes.

strata: when the file system reports its capacity per storage type (HDFS), a
line per storage type ("  [SSD]", "  [DISK]", ...) follows the file system's
line.`,
	run: func(c *cmdCtx, args []string) error {
		o, args, err := parseOpts(args, 0, unlimited, "h")
		if err != nil {
			return err
		}
		format := func(n int64) string {
			if o["h"] {
				return humanSize(n)
			}
			return strconv.FormatInt(n, 10)
		}
		if len(args) == 0 {
			args = []string{"/"}
		}
		t := &table{right: map[int]bool{1: true, 2: true, 3: true, 4: true}, header: true}
		t.add("Filesystem", "Size", "Used", "Available", "Use%")
		for _, it := range c.expandAll(args, false, false) {
			if !it.exists() {
				c.failPath(it.disp, notFound(it.disp))
				continue
			}
			st, err := it.fsys.Status(c.ctx)
			if err != nil {
				c.failPath(it.disp, err)
				continue
			}
			t.add(fsName(it.fsys), format(st.Capacity), format(st.Used), format(st.Remaining),
				formatPercent(float64(st.Used)/float64(st.Capacity)))
			c.storageRows(t, it.fsys, format)
		}
		t.print(c.out)
		return nil
	},
}

// storageRows adds df's per-storage-type lines for fsys, in the order of
// StorageTypeProto (DISK, SSD, ARCHIVE, RAM_DISK, ...). This is strata's addition to Hadoop's
// -df output. A file system that cannot report them (no
// fs.StorageStatuser, or an error: a Hadoop NameNode answers
// getDatanodeStorageReport only to the superuser) gets none.
func (c *cmdCtx) storageRows(t *table, fsys fs.FileSystem, format func(int64) string) {
	ss, ok := fsys.(fs.StorageStatuser)
	if !ok {
		return
	}
	m, err := ss.StorageStatus(c.ctx)
	if err != nil {
		return
	}
	types := make([]string, 0, len(m))
	for k := range m {
		types = append(types, k)
	}
	rank := func(s string) int {
		if ty, err := storage.ParseType(s); err == nil {
			return int(ty)
		}
		return math.MaxInt
	}
	sort.Slice(types, func(i, j int) bool {
		ri, rj := rank(types[i]), rank(types[j])
		if ri != rj {
			return ri < rj
		}
		return types[i] < types[j]
	})
	for _, ty := range types {
		st := m[ty]
		t.add("  ["+ty+"]", format(st.Capacity), format(st.Used), format(st.Remaining),
			formatPercent(float64(st.Used)/float64(st.Capacity)))
	}
}

// fsName is a file system's URI as Hadoop prints it: hdfs://nn:8020,
// file:///.
func fsName(fsys fs.FileSystem) string {
	u := fsys.URI()
	if u.Host == "" {
		return u.Scheme + ":///"
	}
	return u.Scheme + "://" + u.Host
}

var cmdStat = &command{
	name:  "stat",
	usage: "[format] <path> ...",
	help: `Print statistics about the file/directory at <path>
in the specified format. Format accepts permissions in
octal (%a) and symbolic (%A), filesize in
bytes (%b), type (%F), group name of owner (%g),
name (%n), block size (%o), replication (%r), user name
of owner (%u), access date (%x, %X).
modification date (%y, %Y).
%x and %y show UTC date as "yyyy-MM-dd HH:mm:ss" and
%X and %Y show milliseconds since January 1, 1970 UTC.
If the format is not specified, %y is used by default.`,
	run: func(c *cmdCtx, args []string) error {
		o, args, err := parseOpts(args, 1, unlimited, "R")
		if err != nil {
			return err
		}
		format := "%y"
		if strings.Contains(args[0], "%") {
			format, args = args[0], args[1:]
		}
		if err := checkCount(args, 1, unlimited); err != nil {
			return err
		}
		c.walk(c.expandAll(args, false, false), o["R"], func(it *item) {
			fmt.Fprintln(c.out, statLine(format, it))
		})
		return nil
	},
}

const statTime = "2006-01-02 15:04:05"

// statLine expands Hadoop's -stat format.
func statLine(format string, it *item) string {
	st := it.st
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		if i+1 == len(format) {
			break // a trailing % is dropped
		}
		i++
		switch format[i] {
		case 'a':
			b.WriteString(strconv.FormatUint(uint64(st.Perm&0o1777), 8))
		case 'A':
			b.WriteString(permString(st.Perm))
		case 'b':
			b.WriteString(strconv.FormatInt(st.Length, 10))
		case 'F':
			if st.IsDir {
				b.WriteString("directory")
			} else {
				b.WriteString("regular file")
			}
		case 'g':
			b.WriteString(st.Group)
		case 'n':
			b.WriteString(st.Name())
		case 'o':
			b.WriteString(strconv.FormatInt(st.BlockSize, 10))
		case 'r':
			b.WriteString(strconv.Itoa(st.Replication))
		case 'u':
			b.WriteString(st.Owner)
		case 'x':
			b.WriteString(hadoopTime(st.AccessTime).UTC().Format(statTime))
		case 'X':
			b.WriteString(strconv.FormatInt(millis(st.AccessTime), 10))
		case 'y':
			b.WriteString(hadoopTime(st.ModTime).UTC().Format(statTime))
		case 'Y':
			b.WriteString(strconv.FormatInt(millis(st.ModTime), 10))
		default:
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
