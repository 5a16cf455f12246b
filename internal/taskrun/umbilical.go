package taskrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/shuffle"
	"github.com/stratafs/strata/internal/spill"
)

// FetchMapOutputs runs a reduce attempt's shuffle. A reduce launched
// before every map was done (slow-start) learns where the others' outputs
// are from the JobTracker's map completion events (at JobTrackerEnv),
// asked every interval, while it fetches those it knows.
func FetchMapOutputs(ctx context.Context, cfg shuffle.Config, spec *mrpb.TaskSpec, every time.Duration, link *Link) (spill.Iterator, error) {
	maps := MapLocations(spec.GetMaps())
	numMaps := int(spec.GetNumMaps())
	if numMaps <= len(maps) {
		return shuffle.Fetch(ctx, cfg, maps)
	}
	jt := os.Getenv(JobTrackerEnv)
	if jt == "" {
		return nil, fmt.Errorf("mapreduce: reduce knows %d of %d maps and has no JobTracker address (%s)", len(maps), numMaps, JobTrackerEnv)
	}
	s, err := shuffle.New(cfg, numMaps)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	for _, l := range maps {
		if err := s.Add(l); err != nil {
			return nil, err
		}
	}
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	pollErr := make(chan error, 1)
	go func() {
		err := pollMapEvents(pctx, jt, spec, maps, every, s, link)
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
func pollMapEvents(ctx context.Context, addr string, spec *mrpb.TaskSpec, maps []shuffle.MapLocation, every time.Duration, s *shuffle.Shuffle, link *Link) error {
	client := ipc.NewClient(ipc.ClientConfig{Addr: addr, User: spec.GetUser(), Protocol: UmbilicalProtocol})
	defer client.Close()
	known := map[int]bool{}
	for _, l := range maps {
		known[l.MapIndex] = true
	}
	from, failures := spec.GetMapEvents(), 0
	for {
		// The JobTracker holds the call until a map finishes (up to
		// every); one that answers at once is asked again after every.
		start := time.Now()
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		resp := &mrpb.MapCompletionEventsResponse{}
		err := client.Call(cctx, "getMapCompletionEvents", &mrpb.MapCompletionEventsRequest{JobId: proto.String(spec.GetJobId()), FromIndex: proto.Int32(from),
			WaitMs: proto.Int32(int32(min(every, 10*time.Second) / time.Millisecond))}, resp)
		cancel()
		pause := every - time.Since(start)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			if failures++; failures >= 10 {
				return fmt.Errorf("mapreduce: asking the JobTracker %s for finished maps: %w", addr, err)
			}
		case resp.GetJobState() != mrpb.JobState_RUNNING:
			return fmt.Errorf("mapreduce: job %s is %s", spec.GetJobId(), resp.GetJobState())
		default:
			failures = 0
			link.Alive()
			for _, e := range resp.GetEvents() {
				loc := MapLocation(e)
				if err := s.Add(loc); err != nil {
					return err
				}
				known[loc.MapIndex] = true
			}
			from += int32(len(resp.GetEvents()))
			if len(known) >= int(spec.GetNumMaps()) {
				return nil
			}
			if len(resp.GetEvents()) > 0 {
				pause = 0
			}
		}
		if pause <= 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}
