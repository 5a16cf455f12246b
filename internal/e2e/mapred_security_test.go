package e2e

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/jobtoken"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/testcluster"
)

var (
	ttShuffleRE  = regexp.MustCompile(`shuffle=(http://\S+)`)
	ttMapDoneRE  = regexp.MustCompile(`attempt succeeded" attempt=(attempt_\S+_m_\d+_\d+)`)
	jobOfAttempt = regexp.MustCompile(`^attempt(_\d+_\d+)_`)
)

// startJob runs a job client as user in the background and returns its
// output, a channel with its end and the job's id once it is running.
func startJob(t *testing.T, m *testcluster.Processes, user string, args ...string) (*syncBuffer, chan error, string) {
	t.Helper()
	out := &syncBuffer{}
	cmd := m.Command(args...)
	cmd.Env = append(os.Environ(), "HADOOP_USER_NAME="+user)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := jobIDRE.FindStringSubmatch(out.String()); m != nil {
			return out, done, m[1]
		}
		select {
		case err := <-done:
			t.Fatalf("job client ended (%v) before its job ran:\n%s", err, out.String())
		default:
		}
	}
	t.Fatalf("no job id:\n%s", out.String())
	return nil, nil, ""
}

func waitJob(t *testing.T, out *syncBuffer, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(90 * time.Second):
		t.Fatalf("job did not end:\n%s", out.String())
	}
	return nil
}

// TestShuffleNeedsJobToken: while a job runs, a hostile client asks the
// TaskTracker holding one of its map outputs for it without a UrlHash,
// with a wrong one and with a hash signed by a secret it made up: each
// gets 401 with Hadoop's message and none of the data, a request for a
// job that does not exist gets the very same answer (ids cannot be
// probed), the refusals are logged, and the job itself completes.
func TestShuffleNeedsJobToken(t *testing.T) {
	m := startMR(t, 1)
	dir := t.TempDir()
	in, outDir := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	want := writeLines(t, in, "secret", 500)
	out, done, _ := startJob(t, m, "alice", "streaming", "-input", "file://"+in, "-output", "file://"+outDir,
		"-mapper", "cat", "-reducer", "sleep 3; cat", "-numReduceTasks", "1")
	tt := m.TaskTrackerProcess(0)
	var base, att string
	for deadline := time.Now().Add(60 * time.Second); att == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		log := tt.Log()
		if s, a := ttShuffleRE.FindStringSubmatch(log), ttMapDoneRE.FindStringSubmatch(log); s != nil && a != nil {
			base, att = s[1], a[1]
		}
	}
	if att == "" {
		t.Fatalf("no map finished; tasktracker log:\n%s", tt.Log())
	}
	job := "job" + jobOfAttempt.FindStringSubmatch(att)[1]
	get := func(jobID, hash string) (int, string, http.Header) {
		t.Helper()
		u := base + "/mapOutput?" + url.Values{"job": {jobID}, "map": {att}, "reduce": {"0"}}.Encode()
		req, _ := http.NewRequest("GET", u, nil)
		if hash != "" {
			req.Header.Set(jobtoken.HeaderURLHash, hash)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, strings.TrimSpace(string(b)), resp.Header
	}
	forged := func(jobID string) string {
		u, _ := url.Parse(base + "/mapOutput?" + url.Values{"job": {jobID}, "map": {att}, "reduce": {"0"}}.Encode())
		return jobtoken.URLHash([]byte("a secret the attacker made up"), u)
	}
	for _, tc := range []struct {
		name, job, hash, msg string
	}{
		{"no hash", job, "", "fetcher cannot be authenticated"},
		{"garbage hash", job, "bm90IGEgaGFzaA==", "Verification of the hashed request failed"},
		{"forged hash", job, forged(job), "Verification of the hashed request failed"},
		{"unknown job", "job_1_9999", forged("job_1_9999"), "Verification of the hashed request failed"},
	} {
		code, body, h := get(tc.job, tc.hash)
		if code != http.StatusUnauthorized || body != tc.msg || h.Get("X-Strata-Map") != "" || strings.Contains(body, "secret-") {
			t.Errorf("%s: %d, %d bytes %.60q (map header %q), want 401 %q and no data", tc.name, code, len(body), body, h.Get("X-Strata-Map"), tc.msg)
		}
	}
	if code, body, _ := get("", ""); code == http.StatusOK || strings.Contains(body, job) {
		t.Errorf("a request naming no job: %d %q", code, body)
	}
	if err := waitJob(t, out, done); err != nil {
		t.Fatalf("the job failed: %v\n%s", err, out.String())
	}
	checkLines(t, outDir, want)
	if !strings.Contains(tt.Log(), "refused unauthenticated request") {
		t.Error("the refusals were not logged")
	}
}

// TestJobKillNeedsOwner: bob cannot kill alice's job (Hadoop's
// AccessControlException), alice and an administrator can; a job whose
// spec claims another user, submitted by a hostile client, is its
// submitter's.
func TestJobKillNeedsOwner(t *testing.T) {
	m := testcluster.NewProcess(t, testcluster.Config{NoHDFS: true, MapReduce: true, TaskTrackers: 1,
		Conf: map[string]string{"mapreduce.cluster.administrators": "carol"}})
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	writeLines(t, in, "x", 10)
	run := func(user string, args ...string) (string, int) {
		stdout, stderr, code := m.Run(user, args...)
		return stdout + stderr, code
	}
	status := func(id string) string {
		s, _ := run("alice", "job", "-status", id)
		return s
	}
	for i, killer := range []string{"alice", "carol"} {
		out, done, id := startJob(t, m, "alice", "streaming", "-input", "file://"+in, "-output", "file://"+filepath.Join(dir, "out"+strconv.Itoa(i)),
			"-mapper", "sleep 60", "-reducer", "NONE")
		s, code := run("bob", "job", "-kill", id)
		if want := "User bob cannot perform operation KILL_JOB on " + id; code == 0 || !strings.Contains(s, want) || !strings.Contains(s, "AccessControlException") {
			t.Fatalf("bob kills alice's job: exit %d, %q; want %q", code, s, want)
		}
		if st := status(id); !strings.Contains(st, "State: RUNNING") || !strings.Contains(st, "User: alice") {
			t.Fatalf("after bob's kill:\n%s", st)
		}
		if s, code := run(killer, "job", "-kill", id); code != 0 {
			t.Fatalf("%s kills alice's job: exit %d, %s", killer, code, s)
		}
		waitJob(t, out, done)
		if st := status(id); !strings.Contains(st, "State: KILLED") || !strings.Contains(st, "killed by "+killer) {
			t.Fatalf("after %s's kill:\n%s", killer, st)
		}
	}
	if !strings.Contains(m.JobTrackerProcess().Log(), "access denied") {
		t.Error("the refused kill was not logged")
	}

	// A hostile client claims root in the spec; the job is mallory's.
	cl := ipc.NewClient(ipc.ClientConfig{Addr: m.JobTrackerAddr(), User: "mallory", Protocol: mrpb.SubmissionProtocol})
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	spec := &mrpb.JobSpec{Job: proto.String("streaming"), User: proto.String("root"), Name: proto.String("claims root"),
		Args:       []string{"-input", "file://" + in, "-output", "file://" + filepath.Join(dir, "mallory"), "-mapper", "sleep 60", "-reducer", "NONE"},
		OutputPath: proto.String("file://" + filepath.Join(dir, "mallory")),
		Splits:     []*mrpb.InputSplit{{Path: proto.String("file://" + filepath.Join(in, "f0")), Length: proto.Int64(10), Index: proto.Int32(0)}},
		Conf:       []*mrpb.KeyValue{{Key: proto.String("user.name"), Value: proto.String("root")}}}
	sub := &mrpb.SubmitJobResponse{}
	if err := cl.Call(ctx, "submitJob", &mrpb.SubmitJobRequest{Spec: spec}, sub); err != nil {
		t.Fatal(err)
	}
	if st := status(sub.GetJobId()); !strings.Contains(st, "User: mallory") {
		t.Fatalf("a spec claiming root, submitted by mallory:\n%s", st)
	}
	if s, code := run("bob", "job", "-kill", sub.GetJobId()); code == 0 {
		t.Fatalf("bob killed mallory's job: %s", s)
	}
	if err := cl.Call(ctx, "killJob", &mrpb.JobIDRequest{JobId: sub.JobId}, &mrpb.KillJobResponse{}); err != nil {
		t.Fatalf("mallory kills her job: %v", err)
	}
}

// TestJobTrackerTouchesNoJobPath runs the JobTracker in a mount namespace
// of its own in which the directory D is a private tmpfs, so whatever it
// creates under D is seen only through /proc/<its pid>/root. A job whose
// output is file://D/out and whose settings name D/history as the history
// dir completes: its output, committed by the cleanup task on the
// TaskTracker, is in the real D/out with _SUCCESS and no _temporary, and
// the JobTracker's view of D stays empty.
func TestJobTrackerTouchesNoJobPath(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a mount namespace")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare")
	}
	m := startMR(t, 1)
	d := t.TempDir()
	jtArgs := m.JobTrackerProcess().Args()
	m.StopJobTracker()
	script := `mount -t tmpfs strata-test "$0" && exec "$@"`
	jt := exec.Command("unshare", append([]string{"-m", "--propagation", "private", "sh", "-c", script, d, m.Binary()}, jtArgs...)...)
	jtLog := &syncBuffer{}
	jt.Stdout, jt.Stderr = jtLog, jtLog
	if err := jt.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jt.Process.Kill(); jt.Wait() })
	view := filepath.Join("/proc", strconv.Itoa(jt.Process.Pid), "root", d)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(jtLog.String(), "jobtracker: serving"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("jobtracker did not start:\n%s", jtLog.String())
		}
	}
	if err := os.WriteFile(filepath.Join(view, "marker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, "marker")); err == nil {
		t.Fatal("the jobtracker's tmpfs is not private")
	}
	os.Remove(filepath.Join(view, "marker"))

	in := filepath.Join(t.TempDir(), "in")
	want := writeLines(t, in, "p", 200)
	outDir := filepath.Join(d, "out")
	out := &syncBuffer{}
	if err := submit(m, out, "-D", "mapreduce.jobhistory.done-dir="+filepath.Join(d, "history"), "streaming",
		"-input", "file://"+in, "-output", "file://"+outDir, "-mapper", "cat", "-reducer", "cat", "-numReduceTasks", "2"); err != nil {
		t.Fatalf("job: %v\n%s\njobtracker:\n%s", err, out.String(), jtLog.String())
	}
	checkLines(t, outDir, want)
	if _, err := os.Stat(filepath.Join(outDir, "_SUCCESS")); err != nil {
		t.Errorf("no _SUCCESS in the real output: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outDir, "_temporary")); err == nil {
		t.Error("_temporary left in the real output")
	}
	var made []string
	filepath.Walk(view, func(p string, info os.FileInfo, err error) error {
		if err == nil && p != view {
			made = append(made, strings.TrimPrefix(p, view))
		}
		return nil
	})
	if len(made) > 0 {
		t.Errorf("the jobtracker created under the job's paths: %v", made)
	}
	id := jobID(t, out.String())
	own := filepath.Join(m.Dir(), "history", id+".json")
	if !strings.Contains(jtLog.String(), `job history written" job=`+id+" path="+own) {
		t.Errorf("no history of %s in the jobtracker's own dir %s:\n%s", id, own, jtLog.String())
	}
}

// TestTasksRunAsJobUser: with the Linux task controller, a TaskTracker
// running as root runs a job's attempts as the job's user: a job of
// nobody's writes what `id -u` says (nobody's uid) in files nobody owns;
// a job of an unknown user fails with a clear error, and root's is
// refused.
func TestTasksRunAsJobUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	m := testcluster.NewProcess(t, testcluster.Config{NoHDFS: true, MapReduce: true, TaskTrackers: 1,
		Conf: map[string]string{"mapreduce.tasktracker.taskcontroller": "org.apache.hadoop.mapred.LinuxTaskController"}})
	// The tasks' user must reach the program and the trackers' dirs.
	openUp(t, filepath.Dir(m.Binary()))
	openUp(t, m.Dir())
	dir := t.TempDir()
	openUp(t, dir)
	in := filepath.Join(dir, "in")
	writeLines(t, in, "u", 3)
	shared := filepath.Join(dir, "shared")
	os.Mkdir(shared, 0o777)
	os.Chmod(shared, 0o777)
	stdout, stderr, code := m.Run("nobody", "streaming", "-input", "file://"+in, "-output", "file://"+filepath.Join(shared, "out"),
		"-mapper", "id -u; cat >/dev/null", "-reducer", "NONE")
	if code != 0 {
		t.Fatalf("nobody's job: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, l := range readParts(t, filepath.Join(shared, "out")) {
		if strings.TrimSpace(l) != nobody.Uid {
			t.Fatalf("a task of nobody's job runs as uid %q, want %s", l, nobody.Uid)
		}
	}
	parts, _ := filepath.Glob(filepath.Join(shared, "out", "part-*"))
	for _, p := range append(parts, filepath.Join(shared, "out", "_SUCCESS")) {
		st, err := os.Stat(p)
		if err != nil || strconv.Itoa(int(st.Sys().(*syscall.Stat_t).Uid)) != nobody.Uid {
			t.Errorf("%s: %v, not owned by nobody", p, err)
		}
	}
	for _, tc := range []struct{ user, want string }{
		{"no-such-user-xyz", `cannot run the task as user "no-such-user-xyz"`},
		{"root", "below the minimum allowed 1000"},
	} {
		stdout, stderr, code := m.Run(tc.user, "-D", "mapreduce.map.maxattempts=1", "streaming", "-input", "file://"+in,
			"-output", "file://"+filepath.Join(shared, tc.user), "-mapper", "cat", "-reducer", "NONE")
		if code == 0 || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("%s's job: exit %d, want %q:\n%s%s", tc.user, code, tc.want, stdout, stderr)
		}
	}
}

// openUp makes dir and its parents up to the temporary directory
// traversable by everyone (t.TempDir makes them 0700).
func openUp(t *testing.T, dir string) {
	t.Helper()
	tmp := filepath.Clean(os.TempDir())
	for d := filepath.Clean(dir); d != tmp && d != "/" && d != "."; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, st.Mode().Perm()|0o055); err != nil {
			t.Fatal(err)
		}
	}
}
