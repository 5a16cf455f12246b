package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	_ "github.com/stratafs/strata/internal/examples" // registers wordcount
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/shuffle"
	"github.com/stratafs/strata/internal/taskrun"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/mapreduce"
)

// runChild runs one attempt as a `strata task` child process.
func runChild(t *testing.T, spec *mrpb.TaskSpec) (*mrpb.TaskResult, int) {
	t.Helper()
	var in bytes.Buffer
	if err := taskrun.WriteSpec(&in, spec); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testcluster.Binary(t), "task")
	cmd.Stdin = &in
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	res, err := taskrun.ReadResult(out.Bytes())
	if err != nil {
		t.Fatalf("child's result %q does not decode: %v (stderr %s)", out.String(), err, errb.String())
	}
	return res, code
}

// TestTaskChildrenAndShuffle runs wordcount the way a TaskTracker does:
// every attempt in its own process, map outputs served over HTTP by the
// shuffle server, reducers fetching them.
func TestTaskChildrenAndShuffle(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	os.MkdirAll(in, 0o755)
	want := map[string]int{}
	for f := 0; f < 3; f++ {
		var b strings.Builder
		for i := 0; i < 3000; i++ {
			w := fmt.Sprintf("w%d", (i*7+f)%97)
			want[w]++
			b.WriteString(w + " ")
			if i%10 == 9 {
				b.WriteString("\n")
			}
		}
		os.WriteFile(filepath.Join(in, fmt.Sprintf("f%d.txt", f)), []byte(b.String()), 0o644)
	}
	settings := map[string]string{
		"mapreduce.cluster.local.dir":                   filepath.Join(dir, "local"),
		"mapreduce.job.reduces":                         "2",
		"mapreduce.task.io.sort.mb":                     "1",
		"mapreduce.reduce.shuffle.read.timeout":         "2000",
		"mapreduce.input.fileinputformat.split.maxsize": "20000",
	}
	c := conf.New()
	for k, v := range settings {
		c.Set(k, v)
	}
	args := []string{"file://" + in, "file://" + out}
	job, err := mapreduce.NewJob("wordcount", args, c)
	if err != nil {
		t.Fatal(err)
	}
	env := fs.Env{Conf: c}.WithDefaults()
	ctx := context.Background()
	splits, err := job.Input.Splits(ctx, env, c, job.InputPaths)
	if err != nil || len(splits) < 3 {
		t.Fatalf("%d splits, %v", len(splits), err)
	}
	committer, err := mapreduce.NewCommitter(env, c, job.OutputPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := committer.SetupJob(ctx); err != nil {
		t.Fatal(err)
	}
	jobID := "job_e2e_0001"
	secret := []byte("the job's shuffle secret")
	base := &mrpb.TaskSpec{Job: proto.String("wordcount"), Args: args, Conf: settings, User: proto.String(env.User), JobId: proto.String(jobID), Reducers: proto.Int32(2),
		JobToken: secret}

	srv := shuffle.NewServer(shuffle.ServerConfig{})
	srv.SetSecret(jobID, secret)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	var locs []*mrpb.MapCompletionEvent
	for i, sp := range splits {
		spec := proto.CloneOf(base)
		spec.Type, spec.Task = mrpb.TaskType_MAP.Enum(), proto.Int32(int32(sp.Index))
		spec.Split = &mrpb.InputSplit{Path: proto.String(sp.Path), Start: proto.Int64(sp.Start), Length: proto.Int64(sp.Length), Hosts: sp.Hosts, Index: proto.Int32(int32(sp.Index))}
		spec.LocalDirs = []string{filepath.Join(dir, "tt", "m", strconv.Itoa(i))}
		os.MkdirAll(spec.LocalDirs[0], 0o755)
		res, code := runChild(t, spec)
		if code != 0 || res.Output == nil {
			t.Fatalf("map %d: exit %d, %s", i, code, res.GetError())
		}
		att := (&mapreduce.TaskAttempt{JobID: jobID, Type: 'm', Task: sp.Index}).ID()
		mo := taskrun.MapOutput(res.Output)
		if err := srv.Add(shuffle.MapOutputInfo{JobID: jobID, AttemptID: att, Path: mo.Path, Index: mo.Index}); err != nil {
			t.Fatal(err)
		}
		locs = append(locs, &mrpb.MapCompletionEvent{AttemptId: proto.String(att), Url: proto.String(hs.URL), MapIndex: proto.Int32(int32(i))})
	}
	shuffled := func(res *mrpb.TaskResult) int64 {
		for _, c := range res.GetCounters() {
			if c.GetGroup() == mapreduce.GroupTask && c.GetName() == mapreduce.ShuffledMaps {
				return c.GetValue()
			}
		}
		return 0
	}
	for r := 0; r < 2; r++ {
		spec := proto.CloneOf(base)
		spec.Type, spec.Task, spec.Maps = mrpb.TaskType_REDUCE.Enum(), proto.Int32(int32(r)), locs
		spec.LocalDirs = []string{filepath.Join(dir, "tt", "r", strconv.Itoa(r))}
		os.MkdirAll(spec.LocalDirs[0], 0o755)
		res, code := runChild(t, spec)
		if code != 0 {
			t.Fatalf("reduce %d: exit %d, %s", r, code, res.GetError())
		}
		if got := shuffled(res); got != int64(len(splits)) {
			t.Errorf("reduce %d shuffled %d maps, want %d", r, got, len(splits))
		}
	}
	if err := committer.CommitJob(ctx); err != nil {
		t.Fatal(err)
	}
	checkWordCounts(t, out, want)

	// A reduce whose map outputs are gone names the maps to re-run.
	srv.Remove(jobID, locs[1].GetAttemptId())
	spec := proto.CloneOf(base)
	spec.Type, spec.Task, spec.Maps, spec.Attempt = mrpb.TaskType_REDUCE.Enum(), proto.Int32(0), locs, proto.Int32(1)
	spec.LocalDirs = []string{filepath.Join(dir, "tt", "r", "again")}
	os.MkdirAll(spec.LocalDirs[0], 0o755)
	spec.Conf = map[string]string{}
	for k, v := range settings {
		spec.Conf[k] = v
	}
	res, code := runChild(t, spec)
	if code == 0 || len(res.GetFailedMaps()) != 1 || res.GetFailedMaps()[0] != locs[1].GetAttemptId() {
		t.Fatalf("fetch failure: exit %d, failed maps %v, %s", code, res.GetFailedMaps(), res.GetError())
	}

	// An unknown job fails the child with a clear error.
	bad := proto.CloneOf(base)
	bad.Job, bad.Type = proto.String("nosuchjob"), mrpb.TaskType_MAP.Enum()
	res, code = runChild(t, bad)
	if code != 1 || !strings.Contains(res.GetError(), `unknown job "nosuchjob"`) {
		t.Fatalf("unknown job: exit %d, %q", code, res.GetError())
	}
}
