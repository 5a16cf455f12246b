package taskrun

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

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
