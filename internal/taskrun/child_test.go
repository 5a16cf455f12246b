package taskrun

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/procstat"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/spill"
)

// withRunner installs r for the test and restores the previous runner.
func withRunner(t *testing.T, r Runner) {
	prev := registered()
	SetRunner(r)
	t.Cleanup(func() { SetRunner(prev) })
}

// TestMainResults: the spec reaches the
// runner as written, and every way an attempt ends yields exactly one
// decodable result and the matching exit status.
func TestMainResults(t *testing.T) {
	spec := &mrpb.TaskSpec{Job: proto.String("wordcount"), Args: []string{"in", "out"}, Conf: map[string]string{"k": "v"},
		JobId: proto.String("job_1_0001"), Type: mrpb.TaskType_REDUCE.Enum(), Task: proto.Int32(3), LocalDirs: []string{"/l"},
		Maps: []*mrpb.MapCompletionEvent{{MapIndex: proto.Int32(0), AttemptId: proto.String("attempt_1_0001_m_000000_0"), Url: proto.String("http://h:1")}}}
	for _, tc := range []struct {
		name     string
		in       string // "" means spec
		run      Runner
		code     int
		errorHas string
	}{
		{name: "success", run: func(ctx context.Context, got *mrpb.TaskSpec, link *Link) (*mrpb.TaskResult, error) {
			if !proto.Equal(got, spec) {
				return nil, errors.New("spec changed on the way: " + got.String())
			}
			if link != nil {
				return nil, errors.New("a link outside a TaskTracker")
			}
			return &mrpb.TaskResult{Counters: []*mrpb.Counter{{Group: proto.String("g"), Name: proto.String("n"), Value: proto.Int64(1 << 40)}}}, nil
		}},
		{name: "error", run: func(context.Context, *mrpb.TaskSpec, *Link) (*mrpb.TaskResult, error) {
			return nil, errors.New("boom")
		}, code: 1, errorHas: "boom"},
		{name: "result with error", run: func(context.Context, *mrpb.TaskSpec, *Link) (*mrpb.TaskResult, error) {
			return &mrpb.TaskResult{FailedMaps: []string{"a"}}, errors.New("fetch failed")
		}, code: 1, errorHas: "fetch failed"},
		{name: "panic", run: func(context.Context, *mrpb.TaskSpec, *Link) (*mrpb.TaskResult, error) {
			panic("mapper exploded")
		}, code: 1, errorHas: "panic: mapper exploded"},
		{name: "bad spec", in: `{"job": 7}`, run: func(context.Context, *mrpb.TaskSpec, *Link) (*mrpb.TaskResult, error) {
			return nil, errors.New("ran a bad spec")
		}, code: 1, errorHas: "bad task spec"},
		{name: "no runner", code: 1, errorHas: "does not link the mapreduce package"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(ProgressFDEnv, "")
			withRunner(t, tc.run)
			var in, out bytes.Buffer
			if tc.in != "" {
				in.WriteString(tc.in)
			} else if err := WriteSpec(&in, spec); err != nil {
				t.Fatal(err)
			}
			code := Main(context.Background(), &in, &out)
			res, err := ReadResult(out.Bytes())
			if err != nil {
				t.Fatalf("result %q: %v", out.String(), err)
			}
			if code != tc.code || !strings.Contains(res.GetError(), tc.errorHas) || (tc.errorHas == "") != (res.GetError() == "") {
				t.Fatalf("exit %d, error %q; want %d, %q", code, res.GetError(), tc.code, tc.errorHas)
			}
			if tc.name == "success" && res.GetCounters()[0].GetValue() != 1<<40 {
				t.Fatalf("counters %v", res.GetCounters())
			}
			if tc.name == "result with error" && len(res.GetFailedMaps()) != 1 {
				t.Fatalf("the failed maps were lost: %v", res)
			}
		})
	}
}

// TestReadSpecUnknownFields: a spec from a newer TaskTracker, with fields
// this version does not know, still reads.
func TestReadSpecUnknownFields(t *testing.T) {
	spec, err := ReadSpec(strings.NewReader(`{"job":"sort","fromTheFuture":{"x":1},"type":"MAP","task":2}`))
	if err != nil || spec.GetJob() != "sort" || spec.GetType() != mrpb.TaskType_MAP || spec.GetTask() != 2 {
		t.Fatalf("%v, %v", spec, err)
	}
}

// TestCommitGate: asking writes CommitRequest on the progress pipe and
// waits for the answer byte; a cancelled context stops the wait; no
// answer pipe or no link means no arbitration.
func TestCommitGate(t *testing.T) {
	var progress bytes.Buffer
	answer, answerW := io.Pipe()
	gate := (&Link{Progress: &progress, Answer: answer}).CommitGate()
	done := make(chan error, 1)
	go func() { done <- gate(context.Background()) }()
	select {
	case err := <-done:
		t.Fatalf("the gate opened before the answer: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	answerW.Write([]byte{1})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(progress.Bytes(), []byte{CommitRequest}) {
		t.Fatalf("progress pipe got %v", progress.Bytes())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := gate(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	if (&Link{Progress: &progress}).CommitGate() != nil || (*Link)(nil).CommitGate() != nil {
		t.Fatal("a gate without an answer pipe")
	}
	(*Link)(nil).Alive() // a task outside a TaskTracker has nobody to tell
}

// TestMapOutputRoundTrip: a map output survives the protocol unchanged.
func TestMapOutputRoundTrip(t *testing.T) {
	out := spill.Output{Path: "/l/file.out", IndexPath: "/l/file.out.index",
		Index: []spill.IndexEntry{{Offset: 0, RawLength: 10, PartLength: 14}, {Offset: 14, RawLength: 1 << 33, PartLength: 1<<33 + 4}}}
	got := MapOutput(MapOutputProto(out))
	if got.Path != out.Path || got.IndexPath != out.IndexPath || len(got.Index) != 2 || got.Index[1] != out.Index[1] {
		t.Fatalf("%+v", got)
	}
}

// FuzzReadResult: whatever a child writes on its standard output, the
// TaskTracker's decoder returns an error or a result that survives a
// round trip.
func FuzzReadResult(f *testing.F) {
	var b bytes.Buffer
	WriteResult(&b, &mrpb.TaskResult{Output: MapOutputProto(spill.Output{Path: "/p", Index: []spill.IndexEntry{{RawLength: 1}}}),
		Counters: []*mrpb.Counter{{Group: proto.String("g"), Name: proto.String("n"), Value: proto.Int64(-1)}}, FailedMaps: []string{"a"}})
	f.Add(b.Bytes())
	f.Add([]byte(`{"error":"boom"}`))
	f.Add([]byte(`{"counters":{"g":{"n":1}}}`)) // the layout before the protocol was typed
	f.Add([]byte("hello\n{}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := ReadResult(in)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteResult(&out, res); err != nil {
			t.Fatal(err)
		}
		again, err := ReadResult(out.Bytes())
		if err != nil || !proto.Equal(res, again) {
			t.Fatalf("round trip: %v, %v vs %v", err, res, again)
		}
	})
}

// TestServeRunsAttemptsInTurn: a child started for task reuse says
// ReuseReady, answers each spec line with one result line carrying that
// attempt's usage and stderr in the attempt's own log file, and ends at
// the end of its input (0) or after the first failed attempt (1).
func TestServeRunsAttemptsInTurn(t *testing.T) {
	// serve points fd 2 at each attempt's log: keep the test's own.
	saved, err := syscall.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Dup3(saved, 2, 0); syscall.Close(saved) }()
	dir := t.TempDir()
	spec := func(job string, task int32) *mrpb.TaskSpec {
		log := filepath.Join(dir, fmt.Sprintf("%s-%d.stderr", job, task))
		os.WriteFile(log, nil, 0o644)
		return &mrpb.TaskSpec{Job: proto.String(job), JobId: proto.String("job_1_0001"), Type: mrpb.TaskType_MAP.Enum(), Task: proto.Int32(task), LogFile: proto.String(log)}
	}
	withRunner(t, func(ctx context.Context, s *mrpb.TaskSpec, link *Link) (*mrpb.TaskResult, error) {
		fmt.Fprintf(os.Stderr, "attempt %d\n", s.GetTask())
		if s.GetJob() == "fail" {
			return nil, errors.New("boom")
		}
		for start, _ := procstat.Self(); ; {
			if now, _ := procstat.Self(); now.Total()-start.Total() >= 20*time.Millisecond {
				break
			}
		}
		return &mrpb.TaskResult{Counters: []*mrpb.Counter{{Name: proto.String("task"), Value: proto.Int64(int64(s.GetTask()))}}}, nil
	})
	for _, tc := range []struct {
		name  string
		specs []*mrpb.TaskSpec
		extra string // after the specs
		code  int
		errs  []string // each result's error ("": none)
	}{
		{name: "three", specs: []*mrpb.TaskSpec{spec("ok", 0), spec("ok", 1), spec("ok", 2)}, errs: []string{"", "", ""}},
		{name: "failure ends it", specs: []*mrpb.TaskSpec{spec("ok", 3), spec("fail", 4), spec("ok", 5)}, code: 1, errs: []string{"", "boom"}},
		{name: "bad line", specs: []*mrpb.TaskSpec{spec("ok", 6)}, extra: "{\"job\": 7}\n", code: 1, errs: []string{"", "bad task spec"}},
		{name: "cut short", specs: []*mrpb.TaskSpec{spec("ok", 7)}, extra: `{"job":"ok"`, code: 1, errs: []string{"", "bad task spec"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in, out, progress bytes.Buffer
			for _, s := range tc.specs {
				WriteSpec(&in, s)
			}
			in.WriteString(tc.extra)
			code := serve(context.Background(), &in, &out, &Link{Progress: &progress})
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if b := progress.Bytes(); len(b) == 0 || b[0] != ReuseReady {
				t.Errorf("progress %v: ReuseReady not first", b)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) != len(tc.errs) {
				t.Fatalf("%d results, want %d:\n%s", len(lines), len(tc.errs), out.String())
			}
			for i, l := range lines {
				res, err := ReadResult([]byte(l))
				if err != nil || !strings.Contains(res.GetError(), tc.errs[i]) || (tc.errs[i] == "") != (res.GetError() == "") {
					t.Fatalf("result %d: %v, %v; want error %q", i, res, err, tc.errs[i])
				}
				if tc.errs[i] != "" {
					continue
				}
				task := tc.specs[i].GetTask()
				if u := res.GetUsage(); u.GetUserUs()+u.GetSystemUs() < 10_000 || u.GetUserUs()+u.GetSystemUs() > 1_000_000 || u.GetMaxRssBytes() <= 0 {
					t.Errorf("attempt %d's usage %v", task, u)
				}
				if got, _ := os.ReadFile(tc.specs[i].GetLogFile()); string(got) != fmt.Sprintf("attempt %d\n", task) {
					t.Errorf("attempt %d's log %q", task, got)
				}
			}
		})
	}
}

// TestReadLine: lines up to the limit, and what is not a line.
func TestReadLine(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("abc\n"+strings.Repeat("x", 40)+"\n"+strings.Repeat("y", 41)+"\nz"), 16)
	for _, want := range []string{"abc", strings.Repeat("x", 40)} {
		if got, err := ReadLine(r, 40); string(got) != want || err != nil {
			t.Fatalf("ReadLine = %q, %v; want %q", got, err, want)
		}
	}
	if _, err := ReadLine(r, 40); err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("a 41-byte line: %v", err)
	}
	if _, err := ReadLine(bufio.NewReader(strings.NewReader("z")), 40); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("an unterminated line: %v", err)
	}
	if _, err := ReadLine(bufio.NewReader(strings.NewReader("")), 40); err != io.EOF {
		t.Fatalf("no line: %v", err)
	}
}

// TestWatchParent: a child notices its parent is gone (its parent pid
// changed) within a check, and not before.
func TestWatchParent(t *testing.T) {
	var ppid atomic.Int64
	ppid.Store(100)
	gone := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go watchParent(ctx, time.Millisecond, 100, func() int { return int(ppid.Load()) }, func() { close(gone) })
	select {
	case <-gone:
		t.Fatal("gone while the parent lives")
	case <-time.After(20 * time.Millisecond):
	}
	ppid.Store(1) // reparented
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the parent's death went unnoticed")
	}
}
