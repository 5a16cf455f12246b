package shell

import (
	"bytes"
	"compress/gzip"
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/testcluster"
)

// hdfsSetup starts a NameNode with three DataNodes and returns an
// environment whose default file system is that cluster (block size 1 MiB,
// replication 3), with a local temporary working directory for the local
// side of copies.
func hdfsSetup(t *testing.T) (*tenv, *testcluster.Cluster) {
	e := setup(t)
	c := testcluster.New(t, testcluster.Config{DataNodes: 3})
	cf := conf.New()
	cf.Set(fs.KeyDefaultFS, c.URI())
	cf.Set("dfs.blocksize", "1048576")
	cf.Set("dfs.replication", "3")
	e.env = fs.Env{Conf: cf, User: c.Superuser()}
	return e, c
}

func randomBytes(n int, seed int64) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

func (e *tenv) writeBytes(rel string, data []byte) {
	e.t.Helper()
	p := filepath.Join(e.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *tenv) readLocal(rel string) []byte {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// lsField returns the ls line of one path, split into fields.
func (e *tenv) lsFields(p string) []string {
	e.t.Helper()
	ls := lines(e.ok("-ls", "-d", p))
	if len(ls) != 1 {
		e.t.Fatalf("ls -d %s: %q", p, ls)
	}
	return strings.Fields(ls[0])
}

var checksumLine = regexp.MustCompile(`^(\S+)\t(MD5-of-\d+MD5-of-\d+CRC32C?)\t([0-9a-f]+)$`)

func TestHDFSCopies(t *testing.T) {
	e, _ := hdfsSetup(t)
	big := randomBytes(3<<20+12345, 1) // four 1 MiB blocks, the last partial
	e.writeBytes("big", big)
	e.ok("-mkdir", "-p", "/data")

	// put/get round trip of a multi-block file.
	e.ok("-put", "big", "/data/big")
	f := e.lsFields("/data/big")
	if f[1] != "3" || f[4] != "3158073" {
		t.Errorf("ls of the put file: %q", f)
	}
	e.ok("-get", "/data/big", "back")
	if !bytes.Equal(e.readLocal("back"), big) {
		t.Fatal("get returned different bytes")
	}
	if out := e.ok("-cat", "/data/big"); out != string(big) {
		t.Fatal("cat returned different bytes")
	}
	if out := e.ok("-ls", "/data"); strings.Contains(out, "_COPYING_") {
		t.Errorf("temporary file left:\n%s", out)
	}

	// put into an existing directory puts inside it; an existing file is
	// refused without -f and replaced with it.
	e.write("small", "small\n")
	e.ok("-put", "small", "/data")
	equalLines(t, "cat put into dir", e.ok("-cat", "/data/small"), "small")
	e.fails(1, []string{"put: `/data/big': File exists"}, "-put", "small", "/data/big")
	e.ok("-put", "-f", "small", "/data/big")
	equalLines(t, "cat after put -f", e.ok("-cat", "/data/big"), "small")
	e.ok("-copyFromLocal", "-f", "big", "/data/big")
	if out := e.ok("-cat", "/data/big"); out != string(big) {
		t.Error("copyFromLocal -f did not replace the file")
	}

	// put of a local directory copies the tree.
	e.write("tree/a", "A\n")
	e.write("tree/sub/b", "B\n")
	e.write("tree/sub/deeper/c", "C\n")
	e.ok("-put", "tree", "/data/")
	equalLines(t, "cat tree", e.ok("-cat", "/data/tree/a", "/data/tree/sub/b", "/data/tree/sub/deeper/c"), "A", "B", "C")
	var names []string
	for _, l := range lines(e.ok("-ls", "-R", "/data/tree")) {
		fs := strings.Fields(l)
		names = append(names, fs[len(fs)-1])
	}
	equalLines(t, "ls -R tree", strings.Join(names, "\n"),
		"/data/tree/a", "/data/tree/sub", "/data/tree/sub/b", "/data/tree/sub/deeper", "/data/tree/sub/deeper/c")

	// -get of a tree, -cp within HDFS (-p keeps the times), -moveFromLocal.
	e.ok("-get", "/data/tree", "tree2")
	if string(e.readLocal("tree2/sub/deeper/c")) != "C\n" {
		t.Error("get of a tree")
	}
	e.ok("-cp", "-p", "/data/big", "/data/big2")
	if e.lsFields("/data/big")[5] != e.lsFields("/data/big2")[5] {
		t.Error("cp -p did not keep the modification time")
	}
	e.fails(1, []string{"cp: `/data/big2': File exists"}, "-cp", "/data/big", "/data/big2")
	e.ok("-cp", "-f", "/data/small", "/data/big2")
	equalLines(t, "cat after cp -f", e.ok("-cat", "/data/big2"), "small")
	e.ok("-moveFromLocal", "tree2", "/data/moved")
	if e.exists("tree2") {
		t.Error("moveFromLocal left the source")
	}
	equalLines(t, "cat moved", e.ok("-cat", "/data/moved/sub/b"), "B")

	// A failed put leaves neither the target nor its ._COPYING_ file:
	// a target under a file...
	_, errOut, code := e.run("-put", "small", "/data/small/x")
	if code != 1 || !strings.HasPrefix(errOut, "put: ") {
		t.Errorf("put under a file: exit %d, stderr %q", code, errOut)
	}
	// ... and a source that fails in the middle of the copy.
	var out, errb bytes.Buffer
	sh := &Shell{Env: e.env, Stdin: &failingReader{data: big[:2<<20]}, Stdout: &out, Stderr: &errb}
	if code := sh.Run(context.Background(), []string{"-put", "-", "/data/partial"}); code != 1 ||
		errb.String() != "put: disk on fire\n" {
		t.Errorf("put of a failing stream: exit %d, stderr %q", code, errb.String())
	}
	for _, p := range []string{"/data/partial", "/data/partial._COPYING_", "/data/small/x._COPYING_"} {
		if _, _, code := e.run("-test", "-e", p); code != 1 {
			t.Errorf("%s exists after a failed put", p)
		}
	}
	if out := e.ok("-ls", "-R", "/data"); strings.Contains(out, "_COPYING_") {
		t.Errorf("temporary file left:\n%s", out)
	}
}

// failingReader returns data, then an error.
type failingReader struct {
	data []byte
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, errDiskOnFire
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

var errDiskOnFire = errorString("disk on fire")

type errorString string

func (e errorString) Error() string { return string(e) }

func TestHDFSData(t *testing.T) {
	e, c := hdfsSetup(t)
	e.ok("-mkdir", "-p", "/d")

	// appendToFile creates the file, then appends; "-" reads stdin.
	e.write("a", "one\n")
	e.write("b", "two\n")
	e.write("c", "three\n")
	e.ok("-appendToFile", "a", "/d/app")
	e.ok("-appendToFile", "b", "c", "/d/app")
	if out, errOut, code := e.runIn("four\n", "-appendToFile", "-", "/d/app"); code != 0 || out != "" || errOut != "" {
		t.Fatalf("appendToFile -: %d %q %q", code, out, errOut)
	}
	equalLines(t, "cat appended", e.ok("-cat", "/d/app"), "one", "two", "three", "four")
	e.fails(1, []string{"appendToFile: stdin (-) must be the sole input argument when present"},
		"-appendToFile", "-", "a", "/d/app")
	e.fails(1, []string{"appendToFile: `nope': No such file or directory"}, "-appendToFile", "nope", "/d/app")
	e.fails(1, []string{"appendToFile: `/d': Is a directory"}, "-appendToFile", "a", "/d")

	// A file of several blocks.
	big := randomBytes(2<<20+100, 2)
	e.writeBytes("big", big)
	e.ok("-put", "big", "/d/big")
	e.ok("-put", "big", "/d/big-copy")

	// setrep -w waits until the replicas are gone; -ls shows it.
	out := e.ok("-setrep", "-w", "2", "/d/big")
	out = regexp.MustCompile(`( \.\.\.)\.* done`).ReplaceAllString(out, "$1 done")
	out = strings.Replace(out, "\nWARNING: the waiting time may be long for DECREASING the number of replications.\n", "", 1)
	equalLines(t, "setrep -w", out, "Replication 2 set: /d/big", "Waiting for /d/big ... done")
	if f := e.lsFields("/d/big"); f[1] != "2" {
		t.Errorf("replication after setrep: %q", f)
	}
	for _, b := range c.BlockReplicas("/d/big") {
		if len(b) != 2 {
			t.Errorf("replicas after setrep -w: %v", c.BlockReplicas("/d/big"))
			break
		}
	}
	// A directory: every file under it.
	equalLines(t, "setrep dir", e.ok("-setrep", "3", "/d"),
		"Replication 3 set: /d/app", "Replication 3 set: /d/big", "Replication 3 set: /d/big-copy")
	e.fails(1, []string{"setrep: `/nope': No such file or directory"}, "-setrep", "2", "/nope")
	e.fails(exitUsage, nil, "-setrep", "0", "/d/big")

	// checksum: "<path>\t<algorithm>\t<hex>"; equal content, equal sum.
	sums := map[string]string{}
	for _, p := range []string{"/d/big", "/d/big-copy", "/d/app"} {
		line := strings.TrimSuffix(e.ok("-checksum", p), "\n")
		m := checksumLine.FindStringSubmatch(line)
		// Hadoop prints the serialized MD5MD5CRC32FileChecksum:
		// bytesPerCRC, crcPerBlock, then the MD5.
		if m == nil || m[1] != p || len(m[3]) != 56 || !strings.HasPrefix(m[3], "00000200") {
			t.Fatalf("checksum line %q", line)
		}
		sums[p] = m[2] + " " + m[3]
	}
	if !strings.HasPrefix(sums["/d/app"], "MD5-of-0MD5-of-512CRC32C 000002000000000000000000") {
		t.Errorf("single-block checksum: %q", sums["/d/app"])
	}
	if sums["/d/big"] != sums["/d/big-copy"] {
		t.Errorf("equal files, different checksums: %q %q", sums["/d/big"], sums["/d/big-copy"])
	}
	if sums["/d/big"] == sums["/d/app"] {
		t.Errorf("different files, equal checksums: %q", sums["/d/big"])
	}
	if !strings.HasPrefix(sums["/d/big"], "MD5-of-2048MD5-of-512CRC32C 000002000000000000000800") {
		t.Errorf("multi-block checksum algorithm: %q", sums["/d/big"])
	}
	if v := e.ok("-checksum", "-v", "/d/big"); v != "/d/big\t"+strings.Replace(sums["/d/big"], " ", "\t", 1)+"\tBlockSize=1048576\n" {
		t.Errorf("checksum -v: %q", v)
	}
	e.fails(1, []string{"checksum: `/d': Is a directory"}, "-checksum", "/d")

	// tail: the last KiB.
	if out := e.ok("-tail", "/d/big"); out != string(big[len(big)-1024:]) {
		t.Errorf("tail: %d bytes", len(out))
	}

	// text decompresses gzip.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("hello, compressed world\n"))
	zw.Close()
	e.writeBytes("t.gz", gz.Bytes())
	e.ok("-put", "t.gz", "/d/t.gz")
	equalLines(t, "text gz", e.ok("-text", "/d/t.gz", "/d/app"), "hello, compressed world", "one", "two", "three", "four")

	// truncate at a block boundary is done at once.
	out, errOut, code := e.run("-truncate", "1048576", "/d/big")
	switch {
	case code == 0:
		equalLines(t, "truncate", out, "Truncated /d/big to length: 1048576")
		if f := e.lsFields("/d/big"); f[4] != "1048576" {
			t.Errorf("length after truncate: %q", f)
		}
		if got := e.ok("-cat", "/d/big"); got != string(big[:1<<20]) {
			t.Error("content after truncate")
		}
	default:
		// A NameNode without truncate: Hadoop's "truncate: <message>".
		t.Logf("truncate at a block boundary: exit %d, %q", code, errOut)
		if code != 1 || !strings.HasPrefix(errOut, "truncate: ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("truncate failure: exit %d, stderr %q", code, errOut)
		}
	}
	// In the middle of a block the NameNode may finish in the background,
	// or not support it.
	out, errOut, code = e.run("-truncate", "-w", "1000", "/d/big-copy")
	switch {
	case code == 0:
		equalLines(t, "truncate -w", strings.Replace(out, "Waiting for /d/big-copy ...\n", "", 1),
			"Truncated /d/big-copy to length: 1000")
		if got := e.ok("-cat", "/d/big-copy"); got != string(big[:1000]) {
			t.Error("content after truncate -w")
		}
	default:
		t.Logf("truncate in a block: exit %d, %q", code, errOut)
		if code != 1 || !strings.HasPrefix(errOut, "truncate: ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("truncate failure: exit %d, stderr %q", code, errOut)
		}
	}
	// Without -w, a truncation the NameNode finishes in the background is
	// announced as such.
	out, errOut, code = e.run("-truncate", "3", "/d/app")
	switch {
	case code != 0:
		t.Logf("truncate in a block: exit %d, %q", code, errOut)
		if code != 1 || !strings.HasPrefix(errOut, "truncate: ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("truncate failure: exit %d, stderr %q", code, errOut)
		}
	case out == "Truncated /d/app to length: 3\n":
	default:
		equalLines(t, "truncate in a block", out,
			"Truncating /d/app to length: 3. Wait for block recovery to complete before further updating this file.")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Client(c.Superuser()).WaitTruncated(ctx, "/d/app"); err != nil {
			t.Fatal(err)
		}
		equalLines(t, "cat after truncate", e.ok("-cat", "/d/app"), "one")
	}
	e.fails(exitUsage, nil, "-truncate", "99999999", "/d/app")

	// df: the total line, then one line per storage type.
	t.Run("df", func(t *testing.T) {
		if _, err := c.Client(c.Superuser()).StorageStatus(context.Background()); err != nil {
			t.Skipf("the NameNode reports no storage types: %v", err)
		}
		ls := lines(e.ok("-df"))
		if len(ls) != 4 || !strings.HasPrefix(ls[1], c.URI()+"  ") ||
			!strings.HasPrefix(ls[2], "  [DISK]  ") || !strings.HasPrefix(ls[3], "  [SSD]   ") {
			t.Fatalf("df:\n%s", strings.Join(ls, "\n"))
		}
		for _, l := range ls[1:] {
			if len(l) != len(ls[0]) {
				t.Errorf("df columns not aligned:\n%s", strings.Join(ls, "\n"))
				break
			}
		}
	})
}
