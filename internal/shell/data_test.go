package shell

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/term"
)

func TestDataCommandsLocal(t *testing.T) {
	e := setup(t)
	e.write("f", "hello world\n")
	e.write("d/x", "x")
	e.write("d/sub/y", "y")

	// setrep: the local file system keeps one copy and says yes.
	equalLines(t, "setrep", e.ok("-setrep", "-R", "2", "f", "d"),
		"Replication 2 set: f", "Replication 2 set: d/sub/y", "Replication 2 set: d/x")
	equalLines(t, "setrep -w", e.ok("-setrep", "-w", "2", "f"),
		"Replication 2 set: f", "Waiting for f ... done")
	_, errOut, code := e.run("-setrep", "two", "f")
	if code != exitUsage || !strings.HasPrefix(errOut, "setrep: Illegal replication, a positive integer expected\n-setrep: For input string: \"two\"\nUsage: ") {
		t.Errorf("setrep two: %d %q", code, errOut)
	}
	_, errOut, code = e.run("-setrep", "0", "f")
	if code != exitUsage || !strings.HasPrefix(errOut, "-setrep: replication must be >= 1\n") {
		t.Errorf("setrep 0: %d %q", code, errOut)
	}
	e.fails(1, []string{"setrep: `nope': No such file or directory"}, "-setrep", "1", "nope")

	// checksum: no checksums on file://.
	equalLines(t, "checksum", e.ok("-checksum", "f", e.dir+"/d/x"), "f\tNONE", e.dir+"/d/x\tNONE")
	equalLines(t, "checksum -v", e.ok("-checksum", "-v", "f"), "f\tNONE\tBlockSize=33554432")
	e.fails(1, []string{"checksum: `d': Is a directory", "checksum: `nope': No such file or directory"},
		"-checksum", "d", "nope")

	// appendToFile, as Hadoop's RawLocalFileSystem: append in place.
	e.write("a", "A\n")
	e.write("b", "B\n")
	e.ok("-appendToFile", "a", "b", "new")
	e.ok("-appendToFile", "a", "new")
	if out, errOut, code := e.runIn("stdin\n", "-appendToFile", "-", "new"); code != 0 || out != "" || errOut != "" {
		t.Fatalf("appendToFile -: %d %q %q", code, out, errOut)
	}
	equalLines(t, "appended", string(e.readLocal("new")), "A", "B", "A", "stdin")
	e.ok("-appendToFile", "a", "made/for/it")
	equalLines(t, "appended to a new path", string(e.readLocal("made/for/it")), "A")
	e.fails(1, []string{"appendToFile: missing destination argument"}, "-appendToFile", "a")
	e.fails(1, []string{"appendToFile: `d': Is a directory"}, "-appendToFile", "d", "new")

	// truncate: done at once.
	equalLines(t, "truncate", e.ok("-truncate", "5", "f"), "Truncated f to length: 5")
	equalLines(t, "truncate -w", e.ok("-truncate", "-w", "2", "f"), "Truncated f to length: 2")
	if got := string(e.readLocal("f")); got != "he" {
		t.Errorf("truncated file: %q", got)
	}
	_, errOut, code = e.run("-truncate", "10", "f")
	if code != exitUsage || !strings.HasPrefix(errOut, "-truncate: Cannot truncate to a larger file size. Current size: 2, truncate size: 10.\n") {
		t.Errorf("truncate to a larger size: %d %q", code, errOut)
	}
	_, errOut, code = e.run("-truncate", "x", "f")
	if code != exitUsage || !strings.HasPrefix(errOut, "truncate: Illegal length, a non-negative integer expected\n-truncate: For input string: \"x\"\n") {
		t.Errorf("truncate x: %d %q", code, errOut)
	}
	_, errOut, code = e.run("-truncate", "--", "-1", "f")
	if code != exitUsage || !strings.HasPrefix(errOut, "-truncate: length must be >= 0\n") {
		t.Errorf("truncate -1: %d %q", code, errOut)
	}
	e.fails(1, []string{"truncate: `d': Is a directory"}, "-truncate", "0", "d")

	// text: gzip by magic number, zlib by extension, the rest as is.
	var gz, zl bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("gzipped\n"))
	zw.Close()
	lw := zlib.NewWriter(&zl)
	lw.Write([]byte("deflated\n"))
	lw.Close()
	e.writeBytes("t.gz", gz.Bytes())
	e.writeBytes("noext", gz.Bytes())
	e.writeBytes("t.deflate", zl.Bytes())
	bz, _ := hex.DecodeString("425a6839314159265359e7925518000000c1800010162040102000221a6350860393a20f177245385090e7925518") // "bzipped\n"
	e.writeBytes("t.bz2", bz)
	e.write("plain", "plain\n")
	e.write("one", "1")
	e.write("empty", "")
	equalLines(t, "text", e.ok("-text", "t.gz", "noext", "t.deflate", "t.bz2", "plain", "empty", "one"),
		"gzipped", "gzipped", "deflated", "bzipped", "plain", "1")
	e.write("bad.gz", "\x1f\x8bnot really gzip")
	_, errOut, code = e.run("-text", "bad.gz")
	if code != 1 || !strings.HasPrefix(errOut, "text: ") {
		t.Errorf("text of a corrupt gzip file: %d %q", code, errOut)
	}
	e.fails(1, []string{"text: `d': Is a directory"}, "-text", "d")

	// tail: the last KiB.
	e.write("long", strings.Repeat("0123456789", 200))
	if out := e.ok("-tail", "long"); out != strings.Repeat("0123456789", 200)[976:] {
		t.Errorf("tail: %q", out)
	}

	// Help and usage know the new commands.
	help := e.ok("-help", "setrep", "truncate", "appendToFile", "checksum", "text")
	for _, s := range []string{"-setrep [-R] [-w] <rep> <path> ... :\n", "-truncate [-w] <length> <path> ... :\n",
		"-appendToFile <localsrc> ... <dst> :\n", "-checksum [-v] <src> ... :\n", "-text [-ignoreCrc] <src> ... :\n"} {
		if !strings.Contains(help, s) {
			t.Errorf("help lacks %q", s)
		}
	}
	usage := e.ok("-usage")
	for _, s := range []string{"\t[-setrep [-R] [-w] <rep> <path> ...]\n", "\t[-truncate [-w] <length> <path> ...]\n",
		"\t[-appendToFile <localsrc> ... <dst>]\n", "\t[-checksum [-v] <src> ...]\n", "\t[-text [-ignoreCrc] <src> ...]\n"} {
		if !strings.Contains(usage, s) {
			t.Errorf("usage lacks %q", s)
		}
	}
	if !strings.Contains(e.ok("-help", "df"), "strata: ") {
		t.Error("df help does not mark strata's storage type lines")
	}
}

func TestPutFailureLeavesNothing(t *testing.T) {
	e := setup(t)
	e.write("src", "data")
	e.write("file", "I am a file")
	_, errOut, code := e.run("-put", "src", "file/x")
	if code != 1 || !strings.HasPrefix(errOut, "put: ") {
		t.Errorf("put under a file: %d %q", code, errOut)
	}
	var out, errb bytes.Buffer
	sh := &Shell{Env: e.env, Stdin: &failingReader{data: []byte("partial")}, Stdout: &out, Stderr: &errb}
	if code := sh.Run(context.Background(), []string{"-put", "-", "dst"}); code != 1 || errb.String() != "put: disk on fire\n" {
		t.Errorf("put of a failing stream: %d %q", code, errb.String())
	}
	ents, _ := os.ReadDir(e.dir)
	var names []string
	for _, d := range ents {
		names = append(names, d.Name())
	}
	equalLines(t, "files after failed puts", strings.Join(names, "\n"), "file", "src")
}

func TestProgress(t *testing.T) {
	if got := progressLine("big", 512<<20, 1<<30, 2*time.Second); got != "big: 512.0 MiB / 1.0 GiB (50%) 256.0 MiB/s" {
		t.Errorf("progress line: %q", got)
	}
	if got := progressLine("-", 1000, -1, time.Second); got != "-: 1000 B 1000 B/s" {
		t.Errorf("progress line without total: %q", got)
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB",
		1<<20 - 1: "1.0 MiB", 5 << 30: "5.0 GiB"} {
		if got := iecSize(n); got != want {
			t.Errorf("iecSize(%d) = %q, want %q", n, got, want)
		}
	}

	// Drawn only after progressAfter, then erased.
	defer func(a, e time.Duration) { progressAfter, progressEvery = a, e }(progressAfter, progressEvery)
	progressAfter, progressEvery = 20*time.Millisecond, 5*time.Millisecond
	var errb bytes.Buffer
	c := &cmdCtx{sh: &Shell{Stderr: &errb}, progress: true}
	p := c.startProgress("name", 10)
	r := p.reader(strings.NewReader("0123456789"))
	io.ReadAll(r)
	time.Sleep(100 * time.Millisecond)
	p.finish()
	s := errb.String()
	if !strings.HasPrefix(s, "\rname: 10 B / 10 B (100%) ") || !strings.HasSuffix(s, "\r") ||
		strings.TrimRight(s[strings.LastIndexByte(s[:len(s)-1], '\r'):], "\r ") != "" {
		t.Errorf("progress output %q", s)
	}
	// Quick copies draw nothing; no progress without a terminal.
	errb.Reset()
	progressAfter = time.Hour
	p = c.startProgress("name", 10)
	p.finish()
	if errb.Len() != 0 {
		t.Errorf("quick copy drew %q", errb.String())
	}
	var none *progress
	none.finish()
	if term.IsTerminal(&errb) || term.IsTerminal((*os.File)(nil)) {
		t.Error("a buffer is no terminal")
	}
	e := setup(t)
	f, err := os.Create(filepath.Join(e.dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if term.IsTerminal(f) {
		t.Error("a regular file is no terminal")
	}
}
func TestTailFollow(t *testing.T) {
	e := setup(t)
	e.write("log", "first\n")
	defer func(d time.Duration) { tailDelay = d }(tailDelay)
	tailDelay = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	sh := &Shell{Env: e.env, Stdout: pw, Stderr: io.Discard}
	done := make(chan int, 1)
	go func() {
		done <- sh.Run(ctx, []string{"-tail", "-f", "log"})
		pw.Close()
	}()
	br := bufio.NewReader(pr)
	readLine := func() string {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if l := readLine(); l != "first\n" {
		t.Fatalf("tail -f: %q", l)
	}
	f, err := os.OpenFile(filepath.Join(e.dir, "log"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("second\n")
	f.Close()
	if l := readLine(); l != "second\n" {
		t.Fatalf("tail -f after append: %q", l)
	}
	cancel()
	go io.Copy(io.Discard, pr)
	if code := <-done; code != exitInterrupted {
		t.Errorf("tail -f exit %d after cancel", code)
	}
}

func TestRemoteErrorMessages(t *testing.T) {
	noMethod := &os.PathError{Op: "truncate", Path: "/x", Err: &hdfs.RemoteError{
		Class:   "org.apache.hadoop.ipc.RpcNoSuchMethodException",
		Message: "Unknown method truncate called on org.apache.hadoop.hdfs.protocol.ClientProtocol protocol.\n\tat ...",
	}}
	if got := pathMessage("x", noMethod); got != "Unknown method truncate called on org.apache.hadoop.hdfs.protocol.ClientProtocol protocol." {
		t.Errorf("pathMessage = %q", got)
	}
	if got := message(noMethod); !strings.HasPrefix(got, "Unknown method truncate") {
		t.Errorf("message = %q", got)
	}
	busy := &os.PathError{Op: "append", Path: "/x", Err: &hdfs.RemoteError{
		Class:   "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException",
		Message: "Failed to APPEND_FILE /x for DFSClient_1 on h because this file lease is currently owned by DFSClient_2 on h",
	}}
	if got := pathMessage("x", busy); !strings.HasPrefix(got, "Failed to APPEND_FILE /x") {
		t.Errorf("pathMessage = %q", got)
	}
}
