package mapreduce

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/mrpb"
)

// prepare does what the submitting process does before any task runs, in
// either runner: the job's Setup, the output check, the input splits.
func prepare(ctx context.Context, job *Job, env fs.Env, c *conf.Configuration) ([]InputSplit, error) {
	if job.Setup != nil {
		if err := job.Setup(ctx, job, env); err != nil {
			return nil, err
		}
	}
	if err := job.Output.Check(ctx, env, c, job.OutputPath); err != nil {
		return nil, err
	}
	splits, err := job.Input.Splits(ctx, env, c, job.InputPaths)
	if err != nil {
		return nil, fmt.Errorf("mapreduce: computing input splits: %w", err)
	}
	return splits, nil
}

// shipExecutable is set by Main: the jobs of a user's program exist only
// in that program, so a cluster's tasks must run it.
var shipExecutable bool

// uploadExecutable copies this program to a new directory under
// mapreduce.jobtracker.staging.root.dir/<user>/.staging on the default
// file system and returns its URI.
func uploadExecutable(ctx context.Context, env fs.Env, c *conf.Configuration) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("mapreduce: finding this program to ship it: %w", err)
	}
	in, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("mapreduce: shipping this program: %w", err)
	}
	defer in.Close()
	id := make([]byte, 8)
	rand.Read(id)
	dir := strings.TrimSuffix(c.Get("mapreduce.jobtracker.staging.root.dir"), "/") + "/" + env.User + "/.staging/" + hex.EncodeToString(id)
	fsys, p, err := fs.Resolve(ctx, dir+"/job.bin", env)
	if err != nil {
		return "", fmt.Errorf("mapreduce: staging dir: %w", err)
	}
	defer fsys.Close()
	w, err := fsys.Create(ctx, p, fs.CreateOptions{CreateParent: true, Perm: 0o755})
	if err == nil {
		if _, err = io.Copy(w, in); err != nil {
			w.Close()
		} else {
			err = w.Close()
		}
	}
	if err != nil {
		return "", fmt.Errorf("mapreduce: uploading this program to %s: %w", dir, err)
	}
	return fs.Qualify(fsys, p), nil
}

// removeStaging deletes the staging directory of the uploaded program exe.
func removeStaging(env fs.Env, exe string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fsys, p, err := fs.Resolve(ctx, exe, env)
	if err != nil {
		return
	}
	defer fsys.Close()
	fsys.Delete(ctx, path.Dir(p), true)
}

// A cluster job's client asks for its job's status with a held call
// (getJobStatus' wait_ms, at most jobStatusWait) that the JobTracker
// answers as soon as a task finishes or the job ends. It asks again at
// once when the job has ended meanwhile, after jobStatusGap when a task
// finished (so that jobs of many short tasks do not make it ask at the
// rate they finish), and after jobPollInterval when an answer came back
// early with nothing new (a JobTracker that does not hold calls). A call
// gets jobStatusWait plus jobStatusSlack before the client gives up on
// the JobTracker.
const (
	jobStatusWait   = time.Second
	jobStatusGap    = 100 * time.Millisecond
	jobPollInterval = 500 * time.Millisecond
	jobStatusSlack  = 30 * time.Second
)

// runClassic submits job to the JobTracker at mapreduce.jobtracker.address
// and follows it to its end, reporting progress to report. The job's
// Setup and its output check run here, in the submitting process, as with
// the local runner; the tasks run in the TaskTrackers' child processes,
// which rebuild the job from its registered name, arguments and settings.
// Cancelling ctx kills the job.
func runClassic(ctx context.Context, job *Job, env fs.Env, report func(Progress)) (*Result, error) {
	c := job.Conf
	if job.registered == "" {
		return nil, errors.New("mapreduce: only registered jobs (built by NewJob) can run on a cluster")
	}
	addr := c.Get("mapreduce.jobtracker.address")
	if addr == "" || addr == "local" {
		return nil, errors.New("mapreduce: mapreduce.framework.name=classic needs mapreduce.jobtracker.address (host:port)")
	}
	splits, err := prepare(ctx, job, env, c)
	if err != nil {
		return nil, err
	}
	reduces := job.NumReducers
	if job.NewReducer == nil {
		reduces = 0
	}
	spec := &mrpb.JobSpec{Job: proto.String(job.registered), Args: job.args, User: proto.String(env.User),
		Name: proto.String(job.Name), NumReduces: proto.Int32(int32(reduces)),
		OutputPath: proto.String(job.OutputPath)}
	for _, sp := range splits {
		spec.Splits = append(spec.Splits, splitProto(sp))
	}
	for _, k := range c.Keys() {
		spec.Conf = append(spec.Conf, &mrpb.KeyValue{Key: proto.String(k), Value: proto.String(c.GetRaw(k))})
	}
	if shipExecutable {
		exe, err := uploadExecutable(ctx, env, c)
		if err != nil {
			return nil, err
		}
		spec.Executable = proto.String(exe)
		// The staging directory goes when the job has ended (the
		// TaskTrackers have their copies).
		defer removeStaging(env, exe)
	}
	creds, err := obtainTokens(ctx, env, c, addr)
	if err != nil {
		return nil, err
	}
	spec.Credentials = creds
	cl := ipc.NewClient(ipc.ClientConfig{Addr: addr, User: env.User, Protocol: mrpb.SubmissionProtocol})
	defer cl.Close()
	sub := &mrpb.SubmitJobResponse{}
	if err := cl.Call(ctx, "submitJob", &mrpb.SubmitJobRequest{Spec: spec}, sub); err != nil {
		return nil, fmt.Errorf("mapreduce: submitting to the jobtracker at %s: %w", addr, err)
	}
	id := sub.GetJobId()
	req := &mrpb.JobIDRequest{JobId: proto.String(id)}
	kill := func() error {
		kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cl.Call(kctx, "killJob", &mrpb.JobIDRequest{JobId: proto.String(id)}, &mrpb.KillJobResponse{})
		cancel()
		return fmt.Errorf("mapreduce: job %s killed: %w", id, ctx.Err())
	}
	for {
		st := &mrpb.JobStatusResponse{}
		asked := time.Now()
		// Ctrl-C ends the held call at once (then the job is killed); a
		// JobTracker that stops answering is given up on after the slack.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jobStatusWait+jobStatusSlack)
		stop := context.AfterFunc(ctx, cancel)
		err := cl.Call(cctx, "getJobStatus", req, st)
		stop()
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, kill()
			}
			return nil, fmt.Errorf("mapreduce: job %s: asking the jobtracker: %w", id, err)
		}
		s := st.GetStatus()
		done := s.GetMapsDone() + s.GetReducesDone()
		pause := jobStatusGap - time.Since(asked)
		if req.WaitMs != nil && done == req.GetSeenDone() {
			pause = jobPollInterval - time.Since(asked)
		}
		req.WaitMs, req.SeenDone = proto.Int32(int32(jobStatusWait/time.Millisecond)), proto.Int32(done)
		p := Progress{JobID: id, Maps: int(s.GetMaps()), MapsDone: int(s.GetMapsDone()),
			Reduces: int(s.GetReduces()), ReducesDone: int(s.GetReducesDone())}
		if p.Maps > 0 {
			p.Map = float64(p.MapsDone) / float64(p.Maps)
		} else {
			p.Map = 1
		}
		if p.Reduces > 0 {
			p.Reduce = float64(p.ReducesDone) / float64(p.Reduces)
		} else if p.Map == 1 {
			p.Reduce = 1
		}
		if report != nil {
			report(p)
		}
		switch s.GetState() {
		case mrpb.JobState_SUCCEEDED:
			counters := NewCounters()
			for _, cv := range s.GetCounters() {
				counters.Add(cv.GetGroup(), cv.GetName(), cv.GetValue())
			}
			return &Result{JobID: id, Counters: counters,
				Elapsed: time.Duration(s.GetFinishMs()-s.GetStartMs()) * time.Millisecond}, nil
		case mrpb.JobState_FAILED, mrpb.JobState_KILLED:
			return nil, fmt.Errorf("mapreduce: job %s %s: %s", id, s.GetState(), s.GetError())
		}
		select {
		case <-ctx.Done():
			return nil, kill()
		case <-time.After(max(pause, 0)):
		}
	}
}
