package shell

import (
	"os"
	"regexp"
	"strings"
	"testing"
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
