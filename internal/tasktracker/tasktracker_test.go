package tasktracker

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/conf/conftest"
	"github.com/stratafs/strata/internal/jobtoken"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/shuffle"
	"github.com/stratafs/strata/internal/spill"
	"github.com/stratafs/strata/internal/taskrun"
)

// These tests drive a TaskTracker that is never started: heartbeat
// answers are applied directly and attempts run in a fake runner, so no
// socket is opened and no child process started.

func testConfig(t *testing.T) Config {
	cfg := DefaultConfig()
	cfg.JobTracker, cfg.HTTPAddr = "127.0.0.1:1", "127.0.0.1:0"
	cfg.LocalDirs = []string{filepath.Join(t.TempDir(), "l0"), filepath.Join(t.TempDir(), "l1")}
	cfg.Host, cfg.Executable, cfg.User = "h1", "/nonexistent/strata", "alice"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return cfg
}

// fakeRunner stands in for child processes: each attempt runs until the
// test ends it (end) or it is killed (KILLED), and reports so.
type fakeRunner struct {
	started chan string
	ends    chan *mrpb.TaskReport
}

func newTracker(t *testing.T) (*TaskTracker, *fakeRunner) {
	tt, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	tt.name = "tracker_h1:50060"
	f := &fakeRunner{started: make(chan string, 16), ends: make(chan *mrpb.TaskReport, 16)}
	tt.runAttempt = func(ctx context.Context, a *attempt, spec *mrpb.TaskSpec) *mrpb.TaskReport {
		f.started <- a.id
		for {
			select {
			case <-ctx.Done():
				return &mrpb.TaskReport{AttemptId: proto.String(a.id), State: mrpb.TaskReport_KILLED.Enum()}
			case rep := <-f.ends:
				if rep.GetAttemptId() == a.id {
					return rep
				}
				f.ends <- rep // another attempt's
				time.Sleep(time.Millisecond)
			}
		}
	}
	t.Cleanup(func() { tt.Close() })
	return tt, f
}

// testSecret is every test job's shuffle secret.
var testSecret = []byte("the job's secret")

func launch(job, att string, kind mrpb.TaskType) *mrpb.LaunchTask {
	return &mrpb.LaunchTask{AttemptId: proto.String(att), JobId: proto.String(job),
		Spec: &mrpb.TaskSpec{Job: proto.String("wordcount"), JobId: proto.String(job), Type: kind.Enum(), JobToken: testSecret}}
}

// waitReports waits until n reports are pending and returns them.
func waitReports(t *testing.T, tt *TaskTracker, n int) []*mrpb.TaskReport {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if req := tt.heartbeatRequest("http://h1:1", 7); len(req.GetReports()) >= n {
			return req.GetReports()
		}
	}
	t.Fatalf("fewer than %d reports", n)
	return nil
}

// TestSlotsAndKill: launches take slots of their kind, the heartbeat says
// what is free, a killed attempt reports KILLED and gives its slot back,
// and reports stay in every heartbeat until one is acknowledged.
func TestSlotsAndKill(t *testing.T) {
	tt, f := newTracker(t)
	const job = "job_1_0001"
	m0, m1, r0 := "attempt_1_0001_m_000000_0", "attempt_1_0001_m_000001_0", "attempt_1_0001_r_000000_0"
	tt.apply(&mrpb.HeartbeatResponse{Launch: []*mrpb.LaunchTask{launch(job, m0, mrpb.TaskType_MAP), launch(job, m1, mrpb.TaskType_MAP), launch(job, r0, mrpb.TaskType_REDUCE)}})
	for range 3 {
		<-f.started
	}
	req := tt.heartbeatRequest("http://h1:1", 7)
	if req.GetFreeMapSlots() != 0 || req.GetFreeReduceSlots() != 1 || req.GetTracker() != "tracker_h1:50060" || req.GetHost() != "h1" ||
		req.GetHttpUrl() != "http://h1:1" || req.GetStartedNs() != 7 || len(req.GetReports()) != 0 {
		t.Fatalf("heartbeat with 2 maps and a reduce running: %v", req)
	}
	tt.apply(&mrpb.HeartbeatResponse{KillAttempts: []string{m1, "attempt_1_0001_m_000009_0"}})
	reps := waitReports(t, tt, 1)
	if reps[0].GetAttemptId() != m1 || reps[0].GetState() != mrpb.TaskReport_KILLED {
		t.Fatalf("report after the kill: %v", reps[0])
	}
	if req := tt.heartbeatRequest("u", 7); req.GetFreeMapSlots() != 1 || req.GetFreeReduceSlots() != 1 {
		t.Fatalf("slots after the kill: %d maps, %d reduces", req.GetFreeMapSlots(), req.GetFreeReduceSlots())
	}
	// A failed heartbeat sends the report again; one that got through
	// acknowledges it, but not what ended meanwhile.
	sent := tt.heartbeatRequest("u", 7)
	f.ends <- &mrpb.TaskReport{AttemptId: proto.String(m0), State: mrpb.TaskReport_SUCCEEDED.Enum()}
	waitReports(t, tt, 2)
	tt.acknowledge(len(sent.GetReports()))
	left := tt.heartbeatRequest("u", 7).GetReports()
	if len(left) != 1 || left[0].GetAttemptId() != m0 {
		t.Fatalf("after acknowledging the first report: %v", left)
	}
	if len(sent.GetReports()) != 1 {
		t.Fatalf("a report added later changed a sent request: %v", sent.GetReports())
	}
}

// TestDoneJob: a job the JobTracker says is done has its attempts
// killed, its map outputs unserved and its local directories removed;
// other jobs keep theirs.
func TestDoneJob(t *testing.T) {
	tt, f := newTracker(t)
	a, b := "attempt_1_0001_m_000000_0", "attempt_1_0002_m_000000_0"
	tt.apply(&mrpb.HeartbeatResponse{Launch: []*mrpb.LaunchTask{launch("job_1_0001", a, mrpb.TaskType_MAP), launch("job_1_0002", b, mrpb.TaskType_MAP)}})
	<-f.started
	<-f.started
	file := filepath.Join(t.TempDir(), "file.out")
	os.WriteFile(file, []byte("123456"), 0o644)
	for _, job := range []string{"job_1_0001", "job_1_0002"} {
		for _, d := range tt.cfg.LocalDirs {
			os.MkdirAll(filepath.Join(d, "taskTracker", job, "x"), 0o755)
		}
		if err := tt.shuffle.Add(shuffle.MapOutputInfo{JobID: job, AttemptID: "attempt_" + job[4:] + "_m_000001_0", Path: file,
			Index: []spill.IndexEntry{{RawLength: 2, PartLength: 6}}}); err != nil {
			t.Fatal(err)
		}
	}
	tt.apply(&mrpb.HeartbeatResponse{DoneJobs: []string{"job_1_0001"}})
	reps := waitReports(t, tt, 1)
	if reps[0].GetAttemptId() != a || reps[0].GetState() != mrpb.TaskReport_KILLED {
		t.Fatalf("report %v", reps[0])
	}
	for _, d := range tt.cfg.LocalDirs {
		if _, err := os.Stat(filepath.Join(d, "taskTracker", "job_1_0001")); !os.IsNotExist(err) {
			t.Errorf("the done job's local dir: %v", err)
		}
		if _, err := os.Stat(filepath.Join(d, "taskTracker", "job_1_0002")); err != nil {
			t.Errorf("the running job's local dir: %v", err)
		}
	}
	if served(tt, "job_1_0001", "attempt_1_0001_m_000001_0") || !served(tt, "job_1_0002", "attempt_1_0002_m_000001_0") {
		t.Error("the done job's output is still served, or the other's is not")
	}
}

// served says whether the shuffle server serves a map output.
func served(tt *TaskTracker, job, att string) bool {
	w := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodHead, shuffle.Path+"?job="+job+"&map="+att+"&reduce=0", nil)
	req.Header.Set(jobtoken.HeaderURLHash, jobtoken.URLHash(testSecret, req.URL))
	tt.shuffle.ServeHTTP(w, req)
	return w.Code == http.StatusOK
}

// TestCommitPending: an attempt whose child asked to commit is listed in
// every heartbeat until the JobTracker answers; then the child gets its
// byte and the attempt is no longer listed.
func TestCommitPending(t *testing.T) {
	tt, f := newTracker(t)
	a, b := "attempt_1_0001_r_000001_0", "attempt_1_0001_r_000000_0"
	tt.apply(&mrpb.HeartbeatResponse{Launch: []*mrpb.LaunchTask{launch("job_1_0001", a, mrpb.TaskType_REDUCE), launch("job_1_0001", b, mrpb.TaskType_REDUCE)}})
	<-f.started
	<-f.started
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	tt.mu.Lock()
	for _, id := range []string{a, b} {
		tt.running[id].commitPending, tt.running[id].commitOK = true, w
	}
	tt.mu.Unlock()
	for range 2 {
		if got := tt.heartbeatRequest("u", 1).GetCommitPending(); !slices.Equal(got, []string{b, a}) {
			t.Fatalf("commit pending %v", got)
		}
	}
	tt.apply(&mrpb.HeartbeatResponse{CommitAttempts: []string{a}})
	buf := make([]byte, 2)
	if n, err := r.Read(buf); err != nil || n != 1 || buf[0] != 1 {
		t.Fatalf("the child got %v, %v", buf[:n], err)
	}
	if got := tt.heartbeatRequest("u", 1).GetCommitPending(); !slices.Equal(got, []string{b}) {
		t.Fatalf("after the answer: commit pending %v", got)
	}
	tt.apply(&mrpb.HeartbeatResponse{CommitAttempts: []string{a}}) // a repeated answer writes nothing more
	w.Close()
	if n, _ := r.Read(buf); n != 0 {
		t.Fatalf("a second byte for one commit")
	}
}

// TestFinish: how a child's end becomes the attempt's report, what it
// does to the local directories, and that a map's output is served.
func TestFinish(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file.out")
	os.WriteFile(file, []byte("123456"), 0o644)
	mapOut := &mrpb.TaskResult{Output: taskrun.MapOutputProto(spill.Output{Path: file, IndexPath: file + ".index",
		Index: []spill.IndexEntry{{RawLength: 2, PartLength: 6}}})}
	result := func(r *mrpb.TaskResult) []byte {
		var b strings.Builder
		taskrun.WriteResult(&b, r)
		return []byte(b.String())
	}
	for _, tc := range []struct {
		name      string
		ex        childExit
		stderr    string
		state     mrpb.TaskReport_State
		errorHas  string
		dirsKept  bool
		served    bool
		failedMap []string
	}{
		{name: "map succeeded", ex: childExit{out: result(mapOut)}, state: mrpb.TaskReport_SUCCEEDED, dirsKept: true, served: true},
		{name: "map-only map succeeded", ex: childExit{out: result(&mrpb.TaskResult{})}, state: mrpb.TaskReport_SUCCEEDED},
		{name: "task error", ex: childExit{out: result(&mrpb.TaskResult{Error: proto.String("boom"), FailedMaps: []string{"m"}}), err: errors.New("exit status 1")},
			state: mrpb.TaskReport_FAILED, errorHas: "boom", failedMap: []string{"m"}},
		{name: "exit status only", ex: childExit{out: result(&mrpb.TaskResult{}), err: errors.New("exit status 3")}, state: mrpb.TaskReport_FAILED, errorHas: "exit status 3"},
		{name: "no result", ex: childExit{out: []byte("garbage"), err: errors.New("signal: segmentation fault")}, stderr: "panic: runtime error\n",
			state: mrpb.TaskReport_FAILED, errorHas: "child exited (signal: segmentation fault) without a result; stderr: panic: runtime error"},
		{name: "killed", ex: childExit{out: result(mapOut), killed: true}, state: mrpb.TaskReport_KILLED, errorHas: "attempt killed"},
		{name: "timed out", ex: childExit{timedOut: true, timeout: 600 * time.Second, killed: true}, state: mrpb.TaskReport_FAILED,
			errorHas: "Task attempt_1_0001_m_000000_0 failed to report status for 600 seconds. Killing!"},
		{name: "over memory", ex: childExit{overMemory: 1500 << 20, memLimit: 1024 << 20, killed: true}, state: mrpb.TaskReport_FAILED,
			errorHas: "is running beyond physical memory limits. Current usage: 1500 MB of 1024 MB physical memory used. Killing task."},
		{name: "unservable output", ex: childExit{out: result(&mrpb.TaskResult{Output: &mrpb.MapOutput{Path: proto.String(filepath.Join(t.TempDir(), "none"))}})},
			state: mrpb.TaskReport_FAILED, errorHas: "serving map output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt, _ := newTracker(t)
			const job, att = "job_1_0001", "attempt_1_0001_m_000000_0"
			tt.shuffle.SetSecret(job, testSecret) // as the attempt's launch does
			spec := &mrpb.TaskSpec{LocalDirs: []string{filepath.Join(tt.cfg.LocalDirs[0], "taskTracker", job, att)}}
			os.MkdirAll(spec.LocalDirs[0], 0o755)
			tc.ex.stderr = filepath.Join(t.TempDir(), "stderr")
			os.WriteFile(tc.ex.stderr, []byte(tc.stderr), 0o644)
			rep := tt.finish(&attempt{id: att, job: job, isMap: true}, spec, tc.ex)
			if rep.GetAttemptId() != att || rep.GetState() != tc.state || !strings.Contains(rep.GetResult().GetError(), tc.errorHas) ||
				(tc.errorHas == "") != (rep.GetResult().GetError() == "") {
				t.Fatalf("report %v %q; want %v %q", rep.GetState(), rep.GetResult().GetError(), tc.state, tc.errorHas)
			}
			if !slices.Equal(rep.GetResult().GetFailedMaps(), tc.failedMap) {
				t.Errorf("failed maps %v", rep.GetResult().GetFailedMaps())
			}
			if _, err := os.Stat(spec.LocalDirs[0]); (err == nil) != tc.dirsKept {
				t.Errorf("attempt dir kept %v, want %v", err == nil, tc.dirsKept)
			}
			if got := served(tt, job, att); got != tc.served {
				t.Errorf("output served %v, want %v", got, tc.served)
			}
		})
	}
}

func base() *conf.Configuration {
	c := conf.New()
	c.Set(keyJobTracker, "127.0.0.1:9001")
	return c
}

func TestConfigDefaults(t *testing.T) {
	want := DefaultConfig()
	want.JobTracker = "127.0.0.1:9001"
	conftest.CheckDefaults(t, ConfigFrom, base, want)
	if d := DefaultConfig(); d.MapSlots != 2 || d.ReduceSlots != 2 || d.HTTPAddr != "127.0.0.1:50060" || len(d.LocalDirs) != 1 ||
		!strings.HasSuffix(d.LocalDirs[0], "/mapred/local") {
		t.Errorf("DefaultConfig %+v is not Hadoop's", d)
	}
}

func TestConfigMapping(t *testing.T) {
	// (The Linux task controller needs root, which Validate checks.)
	from := func(c *conf.Configuration) (Config, error) {
		cfg, err := ConfigFrom(c)
		if err != nil && strings.Contains(err.Error(), "needs the TaskTracker to run as root") {
			err = nil
		}
		return cfg, err
	}
	conftest.CheckMapping(t, from, base, map[string]string{
		"hadoop.security.authentication":   "kerberos",
		keyJobTracker:                      "10.1.1.1:8021",
		keyHTTPAddr:                        "127.0.0.1:50061",
		keyLocalDirs:                       "/a,/b",
		"mapreduce.cluster.acls.enabled":   "false",
		"mapreduce.cluster.administrators": "root admins",
		keyMapSlots:                        "8",
		keyReduceSlots:                     "3",
		keyController:                      LinuxTaskController,
		keyHostName:                        "node3.example",
		keyDNSInterface:                    "eth0",
		keyOutOfBand:                       "false",
		"strata.http.pprof.enabled":        "true",

		// secure-mode HTTP authentication (httpauth)
		"hadoop.http.authentication.type":                     "kerberos",
		"hadoop.http.authentication.simple.anonymous.allowed": "false",
		"hadoop.http.authentication.kerberos.principal":       "HTTP/tt.example@EXAMPLE.COM",
		"hadoop.http.authentication.kerberos.keytab":          "/etc/http.keytab",
		"hadoop.http.authentication.token.validity":           "60",
		"hadoop.http.authentication.signature.secret.file":    "/etc/http.secret",
		"hadoop.http.authentication.cookie.domain":            "example.com",
		"hadoop.http.authentication.cookie.path":              "/x",
	})
}

// TestConfigValidate: each bad setting is refused, by New too, with the
// key named.
func TestConfigValidate(t *testing.T) {
	good := testConfig(t)
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no jobtracker", func(c *Config) { c.JobTracker = "" }, "tasktracker: set mapreduce.jobtracker.address (host:port)"},
		{"local jobtracker", func(c *Config) { c.JobTracker = "local" }, "set mapreduce.jobtracker.address"},
		{"no http address", func(c *Config) { c.HTTPAddr = "" }, "tasktracker: set mapreduce.tasktracker.http.address"},
		{"no local dirs", func(c *Config) { c.LocalDirs = nil }, "tasktracker: mapreduce.cluster.local.dir is empty"},
		{"an empty local dir", func(c *Config) { c.LocalDirs = []string{"/a", ""} }, "names an empty directory"},
		{"no map slots", func(c *Config) { c.MapSlots = 0 }, "tasktracker: mapred.tasktracker.map.tasks.maximum must be at least 1, got 0"},
		{"no reduce slots", func(c *Config) { c.ReduceSlots = -1 }, "mapred.tasktracker.reduce.tasks.maximum must be at least 1, got -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.change(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
			if _, err := New(c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want %q", err, tc.want)
			}
		})
	}
	c := base()
	c.Set(keyMapSlots, "0")
	if _, err := ConfigFrom(c); err == nil || !strings.Contains(err.Error(), "map.tasks.maximum must be at least 1") {
		t.Fatalf("ConfigFrom with no map slots: %v", err)
	}
}

// TestOutOfBandHeartbeat: an ended attempt asks for a heartbeat at once
// when out-of-band heartbeats are on (requests coalesce), never when off.
func TestOutOfBandHeartbeat(t *testing.T) {
	for _, on := range []bool{true, false} {
		tt := &TaskTracker{cfg: Config{OutOfBandHeartbeat: on}, oob: make(chan struct{}, 1)}
		tt.heartbeatSoon()
		tt.heartbeatSoon()
		if got, want := len(tt.oob), map[bool]int{true: 1, false: 0}[on]; got != want {
			t.Errorf("out-of-band %v: %d heartbeats asked for, want %d", on, got, want)
		}
	}
	if !DefaultConfig().OutOfBandHeartbeat {
		t.Error("out-of-band heartbeats are off by default")
	}
}

func TestProfiledSelectsAttempts(t *testing.T) {
	spec := func(typ mrpb.TaskType, task int32, settings map[string]string) *mrpb.TaskSpec {
		return &mrpb.TaskSpec{Type: typ.Enum(), Task: proto.Int32(task), Conf: settings}
	}
	on := map[string]string{"mapreduce.task.profile": "true"}
	for _, c := range []struct {
		spec *mrpb.TaskSpec
		want bool
	}{
		{spec(mrpb.TaskType_MAP, 0, nil), false},
		{spec(mrpb.TaskType_MAP, 2, on), true}, // default 0-2
		{spec(mrpb.TaskType_MAP, 3, on), false},
		{spec(mrpb.TaskType_REDUCE, 1, on), true},
		{spec(mrpb.TaskType_JOB_CLEANUP, 0, on), false},
		{spec(mrpb.TaskType_MAP, 7, map[string]string{"mapreduce.task.profile": "true", "mapreduce.task.profile.maps": "5-"}), true},
		{spec(mrpb.TaskType_REDUCE, 0, map[string]string{"mapreduce.task.profile": "true", "mapreduce.task.profile.reduces": ""}), false},
	} {
		if got := profiled(c.spec); got != c.want {
			t.Errorf("%v task %d %v: profiled %v", c.spec.GetType(), c.spec.GetTask(), c.spec.GetConf(), got)
		}
	}
}
