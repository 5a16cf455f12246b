package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

// quotaCluster is a NameNode and one DataNode (an SSD and a DISK volume)
// whose clients write 1 MiB blocks at replication 1.
func quotaCluster(t *testing.T, conf map[string]string) (*testcluster.Processes, func(user string, args ...string) (string, string, int)) {
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1, Conf: conf})
	c.WaitDataNodes(1)
	run := func(user string, args ...string) (string, string, int) {
		t.Helper()
		if len(args) > 0 && args[0] == "dfs" {
			args = append([]string{"-D", "dfs.blocksize=1048576", "-D", "dfs.replication=1"}, args...)
		}
		return c.Run(user, args...)
	}
	return c, run
}

func mustRun(t *testing.T, run func(string, ...string) (string, string, int), user string, args ...string) string {
	t.Helper()
	out, errb, code := run(user, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s%s", args, code, out, errb)
	}
	return out
}

func localFile(t *testing.T, n int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), fmt.Sprintf("data%d", n))
	b := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestQuotasThroughTheBinary: each kind of quota refuses the write that
// would exceed it with Hadoop's exception text, and leaves the namespace
// and its usage as they were, the same after kill -9 and after a clean
// restart.
func TestQuotasThroughTheBinary(t *testing.T) {
	c, run := quotaCluster(t, nil)
	su := c.Superuser()
	const mib = 1 << 20
	mustRun(t, run, su, "dfs", "-mkdir", "-p", "/q", "/s", "/t", "/free/big/x")
	mustRun(t, run, su, "dfs", "-chmod", "777", "/q", "/s", "/t")

	// Only the superuser sets quotas.
	if _, errb, code := run("bob", "dfsadmin", "-setQuota", "3", "/q"); code == 0 ||
		!strings.Contains(errb, "setQuota: Access denied for user bob. Superuser privilege is required") {
		t.Fatalf("setQuota by bob: exit %d, %s", code, errb)
	}
	mustRun(t, run, su, "dfsadmin", "-setQuota", "3", "/q")
	mustRun(t, run, su, "dfsadmin", "-setSpaceQuota", "1m", "/s")
	mustRun(t, run, su, "storagepolicies", "-setStoragePolicy", "-path", "/t", "-policy", "ALL_SSD")
	mustRun(t, run, su, "dfsadmin", "-setSpaceQuota", "1m", "-storageType", "SSD", "/t")
	if _, errb, code := run(su, "dfsadmin", "-setQuota", "0", "/q"); code != 255 || !strings.Contains(errb, "Invalid values for quota : 0") {
		t.Fatalf("setQuota 0: exit %d, %s", code, errb)
	}

	// Namespace quota: /q counts itself, so two children fit and a third
	// does not.
	mustRun(t, run, "bob", "dfs", "-mkdir", "/q/a", "/q/b")
	_, errb, code := run("bob", "dfs", "-mkdir", "/q/c")
	if code != 1 || !strings.Contains(errb, "mkdir: The NameSpace quota (directories and files) of directory /q is exceeded: quota=3 file count=4") {
		t.Fatalf("mkdir over the namespace quota: exit %d, %q", code, errb)
	}
	// A rename into /q is checked at the destination (Hadoop's
	// verifyQuotaForRename); the source stays where it was.
	_, errb, code = run(su, "dfs", "-mv", "/free/big", "/q/a/big")
	if code != 1 || !strings.Contains(errb, "The NameSpace quota (directories and files) of directory /q is exceeded: quota=3 file count=5") {
		t.Fatalf("mv over the namespace quota: exit %d, %q", code, errb)
	}

	// Space quota: the second block of a 1.5 MiB file is refused before
	// it is written; the half-written copy is removed.
	big := localFile(t, mib+mib/2)
	_, errb, code = run("bob", "dfs", "-put", big, "/s/big")
	if code != 1 || !strings.Contains(errb, "The DiskSpace quota of /s is exceeded: quota = 1048576 B = 1 MB but diskspace consumed = 2097152 B = 2 MB") {
		t.Fatalf("put over the space quota: exit %d, %q", code, errb)
	}
	small := localFile(t, 300000)
	mustRun(t, run, "bob", "dfs", "-put", small, "/s/small")

	// Storage type quota: ALL_SSD puts the block on SSD.
	_, errb, code = run("bob", "dfs", "-put", big, "/t/big")
	if code != 1 || !strings.Contains(errb, "Quota by storage type : SSD on path : /t is exceeded. quota = 1 MB but space consumed = 2 MB") {
		t.Fatalf("put over the SSD quota: exit %d, %q", code, errb)
	}
	mustRun(t, run, "bob", "dfs", "-put", small, "/t/small")

	count := func() string {
		t.Helper()
		return mustRun(t, run, su, "dfs", "-count", "-q", "-v", "/q", "/s", "/t") +
			mustRun(t, run, su, "dfs", "-count", "-q", "-t", "SSD,DISK", "-v", "/t") +
			mustRun(t, run, su, "dfs", "-count", "-u", "-h", "/s")
	}
	want := fmt.Sprintf(`       QUOTA       REM_QUOTA     SPACE_QUOTA REM_SPACE_QUOTA    DIR_COUNT   FILE_COUNT       CONTENT_SIZE PATHNAME
           3               0            none             inf            3            0                  0 /q
        none             inf         1048576          748576            1            1             300000 /s
        none             inf            none             inf            1            1             300000 /t
    SSD_QUOTA     REM_SSD_QUOTA    DISK_QUOTA    REM_DISK_QUOTA PATHNAME
%s
        none             inf             1 M         731.0 K /s
`, fmt.Sprintf("%13s %17s %13s %17s /t", "1048576", "748576", "none", "inf"))
	got := count()
	if got != want {
		t.Fatalf("count:\n%s\nwant:\n%s", got, want)
	}
	// Nothing was left behind by the refused writes.
	if ls := mustRun(t, run, su, "dfs", "-ls", "-R", "/s", "/t", "/free"); strings.Contains(ls, "big/") == false || strings.Contains(ls, "COPYING") || strings.Contains(ls, "/s/big") {
		t.Fatalf("namespace after refused writes:\n%s", ls)
	}

	// The quotas are in the log and the image; the usage is recounted.
	c.KillNameNode()
	c.StartNameNode()
	c.WaitSafeModeOff()
	if got := count(); got != want {
		t.Fatalf("count after kill -9:\n%s\nwant:\n%s", got, want)
	}
	c.RestartNameNode()
	c.WaitSafeModeOff()
	if got := count(); got != want {
		t.Fatalf("count after a clean restart:\n%s\nwant:\n%s", got, want)
	}
	// And enforced as before.
	if _, errb, code := run("bob", "dfs", "-mkdir", "/q/c"); code != 1 || !strings.Contains(errb, "quota=3 file count=4") {
		t.Fatalf("mkdir after restart: exit %d, %q", code, errb)
	}

	// Clearing.
	mustRun(t, run, su, "dfsadmin", "-clrQuota", "/q")
	mustRun(t, run, su, "dfsadmin", "-clrSpaceQuota", "/s")
	mustRun(t, run, su, "dfsadmin", "-clrSpaceQuota", "-storageType", "SSD", "/t")
	mustRun(t, run, "bob", "dfs", "-mkdir", "/q/c")
	mustRun(t, run, "bob", "dfs", "-put", big, "/s/big")
	out := mustRun(t, run, su, "dfs", "-count", "-q", "/q", "/s")
	if !regexp.MustCompile(`^\s+none\s+inf\s+none\s+inf\s+4\s+0\s+0 /q\n\s+none\s+inf\s+none\s+inf\s+1\s+2\s+1872864 /s\n$`).MatchString(out) {
		t.Fatalf("count after clearing:\n%s", out)
	}
	if _, errb, code := run(su, "dfsadmin", "-setQuota", "5", "/nope"); code != 255 || !strings.Contains(errb, "setQuota: Directory does not exist: /nope") {
		t.Fatalf("setQuota of a missing directory: exit %d, %q", code, errb)
	}
}

// TestTrashThroughTheBinary: with fs.trash.interval set on the NameNode
// alone, `dfs -rm` moves to the trash (the client reads the interval from
// the server defaults), -skipTrash deletes, -expunge checkpoints and
// deletes checkpoints.
func TestTrashThroughTheBinary(t *testing.T) {
	c, run := quotaCluster(t, map[string]string{"fs.trash.interval": "60"})
	su := c.Superuser()
	mustRun(t, run, su, "dfs", "-mkdir", "-p", "/user/bob/dir")
	mustRun(t, run, su, "dfs", "-chown", "-R", "bob", "/user/bob")
	f := localFile(t, 1000)
	mustRun(t, run, "bob", "dfs", "-put", f, "/user/bob/f")
	mustRun(t, run, "bob", "dfs", "-put", f, "/user/bob/dir/g")

	out := mustRun(t, run, "bob", "dfs", "-rm", "f")
	uri := c.URI()
	if want := fmt.Sprintf("Moved: '%s/user/bob/f' to trash at: %s/user/bob/.Trash/Current/user/bob/f\n", uri, uri); out != want {
		t.Fatalf("rm: %q, want %q", out, want)
	}
	// A second file of the same name gets a suffix.
	mustRun(t, run, "bob", "dfs", "-put", f, "/user/bob/f")
	out = mustRun(t, run, "bob", "dfs", "-rm", "/user/bob/f")
	if !regexp.MustCompile(`to trash at: hdfs://\S+/user/bob/.Trash/Current/user/bob/f\d{13}\n$`).MatchString(out) {
		t.Fatalf("second rm: %q", out)
	}
	if _, errb, code := run("bob", "dfs", "-rm", "/user/bob/dir"); code != 1 || !strings.Contains(errb, "Is a directory") {
		t.Fatalf("rm of a directory without -r: %d %q", code, errb)
	}
	mustRun(t, run, "bob", "dfs", "-rm", "-r", "/user/bob/dir")
	ls := mustRun(t, run, "bob", "dfs", "-ls", "-R", "/user/bob/.Trash/Current/user/bob")
	for _, p := range []string{"/Current/user/bob/f", "/Current/user/bob/dir/g"} {
		if !strings.Contains(ls, p) {
			t.Fatalf("trash misses %s:\n%s", p, ls)
		}
	}
	// Deleting inside the trash, and -skipTrash, delete for good.
	if out := mustRun(t, run, "bob", "dfs", "-rm", "/user/bob/.Trash/Current/user/bob/f"); out != "Deleted /user/bob/.Trash/Current/user/bob/f\n" {
		t.Fatalf("rm in the trash: %q", out)
	}
	mustRun(t, run, "bob", "dfs", "-put", f, "/user/bob/h")
	if out := mustRun(t, run, "bob", "dfs", "-rm", "-skipTrash", "/user/bob/h"); out != "Deleted /user/bob/h\n" {
		t.Fatalf("rm -skipTrash: %q", out)
	}

	// A path under one trashed as a file: the file in the trash keeps its
	// name, the new item's parent there gets a timestamp (as Hadoop).
	mustRun(t, run, "bob", "dfs", "-put", f, "/user/bob/k")
	mustRun(t, run, "bob", "dfs", "-rm", "/user/bob/k")
	mustRun(t, run, "bob", "dfs", "-mkdir", "/user/bob/k")
	mustRun(t, run, "bob", "dfs", "-put", f, "/user/bob/k/l")
	out = mustRun(t, run, "bob", "dfs", "-rm", "/user/bob/k/l")
	if !regexp.MustCompile(`to trash at: hdfs://\S+/user/bob/.Trash/Current/user/bob/k\d{13}/l\n$`).MatchString(out) {
		t.Fatalf("rm under a trashed file: %q", out)
	}

	// -expunge checkpoints Current; -expunge -immediate checkpoints
	// Current and deletes every checkpoint.
	out = mustRun(t, run, "bob", "dfs", "-expunge")
	m := regexp.MustCompile(`^Created trash checkpoint: (/user/bob/.Trash/\d{12})\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("expunge: %q", out)
	}
	ls = mustRun(t, run, "bob", "dfs", "-ls", "-R", "/user/bob/.Trash")
	if strings.Contains(ls, "Current") || !strings.Contains(ls, m[1]+"/user/bob/dir/g") {
		t.Fatalf("trash after expunge:\n%s", ls)
	}
	mustRun(t, run, "bob", "dfs", "-put", f, "/user/bob/late")
	mustRun(t, run, "bob", "dfs", "-rm", "/user/bob/late")
	out = mustRun(t, run, "bob", "dfs", "-expunge", "-immediate")
	m2 := regexp.MustCompile(`^Created trash checkpoint: (/user/bob/.Trash/\d{12}(-\d+)?)\n`).FindStringSubmatch(out)
	if m2 == nil || out != m2[0]+"Deleted trash checkpoint: "+m[1]+"\nDeleted trash checkpoint: "+m2[1]+"\n" {
		t.Fatalf("expunge -immediate: %q", out)
	}
	if ls := mustRun(t, run, "bob", "dfs", "-ls", "-R", "/user/bob/.Trash"); ls != "" {
		t.Fatalf("trash after expunge -immediate:\n%s", ls)
	}
	// Without the server's interval, -rm deletes at once.
	c2, run2 := quotaCluster(t, nil)
	mustRun(t, run2, c2.Superuser(), "dfs", "-put", f, "/x")
	if out := mustRun(t, run2, c2.Superuser(), "dfs", "-rm", "/x"); out != "Deleted /x\n" {
		t.Fatalf("rm without trash: %q", out)
	}
}

// TestConcatThroughTheBinary: concat by the Go client joins the blocks,
// deletes the sources, and survives kill -9; its preconditions are
// Hadoop's.
func TestConcatThroughTheBinary(t *testing.T) {
	c, run := quotaCluster(t, nil)
	su := c.Superuser()
	a, b := localFile(t, 1<<20+5000), localFile(t, 7000)
	mustRun(t, run, su, "dfs", "-mkdir", "/c", "/other")
	mustRun(t, run, su, "dfs", "-put", a, "/c/a")
	mustRun(t, run, su, "dfs", "-put", b, "/c/b")
	mustRun(t, run, su, "dfs", "-put", b, "/other/b")
	cl := c.Client(su)
	defer cl.Close()
	ctx := ctxT(t)
	if err := cl.Concat(ctx, "/c/a", []string{"/other/b"}); err == nil || !strings.Contains(err.Error(), "Source file /other/b is not in the same directory with the target /c/a") {
		t.Fatalf("concat across directories: %v", err)
	}
	if err := cl.Concat(ctx, "/c/a", []string{"/c/a"}); err == nil || !strings.Contains(err.Error(), "concat: the src file /c/a is the same with the target file /c/a") {
		t.Fatalf("concat of the target: %v", err)
	}
	if err := cl.Concat(ctx, "/c/a", []string{"/c/b"}); err != nil {
		t.Fatal(err)
	}
	want := append(must(os.ReadFile(a)), must(os.ReadFile(b))...)
	check := func() {
		t.Helper()
		if _, err := cl.Stat(ctx, "/c/b"); !os.IsNotExist(err) && !isNotExist(err) {
			t.Fatalf("source still there: %v", err)
		}
		r, err := cl.Open(ctx, "/c/a")
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("concatenated file: %d bytes, %v (want %d)", len(got), err, len(want))
		}
	}
	check()
	c.KillNameNode()
	c.StartNameNode()
	c.WaitSafeModeOff()
	check()
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func isNotExist(err error) bool { return err != nil && strings.Contains(err.Error(), "does not exist") }

// TestTrashEmptierInTheNameNode: the NameNode process checkpoints every
// user's Current each fs.trash.checkpoint.interval and deletes
// checkpoints older than fs.trash.interval (seconds here, so that the
// test is short; Hadoop's unit is minutes, which strata's keys default to).
func TestTrashEmptierInTheNameNode(t *testing.T) {
	c, run := quotaCluster(t, map[string]string{"fs.trash.interval": "4s", "fs.trash.checkpoint.interval": "2s"})
	su := c.Superuser()
	mustRun(t, run, su, "dfs", "-mkdir", "-p", "/user/bob")
	mustRun(t, run, su, "dfs", "-chown", "bob", "/user/bob")
	mustRun(t, run, "bob", "dfs", "-put", localFile(t, 100), "/user/bob/f")
	if out := mustRun(t, run, "bob", "dfs", "-rm", "/user/bob/f"); !strings.HasPrefix(out, "Moved: ") {
		t.Fatalf("rm: %q", out)
	}
	cl := c.Client(su)
	defer cl.Close()
	ctx := ctxT(t)
	checkpoint := ""
	deadline := time.Now().Add(20 * time.Second)
	for checkpoint == "" && time.Now().Before(deadline) {
		sts, _ := cl.List(ctx, "/user/bob/.Trash")
		for _, st := range sts {
			if regexp.MustCompile(`^\d{12}$`).MatchString(st.Name()) {
				checkpoint = "/user/bob/.Trash/" + st.Name()
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if checkpoint == "" {
		t.Fatal("the emptier made no checkpoint")
	}
	t.Logf("checkpoint %s after %v", checkpoint, 20*time.Second-time.Until(deadline))
	if _, err := cl.Stat(ctx, checkpoint+"/user/bob/f"); err != nil {
		t.Fatalf("checkpoint misses the file: %v", err)
	}
	for time.Now().Before(deadline) {
		_, err := cl.Stat(ctx, checkpoint)
		if errors.Is(err, os.ErrNotExist) {
			t.Logf("deleted after %v: %v", 20*time.Second-time.Until(deadline), err)
			return // expired and deleted
		}
		if err != nil {
			t.Fatalf("stat of the checkpoint: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("checkpoint %s not deleted after fs.trash.interval", checkpoint)
}
