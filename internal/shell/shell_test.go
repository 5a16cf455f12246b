package shell

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
)

type tenv struct {
	t   *testing.T
	dir string // the test's directory, also the working directory
	env fs.Env
}

// setup makes a temporary directory the working directory and returns an
// environment whose fs.defaultFS is file:///.
func setup(t *testing.T) *tenv {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	c := conf.New()
	c.Set(fs.KeyDefaultFS, "file:///")
	return &tenv{t: t, dir: filepath.ToSlash(dir), env: fs.Env{Conf: c, User: "tester"}}
}

func (e *tenv) runIn(stdin string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	sh := &Shell{Env: e.env, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	code := sh.Run(context.Background(), args)
	return out.String(), errb.String(), code
}

func (e *tenv) run(args ...string) (string, string, int) { return e.runIn("", args...) }

// ok runs a command that must succeed silently on stderr.
func (e *tenv) ok(args ...string) string {
	e.t.Helper()
	out, errOut, code := e.run(args...)
	if code != 0 || errOut != "" {
		e.t.Fatalf("%v: exit %d, stderr:\n%s", args, code, errOut)
	}
	return out
}

// fails runs a command that must exit with code and print exactly the
// given stderr lines.
func (e *tenv) fails(code int, wantErr []string, args ...string) string {
	e.t.Helper()
	out, errOut, got := e.run(args...)
	if got != code {
		e.t.Errorf("%v: exit %d, want %d (stderr %q)", args, got, code, errOut)
	}
	if wantErr == nil { // a usage error: only the first line is checked
		if code == exitUsage && !strings.Contains(errOut, "\nUsage: strata dfs [generic options]\n") {
			e.t.Errorf("%v: no usage in stderr %q", args, errOut)
		}
		return out
	}
	if want := strings.Join(wantErr, "\n") + "\n"; errOut != want {
		e.t.Errorf("%v: stderr\n%s\nwant\n%s", args, errOut, want)
	}
	return out
}

func (e *tenv) write(rel, data string) {
	e.t.Helper()
	p := filepath.Join(e.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *tenv) exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(e.dir, rel))
	return err == nil
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func equalLines(t *testing.T, what, got string, want ...string) {
	t.Helper()
	if g := lines(got); strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n%s\nwant:\n%s", what, strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
}

var lsLine = regexp.MustCompile(`^([d-])([r-][w-][x-][r-][w-][x-][r-][w-][xtT-]) ( *(?:\d+|-)) (\S+ +)(\S+ +)( *[\d.]+(?: [KMGTPE])?) (\d{4}-\d\d-\d\d \d\d:\d\d) (.+)$`)

func TestLs(t *testing.T) {
	e := setup(t)
	e.write("d/small", "hello")
	e.write("d/empty", "")
	e.write("d/sub/x", "12345678")
	e.write("d/huge", "")
	if err := os.Truncate(filepath.Join(e.dir, "d/huge"), 12345678901); err != nil {
		t.Fatal(err)
	}
	mt := time.Date(2024, 3, 4, 5, 6, 0, 0, time.Local)
	os.Chtimes(filepath.Join(e.dir, "d/small"), mt, mt)
	if os.Geteuid() == 0 {
		// Owners and groups of different widths test the column padding.
		os.Lchown(filepath.Join(e.dir, "d/empty"), 123456, 7654321)
	}

	for _, arg := range []string{e.dir + "/d", "file://" + e.dir + "/d", "d", "d/"} {
		out := e.ok("-ls", arg)
		ls := lines(out)
		if len(ls) != 5 || ls[0] != "Found 4 items" {
			t.Fatalf("ls %s:\n%s", arg, out)
		}
		prefix := strings.TrimSuffix(arg, "/") + "/"
		var dateCol, sizeEnd, ownerEnd int
		for i, name := range []string{"empty", "huge", "small", "sub"} {
			m := lsLine.FindStringSubmatchIndex(ls[i+1])
			if m == nil {
				t.Fatalf("line %q does not match the ls format", ls[i+1])
			}
			line := ls[i+1]
			if got := line[m[16]:m[17]]; got != prefix+name {
				t.Errorf("ls %s: path %q, want %q", arg, got, prefix+name)
			}
			if i == 0 {
				dateCol, sizeEnd, ownerEnd = m[14], m[13], m[9]
			} else if m[14] != dateCol || m[13] != sizeEnd || m[9] != ownerEnd {
				t.Errorf("ls %s: columns not aligned:\n%s", arg, out)
			}
		}
		small := lsLine.FindStringSubmatch(ls[3])
		if small[1] != "-" || small[2] != "rw-r--r--" || strings.TrimSpace(small[3]) != "1" ||
			strings.TrimSpace(small[6]) != "5" || small[7] != "2024-03-04 05:06" {
			t.Errorf("ls line for small: %q", ls[3])
		}
		sub := lsLine.FindStringSubmatch(ls[4])
		if sub[1] != "d" || strings.TrimSpace(sub[3]) != "-" || strings.TrimSpace(sub[6]) != "0" {
			t.Errorf("ls line for sub: %q", ls[4])
		}
		// The size column is as wide as the widest size (11 digits here).
		if huge := lsLine.FindStringSubmatch(ls[2]); huge[6] != "12345678901" {
			t.Errorf("huge size column %q", huge[6])
		}
	}

	// Exact layout: replication width 3, size width 10 minimum.
	e.write("one/f", "abc")
	os.Chtimes(filepath.Join(e.dir, "one/f"), mt, mt)
	fst, err := fs.NewLocal(e.env).Stat(context.Background(), e.dir+"/one/f")
	if err != nil {
		t.Fatal(err)
	}
	equalLines(t, "ls one", e.ok("-ls", "one"),
		"Found 1 items",
		fmt.Sprintf("-rw-r--r--   1 %s %s          3 2024-03-04 05:06 one/f", fst.Owner, fst.Group))

	// -h uses Hadoop's binary prefixes; -d lists the directory itself;
	// -C prints paths only; -S sorts by size, -r reverses.
	out := e.ok("-ls", "-h", e.dir+"/d/huge")
	if !strings.Contains(out, " 11.5 G ") {
		t.Errorf("ls -h: %q", out)
	}
	out = e.ok("-ls", "-d", "d")
	if l := lines(out); len(l) != 1 || !strings.HasPrefix(l[0], "d") || !strings.HasSuffix(l[0], " d") {
		t.Errorf("ls -d: %q", out)
	}
	equalLines(t, "ls -C -S", e.ok("-ls", "-C", "-S", "d"), "d/huge", "d/small", "d/empty", "d/sub")
	// Equal sizes keep their order (Hadoop's sort is stable).
	equalLines(t, "ls -C -S -r", e.ok("-ls", "-C", "-S", "-r", "d"), "d/empty", "d/sub", "d/small", "d/huge")
	equalLines(t, "ls -C -t", e.ok("-ls", "-C", "-t", "-r", "d")[:len("d/small")+1], "d/small")

	// No argument lists the home directory (the working directory here),
	// with bare names.
	out = e.ok("-ls", "-C")
	equalLines(t, "ls -C (home)", out, "d", "one")

	// Empty directory: no "Found" line.
	os.Mkdir(filepath.Join(e.dir, "emptydir"), 0o755)
	equalLines(t, "ls empty dir", e.ok("-ls", "emptydir"))

	// Sticky bit shows as t/T.
	os.Chmod(filepath.Join(e.dir, "emptydir"), 0o777|os.ModeSticky)
	if out := e.ok("-ls", "-d", "emptydir"); !strings.HasPrefix(out, "drwxrwxrwt ") {
		t.Errorf("sticky dir: %q", out)
	}
	os.Chmod(filepath.Join(e.dir, "emptydir"), 0o776|os.ModeSticky)
	if out := e.ok("-ls", "-d", "emptydir"); !strings.HasPrefix(out, "drwxrwxrwT ") {
		t.Errorf("sticky dir without o+x: %q", out)
	}

	e.fails(1, []string{"ls: `nope': No such file or directory", "ls: `/nope/x': No such file or directory"},
		"-ls", "nope", "/nope/x")
	e.fails(1, []string{`ls: No FileSystem for scheme "nosuch"`}, "-ls", "nosuch://h/x")
}

func TestLsRecursive(t *testing.T) {
	e := setup(t)
	e.write("r/a/f1", "1")
	e.write("r/a/b/f2", "22")
	e.write("r/z", "")
	out := e.ok("-ls", "-R", "r")
	var names []string
	for _, l := range lines(out) {
		m := lsLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("ls -R line %q", l)
		}
		names = append(names, m[1]+" "+m[8])
	}
	want := []string{"d r/a", "d r/a/b", "- r/a/b/f2", "- r/a/f1", "- r/z"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("ls -R = %v, want %v", names, want)
	}
	equalLines(t, "ls -R -C", e.ok("-ls", "-R", "-C", e.dir+"/r/a"),
		e.dir+"/r/a/b", e.dir+"/r/a/b/f2", e.dir+"/r/a/f1")
	// -d turns -R off.
	equalLines(t, "ls -R -d -C", e.ok("-ls", "-R", "-d", "-C", "r"), "r")
}

func TestMkdir(t *testing.T) {
	e := setup(t)
	e.ok("-mkdir", "a")
	e.ok("-mkdir", "-p", e.dir+"/x/y/z", "file://"+e.dir+"/u/v")
	for _, p := range []string{"a", "x/y/z", "u/v"} {
		if fi, err := os.Stat(filepath.Join(e.dir, p)); err != nil || !fi.IsDir() {
			t.Errorf("%s not made", p)
		}
	}
	e.ok("-mkdir", "-p", "a", "x/y") // existing: fine with -p
	e.write("f", "x")
	e.fails(1, []string{
		"mkdir: `a': File exists",
		"mkdir: `b/c': No such file or directory",
		"mkdir: `" + e.dir + "/q/r': No such file or directory",
		"mkdir: `f': Is not a directory",
	}, "-mkdir", "a", "b/c", e.dir+"/q/r", "f")
	if e.exists("b") || e.exists("q") {
		t.Error("mkdir without -p made parents")
	}
	e.fails(1, []string{"mkdir: `f/g': Is not a directory"}, "-mkdir", "-p", "f/g")
	if fi, _ := os.Stat(filepath.Join(e.dir, "a")); fi.Mode().Perm() != 0o755 {
		t.Errorf("mkdir perm %v, want umask 022 applied", fi.Mode())
	}
}

func TestRm(t *testing.T) {
	e := setup(t)
	e.write("d/f", "x")
	e.write("g", "y")
	e.write("h", "z")
	out := e.fails(1, []string{
		"rm: `d': Is a directory",
		"rm: `nope': No such file or directory",
	}, "-rm", "d", "nope", "g")
	equalLines(t, "rm output", out, "Deleted g")
	if e.exists("g") || !e.exists("d/f") {
		t.Error("rm removed the wrong things")
	}
	equalLines(t, "rm -r", e.ok("-rm", "-r", "-skipTrash", e.dir+"/d"), "Deleted "+e.dir+"/d")
	equalLines(t, "rm -f", e.ok("-rm", "-f", "nope", "no*", "h"), "Deleted h")
	if e.exists("d") || e.exists("h") {
		t.Error("rm -r / -f left files")
	}
	e.fails(1, []string{"rm: `x*': No such file or directory"}, "-rm", "x*")

	// rmdir
	os.MkdirAll(filepath.Join(e.dir, "e1"), 0o755)
	e.write("e2/f", "")
	e.fails(1, []string{"rmdir: `e2': Directory is not empty"}, "-rmdir", "e1", "e2")
	e.ok("-rmdir", "--ignore-fail-on-non-empty", "e2")
	if e.exists("e1") || !e.exists("e2") {
		t.Error("rmdir removed the wrong things")
	}
	e.fails(1, []string{"rmdir: `e2/f': Is not a directory"}, "-rmdir", "e2/f")
}

func TestMv(t *testing.T) {
	e := setup(t)
	e.write("a", "1")
	e.write("b", "2")
	e.write("c", "3")
	os.Mkdir(filepath.Join(e.dir, "dir"), 0o755)
	e.ok("-mv", "a", "b", "dir")
	if !e.exists("dir/a") || !e.exists("dir/b") || e.exists("a") {
		t.Error("mv into dir failed")
	}
	e.ok("-mv", e.dir+"/c", "file://"+e.dir+"/c2")
	if !e.exists("c2") || e.exists("c") {
		t.Error("mv rename failed")
	}
	e.ok("-mv", "dir/*", ".")
	if !e.exists("a") || !e.exists("b") {
		t.Error("mv glob failed")
	}
	e.fails(1, []string{"mv: `b': File exists"}, "-mv", "a", "b")
	e.fails(1, []string{"mv: `c2': Is not a directory"}, "-mv", "a", "b", "c2")
	e.fails(1, []string{"mv: `nodir': No such file or directory"}, "-mv", "a", "b", "nodir")
	e.fails(1, []string{"mv: `nodir/x': No such file or directory"}, "-mv", "a", "nodir/x")
	e.fails(1, []string{"mv: `dir' to `dir/dir': is a subdirectory of itself"}, "-mv", "dir", "dir")
	e.write("dir/a", "")
	e.fails(1, []string{"mv: `dir/a': File exists"}, "-mv", "a", "dir")
	e.fails(255, nil, "-mv", "a")
}

func TestChmodChown(t *testing.T) {
	e := setup(t)
	e.write("d/f", "x")
	e.write("d/g", "y")
	mode := func(p string) os.FileMode {
		fi, err := os.Stat(filepath.Join(e.dir, p))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode() & (os.ModePerm | os.ModeSticky)
	}
	e.ok("-chmod", "640", "d/f")
	if m := mode("d/f"); m != 0o640 {
		t.Errorf("chmod 640: %v", m)
	}
	e.ok("-chmod", "-R", "go-r,u+x", "d")
	if m := mode("d"); m != 0o711 {
		t.Errorf("chmod -R go-r,u+x on dir: %v", m)
	}
	if m := mode("d/f"); m != 0o700 {
		t.Errorf("chmod -R go-r,u+x on f: %v", m)
	}
	if m := mode("d/g"); m != 0o700 {
		t.Errorf("chmod -R go-r,u+x on g: %v", m)
	}
	e.ok("-chmod", "a=r", "d/g")
	if m := mode("d/g"); m != 0o444 {
		t.Errorf("chmod a=r: %v", m)
	}
	e.ok("-chmod", "1777", "d")
	if m := mode("d"); m != 0o777|os.ModeSticky {
		t.Errorf("chmod 1777: %v", m)
	}
	e.ok("-chmod", "o-t", "d")
	if m := mode("d"); m != 0o777 {
		t.Errorf("chmod o-t: %v", m)
	}
	e.ok("-chmod", "-w", "d/g") // a flag-like mode
	e.ok("-chmod", "u+X,g+X", "d/g")
	if m := mode("d/g"); m != 0o444 {
		t.Errorf("chmod u+X on a non-executable file: %v", m)
	}
	e.fails(255, nil, "-chmod", "abc", "d")
	e.fails(1, []string{"chmod: `nope': No such file or directory"}, "-chmod", "755", "nope")

	fsys := fs.NewLocal(e.env)
	st, _ := fsys.Stat(context.Background(), e.dir+"/d/f")
	e.ok("-chown", "-R", st.Owner+":"+st.Group, "d")
	e.ok("-chgrp", st.Group, "d/f")
	e.fails(255, nil, "-chown", "a:b:c", "d")
	if os.Geteuid() == 0 {
		e.ok("-chown", "4242:4343", "d/f")
		e.ok("-chgrp", "4444", "d/g")
		st, _ := fsys.Stat(context.Background(), e.dir+"/d/f")
		sg, _ := fsys.Stat(context.Background(), e.dir+"/d/g")
		if st.Owner != "4242" || st.Group != "4343" || sg.Group != "4444" || sg.Owner == "4242" {
			t.Errorf("chown: %s:%s, chgrp: %s", st.Owner, st.Group, sg.Group)
		}
	}
}

func TestStat(t *testing.T) {
	e := setup(t)
	e.write("f", "12345")
	mt := time.Date(2023, 7, 8, 9, 10, 11, 0, time.UTC)
	at := time.Date(2022, 1, 2, 3, 4, 5, 0, time.UTC)
	os.Chtimes(filepath.Join(e.dir, "f"), at, mt)
	os.Mkdir(filepath.Join(e.dir, "d"), 0o750)
	st, _ := fs.NewLocal(e.env).Stat(context.Background(), e.dir+"/f")

	equalLines(t, "stat default", e.ok("-stat", "f"), "2023-07-08 09:10:11")
	equalLines(t, "stat format", e.ok("-stat", "%a %A %b %F %g %n %o %r %u %x %X %y %Y %% %z", "f", e.dir+"/d"),
		fmt.Sprintf("644 rw-r--r-- 5 regular file %s f 33554432 1 %s 2022-01-02 03:04:05 %d 2023-07-08 09:10:11 %d %% z",
			st.Group, st.Owner, at.UnixMilli(), mt.UnixMilli()),
		fmt.Sprintf("750 rwxr-x--- 0 directory %s d 0 0 %s", st.Group, st.Owner)+statTimes(t, e.dir+"/d")+" % z")
	// %n is the name of the resolved path.
	equalLines(t, "stat -R", e.ok("-stat", "-R", "%n", "."), filepath.Base(e.dir), "d", "f")
	e.fails(1, []string{"stat: `nope': No such file or directory"}, "-stat", "nope")
	e.fails(255, nil, "-stat", "%n")
}

func statTimes(t *testing.T, p string) string {
	st, err := fs.NewLocal(fs.Env{}).Stat(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(" %s %d %s %d",
		st.AccessTime.UTC().Format("2006-01-02 15:04:05"), st.AccessTime.UnixMilli(),
		st.ModTime.UTC().Format("2006-01-02 15:04:05"), st.ModTime.UnixMilli())
}

func TestTest(t *testing.T) {
	e := setup(t)
	e.write("f", "x")
	e.write("z", "")
	os.Mkdir(filepath.Join(e.dir, "d"), 0o755)
	for _, tt := range []struct {
		flag, path string
		code       int
	}{
		{"-e", "f", 0}, {"-e", "d", 0}, {"-e", "nope", 1},
		{"-d", "d", 0}, {"-d", "f", 1}, {"-d", "nope", 1},
		{"-f", "f", 0}, {"-f", "d", 1},
		{"-s", "f", 0}, {"-s", "z", 1},
		{"-z", "z", 0}, {"-z", "f", 1},
		{"-r", "f", 0}, {"-w", "f", 0}, {"-w", "nope", 1},
		{"-e", e.dir + "/f", 0}, {"-e", "file://" + e.dir + "/f", 0}, {"-d", "f*", 1}, {"-f", "f*", 0},
	} {
		out, errOut, code := e.run("-test", tt.flag, tt.path)
		if code != tt.code || out != "" || errOut != "" {
			t.Errorf("-test %s %s: exit %d (out %q, err %q), want %d", tt.flag, tt.path, code, out, errOut, tt.code)
		}
	}
	e.fails(1, []string{"test: `q*': No such file or directory"}, "-test", "-e", "q*")
	for _, args := range [][]string{{"-test", "f"}, {"-test", "-e", "-d", "f"}, {"-test", "-e"}, {"-test", "-e", "f", "z"}} {
		if _, _, code := e.run(args...); code != 255 {
			t.Errorf("%v: exit %d, want 255", args, code)
		}
	}
}

func TestTouch(t *testing.T) {
	e := setup(t)
	e.ok("-touchz", "a", e.dir+"/b")
	if fi, err := os.Stat(filepath.Join(e.dir, "a")); err != nil || fi.Size() != 0 || fi.Mode().Perm() != 0o644 {
		t.Errorf("touchz: %v %v", fi, err)
	}
	e.ok("-touchz", "a") // existing empty file: fine
	e.write("full", "data")
	os.Mkdir(filepath.Join(e.dir, "d"), 0o755)
	e.fails(1, []string{
		"touchz: `full': Not a zero-length file",
		"touchz: `d': Is a directory",
		"touchz: `x/y': No such file or directory",
	}, "-touchz", "full", "d", "x/y")

	e.ok("-touch", "-t", "20200102:030405", "t1", "full")
	want := time.Date(2020, 1, 2, 3, 4, 5, 0, time.Local)
	for _, p := range []string{"t1", "full"} {
		if fi, _ := os.Stat(filepath.Join(e.dir, p)); !fi.ModTime().Equal(want) {
			t.Errorf("touch -t %s: mtime %v", p, fi.ModTime())
		}
	}
	e.ok("-touch", "-c", "nothere")
	if e.exists("nothere") {
		t.Error("touch -c created a file")
	}
	e.ok("-touch", "-a", "-t", "20210101:000000", "full")
	if fi, _ := os.Stat(filepath.Join(e.dir, "full")); !fi.ModTime().Equal(want) {
		t.Errorf("touch -a changed mtime: %v", fi.ModTime())
	}
	e.fails(255, nil, "-touch", "-t", "bogus", "full")
}

func TestCountDu(t *testing.T) {
	e := setup(t)
	e.write("c/f1", "12345")
	e.write("c/s/f2", "1234567890")
	e.write("c/s/t/f3", "")
	e.write("solo", "abc")

	equalLines(t, "count", e.ok("-count", "c", e.dir+"/solo"),
		fmt.Sprintf("%12s %12s %18s %s", "3", "3", "15", "c"),
		fmt.Sprintf("%12s %12s %18s %s", "0", "1", "3", e.dir+"/solo"))
	equalLines(t, "count -q -v", e.ok("-count", "-q", "-v", "c"),
		fmt.Sprintf("%12s %15s %15s %15s %12s %12s %18s %s", "QUOTA", "REM_QUOTA", "SPACE_QUOTA", "REM_SPACE_QUOTA",
			"DIR_COUNT", "FILE_COUNT", "CONTENT_SIZE", "PATHNAME"),
		fmt.Sprintf("%12s %15s %15s %15s %12s %12s %18s %s", "none", "inf", "none", "inf", "3", "3", "15", "c"))
	equalLines(t, "count -v", e.ok("-count", "-v", "-h", "c"),
		fmt.Sprintf("%12s %12s %18s %s", "DIR_COUNT", "FILE_COUNT", "CONTENT_SIZE", "PATHNAME"),
		fmt.Sprintf("%12s %12s %18s %s", "3", "3", "15", "c"))
	e.fails(1, []string{"count: `nope': No such file or directory"}, "-count", "nope")

	equalLines(t, "du -s", e.ok("-du", "-s", "c", e.dir+"/solo"),
		"15  15  c",
		"3   3   "+e.dir+"/solo")
	equalLines(t, "du", e.ok("-du", "c"),
		"5   5   c/f1",
		"10  10  c/s")
	equalLines(t, "du -v", e.ok("-du", "-s", "-v", "c"),
		"SIZE  DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS  FULL_PATH_NAME",
		"15    15                                     c")
	e.fails(1, []string{"du: `nope': No such file or directory"}, "-du", "-s", "nope")

	out := e.ok("-df", "-h", "c")
	ls := lines(out)
	if len(ls) != 2 || !regexp.MustCompile(`^Filesystem +Size +Used +Available +Use%$`).MatchString(ls[0]) ||
		!regexp.MustCompile(`^file:/// +[\d.]+ [KMGTPE]? *[\d.]+ ?[KMGTPE]? +[\d.]+ ?[KMGTPE]? +\d+%$`).MatchString(ls[1]) ||
		len(ls[0]) != len(ls[1]) {
		t.Errorf("df:\n%s", out)
	}
}

func TestGlobs(t *testing.T) {
	e := setup(t)
	for _, p := range []string{"g/a1", "g/a2", "g/b1", "g/.hidden", "g/sub/a3", "g/sub2/a4", "g/[x]"} {
		e.write(p, "")
	}
	tests := []struct {
		pattern string
		want    []string
	}{
		{"g/a*", []string{"g/a1", "g/a2"}},
		{"g/?1", []string{"g/a1", "g/b1"}},
		{"g/[ab]2", []string{"g/a2"}},
		{"g/[!a]1", []string{"g/b1"}},
		{"g/[^a]1", []string{"g/b1"}},
		{"g/{a1,b1,zz}", []string{"g/a1", "g/b1"}},
		{"g/*/a*", []string{"g/sub/a3", "g/sub2/a4"}},
		{"g/{sub/a3,a2}", []string{"g/a2", "g/sub/a3"}},
		{"g/.h*", []string{"g/.hidden"}},
		{`g/\[x\]`, []string{"g/[x]"}},
		{e.dir + "/g/a*", []string{e.dir + "/g/a1", e.dir + "/g/a2"}},
		{"file://" + e.dir + "/g/b*", []string{"file://" + e.dir + "/g/b1"}},
		{"file:" + e.dir + "/g/b*", []string{"file:" + e.dir + "/g/b1"}},
		{"g/sub/../a?", []string{"g/a1", "g/a2"}},
	}
	for _, tt := range tests {
		out, errOut, code := e.run("-ls", "-d", "-C", tt.pattern)
		if code != 0 || errOut != "" || strings.Join(lines(out), " ") != strings.Join(tt.want, " ") {
			t.Errorf("ls %s = %q (%q, %d), want %v", tt.pattern, lines(out), errOut, code, tt.want)
		}
	}
	// A glob through a file or matching nothing is an error naming the
	// pattern.
	e.fails(1, []string{"ls: `g/zz*': No such file or directory", "ls: `g/a1/*': No such file or directory"},
		"-ls", "g/zz*", "g/a1/*")
	// A glob in a directory component lists the matches' contents.
	equalLines(t, "ls g/su*", e.ok("-ls", "-C", "g/su*"), "g/sub/a3", "g/sub2/a4")
	equalLines(t, "rm glob", e.ok("-rm", "g/a?"), "Deleted g/a1", "Deleted g/a2")
}

func TestPutGetCat(t *testing.T) {
	e := setup(t)
	e.write("local/one", "first\n")
	e.write("local/tree/two", "second\n")
	os.Mkdir(filepath.Join(e.dir, "remote"), 0o755)

	e.ok("-put", "local/one", e.dir+"/remote")
	e.ok("-copyFromLocal", "local/tree", "remote/")
	equalLines(t, "cat", e.ok("-cat", "remote/one", "remote/tree/two"), "first", "second")
	e.fails(1, []string{"put: `" + e.dir + "/remote/one': File exists"}, "-put", "local/one", e.dir+"/remote")
	e.write("local/one", "changed\n")
	e.ok("-put", "-f", "local/one", "remote/one")
	equalLines(t, "cat after put -f", e.ok("-cat", "remote/one"), "changed")
	if e.exists("remote/one._COPYING_") {
		t.Error("temporary file left behind")
	}

	out, errOut, code := e.runIn("from stdin\n", "-put", "-", "remote/in")
	if code != 0 || out != "" || errOut != "" {
		t.Fatalf("put -: %d %q %q", code, out, errOut)
	}
	equalLines(t, "cat stdin file", e.ok("-cat", "remote/in"), "from stdin")

	e.ok("-get", "remote/tree", "back")
	e.ok("-copyToLocal", "remote/one", "back/one")
	if b, _ := os.ReadFile(filepath.Join(e.dir, "back/two")); string(b) != "second\n" {
		t.Errorf("get tree: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, "back/one")); string(b) != "changed\n" {
		t.Errorf("get file: %q", b)
	}
	e.fails(1, []string{"cp: `back/one': File exists"}, "-cp", "remote/one", "back")
	os.Mkdir(filepath.Join(e.dir, "back2"), 0o755)
	e.ok("-cp", "-p", "remote/*", "back2")
	if !e.exists("back2/in") || !e.exists("back2/tree/two") {
		t.Error("cp glob into dir failed")
	}
	e.ok("-moveFromLocal", "local/tree", "moved")
	if e.exists("local/tree") || !e.exists("moved/two") {
		t.Error("moveFromLocal failed")
	}
	equalLines(t, "head", e.ok("-head", "remote/one"), "changed")
	equalLines(t, "tail", e.ok("-tail", "remote/one"), "changed")
	e.fails(1, []string{"cat: `remote': Is a directory", "cat: `nope': No such file or directory"},
		"-cat", "remote", "nope")
}

func TestUsage(t *testing.T) {
	e := setup(t)
	out, errOut, code := e.run("-foo")
	if code != 255 || out != "" || !strings.HasPrefix(errOut, "-foo: Unknown command\nUsage: strata dfs [generic options]\n") ||
		!strings.Contains(errOut, "\t[-ls [-C] [-d] [-h] [-q] [-R] [-t] [-S] [-r] [-u] [<path> ...]]\n") {
		t.Errorf("unknown command: %d %q", code, errOut)
	}
	_, errOut, code = e.run("ls")
	if code != 255 || !strings.HasPrefix(errOut, "ls: Unknown command\nDid you mean -ls?  This command begins with a dash.\n") {
		t.Errorf("command without dash: %d %q", code, errOut)
	}
	_, errOut, code = e.run()
	if code != 255 || !strings.HasPrefix(errOut, "Usage: strata dfs [generic options]\n") {
		t.Errorf("no command: %d %q", code, errOut)
	}
	_, errOut, code = e.run("-ls", "-Rh")
	if code != 255 || !strings.HasPrefix(errOut, "-ls: Illegal option -Rh\n") ||
		!strings.HasSuffix(errOut, "Usage: strata dfs [generic options] -ls [-C] [-d] [-h] [-q] [-R] [-t] [-S] [-r] [-u] [<path> ...]\n") {
		t.Errorf("illegal option: %d %q", code, errOut)
	}
	_, errOut, code = e.run("-mkdir")
	if code != 255 || !strings.HasPrefix(errOut, "-mkdir: Not enough arguments: expected 1 but got 0\n") {
		t.Errorf("missing argument: %d %q", code, errOut)
	}
	equalLines(t, "help mkdir", e.ok("-help", "mkdir"),
		"-mkdir [-p] <path> ... :",
		"  Create a directory in specified location.",
		"",
		"  -p  Do not fail if the directory already exists")
	equalLines(t, "usage rm", e.ok("-usage", "-rm"),
		"Usage: strata dfs [generic options] -rm [-f] [-r|-R] [-skipTrash] <src> ...")
	out = e.ok("-help")
	if !strings.Contains(out, "\n-touchz <path> ... :\n  Creates a file of zero length") ||
		!strings.HasSuffix(out, "command [genericOptions] [commandOptions]\n") {
		t.Errorf("help:\n%s", out)
	}
}

func TestHumanSize(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 1023: "1023", 1024: "1 K", 1536: "1.5 K", 1280: "1.3 K", 1075: "1.0 K",
		1048575: "1.0 M", 1 << 20: "1 M", 1572864: "1.5 M", 12345678901: "11.5 G",
		1 << 60: "1 E", -2048: "-2 K", 1<<40 + 1<<39: "1.5 T",
	} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", n, got, want)
		}
	}
	for v, want := range map[float64]string{0.05: "0", 12.5: "13", 99.4999: "99", 100: "100"} {
		if got := javaFixed(v, 0); got != want {
			t.Errorf("javaFixed(%v, 0) = %q, want %q", v, got, want)
		}
	}
	if got := formatPercent(0.125); got != "13%" {
		t.Errorf("formatPercent = %q", got)
	}
}

func TestPermString(t *testing.T) {
	for p, want := range map[uint16]string{
		0o755: "rwxr-xr-x", 0o644: "rw-r--r--", 0o1777: "rwxrwxrwt", 0o1776: "rwxrwxrwT", 0: "---------",
	} {
		if got := permString(p); got != want {
			t.Errorf("permString(%o) = %q, want %q", p, got, want)
		}
	}
}

func TestChmodParser(t *testing.T) {
	tests := []struct {
		mode  string
		old   uint16
		dir   bool
		want  uint16
		isErr bool
	}{
		{"755", 0o1600, false, 0o1755, false},
		{"0644", 0o1777, true, 0o644, false},
		{"1777", 0o000, true, 0o1777, false},
		{"u+x", 0o644, false, 0o744, false},
		{"go-w", 0o777, false, 0o755, false},
		{"a=r", 0o777, false, 0o444, false},
		{"=rw", 0o7, false, 0o666, false},
		{"u+x,g+x", 0o600, false, 0o710, false},
		{"+t", 0o755, true, 0o1755, false},
		{"o-t", 0o1755, true, 0o755, false},
		{"a+X", 0o644, false, 0o644, false},
		{"a+X", 0o644, true, 0o755, false},
		{"a+X", 0o744, false, 0o755, false},
		{"u+x g+w", 0o600, false, 0, true},
		{"abc", 0, false, 0, true},
		{"888", 0, false, 0, true},
		{"u+x,", 0o600, false, 0o700, false},
	}
	for _, tt := range tests {
		m, err := parseChmod(tt.mode)
		if (err != nil) != tt.isErr {
			t.Errorf("parseChmod(%q) err = %v", tt.mode, err)
			continue
		}
		if err != nil {
			continue
		}
		if got := m.apply(tt.old, tt.dir); got != tt.want {
			t.Errorf("chmod %s on %o = %o, want %o", tt.mode, tt.old, got, tt.want)
		}
	}
	for s, want := range map[string][2]string{"alice": {"alice", ""}, "alice:staff": {"alice", "staff"}, ":staff": {"", "staff"}, "alice:": {"alice", ""}} {
		o, g, err := parseOwner(s)
		if err != nil || o != want[0] || g != want[1] {
			t.Errorf("parseOwner(%q) = %q %q %v", s, o, g, err)
		}
	}
	for _, s := range []string{":", "", "a b", "a:b:c"} {
		if _, _, err := parseOwner(s); err == nil {
			t.Errorf("parseOwner(%q) succeeded", s)
		}
	}
}

func TestRelativize(t *testing.T) {
	for _, tt := range []struct {
		cwd, p string
		dir    bool
		want   string
	}{
		{"/user/alice", "/user/alice", true, "."},
		{"/user/alice", "/user/alice/x", false, "x"},
		{"/user/alice", "/user/alice/x/y", true, "x/y"},
		{"/user/alice", "/user/bob/x", false, "../bob/x"},
		{"/user/alice", "/user", true, ".."},
		{"/user/alice", "/", true, "../.."},
		{"/user/alice", "/tmp", true, "../../tmp"},
		{"/", "/x", false, "x"},
		{"/user/al", "/user/alice", true, "../alice"},
	} {
		if got := relativize(tt.cwd, tt.p, tt.dir); got != tt.want {
			t.Errorf("relativize(%q, %q) = %q, want %q", tt.cwd, tt.p, got, tt.want)
		}
	}
}

func TestExpandBraces(t *testing.T) {
	got, err := fs.ExpandBraces("/a/{b,c{d,e}}/f{1,2}")
	want := []string{"/a/b/f1", "/a/b/f2", "/a/cd/f1", "/a/cd/f2", "/a/ce/f1", "/a/ce/f2"}
	if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("expandBraces = %v, %v", got, err)
	}
	if _, err := fs.ExpandBraces("/a/{b,c"); err == nil {
		t.Error("unclosed brace accepted")
	}
	if got, _ := fs.ExpandBraces(`/a/\{b,c\}`); len(got) != 1 {
		t.Errorf("escaped braces expanded: %v", got)
	}
}

func TestDefaultFSAbsolutePaths(t *testing.T) {
	// With no fs.defaultFS at all, absolute paths are local too.
	e := setup(t)
	e.env.Conf = conf.New()
	e.write("x/f", "data")
	out := e.ok("-ls", e.dir+"/x")
	if !strings.HasSuffix(strings.TrimSpace(out), " "+e.dir+"/x/f") {
		t.Errorf("ls: %q", out)
	}
}

func TestErrorMessages(t *testing.T) {
	remote := fmt.Errorf("mkdirs /x: org.apache.hadoop.security.AccessControlException: "+
		"Permission denied: user=bob, access=WRITE, inode=\"/x\":alice:supergroup:drwxr-xr-x\n\tat ...: %w", os.ErrPermission)
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&os.PathError{Op: "open", Path: "/x", Err: os.ErrNotExist}, "`x': No such file or directory"},
		{&os.PathError{Op: "open", Path: "/x", Err: os.ErrPermission}, "`x': Permission denied"},
		{remote, `Permission denied: user=bob, access=WRITE, inode="/x":alice:supergroup:drwxr-xr-x`},
		{fmt.Errorf("delete: %w", fs.ErrNotEmpty), "`x': Directory is not empty"},
		{fmt.Errorf("mkdirs: %w", os.ErrExist), "`x': File exists"},
		{fmt.Errorf("create: %w", fs.ErrIsDir), "`x': Is a directory"},
		{fmt.Errorf("create: %w", fs.ErrNotDir), "`x': Is not a directory"},
		{fmt.Errorf("Call to nn:8020 failed\nmore"), "Call to nn:8020 failed"},
	} {
		if got := pathMessage("x", tt.err); got != tt.want {
			t.Errorf("pathMessage(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
	if got := bareMessage(remote); !strings.HasPrefix(got, "Permission denied: user=bob") {
		t.Errorf("bareMessage = %q", got)
	}
	if got := bareMessage(&os.PathError{Op: "chmod", Path: "/x", Err: os.ErrPermission}); got != "Permission denied" {
		t.Errorf("bareMessage = %q", got)
	}
}
