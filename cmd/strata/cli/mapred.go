package cli

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/jobtracker"
	"github.com/stratafs/strata/internal/media"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/tasktracker"
	"github.com/stratafs/strata/mapreduce"
)

func init() {
	register(command{name: "jobtracker", summary: "run the MapReduce JobTracker (at mapreduce.jobtracker.address)", run: runJobTracker})
	register(command{name: "tasktracker", summary: "run a MapReduce TaskTracker (reports to mapreduce.jobtracker.address)", run: runTaskTracker})
	register(command{name: "job", summary: "list, inspect or kill cluster jobs: -list | -status <job id> | -kill <job id> | -history <job id>", run: runJob})
}

func runJobTracker(ctx context.Context, env *Env, args []string) int {
	if len(args) > 0 {
		fmt.Fprintf(env.Stderr, "jobtracker: unexpected argument %q\n", args[0])
		return 2
	}
	cfg, err := jobtracker.ConfigFrom(env.Conf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "jobtracker: %v\n", err)
		return 1
	}
	if _, err := daemonLogin(cfg.Security, cfg.Addr, env.Conf); err != nil {
		fmt.Fprintf(env.Stderr, "jobtracker: %v\n", err)
		return 1
	}
	cfg.Logger = logger(env.Stderr)
	jt := jobtracker.New(cfg)
	if err := jt.Start(); err != nil {
		fmt.Fprintf(env.Stderr, "jobtracker: %v\n", err)
		return 1
	}
	<-ctx.Done()
	cfg.Logger.Info("jobtracker: shutting down")
	jt.Close()
	return 0
}

func runTaskTracker(ctx context.Context, env *Env, args []string) int {
	if len(args) > 0 {
		fmt.Fprintf(env.Stderr, "tasktracker: unexpected argument %q\n", args[0])
		return 2
	}
	if err := media.Configure(env.Conf); err != nil {
		fmt.Fprintf(env.Stderr, "tasktracker: %v\n", err)
		return 1
	}
	cfg, err := tasktracker.ConfigFrom(env.Conf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "tasktracker: %v\n", err)
		return 1
	}
	login, err := daemonLogin(cfg.Security, cfg.HTTPAddr, env.Conf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "tasktracker: %v\n", err)
		return 1
	}
	if login != nil {
		cfg.Login, cfg.User = login, login.User
	}
	cfg.Logger = logger(env.Stderr)
	tt, err := tasktracker.New(cfg)
	if err == nil {
		err = tt.Start()
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "tasktracker: %v\n", err)
		return 1
	}
	<-ctx.Done()
	cfg.Logger.Info("tasktracker: shutting down")
	tt.Close()
	return 0
}

func runJob(ctx context.Context, env *Env, args []string) int {
	usage := func() int {
		fmt.Fprintln(env.Stderr, "Usage: strata job -list | -status <job id> | -kill <job id> | -history <job id>")
		return 2
	}
	if len(args) == 0 {
		return usage()
	}
	if args[0] == "-history" && len(args) == 2 {
		// History files outlive the JobTracker: read them directly.
		h, err := jobtracker.ReadHistory(ctx, fs.Env{Conf: env.Conf, User: fs.CurrentUser()}, args[1])
		if err != nil {
			fmt.Fprintf(env.Stderr, "job: %v\n", err)
			return 1
		}
		printHistory(env, h)
		return 0
	}
	addr := env.Conf.Get("mapreduce.jobtracker.address")
	if addr == "" || addr == "local" {
		fmt.Fprintln(env.Stderr, "job: set mapreduce.jobtracker.address (host:port)")
		return 1
	}
	cl := ipc.NewClient(ipc.ClientConfig{Addr: addr, Protocol: jobtracker.SubmissionProtocol, User: fs.CurrentUser()})
	defer cl.Close()
	fail := func(err error) int {
		fmt.Fprintf(env.Stderr, "job: %v\n", err)
		return 1
	}
	switch {
	case args[0] == "-list" && len(args) == 1:
		resp := &mrpb.ListJobsResponse{}
		if err := cl.Call(ctx, "listJobs", &mrpb.ListJobsRequest{}, resp); err != nil {
			return fail(err)
		}
		fmt.Fprintf(env.Stdout, "%d jobs\n", len(resp.GetJobs()))
		fmt.Fprintf(env.Stdout, "%-28s %-10s %-20s %-10s %-10s %s\n", "JobId", "State", "StartTime", "UserName", "Maps", "Reduces")
		for _, j := range resp.GetJobs() {
			fmt.Fprintf(env.Stdout, "%-28s %-10s %-20s %-10s %-10s %s\n", j.GetJobId(), j.GetState(),
				time.UnixMilli(j.GetStartMs()).Format("2006-01-02 15:04:05"), j.GetUser(),
				fmt.Sprintf("%d/%d", j.GetMapsDone(), j.GetMaps()), fmt.Sprintf("%d/%d", j.GetReducesDone(), j.GetReduces()))
		}
		return 0
	case args[0] == "-status" && len(args) == 2:
		resp := &mrpb.JobStatusResponse{}
		if err := cl.Call(ctx, "getJobStatus", &mrpb.JobIDRequest{JobId: proto.String(args[1])}, resp); err != nil {
			return fail(err)
		}
		s := resp.GetStatus()
		fmt.Fprintf(env.Stdout, "Job: %s\nName: %s\nUser: %s\nState: %s\nMaps: %d/%d\nReduces: %d/%d\n",
			s.GetJobId(), s.GetName(), s.GetUser(), s.GetState(), s.GetMapsDone(), s.GetMaps(), s.GetReducesDone(), s.GetReduces())
		if s.GetError() != "" {
			fmt.Fprintf(env.Stdout, "Reason: %s\n", s.GetError())
		}
		group := ""
		for _, c := range s.GetCounters() {
			if c.GetGroup() != group {
				group = c.GetGroup()
				fmt.Fprintf(env.Stdout, "\t%s\n", group)
			}
			fmt.Fprintf(env.Stdout, "\t\t%s=%d\n", c.GetName(), c.GetValue())
		}
		reports, err := mapreduce.TaskReports(ctx, env.Conf, fs.CurrentUser(), args[1])
		if err != nil {
			// The status is printed; the attempts may be refused (VIEW_JOB).
			fmt.Fprintf(env.Stderr, "job: %v\n", err)
			return 1
		}
		if len(reports) > 0 {
			fmt.Fprintln(env.Stdout, "Attempts:")
			mapreduce.PrintAttempts(env.Stdout, reports)
		}
		return 0
	case args[0] == "-kill" && len(args) == 2:
		if err := cl.Call(ctx, "killJob", &mrpb.JobIDRequest{JobId: proto.String(args[1])}, &mrpb.KillJobResponse{}); err != nil {
			return fail(err)
		}
		fmt.Fprintf(env.Stdout, "Killed job %s\n", args[1])
		return 0
	}
	return usage()
}

func printHistory(env *Env, h *jobtracker.History) {
	w := env.Stdout
	fmt.Fprintf(w, "Job: %s\nName: %s\nUser: %s\nState: %s\nSubmitted: %s\nFinished: %s (%s)\n", h.JobID, h.Name, h.User, h.State,
		h.Submit.Format("2006-01-02 15:04:05"), h.Finish.Format("2006-01-02 15:04:05"), h.Finish.Sub(h.Submit).Round(time.Millisecond))
	if h.Error != "" {
		fmt.Fprintf(w, "Reason: %s\n", h.Error)
	}
	c := mapreduce.NewCounters()
	for g, m := range h.Counters {
		for n, v := range m {
			c.Add(g, n, v)
		}
	}
	mapreduce.PrintCounters(w, c)
	fmt.Fprintf(w, "%-10s %-10s %-9s %-9s %-28s %s\n", "Task", "State", "Attempts", "Failures", "Tracker", "Last error")
	for _, t := range h.Tasks {
		fmt.Fprintf(w, "%-10s %-10s %-9d %-9d %-28s %s\n", t.Task, t.State, t.Attempts, t.Failures, t.Tracker, t.LastError)
	}
	if len(h.Attempts) > 0 {
		reports := make([]mapreduce.AttemptReport, len(h.Attempts))
		for i, a := range h.Attempts {
			reports[i] = a.Report()
		}
		fmt.Fprintln(w, "Attempts:")
		mapreduce.PrintAttempts(w, reports)
	}
}
