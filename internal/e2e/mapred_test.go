package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

var jobIDRE = regexp.MustCompile(`Running job: (job_\S+)`)

// jobID is the id a job client printed.
func jobID(t *testing.T, out string) string {
	t.Helper()
	m := jobIDRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no job id in:\n%s", out)
	}
	return m[1]
}

var (
	ttReduceRE = regexp.MustCompile(`launching attempt" attempt=attempt_\S+_r_`)
	ttMapRE    = regexp.MustCompile(`launching attempt" attempt=attempt_\S+_m_`)
)

// startMR runs a JobTracker and trackers TaskTrackers as processes, with
// no HDFS: jobs read and write file:// paths.
func startMR(t *testing.T, trackers int) *testcluster.Processes {
	t.Helper()
	return testcluster.NewProcess(t, testcluster.Config{NoHDFS: true, MapReduce: true, TaskTrackers: trackers})
}

// submit runs a job client; it returns when the job ends.
func submit(m *testcluster.Processes, out *syncBuffer, args ...string) error {
	cmd := m.Command(args...)
	cmd.Stdout, cmd.Stderr = out, out
	return cmd.Run()
}

func readParts(t *testing.T, dir string) []string {
	t.Helper()
	parts, _ := filepath.Glob(filepath.Join(dir, "part-*"))
	if len(parts) == 0 {
		t.Fatalf("no output parts in %s", dir)
	}
	var lines []string
	for _, p := range parts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
	}
	return lines
}

// TestClusterWordCount runs wordcount through the JobTracker on two
// TaskTrackers and checks every count, the counters and `strata job`.
func TestClusterWordCount(t *testing.T) {
	m := startMR(t, 2)
	dir := t.TempDir()
	in, outDir := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	os.MkdirAll(in, 0o755)
	want := map[string]int{}
	for f := 0; f < 4; f++ {
		var b strings.Builder
		for i := 0; i < 5000; i++ {
			w := fmt.Sprintf("w%d", (i*13+f)%211)
			want[w]++
			fmt.Fprintf(&b, "%s %s\n", w, w)
			want[w]++
		}
		os.WriteFile(filepath.Join(in, fmt.Sprintf("f%d", f)), []byte(b.String()), 0o644)
	}
	out := &syncBuffer{}
	if err := submit(m, out, "-D", "mapreduce.job.reduces=3", "examples", "wordcount", "file://"+in, "file://"+outDir); err != nil {
		t.Fatalf("job client: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "completed successfully") || !strings.Contains(out.String(), "Launched map tasks=4") {
		t.Errorf("job client output:\n%s", out.String())
	}
	checkWordCounts(t, outDir, want)
	goodJob := jobID(t, out.String())
	var inBytes int64
	ins, _ := filepath.Glob(filepath.Join(in, "*"))
	for _, f := range ins {
		st, _ := os.Stat(f)
		inBytes += st.Size()
	}
	if want := fmt.Sprintf("FILE: Number of bytes read=%d", inBytes); !strings.Contains(out.String(), want) {
		t.Errorf("counters lack %q:\n%s", want, out.String())
	}
	if _, err := os.Stat(filepath.Join(outDir, "_SUCCESS")); err != nil {
		t.Error(err)
	}
	list, err := m.Command("job", "-list").CombinedOutput()
	if err != nil || !strings.Contains(string(list), "SUCCEEDED") {
		t.Errorf("strata job -list: %v\n%s", err, list)
	}

	// A job whose output exists is refused before it is submitted.
	out = &syncBuffer{}
	if err := submit(m, out, "examples", "wordcount", "file://"+in, "file://"+outDir); err == nil || !strings.Contains(out.String(), "exists") {
		t.Errorf("second run into the same output: %v\n%s", err, out.String())
	}

	// A mapper that always fails fails the job after its attempts, with
	// the reason; the trackers stay up for the next job.
	out = &syncBuffer{}
	err = submit(m, out, "-D", "mapreduce.map.maxattempts=2", "streaming", "-input", "file://"+in, "-output", "file://"+filepath.Join(dir, "bad"),
		"-mapper", "echo broken >&2; exit 3", "-reducer", "NONE")
	if err == nil || !strings.Contains(out.String(), "failed 2 times") {
		t.Errorf("failing mapper: %v\n%s", err, out.String())
	}
	badJob := jobID(t, out.String())
	if _, err := os.Stat(filepath.Join(dir, "bad", "_SUCCESS")); err == nil {
		t.Error("a failed job wrote _SUCCESS")
	}
	// A mapper that hangs is killed after mapreduce.task.timeout without
	// progress, with what it started.
	out = &syncBuffer{}
	err = submit(m, out, "-D", "mapreduce.map.maxattempts=1", "-D", "mapreduce.task.timeout=1500", "streaming",
		"-input", "file://"+in, "-output", "file://"+filepath.Join(dir, "hang"), "-mapper", "sleep 61.5", "-reducer", "NONE")
	if err == nil || !strings.Contains(out.String(), "failed to report status for 1 seconds") {
		t.Errorf("hanging mapper: %v\n%s", err, out.String())
	}
	// The other maps' attempts are killed as their trackers hear the job
	// has ended, at their next heartbeat (later on a loaded machine).
	var pids []string
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if pids = processesRunning("sleep\x0061.5"); len(pids) == 0 || time.Now().After(end) {
			break
		}
	}
	if len(pids) > 0 {
		t.Errorf("the hanging mapper's command survives its attempt: pids %v", pids)
	}
	out = &syncBuffer{}
	if err := submit(m, out, "examples", "wordcount", "file://"+in, "file://"+filepath.Join(dir, "again")); err != nil {
		t.Errorf("job after a failed one: %v\n%s", err, out.String())
	}

	// Job histories outlive the JobTracker.
	m.KillJobTracker()
	for _, c := range []struct{ id, want string }{
		{goodJob, "State: SUCCEEDED"}, {goodJob, "Launched map tasks=4"}, {goodJob, "r_000002   SUCCEEDED"},
		{badJob, "State: FAILED"}, {badJob, "exit"},
	} {
		b, err := m.Command("job", "-history", c.id).CombinedOutput()
		if err != nil || !strings.Contains(string(b), c.want) {
			t.Errorf("job -history %s: want %q: %v\n%s", c.id, c.want, err, b)
		}
	}
	if b, err := m.Command("job", "-history", "job_0_9999").CombinedOutput(); err == nil {
		t.Errorf("history of an unknown job: %s", b)
	}
}

// TestClusterLosesTaskTracker kill -9s a TaskTracker while maps run, and
// another while reduces run: its attempts and the map outputs it held are
// re-run elsewhere and the job's output is still complete.
func TestClusterLosesTaskTracker(t *testing.T) {
	t.Run("map phase", func(t *testing.T) { loseTracker(t, ttMapRE, "sleep 2; cat", "cat") })
	t.Run("reduce phase", func(t *testing.T) { loseTracker(t, ttReduceRE, "cat", "sleep 2; cat") })
}

func loseTracker(t *testing.T, when *regexp.Regexp, mapper, reducer string) {
	m := startMR(t, 2)
	dir := t.TempDir()
	in, outDir := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	want := writeLines(t, in, "line", 2000)
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- submit(m, out, "streaming", "-input", "file://"+in, "-output", "file://"+outDir,
			"-mapper", mapper, "-reducer", reducer, "-numReduceTasks", "4")
	}()
	// Kill whichever tracker first launches an attempt of the phase.
	deadline := time.Now().Add(60 * time.Second)
	killed := -1
	for killed < 0 && time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("job ended (%v) before a reduce started:\n%s", err, out.String())
		default:
		}
		for i := 0; i < m.NumTaskTrackers(); i++ {
			if when.MatchString(m.TaskTrackerProcess(i).Log()) {
				m.KillTaskTracker(i)
				killed = i
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if killed < 0 {
		t.Fatalf("no attempt of the phase started; client:\n%s", out.String())
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("job failed after losing a tasktracker: %v\n%s", err, out.String())
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("job did not finish after losing a tasktracker:\n%s", out.String())
	}
	if !strings.Contains(m.JobTrackerProcess().Log(), "lost tasktracker") {
		t.Errorf("the jobtracker did not notice the lost tasktracker")
	}
	checkLines(t, outDir, want)
}

// waitGone fails the test unless no process with cmdline runs within 5 s.
func waitGone(t *testing.T, cmdline, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for pids := processesRunning(cmdline); len(pids) > 0; pids = processesRunning(cmdline) {
		if time.Now().After(deadline) {
			t.Fatalf("%s still runs: pids %v", what, pids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processesRunning lists the pids whose command line contains cmdline
// (arguments separated by NUL bytes, as in /proc/<pid>/cmdline).
func processesRunning(cmdline string) []string {
	var pids []string
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), cmdline) {
			pids = append(pids, filepath.Base(filepath.Dir(f)))
		}
	}
	return pids
}

// checkWordCounts compares wordcount's output in dir with want.
func checkWordCounts(t *testing.T, dir string, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, l := range readParts(t, dir) {
		k, v, _ := strings.Cut(l, "\t")
		n, _ := strconv.Atoi(v)
		got[k] += n
	}
	if len(got) != len(want) {
		t.Fatalf("%d words, want %d", len(got), len(want))
	}
	for w, n := range want {
		if got[w] != n {
			t.Fatalf("count of %s = %d, want %d", w, got[w], n)
		}
	}
}

// TestClusterUserProgram submits a user's own Go program (built here as a
// user would): it ships itself and the TaskTrackers run it for its tasks.
func TestClusterUserProgram(t *testing.T) {
	m := startMR(t, 2)
	dir := t.TempDir()
	bin := filepath.Join(dir, "wordlength")
	if b, err := exec.Command("go", "build", "-o", bin, "github.com/stratafs/strata/examples/wordlength").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	in, outDir := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	os.MkdirAll(in, 0o755)
	os.WriteFile(filepath.Join(in, "a.txt"), []byte("a bb ccc\ndd e fff gggg\n\nhhhhhhhhhh\n"), 0o644)
	cmd := exec.Command(bin, append(m.ClientArgs(),
		"-D", "mapreduce.jobtracker.staging.root.dir="+filepath.Join(dir, "staging"), "wordlength", in, outDir)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, b)
	}
	b, err := os.ReadFile(filepath.Join(outDir, "part-r-00000"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "1\t2\n2\t2\n3\t2\n4\t1\n10\t1\n"; string(b) != want {
		t.Fatalf("output %q, want %q", b, want)
	}
	fetched := false
	for i := 0; i < m.NumTaskTrackers(); i++ {
		fetched = fetched || strings.Contains(m.TaskTrackerProcess(i).Log(), "fetched job program")
	}
	if !fetched {
		t.Error("no tasktracker fetched the program")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "staging", "*", ".staging", "*")); len(left) > 0 {
		t.Errorf("staging directories left after the job: %v", left)
	}
}

// TestClusterSpeculation: one attempt of a map (in a job with reduces and
// in a map-only job) or of a reduce hangs (the first attempt to get the
// marker directory); the JobTracker starts a second attempt of that task
// on the other tracker, which is allowed to commit and finishes the job;
// the straggler is killed with what it started, and the output holds
// every line once.
func TestClusterSpeculation(t *testing.T) {
	const hang = "if mkdir %s 2>/dev/null; then sleep 31.5; fi; cat"
	for _, tc := range []struct {
		name, mapper, reducer, reduces, logged, launched string
		parts                                            int
	}{
		{"map", hang, "cat", "1", "speculating a slow map", "Launched map tasks=5", 1},
		{"map-only", hang, "cat", "0", "speculating a slow map", "Launched map tasks=5", 4},
		{"reduce", "cat", hang, "2", "speculating a slow reduce", "Launched reduce tasks=3", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := startMR(t, 2)
			dir := t.TempDir()
			in, outDir := filepath.Join(dir, "in"), filepath.Join(dir, "out")
			want := writeLines(t, in, "spec", 100)
			marker := filepath.Join(dir, "marker")
			mapper, reducer := strings.ReplaceAll(tc.mapper, "%s", marker), strings.ReplaceAll(tc.reducer, "%s", marker)
			out := &syncBuffer{}
			err := submit(m, out, "-D", "strata.mapreduce.speculative.lag=300", "streaming", "-input", "file://"+in, "-output", "file://"+outDir,
				"-mapper", mapper, "-reducer", reducer, "-numReduceTasks", tc.reduces)
			if err != nil {
				t.Fatalf("job: %v\n%s", err, out.String())
			}
			if !strings.Contains(m.JobTrackerProcess().Log(), tc.logged) || !strings.Contains(out.String(), tc.launched) {
				t.Errorf("no speculative attempt:\n%s", out.String())
			}
			if !strings.Contains(m.JobTrackerProcess().Log(), "attempt may commit") {
				t.Errorf("no commit arbitration in the JobTracker's log")
			}
			if parts, _ := filepath.Glob(filepath.Join(outDir, "part-*")); len(parts) != tc.parts {
				t.Errorf("output parts %v, want %d", parts, tc.parts)
			}
			checkLines(t, outDir, want)
			waitGone(t, "sleep\x0031.5", "the losing attempt")
			if _, err := os.Stat(filepath.Join(outDir, "_temporary")); !os.IsNotExist(err) {
				t.Errorf("%s/_temporary is left after the job (%v)", outDir, err)
			}
		})
	}
}

// TestClusterMemoryCap: a map whose process tree outgrows
// mapreduce.map.memory.mb (its streaming command builds a 512 MB string)
// is killed by its TaskTracker with Hadoop's message, and the job fails.
func TestClusterMemoryCap(t *testing.T) {
	m := startMR(t, 1)
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	writeLines(t, in, "mem", 10)
	hog := `awk 'BEGIN{s="x"; while(length(s)<300000000) s=s s; system("sleep 29.5")}'`
	out := &syncBuffer{}
	err := submit(m, out, "-D", "mapreduce.map.memory.mb=300", "-D", "mapreduce.tasktracker.taskmemorymanager.monitoringinterval=100",
		"-D", "mapreduce.map.maxattempts=1", "streaming", "-input", "file://"+in, "-output", "file://"+filepath.Join(dir, "out"),
		"-mapper", hog, "-reducer", "cat")
	if err == nil {
		t.Fatalf("the job succeeded:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "is running beyond physical memory limits") || !strings.Contains(out.String(), "of 300 MB physical memory used") {
		t.Errorf("no memory-limit failure reported:\n%s", out.String())
	}
	waitGone(t, "sleep\x0029.5", "the killed attempt")
}

// TestClusterReduceSlowStart: with slow-start at 0.5, the reduce starts
// while a slow map still runs and fetches that map's output when it is
// done (map completion events); at 1.0 it starts after every map.
func TestClusterReduceSlowStart(t *testing.T) {
	mapDone := regexp.MustCompile(`attempt succeeded" attempt=attempt_\S+_m_`)
	for _, tc := range []struct {
		slowstart   string
		mapsBefore  int // maps done before the reduce launched, at most
		mapsAtLeast int
	}{{"0.5", 3, 2}, {"1.0", 4, 4}} {
		t.Run(tc.slowstart, func(t *testing.T) {
			m := startMR(t, 1)
			dir := t.TempDir()
			in, outDir := filepath.Join(dir, "in"), filepath.Join(dir, "out")
			want := writeLines(t, in, "slow", 50)
			marker := filepath.Join(dir, "marker")
			out := &syncBuffer{}
			err := submit(m, out, "-D", "mapreduce.job.reduce.slowstart.completedmaps="+tc.slowstart, "streaming",
				"-input", "file://"+in, "-output", "file://"+outDir, "-numReduceTasks", "1",
				"-mapper", "if mkdir "+marker+" 2>/dev/null; then sleep 3; fi; cat", "-reducer", "cat")
			if err != nil {
				t.Fatalf("job: %v\n%s", err, out.String())
			}
			checkLines(t, outDir, want)
			log := m.TaskTrackerProcess(0).Log()
			r := ttReduceRE.FindStringIndex(log)
			if r == nil {
				t.Fatalf("no reduce launched:\n%s", log)
			}
			if n := len(mapDone.FindAllStringIndex(log[:r[0]], -1)); n > tc.mapsBefore || n < tc.mapsAtLeast {
				t.Errorf("reduce launched after %d maps were done, want %d to %d", n, tc.mapsAtLeast, tc.mapsBefore)
			}
		})
	}
}

// writeLines writes four input files of n distinct lines each into dir
// and returns all the lines, sorted.
func writeLines(t *testing.T, dir, prefix string, n int) []string {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	var want []string
	for f := 0; f < 4; f++ {
		var b strings.Builder
		for i := 0; i < n; i++ {
			l := fmt.Sprintf("%s-%d-%05d", prefix, f, i)
			want = append(want, l)
			b.WriteString(l + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(want)
	return want
}

// checkLines compares a streaming identity job's output (lines without a
// tab come out with an empty value) with want, as sorted sets of lines.
func checkLines(t *testing.T, dir string, want []string) {
	t.Helper()
	var got []string
	for _, l := range readParts(t, dir) {
		got = append(got, strings.TrimSuffix(l, "\t"))
	}
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("output has %d lines, want %d", len(got), len(want))
	}
}
