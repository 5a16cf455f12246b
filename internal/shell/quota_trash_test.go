package shell

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stratafs/strata/fs"
)

func TestFind(t *testing.T) {
	e := setup(t)
	e.write("d/a.txt", "1")
	e.write("d/B.TXT", "2")
	e.write("d/sub/c.txt", "3")
	e.write("d/sub/d.log", "4")
	equalLines(t, "find -name", e.ok("-find", "d", "-name", "*.txt", "-print"), "d/a.txt", "d/sub/c.txt")
	equalLines(t, "find -iname", e.ok("-find", "d", "-iname", "*.txt"), "d/B.TXT", "d/a.txt", "d/sub/c.txt")
	equalLines(t, "find braces", e.ok("-find", "d", "-name", "{d.log,sub}"), "d/sub", "d/sub/d.log")
	equalLines(t, "find all", e.ok("-find", "d/sub"), "d/sub", "d/sub/c.txt", "d/sub/d.log")
	if out := e.ok("-find", "d/sub", "-name", "c*", "-print0"); out != "d/sub/c.txt\x00" {
		t.Errorf("find -print0: %q", out)
	}
	e.fails(exitUsage, nil, "-find", "d", "-bogus")
	e.fails(exitFailed, []string{"find: `nope': No such file or directory"}, "-find", "nope")
}

func TestGetmergeAndMoveToLocal(t *testing.T) {
	e := setup(t)
	e.write("in/b", "bee")
	e.write("in/a", "ay")
	e.write("in/empty", "")
	e.write("in/sub/z", "not merged")
	e.write("c", "see")
	e.ok("-getmerge", "in", "c", "out")
	if got := string(e.readLocal("out")); got != "aybeesee" {
		t.Errorf("getmerge: %q", got)
	}
	e.ok("-getmerge", "-nl", "in", "out")
	if got := string(e.readLocal("out")); got != "ay\nbee\n\n" {
		t.Errorf("getmerge -nl: %q", got)
	}
	e.ok("-getmerge", "-nl", "-skip-empty-file", "in", "out")
	if got := string(e.readLocal("out")); got != "ay\nbee\n" {
		t.Errorf("getmerge -nl -skip-empty-file: %q", got)
	}
	e.fails(exitFailed, []string{"getmerge: `in': Is a directory"}, "-getmerge", "c", "in")

	e.ok("-moveToLocal", "c", "moved")
	if e.exists("c") || string(e.readLocal("moved")) != "see" {
		t.Errorf("moveToLocal left the source or lost the data")
	}
}

func TestCountQuotaColumns(t *testing.T) {
	e := setup(t)
	e.write("d/f", "12345")
	out := e.ok("-count", "-q", "-v", "d")
	want := "       QUOTA       REM_QUOTA     SPACE_QUOTA REM_SPACE_QUOTA    DIR_COUNT   FILE_COUNT       CONTENT_SIZE PATHNAME\n" +
		"        none             inf            none             inf            1            1                  5 d\n"
	if out != want {
		t.Errorf("count -q -v:\n%q\nwant\n%q", out, want)
	}
	out = e.ok("-count", "-u", "-v", "d")
	if !strings.HasPrefix(out, "       QUOTA       REM_QUOTA     SPACE_QUOTA REM_SPACE_QUOTA PATHNAME\n") || !strings.HasSuffix(out, " inf d\n") {
		t.Errorf("count -u -v:\n%s", out)
	}
	out = e.ok("-count", "-q", "-t", "-v", "d")
	if lines(out)[0] != "RAM_DISK_QUOTA REM_RAM_DISK_QUOTA  NVDIMM_QUOTA  REM_NVDIMM_QUOTA     SSD_QUOTA     REM_SSD_QUOTA    DISK_QUOTA    REM_DISK_QUOTA ARCHIVE_QUOTA REM_ARCHIVE_QUOTA PATHNAME" {
		t.Errorf("count -t header:\n%q", lines(out)[0])
	}
	out = e.ok("-count", "-q", "-t", "ssd", "d")
	if out != "         none               inf d\n" {
		t.Errorf("count -t ssd: %q", out)
	}
	e.fails(exitUsage, nil, "-count", "-q", "-t", "FLOPPY", "d")
}

func TestRmTrashOnLocal(t *testing.T) {
	e := setup(t)
	// The local file system's home is the working directory.
	e.env.Conf.Set("fs.trash.interval", "60")
	e.write("f", "data")
	out := e.ok("-rm", "f")
	trashed := e.dir + "/.Trash/Current" + e.dir + "/f"
	if want := "Moved: 'file:" + e.dir + "/f' to trash at: file:" + trashed + "\n"; out != want {
		t.Fatalf("rm with trash: %q, want %q", out, want)
	}
	if b, err := os.ReadFile(trashed); err != nil || string(b) != "data" {
		t.Fatalf("trashed file: %q %v", b, err)
	}
	out = e.ok("-expunge")
	if !regexp.MustCompile(`^Created trash checkpoint: \S+/.Trash/\d{12}\n$`).MatchString(out) {
		t.Fatalf("expunge: %q", out)
	}
	e.write("g", "x")
	if out := e.ok("-rm", "-skipTrash", "g"); out != "Deleted g\n" {
		t.Fatalf("rm -skipTrash: %q", out)
	}
}

// A path under one trashed before as a file (/a/b after the file /a):
// the file in the way gets a timestamp, as Hadoop's moveToTrash on
// FileAlreadyExistsException, and both stay in the trash.
func TestRmTrashUnderATrashedFile(t *testing.T) {
	e := setup(t)
	e.env.Conf.Set("fs.trash.interval", "60")
	e.write("a", "file a")
	e.ok("-rm", "a")
	e.ok("-mkdir", "a")
	e.write("a/b", "file b")
	out := e.ok("-rm", "a/b")
	cur := e.dir + "/.Trash/Current" + e.dir
	m := regexp.MustCompile(`^Moved: 'file:` + regexp.QuoteMeta(e.dir) + `/a/b' to trash at: file:` + regexp.QuoteMeta(cur) + `/a(\d+)/b\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("rm a/b: %q", out)
	}
	if b, err := os.ReadFile(cur + "/a" + m[1] + "/b"); err != nil || string(b) != "file b" {
		t.Fatalf("trashed a/b: %q %v", b, err)
	}
	if b, err := os.ReadFile(cur + "/a"); err != nil || string(b) != "file a" {
		t.Fatalf("trashed a: %q %v", b, err)
	}
}

// -expunge -immediate checkpoints Current and then deletes every
// checkpoint: nothing is left in the trash (Hadoop's expungeImmediately).
func TestExpungeImmediate(t *testing.T) {
	e := setup(t)
	e.env.Conf.Set("fs.trash.interval", "60")
	e.write("f", "data")
	e.ok("-rm", "f")
	e.ok("-expunge") // an older checkpoint
	e.write("g", "data")
	e.ok("-rm", "g") // and something in Current
	out := e.ok("-expunge", "-immediate")
	if !regexp.MustCompile(`^Created trash checkpoint: \S+/.Trash/\d{12}(-\d+)?\n(Deleted trash checkpoint: \S+/.Trash/\d{12}(-\d+)?\n){2}$`).MatchString(out) {
		t.Fatalf("expunge -immediate: %q", out)
	}
	left, err := os.ReadDir(e.dir + "/.Trash")
	if err != nil || len(left) != 0 {
		t.Fatalf("trash after expunge -immediate: %v %v", left, err)
	}
}

// racingFS makes a directory at dst just before the first rename to dst,
// as another client trashing a directory of that name at that moment.
type racingFS struct {
	fs.FileSystem
	dst   string
	fired bool
}

func (r *racingFS) race() {
	if !r.fired {
		r.fired = true
		os.MkdirAll(r.dst, 0o755)
	}
}

func (r *racingFS) Rename(ctx context.Context, src, dst string) error {
	if dst == r.dst {
		r.race()
	}
	return r.FileSystem.Rename(ctx, src, dst)
}

func (r *racingFS) Rename2(ctx context.Context, src, dst string, overwrite bool) error {
	if dst == r.dst {
		r.race()
	}
	return r.FileSystem.(fs.ExactRenamer).Rename2(ctx, src, dst, overwrite)
}

// The move to the trash renames to exactly its destination (Hadoop's
// Rename.TO_TRASH): a directory that appears there first is not entered;
// the item takes a timestamped name beside it.
func TestRmTrashDoesNotEnterADirectoryThatAppears(t *testing.T) {
	e := setup(t)
	e.env.Conf.Set("fs.trash.interval", "60")
	e.write("f", "data")
	local, err := fs.Get(context.Background(), "file:///", e.env.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	dst := e.dir + "/.Trash/Current" + e.dir + "/f"
	rfs := &racingFS{FileSystem: local, dst: dst}
	var out bytes.Buffer
	c := &cmdCtx{ctx: context.Background(), sh: &Shell{Env: e.env, Stderr: io.Discard}, out: bufio.NewWriter(&out)}
	st, err := local.Stat(c.ctx, e.dir+"/f")
	if err != nil {
		t.Fatal(err)
	}
	moved, err := c.moveToTrash(&item{fsys: rfs, path: e.dir + "/f", disp: "f", st: &st})
	c.out.Flush()
	if err != nil || !moved {
		t.Fatalf("moveToTrash: %v, %v", moved, err)
	}
	if _, err := os.Stat(dst + "/f"); err == nil {
		t.Fatal("the trashed file went into the directory that appeared at its destination")
	}
	m := regexp.MustCompile(`to trash at: file:` + regexp.QuoteMeta(dst) + `(\d+)\n$`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("moveToTrash said %q", out.String())
	}
	if b, err := os.ReadFile(dst + m[1]); err != nil || string(b) != "data" {
		t.Fatalf("trashed file: %q %v", b, err)
	}
}
