package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

// TestLocalCluster runs `strata local` as a user would: it prints where the
// cluster is and how to use it, serves the shell, writes a usable config
// dir, and stops cleanly on Ctrl-C.
func TestLocalCluster(t *testing.T) {
	strataBin := testcluster.Binary(t)
	dir := t.TempDir()
	cmd := exec.Command(strataBin, "local", "-data", filepath.Join(dir, "data"),
		"-D", "dfs.namenode.rpc-address=127.0.0.1:0", "-D", "dfs.namenode.http-address=127.0.0.1:0",
		"-D", "mapreduce.jobtracker.address=127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errb := &syncBuffer{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	var out []string
	rpc := ""
	re := regexp.MustCompile(`NameNode RPC\s+hdfs://(\S+)`)
	for sc.Scan() {
		out = append(out, sc.Text())
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			rpc = m[1]
		}
		if strings.Contains(sc.Text(), "STRATA_CONF_DIR") {
			break
		}
	}
	if rpc == "" {
		t.Fatalf("no RPC address in output:\n%s\nstderr:\n%s", strings.Join(out, "\n"), errb.String())
	}
	// The printed config dir works in place of -fs.
	run := exec.Command(strataBin, "dfs", "-mkdir", "-p", "/from/conf/dir")
	run.Env = append(os.Environ(), "STRATA_CONF_DIR="+filepath.Join(dir, "data", "conf"), "HADOOP_CONF_DIR=")
	if b, err := run.CombinedOutput(); err != nil {
		t.Fatalf("dfs with STRATA_CONF_DIR: %v\n%s", err, b)
	}
	b, err := exec.Command(strataBin, "-fs", "hdfs://"+rpc, "dfs", "-ls", "/from/conf").CombinedOutput()
	if err != nil || !strings.Contains(string(b), "/from/conf/dir") {
		t.Fatalf("ls: %v\n%s", err, b)
	}
	// With the config dir, jobs run on the embedded JobTracker and
	// TaskTrackers, reading HDFS data-locally.
	local := filepath.Join(dir, "words.txt")
	os.WriteFile(local, []byte(strings.Repeat("ssd disk ssd\n", 1000)), 0o644)
	for _, args := range [][]string{{"dfs", "-put", local, "/words.txt"}, {"examples", "wordcount", "/words.txt", "/wc"}} {
		run := exec.Command(strataBin, args...)
		run.Env = append(os.Environ(), "STRATA_CONF_DIR="+filepath.Join(dir, "data", "conf"), "HADOOP_CONF_DIR=")
		b, err := run.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, b)
		}
		if args[0] == "examples" && (!strings.Contains(string(b), "Data-local map tasks=1") || !strings.Contains(string(b), "job_1") ||
			!strings.Contains(string(b), "HDFS: Number of bytes read=13000") || !strings.Contains(string(b), "HDFS: Number of bytes written=19")) {
			t.Errorf("wordcount did not run data-local on the trackers:\n%s", b)
		}
	}
	b, err = exec.Command(strataBin, "-fs", "hdfs://"+rpc, "dfs", "-cat", "/wc/part-r-00000").CombinedOutput()
	if err != nil || string(b) != "disk\t1000\nssd\t2000\n" {
		t.Fatalf("wordcount output: %v %q", err, b)
	}
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("strata local exited with %v; stderr:\n%s", err, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("strata local did not stop on Ctrl-C")
	}
	// A second run finds the same namespace.
	cmd2 := exec.Command(strataBin, "local", "-data", filepath.Join(dir, "data"),
		"-D", "dfs.namenode.rpc-address="+rpc, "-D", "dfs.namenode.http-address=127.0.0.1:0",
		"-D", "mapreduce.jobtracker.address=127.0.0.1:0")
	stdout2, _ := cmd2.StdoutPipe()
	cmd2.Stderr = &syncBuffer{}
	if err := cmd2.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd2.Process.Signal(os.Interrupt); cmd2.Wait() }()
	sc2 := bufio.NewScanner(stdout2)
	for sc2.Scan() && !strings.Contains(sc2.Text(), "STRATA_CONF_DIR") {
	}
	b, err = exec.Command(strataBin, "-fs", "hdfs://"+rpc, "dfs", "-test", "-d", "/from/conf/dir").CombinedOutput()
	if err != nil {
		t.Fatalf("directory gone after restart of strata local: %v %s", err, b)
	}
}

func TestAdminCommands(t *testing.T) {
	nn := newNameNode(t)
	// Re-formatting needs -force; -nonInteractive refuses.
	nn.StopNameNode()
	b, err := exec.Command(nn.Binary(), nn.NameNodeArgs("namenode", "-format", "-nonInteractive")...).CombinedOutput()
	if err == nil || !strings.Contains(string(b), "already formatted") {
		t.Errorf("re-format without -force: %v %s", err, b)
	}
	nn.StartNameNode()
	out, _, code := nn.Run("root", "dfsadmin", "-safemode", "enter")
	if code != 0 || strings.TrimSpace(out) != "Safe mode is ON" {
		t.Errorf("safemode enter: %d %q", code, out)
	}
	_, errs, code := nn.Run("root", "dfs", "-mkdir", "/x")
	if code == 0 || !strings.Contains(errs, "safe mode") {
		t.Errorf("mkdir in safe mode: %d %q", code, errs)
	}
	_, errs, code = nn.Run("bob", "dfsadmin", "-safemode", "leave")
	if code == 0 || !strings.Contains(errs, "Superuser privilege is required") {
		t.Errorf("non-superuser leaves safe mode: %d %q", code, errs)
	}
	out, _, _ = nn.Run("root", "dfsadmin", "-safemode", "leave")
	if strings.TrimSpace(out) != "Safe mode is OFF" {
		t.Errorf("safemode leave: %q", out)
	}
	out, _, code = nn.Run("root", "getconf", "-confKey", "dfs.replication")
	if code != 0 || strings.TrimSpace(out) != "3" {
		t.Errorf("getconf dfs.replication: %d %q", code, out)
	}
	out, errs, code = nn.Run("root", "-D", "dfs.replciation=2", "getconf", "-confKey", "dfs.replication")
	if !strings.Contains(errs, `did you mean "dfs.replication"`) || strings.TrimSpace(out) != "3" {
		t.Errorf("misspelled key: %d %q %q", code, out, errs)
	}
	_, errs, code = nn.Run("root", "storagepolicies", "-setStoragePolicy", "-path", "/", "-policy", "FASTEST")
	if code == 0 || !strings.Contains(errs, "Cannot find a block policy with the name FASTEST") {
		t.Errorf("unknown policy: %d %q", code, errs)
	}
	_, errs, code = nn.Run("root", "nosuchcommand")
	if code != 2 || !strings.Contains(errs, "unknown command") {
		t.Errorf("unknown command: %d %q", code, errs)
	}
	nn.StopNameNode()
}
