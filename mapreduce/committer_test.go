package mapreduce

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
)

const testJobID = "job_1700000000000_0001"

func testAttempt(env fs.Env, c *conf.Configuration, out string, typ byte, task, n int) *TaskAttempt {
	return &TaskAttempt{JobID: testJobID, Type: typ, Task: task, Attempt: n, Env: env, Conf: c, OutputDir: out}
}

// writeTask writes recs through TextOutputFormat as att.
func writeTask(t *testing.T, att *TaskAttempt, recs []testRecord) {
	t.Helper()
	w, err := TextOutputFormat{}.Writer(context.Background(), att, PartName(att.Type, att.Task))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write([]byte(r.key), []byte(r.value)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// runTextJob runs the committer protocol of a job whose reduce tasks write
// the given records through TextOutputFormat.
func runTextJob(t *testing.T, env fs.Env, c *conf.Configuration, out string, tasks map[int][]testRecord) {
	t.Helper()
	ctx := context.Background()
	if err := (TextOutputFormat{}).Check(ctx, env, c, out); err != nil {
		t.Fatal(err)
	}
	cm, err := NewCommitter(env, c, out)
	if err != nil {
		t.Fatal(err)
	}
	if err := cm.SetupJob(ctx); err != nil {
		t.Fatal(err)
	}
	for task, recs := range tasks {
		att := testAttempt(env, c, out, 'r', task, 0)
		if _, err := cm.SetupTask(ctx, att); err != nil {
			t.Fatal(err)
		}
		writeTask(t, att, recs)
		if err := cm.CommitTask(ctx, att); err != nil {
			t.Fatal(err)
		}
	}
	if err := cm.CommitJob(ctx); err != nil {
		t.Fatal(err)
	}
}

func listTestDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func readTestFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCommitterAttempts(t *testing.T) {
	ctx := context.Background()
	env, c := testLocalEnv()
	out := t.TempDir() + "/out"
	cm, err := NewCommitter(env, c, out)
	if err != nil {
		t.Fatal(err)
	}
	if err := cm.SetupJob(ctx); err != nil {
		t.Fatal(err)
	}
	if names := listTestDir(t, out); !slices.Equal(names, []string{TemporaryDirName}) {
		t.Errorf("after SetupJob: %v", names)
	}

	a0 := testAttempt(env, c, out, 'r', 3, 0)
	a1 := testAttempt(env, c, out, 'r', 3, 1)
	if got, want := WorkPath(a1, "part-r-00003"), out+"/_temporary/0/_temporary/attempt_1700000000000_0001_r_000003_1/part-r-00003"; got != want {
		t.Errorf("WorkPath %q, want %q", got, want)
	}
	wd, err := cm.SetupTask(ctx, a0)
	if err != nil {
		t.Fatal(err)
	}
	if want := "file://" + out + "/_temporary/0/_temporary/" + a0.ID(); wd != want {
		t.Errorf("SetupTask returned %q, want %q", wd, want)
	}
	writeTask(t, a0, []testRecord{{"from", "attempt 0"}})
	writeTask(t, a1, []testRecord{{"from", "attempt 1"}})
	if err := cm.AbortTask(ctx, a0); err != nil {
		t.Fatal(err)
	}
	if err := cm.AbortTask(ctx, a0); err != nil {
		t.Errorf("second abort: %v", err)
	}
	if err := cm.CommitTask(ctx, a1); err != nil {
		t.Fatal(err)
	}
	if err := cm.CommitTask(ctx, a1); err != nil {
		t.Errorf("second commit: %v", err)
	}
	if got := readTestFile(t, out+"/part-r-00003"); got != "from\tattempt 1\n" {
		t.Errorf("committed %q", got)
	}
	// A re-run of the task that commits again replaces the output.
	a2 := testAttempt(env, c, out, 'r', 3, 2)
	writeTask(t, a2, []testRecord{{"from", "attempt 2"}})
	if err := cm.CommitTask(ctx, a2); err != nil {
		t.Fatal(err)
	}
	if got := readTestFile(t, out+"/part-r-00003"); got != "from\tattempt 2\n" {
		t.Errorf("re-committed %q", got)
	}
	// Committing an attempt that wrote nothing is fine.
	if err := cm.CommitTask(ctx, testAttempt(env, c, out, 'r', 4, 0)); err != nil {
		t.Errorf("empty attempt: %v", err)
	}
	// Subdirectories written by a task are merged.
	a5 := testAttempt(env, c, out, 'm', 5, 0)
	writeTestFile(t, strings.TrimPrefix(WorkDir(a5), "file://")+"/sub/x", []byte("x"))
	writeTestFile(t, out+"/sub/y", []byte("y"))
	if err := cm.CommitTask(ctx, a5); err != nil {
		t.Fatal(err)
	}
	if names := listTestDir(t, out+"/sub"); !slices.Equal(names, []string{"x", "y"}) {
		t.Errorf("merged sub: %v", names)
	}

	if err := cm.CommitJob(ctx); err != nil {
		t.Fatal(err)
	}
	if names := listTestDir(t, out); !slices.Equal(names, []string{SuccessFileName, "part-r-00003", "sub"}) {
		t.Errorf("after CommitJob: %v", names)
	}
	if got := readTestFile(t, out+"/"+SuccessFileName); got != "" {
		t.Errorf("_SUCCESS holds %q", got)
	}

	err = TextOutputFormat{}.Check(ctx, env, c, out)
	var oe *OutputExistsError
	if !errors.As(err, &oe) || !errors.Is(err, os.ErrExist) || err.Error() != "mapreduce: Output directory file://"+out+" already exists" {
		t.Errorf("Check of an existing dir: %v", err)
	}
	if err := (KVFileOutputFormat{}).Check(ctx, env, c, out+"/new"); err != nil {
		t.Errorf("Check of a new dir: %v", err)
	}
	if err := (KVFileOutputFormat{}).Check(ctx, env, c, ""); err == nil {
		t.Error("Check of no dir: no error")
	}
}

func TestCommitterAbortJob(t *testing.T) {
	ctx := context.Background()
	env, c := testLocalEnv()
	c.Set(KeyMarkSuccessfulJobs, "false")
	c.Set(KeyAppAttemptID, "2")
	out := t.TempDir() + "/out"
	cm, err := NewCommitter(env, c, out)
	if err != nil {
		t.Fatal(err)
	}
	if err := cm.SetupJob(ctx); err != nil {
		t.Fatal(err)
	}
	a := testAttempt(env, c, out, 'm', 0, 0)
	writeTask(t, a, []testRecord{{"k", "v"}})
	if _, err := os.Stat(filepath.Join(out, "_temporary", "2", "_temporary", a.ID(), "part-m-00000")); err != nil {
		t.Errorf("app attempt 2 work file: %v", err)
	}
	if err := cm.AbortJob(ctx); err != nil {
		t.Fatal(err)
	}
	if names := listTestDir(t, out); len(names) != 0 {
		t.Errorf("after AbortJob: %v", names)
	}
	// Without _SUCCESS marking, CommitJob only cleans up.
	if err := cm.SetupJob(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cm.CommitJob(ctx); err != nil {
		t.Fatal(err)
	}
	if names := listTestDir(t, out); len(names) != 0 {
		t.Errorf("after CommitJob without marker: %v", names)
	}
	if _, err := NewCommitter(env, c, ""); err == nil {
		t.Error("NewCommitter without a dir: no error")
	}
}
