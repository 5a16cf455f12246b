package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

// TestMultiHostMapReduce: a NameNode, a JobTracker and three nodes (a
// DataNode and a TaskTracker each), every one in a network namespace of
// its own with the machine's host name and the TaskTrackers' shuffle
// servers on the same wildcard address and port (0.0.0.0:50060), run
// TeraGen, TeraSort, TeraValidate and a TestDFSIO write and read through
// the real binary. Each TaskTracker must advertise its own namespace's
// address, so the JobTracker sees three distinct trackers, none of them
// "restarting", and reduces fetch map outputs across hosts.
func TestMultiHostMapReduce(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces (ip netns)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs the ip command (iproute2) for network namespaces")
	}
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 3, MapReduce: true, TaskTrackers: 3, Hosts: true,
		Conf: map[string]string{"dfs.blocksize": "1m"}})

	// Every TaskTracker's name carries its own host's address.
	want := map[string]bool{}
	for i := 0; i < 3; i++ {
		host := c.HostAddr(testcluster.TaskTrackerHost(i, 3))
		want["tracker_"+host+":50060"] = true
		if log := c.TaskTrackerProcess(i).Log(); !strings.Contains(log, "tracker_"+host+":50060") {
			t.Errorf("tasktracker %d does not name itself by its host %s:\n%s", i, host, log)
		}
	}
	joined := regexp.MustCompile(`tasktracker joined.*tracker=(\S+)`)
	c.WaitFor("three distinct trackers at the jobtracker", 10*time.Second, func() bool {
		return len(trackersJoined(c, joined)) >= 3
	})

	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
		defer cancel()
		cmd := c.Command(args...)
		cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("strata %s did not finish in 45 s (a cluster that did not form?)\nstdout:\n%s\nstderr:\n%s",
				strings.Join(args, " "), out.String(), errb.String())
		}
		if err != nil {
			t.Fatalf("strata %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out.String(), errb.String())
		}
		return out.String() + errb.String()
	}
	run("-D", "mapreduce.job.maps=3", "examples", "teragen", "100000", "/tera/in")
	run("-D", "mapreduce.job.reduces=3", "examples", "terasort", "/tera/in", "/tera/out")
	run("examples", "teravalidate", "/tera/out", "/tera/report")
	if out, _, code := c.Run(c.Superuser(), "dfs", "-cat", "/tera/report/part-r-00000"); code != 0 || strings.Contains(out, "error") || !strings.Contains(out, "checksum") {
		t.Errorf("teravalidate report (exit %d):\n%s", code, out)
	}
	run("testdfsio", "-write", "-nrFiles", "3", "-fileSize", "1MB", "-resFile", t.TempDir()+"/w.log")
	run("testdfsio", "-read", "-nrFiles", "3", "-fileSize", "1MB", "-resFile", t.TempDir()+"/r.log")

	got := trackersJoined(c, joined)
	for _, name := range got {
		if !want[name] {
			t.Errorf("jobtracker saw tracker %s; want only %v", name, want)
		}
	}
	if len(got) != 3 {
		t.Errorf("jobtracker saw trackers %v, want three", got)
	}
	if log := c.JobTrackerProcess().Log(); strings.Contains(log, "tasktracker restarted") || strings.Contains(log, "tasktracker lost") {
		t.Errorf("jobtracker took a tracker for restarted or lost:\n%s", log)
	}
}

// trackersJoined lists the distinct tracker names the JobTracker logged
// as joined.
func trackersJoined(c *testcluster.Processes, re *regexp.Regexp) []string {
	seen := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(c.JobTrackerProcess().Log(), -1) {
		seen[strings.Trim(m[1], `"`)] = true
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
