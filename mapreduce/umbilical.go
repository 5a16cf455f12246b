package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/shuffle"
	"github.com/stratafs/strata/internal/spill"
)

// childLink is what a task child running under a TaskTracker has besides
// its spec: the progress pipe (which also carries commit requests) and
// the pipe on which leave to commit arrives. Nil when a task runs in the
// client's process (local mode).
type childLink struct {
	progress io.Writer
	answer   io.Reader // nil: no commit arbitration
}

// alive tells the TaskTracker the attempt is making progress.
func (l *childLink) alive() {
	if l != nil {
		l.progress.Write([]byte{ProgressMade})
	}
}

// commitGate is the attempt's canCommit hook, or nil without one.
func (l *childLink) commitGate() func(context.Context) error {
	if l == nil || l.answer == nil {
		return nil
	}
	return func(ctx context.Context) error {
		if _, err := l.progress.Write([]byte{CommitRequest}); err != nil {
			return err
		}
		got := make(chan error, 1)
		go func() {
			_, err := io.ReadFull(l.answer, make([]byte, 1))
			got <- err
		}()
		select {
		case err := <-got:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// fetchMapOutputs runs a reduce attempt's shuffle. A reduce launched
// before every map was done (slow-start) learns where the others' outputs
// are from the JobTracker's map completion events while it fetches those
// it knows.
func fetchMapOutputs(ctx context.Context, cfg shuffle.Config, spec TaskSpec, c *conf.Configuration, link *childLink) (spill.Iterator, error) {
	if spec.NumMaps <= len(spec.Maps) {
		return shuffle.Fetch(ctx, cfg, spec.Maps)
	}
	jt := os.Getenv(JobTrackerEnv)
	if jt == "" {
		return nil, fmt.Errorf("mapreduce: reduce knows %d of %d maps and has no JobTracker address (%s)", len(spec.Maps), spec.NumMaps, JobTrackerEnv)
	}
	s, err := shuffle.New(cfg, spec.NumMaps)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	for _, l := range spec.Maps {
		if err := s.Add(l); err != nil {
			return nil, err
		}
	}
	every, err := c.GetDuration("mapreduce.jobtracker.heartbeat.interval", time.Millisecond)
	if err != nil || every <= 0 {
		every = time.Second
	}
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	pollErr := make(chan error, 1)
	go func() {
		err := pollMapEvents(pctx, jt, spec, every, s, link)
		if err != nil && pctx.Err() == nil {
			s.Close() // Wait returns; the error below says why
		}
		pollErr <- err
	}()
	it, err := s.Wait(ctx)
	if errors.Is(err, shuffle.ErrClosed) {
		stop()
		if perr := <-pollErr; perr != nil {
			return nil, perr
		}
	}
	return it, err
}

// pollMapEvents adds the locations of maps as the JobTracker reports them
// done, until it has heard of all of them.
func pollMapEvents(ctx context.Context, addr string, spec TaskSpec, every time.Duration, s *shuffle.Shuffle, link *childLink) error {
	client := ipc.NewClient(ipc.ClientConfig{Addr: addr, User: spec.User, Protocol: TaskUmbilicalProtocol})
	defer client.Close()
	known := map[int]bool{}
	for _, l := range spec.Maps {
		known[l.MapIndex] = true
	}
	from, failures := spec.MapEvents, 0
	for {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		resp := &mrpb.MapCompletionEventsResponse{}
		err := client.Call(cctx, "getMapCompletionEvents", &mrpb.MapCompletionEventsRequest{JobId: proto.String(spec.JobID), FromIndex: proto.Int32(int32(from))}, resp)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			if failures++; failures >= 10 {
				return fmt.Errorf("mapreduce: asking the JobTracker %s for finished maps: %w", addr, err)
			}
		case resp.GetJobState() != "RUNNING":
			return fmt.Errorf("mapreduce: job %s is %s", spec.JobID, resp.GetJobState())
		default:
			failures = 0
			link.alive()
			for _, e := range resp.GetEvents() {
				loc := shuffle.MapLocation{MapIndex: int(e.GetMapIndex()), AttemptID: e.GetAttemptId(), URL: e.GetUrl()}
				if err := s.Add(loc); err != nil {
					return err
				}
				known[loc.MapIndex] = true
			}
			from += len(resp.GetEvents())
			if len(known) >= spec.NumMaps {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
}
