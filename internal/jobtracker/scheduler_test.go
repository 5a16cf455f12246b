package jobtracker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/mapreduce"
)

// The scheduler's tests drive a JobTracker without its RPC server:
// heartbeats are direct calls, time is a fake clock, jobs write to a
// temporary directory. None opens a socket or sleeps.

// fakeClock is a Config.Clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

type harness struct {
	t   *testing.T
	jt  *JobTracker
	clk *fakeClock
	dir string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	clk := &fakeClock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	cfg := DefaultConfig()
	cfg.Addr, cfg.HTTPAddr, cfg.Clock = "127.0.0.1:0", "127.0.0.1:0", clk.now
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("JTLOG") != "" {
		cfg.Logger = slog.Default()
	}
	dir := t.TempDir() // removed after Close has waited for history writes
	cfg.HistoryDir = filepath.Join(dir, "history")
	jt := New(cfg)
	t.Cleanup(func() { jt.Close() })
	return &harness{t: t, jt: jt, clk: clk, dir: dir}
}

// submit queues a job with one map per entry of hosts (the hosts of its
// split) and the given reduces and settings; it returns the job.
func (h *harness) submit(hosts [][]string, reduces int, settings ...string) *job {
	h.t.Helper()
	n := len(h.jt.jobs)
	spec := &mrpb.JobSpec{Job: proto.String("wordcount"), User: proto.String("alice"), Name: proto.String("test"),
		NumReduces: proto.Int32(int32(reduces)), OutputPath: proto.String(filepath.Join(h.dir, fmt.Sprintf("out%d", n)))}
	kv := append([]string{keyHistoryDir, filepath.Join(h.dir, "history")}, settings...)
	for i := 0; i+1 < len(kv); i += 2 {
		spec.Conf = append(spec.Conf, &mrpb.KeyValue{Key: proto.String(kv[i]), Value: proto.String(kv[i+1])})
	}
	for i, hs := range hosts {
		spec.Splits = append(spec.Splits, &mrpb.InputSplit{Path: proto.String(fmt.Sprintf("file:///in/%d", i)),
			Length: proto.Int64(100), Hosts: hs, Index: proto.Int32(int32(i))})
	}
	resp, err := h.jt.submitJob(ipc.WithCaller(context.Background(), &ipc.Caller{User: "alice"}), &mrpb.SubmitJobRequest{Spec: spec})
	if err != nil {
		h.t.Fatal(err)
	}
	return h.jt.jobs[resp.GetJobId()]
}

// beat is tracker's heartbeat: its host, free slots and reports.
type beat struct {
	tracker, host, ip string
	maps, reduces     int
	reports           []*mrpb.TaskReport
}

func (h *harness) heartbeat(b beat) *mrpb.HeartbeatResponse {
	h.t.Helper()
	ctx := context.Background()
	if b.ip != "" {
		ctx = ipc.WithCaller(ctx, &ipc.Caller{Remote: &net.TCPAddr{IP: net.ParseIP(b.ip), Port: 40000}})
	}
	if b.host == "" {
		b.host = strings.TrimPrefix(b.tracker, "tt-")
	}
	resp, err := h.jt.heartbeat(ctx, &mrpb.HeartbeatRequest{Tracker: proto.String(b.tracker), Host: proto.String(b.host),
		HttpUrl: proto.String("http://" + b.host + ":50060"), FreeMapSlots: proto.Int32(int32(b.maps)),
		FreeReduceSlots: proto.Int32(int32(b.reduces)), Reports: b.reports, StartedNs: proto.Int64(1)})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp
}

func succeeded(att string, counters ...*mrpb.Counter) *mrpb.TaskReport {
	return &mrpb.TaskReport{AttemptId: proto.String(att), State: mrpb.TaskReport_SUCCEEDED.Enum(), Result: &mrpb.TaskResult{Counters: counters}}
}

func failed(att, msg string, failedMaps ...string) *mrpb.TaskReport {
	return &mrpb.TaskReport{AttemptId: proto.String(att), State: mrpb.TaskReport_FAILED.Enum(),
		Result: &mrpb.TaskResult{Error: proto.String(msg), FailedMaps: failedMaps}}
}

func killed(att string) *mrpb.TaskReport {
	return &mrpb.TaskReport{AttemptId: proto.String(att), State: mrpb.TaskReport_KILLED.Enum(), Result: &mrpb.TaskResult{}}
}

// launched lists the attempts a heartbeat answer starts, by task
// ("m0", "r1") and attempt id.
func launched(resp *mrpb.HeartbeatResponse) (tasks, ids []string) {
	for _, l := range resp.GetLaunch() {
		s := l.GetSpec()
		tasks = append(tasks, fmt.Sprintf("%c%d", map[mrpb.TaskType]byte{mrpb.TaskType_MAP: 'm', mrpb.TaskType_REDUCE: 'r', mrpb.TaskType_JOB_CLEANUP: 'c'}[s.GetType()], s.GetTask()))
		ids = append(ids, l.GetAttemptId())
	}
	return tasks, ids
}

func attemptID(j *job, typ byte, task, attempt int) string {
	return (&mapreduce.TaskAttempt{JobID: j.id, Type: typ, Task: task, Attempt: attempt}).ID()
}

// TestAssignment: a tracker's free map slots go first to the maps whose
// split is on its host (or the address its heartbeat comes from), then to
// the others in task order, never more than it has free; reduces use
// reduce slots.
func TestAssignment(t *testing.T) {
	hosts := [][]string{{"h2"}, {"h1", "h3"}, {"h3"}, {"10.0.0.9"}, {"h1"}}
	for _, tc := range []struct {
		name          string
		b             beat
		want          []string
		local, remote int64
	}{
		{name: "local first", b: beat{tracker: "tt-h1", maps: 3}, want: []string{"m1", "m4", "m0"}, local: 2, remote: 1},
		{name: "all of them", b: beat{tracker: "tt-h1", maps: 9}, want: []string{"m1", "m4", "m0", "m2", "m3"}, local: 2, remote: 3},
		{name: "no free slot", b: beat{tracker: "tt-h1", maps: 0}, want: nil},
		{name: "no local data", b: beat{tracker: "tt-h9", maps: 2}, want: []string{"m0", "m1"}, remote: 2},
		{name: "local by address", b: beat{tracker: "tt-h9", ip: "10.0.0.9", maps: 1}, want: []string{"m3"}, local: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			j := h.submit(hosts, 1, keySlowstart, "1")
			got, _ := launched(h.heartbeat(tc.b))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("launched %v, want %v", got, tc.want)
			}
			if l, r := j.counters.Get(mapreduce.GroupJob, mapreduce.DataLocalMaps), j.counters.Get(mapreduce.GroupJob, mapreduce.RemoteMaps); l != tc.local || r != tc.remote {
				t.Errorf("data-local %d, other %d; want %d, %d", l, r, tc.local, tc.remote)
			}
			if n := j.counters.Get(mapreduce.GroupJob, mapreduce.LaunchedMaps); n != int64(len(tc.want)) {
				t.Errorf("launched maps counter %d", n)
			}
		})
	}
}

// TestReduceSlowStart: reduces are handed out only once the slow-start
// share of the job's maps (rounded up) is done, into reduce slots only;
// a reduce's spec names the maps done so far and the event count.
func TestReduceSlowStart(t *testing.T) {
	for _, tc := range []struct {
		slowstart   string
		mapsDone    int
		reduceSlots int
		want        int // reduces launched
	}{
		{"0.05", 0, 2, 0}, // ceil(0.05×4) = 1 map first
		{"0.05", 1, 2, 2},
		{"0.05", 1, 1, 1},
		{"0.05", 1, 0, 0},
		{"0.5", 1, 2, 0},
		{"0.5", 2, 2, 2},
		{"1", 3, 2, 0},
		{"1", 4, 3, 2}, // with 3 slots: only 2 reduces exist
		{"0", 0, 2, 2},
		{"bogus", 3, 2, 0}, // unreadable: all maps first
	} {
		t.Run(fmt.Sprintf("%s/%d done/%d slots", tc.slowstart, tc.mapsDone, tc.reduceSlots), func(t *testing.T) {
			h := newHarness(t)
			j := h.submit([][]string{nil, nil, nil, nil}, 2, keySlowstart, tc.slowstart)
			_, ids := launched(h.heartbeat(beat{tracker: "tt-a", maps: 4}))
			var reports []*mrpb.TaskReport
			for _, id := range ids[:tc.mapsDone] {
				reports = append(reports, succeeded(id))
			}
			resp := h.heartbeat(beat{tracker: "tt-b", reduces: tc.reduceSlots, reports: reports})
			tasks, _ := launched(resp)
			if len(tasks) != tc.want {
				t.Fatalf("launched %v, want %d reduces", tasks, tc.want)
			}
			for _, l := range resp.GetLaunch() {
				s := l.GetSpec()
				if s.GetType() != mrpb.TaskType_REDUCE || len(s.GetMaps()) != tc.mapsDone || s.GetNumMaps() != 4 || s.GetMapEvents() != int32(tc.mapsDone) {
					t.Errorf("reduce spec: type %v, %d maps, num_maps %d, map_events %d", s.GetType(), len(s.GetMaps()), s.GetNumMaps(), s.GetMapEvents())
				}
				if s.GetReducers() != 2 || s.GetJobId() != j.id || s.GetConf()[keySlowstart] != tc.slowstart {
					t.Errorf("reduce spec lacks the job: %v", s)
				}
			}
		})
	}
}

// runStraggler sets up the speculation cases: a job with three maps on
// tt-a (and reduces, launched once the maps are done), where m0 and m1
// finish after 10 s and m2 still runs at age.
func runStraggler(t *testing.T, age time.Duration, settings ...string) (*harness, *job, []string) {
	h := newHarness(t)
	j := h.submit([][]string{{"a"}, {"a"}, {"a"}}, 1, settings...)
	_, ids := launched(h.heartbeat(beat{tracker: "tt-a", maps: 3}))
	h.clk.advance(10 * time.Second)
	h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{succeeded(ids[0]), succeeded(ids[1])}})
	h.clk.advance(age - 10*time.Second)
	return h, j, ids
}

// TestSpeculation: a task gets a second attempt only when its kind has no
// pending tasks, it has run longer than the lag and twice the mean of its
// finished peers, the free slot is on another tracker, and it has not had
// one already.
func TestSpeculation(t *testing.T) {
	for _, tc := range []struct {
		name     string
		age      time.Duration
		tracker  string
		settings []string
		want     bool
	}{
		{name: "straggler", age: 61 * time.Second, tracker: "tt-b", want: true},
		{name: "within the lag", age: 59 * time.Second, tracker: "tt-b"},
		{name: "same tracker", age: 90 * time.Second, tracker: "tt-a"},
		{name: "not twice the mean", age: 15 * time.Second, tracker: "tt-b", settings: []string{keySpeculativeLag, "1000"}},
		{name: "short lag", age: 21 * time.Second, tracker: "tt-b", settings: []string{keySpeculativeLag, "1000"}, want: true},
		{name: "off", age: 90 * time.Second, tracker: "tt-b", settings: []string{keyMapSpeculative, "false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, j, _ := runStraggler(t, tc.age, append([]string{keySlowstart, "1"}, tc.settings...)...)
			got, gotIDs := launched(h.heartbeat(beat{tracker: tc.tracker, maps: 1}))
			want := []string(nil)
			if tc.want {
				want = []string{"m2"}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("launched %v, want %v", got, want)
			}
			if !tc.want {
				return
			}
			if gotIDs[0] != attemptID(j, 'm', 2, 1) {
				t.Errorf("speculative attempt %s", gotIDs[0])
			}
			h.clk.advance(time.Hour)
			if again, _ := launched(h.heartbeat(beat{tracker: "tt-c", maps: 1})); len(again) != 0 {
				t.Errorf("a second speculative attempt: %v", again)
			}
		})
	}
}

// TestSpeculatePendingFirst: while tasks of a kind are pending, free slots
// are theirs, not stragglers'.
func TestSpeculatePendingFirst(t *testing.T) {
	h, j, _ := runStraggler(t, 90*time.Second, keySlowstart, "1")
	j.maps[0].state = pending // as if its output had been lost
	resp := &mrpb.HeartbeatResponse{}
	if left := h.jt.speculate(j, j.maps, h.jt.trackers["tt-a"], 1, resp); left != 1 || len(resp.Launch) != 0 {
		t.Fatalf("speculated with a pending map: %d slots left, launched %v", left, resp.Launch)
	}
}

// TestSpeculationWinner: whichever attempt succeeds first wins; the other
// is killed on its tracker, its late success counts for nothing, and the
// job commits only once it is reported ended.
func TestSpeculationWinner(t *testing.T) {
	for _, winner := range []int{0, 1} {
		t.Run(fmt.Sprintf("attempt %d wins", winner), func(t *testing.T) {
			h, j, ids := runStraggler(t, 90*time.Second, keySlowstart, "1")
			_, spec := launched(h.heartbeat(beat{tracker: "tt-b", maps: 1}))
			atts := []string{ids[2], spec[0]}
			trackers := []string{"tt-a", "tt-b"}
			loser := 1 - winner
			h.heartbeat(beat{tracker: trackers[winner], reports: []*mrpb.TaskReport{succeeded(atts[winner],
				&mrpb.Counter{Group: proto.String("g"), Name: proto.String("n"), Value: proto.Int64(1)})}})
			resp := h.heartbeat(beat{tracker: trackers[loser]})
			if !slices.Equal(resp.GetKillAttempts(), []string{atts[loser]}) {
				t.Fatalf("loser's tracker told to kill %v, want %s", resp.GetKillAttempts(), atts[loser])
			}
			m := j.maps[2]
			if m.state != done || m.attemptID != atts[winner] || m.tracker != trackers[winner] {
				t.Fatalf("map 2: state %v, output of %s on %s", m.state, m.attemptID, m.tracker)
			}
			if len(j.events) != 3 || j.events[2].GetAttemptId() != atts[winner] {
				t.Fatalf("map completion events %v", j.events)
			}
			h.heartbeat(beat{tracker: trackers[loser], reports: []*mrpb.TaskReport{succeeded(atts[loser],
				&mrpb.Counter{Group: proto.String("g"), Name: proto.String("n"), Value: proto.Int64(1)})}})
			if m.attemptID != atts[winner] || j.counters.Get("g", "n") != 1 || len(m.losers) != 0 {
				t.Fatalf("the loser's late success counted: output %s, counter %d, losers %v", m.attemptID, j.counters.Get("g", "n"), m.losers)
			}
			// Its record is KILLED (Hadoop's "Already completed TIP"), so
			// the SUCCEEDED records are the job's counters.
			if w, l := j.attempts[atts[winner]], j.attempts[atts[loser]]; w.GetState() != mrpb.TaskReport_SUCCEEDED ||
				l.GetState() != mrpb.TaskReport_KILLED || l.GetError() != "Already completed TIP" || len(l.GetCounters()) != 1 {
				t.Fatalf("records: winner %v, loser %v", w, l)
			}
		})
	}
}

// TestLostTracker: a tracker silent past the expiry is lost; its running
// attempts go back to pending, and so do its finished maps while a reduce
// still needs their output; another tracker then gets them. A tracker
// that heartbeats in time is kept.
func TestLostTracker(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reduces   int
		silence   time.Duration
		lost      bool
		wantRerun []string // tasks tt-b gets after the loss
	}{
		{name: "in time", reduces: 1, silence: 10 * time.Minute},
		{name: "maps re-run for the reduce", reduces: 1, silence: 10*time.Minute + time.Millisecond, lost: true, wantRerun: []string{"m0", "m1"}},
		{name: "map-only job keeps its output", silence: time.Hour, lost: true, wantRerun: []string{"m1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			// Without speculation: m1 would be a straggler.
			j := h.submit([][]string{{"a"}, {"a"}}, tc.reduces, keySlowstart, "0.5", keyMapSpeculative, "false")
			_, ids := launched(h.heartbeat(beat{tracker: "tt-a", maps: 2}))
			h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{succeeded(ids[0])}})
			if tc.reduces > 0 {
				if got, _ := launched(h.heartbeat(beat{tracker: "tt-b", reduces: 1})); !slices.Equal(got, []string{"r0"}) {
					t.Fatalf("reduce not started: %v", got)
				}
			}
			// tt-b keeps beating; tt-a falls silent.
			for step := time.Duration(0); step < tc.silence; {
				d := min(time.Minute, tc.silence-step)
				h.clk.advance(d)
				step += d
				h.heartbeat(beat{tracker: "tt-b"})
				h.jt.expireTrackers()
			}
			_, present := h.jt.trackers["tt-a"]
			if present == tc.lost {
				t.Fatalf("tt-a known %v after %v of silence", present, tc.silence)
			}
			if _, ok := h.jt.trackers["tt-b"]; !ok {
				t.Fatal("the tracker that kept beating was lost")
			}
			got, _ := launched(h.heartbeat(beat{tracker: "tt-b", maps: 2}))
			if !slices.Equal(got, tc.wantRerun) {
				t.Fatalf("tt-b got %v, want %v", got, tc.wantRerun)
			}
			if tc.reduces > 0 && tc.lost && j.maps[0].url != "" {
				t.Errorf("the lost map output is still advertised at %s", j.maps[0].url)
			}
		})
	}
}

// TestRetries: an attempt that fails is re-queued until its task has
// failed mapreduce.{map,reduce}.maxattempts times, then the job fails with
// the last error; killed attempts and reduces that could not fetch are not
// charged, and the maps they name run again.
func TestRetries(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reduce    bool
		max       string
		steps     []string // fail | kill | fetch, one per attempt
		wantState mrpb.JobState
		wantErr   string
		failures  int64
	}{
		{name: "map fails max times", max: "2", steps: []string{"fail", "fail"}, wantState: mrpb.JobState_FAILED,
			wantErr: "task m_000000 failed 2 times; last error: boom 1", failures: 2},
		{name: "map retried", max: "4", steps: []string{"fail", "fail", "fail"}, wantState: mrpb.JobState_RUNNING, failures: 3},
		{name: "kills are free", max: "1", steps: []string{"kill", "kill", "kill"}, wantState: mrpb.JobState_RUNNING},
		{name: "reduce fails max times", reduce: true, max: "3", steps: []string{"fail", "kill", "fail", "fail"}, wantState: mrpb.JobState_FAILED,
			wantErr: "task r_000000 failed 3 times; last error: boom 2", failures: 3},
		{name: "fetch failures are free", reduce: true, max: "1", steps: []string{"fetch", "fetch"}, wantState: mrpb.JobState_RUNNING},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			j := h.submit([][]string{nil}, 1, keySlowstart, "1", keyMapMaxAttempts, tc.max, keyReduceMaxAttempts, tc.max)
			var mapAttempt string
			if tc.reduce {
				_, ids := launched(h.heartbeat(beat{tracker: "tt-a", maps: 1}))
				mapAttempt = ids[0]
				h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{succeeded(mapAttempt)}})
			}
			tk, typ, counter := j.maps[0], byte('m'), mapreduce.FailedMaps
			if tc.reduce {
				tk, typ, counter = j.reduces[0], 'r', mapreduce.FailedReduces
			}
			for i, s := range tc.steps {
				b := beat{tracker: "tt-a", maps: 1, reduces: 1}
				got, ids := launched(h.heartbeat(b))
				if len(got) != 1 {
					t.Fatalf("step %d: launched %v", i, got)
				}
				if want := attemptID(j, typ, 0, tk.attempts-1); ids[0] != want {
					t.Fatalf("step %d: attempt %s, want %s", i, ids[0], want)
				}
				var rep *mrpb.TaskReport
				switch s {
				case "fail":
					rep = failed(ids[0], fmt.Sprintf("boom %d", tk.failures))
				case "kill":
					rep = killed(ids[0])
				case "fetch":
					rep = failed(ids[0], "fetch failed", mapAttempt)
				}
				h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{rep}})
				if s == "fetch" {
					if j.maps[0].state != pending {
						t.Fatalf("the map a reduce could not fetch is %v", j.maps[0].state)
					}
					// The map runs again and the reduce after it.
					_, mids := launched(h.heartbeat(beat{tracker: "tt-a", maps: 1}))
					mapAttempt = mids[0]
					h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{succeeded(mapAttempt)}})
				}
			}
			if j.state != tc.wantState || j.err != tc.wantErr {
				t.Fatalf("job %v %q, want %v %q", j.state, j.err, tc.wantState, tc.wantErr)
			}
			if n := j.counters.Get(mapreduce.GroupJob, counter); n != tc.failures || int64(tk.failures) != tc.failures {
				t.Errorf("failures: counter %d, task %d; want %d", n, tk.failures, tc.failures)
			}
			if tc.wantState == mrpb.JobState_FAILED {
				// Its cleanup task aborts the output; nothing else runs.
				got, ids := launched(h.heartbeat(beat{tracker: "tt-a", maps: 1, reduces: 1}))
				if !slices.Equal(got, []string{"c0"}) || ids[0] != attemptID(j, 'c', 0, 0) {
					t.Errorf("a failed job launched %v %v, want its cleanup alone", got, ids)
				}
				h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{succeeded(ids[0])}})
				if got, _ := launched(h.heartbeat(beat{tracker: "tt-a", maps: 1, reduces: 1})); len(got) != 0 || !cleanupDone(j) {
					t.Errorf("after the abort: launched %v, cleanup done %v", got, cleanupDone(j))
				}
			}
		})
	}
}

// TestJobLifecycle: a job whose every task succeeds commits (its _SUCCESS
// written) and is SUCCEEDED with its counters summed, and the trackers are
// told it is done.
func TestJobLifecycle(t *testing.T) {
	h := newHarness(t)
	j := h.submit([][]string{{"a"}, {"a"}}, 1, keySlowstart, "1")
	_, maps := launched(h.heartbeat(beat{tracker: "tt-a", maps: 2}))
	one := &mrpb.Counter{Group: proto.String("g"), Name: proto.String("records"), Value: proto.Int64(5)}
	h.clk.advance(time.Second)
	_, reds := launched(h.heartbeat(beat{tracker: "tt-a", reduces: 1, reports: []*mrpb.TaskReport{succeeded(maps[0], one), succeeded(maps[1], one)}}))
	if len(reds) != 1 {
		t.Fatalf("reduce not launched: %v", reds)
	}
	h.clk.advance(time.Second)
	// The commit is the cleanup task's, on a tracker, in the next free
	// slot; the job is RUNNING until it reports.
	got, cl := launched(h.heartbeat(beat{tracker: "tt-a", reduces: 1, reports: []*mrpb.TaskReport{succeeded(reds[0], one)}}))
	if !slices.Equal(got, []string{"c0"}) || j.state != mrpb.JobState_RUNNING || !j.committing {
		t.Fatalf("after the last reduce: launched %v, job %v committing %v", got, j.state, j.committing)
	}
	if _, err := h.jt.killJob(ipc.WithCaller(context.Background(), &ipc.Caller{User: "alice"}), &mrpb.JobIDRequest{JobId: proto.String(j.id)}); err == nil {
		t.Fatal("a committing job was killed")
	}
	doneJobs := h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{succeeded(cl[0])}}).GetDoneJobs()
	h.jt.background.Wait() // the history write runs off the lock
	h.jt.mu.Lock()
	state, finish := j.state, j.finish
	h.jt.mu.Unlock()
	if state != mrpb.JobState_SUCCEEDED || !finish.Equal(h.clk.now()) || j.counters.Get("g", "records") != 15 {
		t.Fatalf("job %v finished %v, %d records", state, finish, j.counters.Get("g", "records"))
	}
	st := h.jt.status(j)
	if st.GetState() != mrpb.JobState_SUCCEEDED || st.GetMapsDone() != 2 || st.GetReducesDone() != 1 || st.GetFinishMs()-st.GetStartMs() != 2000 {
		t.Fatalf("status %v", st)
	}
	if !slices.Equal(doneJobs, []string{j.id}) {
		t.Fatalf("done jobs %v", doneJobs)
	}
	names := []string{}
	for _, c := range st.GetCounters() {
		names = append(names, c.GetGroup()+"/"+c.GetName())
	}
	sort.Strings(names)
	if !slices.Contains(names, "g/records") {
		t.Fatalf("counters %v", names)
	}
}

// TestSpeculateReduces: reduces follow the same rule as maps, under
// their own switch.
func TestSpeculateReduces(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("speculative %v", on), func(t *testing.T) {
			h := newHarness(t)
			j := h.submit([][]string{nil}, 3, keySlowstart, "1", keyReduceSpeculative, fmt.Sprint(on))
			_, m := launched(h.heartbeat(beat{tracker: "tt-a", maps: 1}))
			_, r := launched(h.heartbeat(beat{tracker: "tt-a", reduces: 3, reports: []*mrpb.TaskReport{succeeded(m[0])}}))
			if len(r) != 3 {
				t.Fatalf("reduces launched: %v", r)
			}
			h.clk.advance(10 * time.Second)
			h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{succeeded(r[0]), succeeded(r[1])}})
			h.clk.advance(80 * time.Second)
			got, ids := launched(h.heartbeat(beat{tracker: "tt-b", maps: 1, reduces: 1}))
			if on != slices.Equal(got, []string{"r2"}) || (!on && len(got) != 0) {
				t.Fatalf("launched %v", got)
			}
			if on && ids[0] != attemptID(j, 'r', 2, 1) {
				t.Fatalf("speculative reduce %s", ids[0])
			}
		})
	}
}

// getMapCompletionEvents with wait_ms holds the call until a map finishes
// (and answers at once when there are events, or without wait_ms); a wait
// that sees nothing answers with no events when it runs out.
func TestMapCompletionEventsWait(t *testing.T) {
	h := newHarness(t)
	j := h.submit([][]string{nil, nil}, 1)
	_, ids := launched(h.heartbeat(beat{tracker: "tt-a", maps: 2}))
	ask := func(from, waitMs int32) (*mrpb.MapCompletionEventsResponse, time.Duration) {
		start := time.Now()
		resp, err := h.jt.getMapCompletionEvents(context.Background(), &mrpb.MapCompletionEventsRequest{JobId: proto.String(j.id), FromIndex: proto.Int32(from), WaitMs: proto.Int32(waitMs)})
		if err != nil {
			t.Fatal(err)
		}
		return resp, time.Since(start)
	}
	if resp, took := ask(0, 0); len(resp.GetEvents()) != 0 || took > 10*time.Second {
		t.Fatalf("no wait: %v after %v", resp.GetEvents(), took)
	}
	if resp, took := ask(0, 200); len(resp.GetEvents()) != 0 || took < 150*time.Millisecond {
		t.Fatalf("a wait that sees nothing: %v after %v", resp.GetEvents(), took)
	}
	done := make(chan *mrpb.MapCompletionEventsResponse)
	go func() { resp, _ := ask(0, 20000); done <- resp }()
	time.Sleep(100 * time.Millisecond)
	h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{succeeded(ids[0])}})
	select {
	case resp := <-done:
		if len(resp.GetEvents()) != 1 || resp.GetEvents()[0].GetAttemptId() != ids[0] {
			t.Fatalf("woken with %v", resp.GetEvents())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("a waiting call was not woken by the map's completion")
	}
	if resp, took := ask(0, 20000); len(resp.GetEvents()) != 1 || took > 10*time.Second { // not the 20 s
		t.Fatalf("events past from_index: %v after %v", resp.GetEvents(), took)
	}
	// A job that ends wakes its waiters.
	go func() { resp, _ := ask(1, 20000); done <- resp }()
	time.Sleep(100 * time.Millisecond)
	if resp := endAndAwait(t, h, j, done); resp.GetJobState() != mrpb.JobState_KILLED {
		t.Fatalf("woken with state %v", resp.GetJobState())
	}
}

// endAndAwait kills job j and returns what the call held for it sent on
// done; the test fails if the call is not woken.
func endAndAwait[T any](t *testing.T, h *harness, j *job, done <-chan T) T {
	t.Helper()
	h.jt.mu.Lock()
	h.jt.endJob(j, mrpb.JobState_KILLED, "test")
	h.jt.mu.Unlock()
	select {
	case v := <-done:
		return v
	case <-time.After(15 * time.Second):
		t.Fatal("a waiting call was not woken by the job's end")
		panic("unreachable")
	}
}

// getJobStatus with wait_ms holds the call until a task finishes (the
// count differs from seen_done) or the job ends; past maxHeld held calls
// it answers at once; a caller that goes away is let go; no held call is
// left counted.
func TestJobStatusWait(t *testing.T) {
	h := newHarness(t)
	j := h.submit([][]string{nil, nil}, 1)
	_, ids := launched(h.heartbeat(beat{tracker: "tt-a", maps: 2}))
	askCtx := func(ctx context.Context, seen, waitMs int32) (*mrpb.JobStatus, time.Duration) {
		start := time.Now()
		resp, err := h.jt.getJobStatus(ctx, &mrpb.JobIDRequest{JobId: proto.String(j.id), SeenDone: proto.Int32(seen), WaitMs: proto.Int32(waitMs)})
		if err != nil {
			t.Error(err)
		}
		return resp.GetStatus(), time.Since(start)
	}
	ask := func(seen, waitMs int32) (*mrpb.JobStatus, time.Duration) {
		return askCtx(context.Background(), seen, waitMs)
	}
	// untilHeld waits until n calls are held.
	untilHeld := func(n int32) {
		for deadline := time.Now().Add(10 * time.Second); h.jt.held.Load() != n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d calls held, want %d", h.jt.held.Load(), n)
			}
		}
	}
	if st, took := ask(0, 0); st.GetMapsDone() != 0 || took > 5*time.Second {
		t.Fatalf("no wait: %d maps done after %v", st.GetMapsDone(), took)
	}
	if st, took := ask(0, 200); st.GetMapsDone() != 0 || took < 150*time.Millisecond {
		t.Fatalf("a wait that sees nothing: %d maps done after %v", st.GetMapsDone(), took)
	}
	done := make(chan *mrpb.JobStatus)
	go func() { st, _ := ask(0, 20000); done <- st }()
	untilHeld(1)
	h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{succeeded(ids[0])}})
	select {
	case st := <-done:
		if st.GetMapsDone() != 1 {
			t.Fatalf("woken with %d maps done", st.GetMapsDone())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("a waiting call was not woken by the map's completion")
	}
	if st, took := ask(0, 20000); st.GetMapsDone() != 1 || took > 5*time.Second {
		t.Fatalf("a count past seen_done: %d after %v", st.GetMapsDone(), took)
	}
	if n := h.jt.held.Load(); n != 0 {
		t.Fatalf("%d calls still counted as held", n)
	}
	// A caller that goes away is answered and no longer counted.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { st, _ := askCtx(ctx, 1, 20000); done <- st }()
	untilHeld(1)
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a call whose caller went away is still held")
	}
	untilHeld(0)
	h.jt.held.Store(h.jt.maxHeld())
	if _, took := ask(1, 20000); took > 5*time.Second {
		t.Fatalf("a call past maxHeld was held %v", took)
	}
	h.jt.held.Store(0)
	go func() { st, _ := ask(1, 20000); done <- st }()
	untilHeld(1)
	if st := endAndAwait(t, h, j, done); st.GetState() != mrpb.JobState_KILLED {
		t.Fatalf("woken with state %v", st.GetState())
	}
	untilHeld(0)
}
