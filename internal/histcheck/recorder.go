package histcheck

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Op is an operation kind. Write, Read and Delete are RegisterModel's;
// Create, Exists and Remove are NamespaceModel's.
type Op uint8

const (
	OpWrite Op = iota + 1
	OpRead
	OpDelete
	OpCreate
	OpExists
	OpRemove
)

var opNames = [...]string{OpWrite: "write", OpRead: "read", OpDelete: "delete", OpCreate: "create", OpExists: "exists", OpRemove: "remove"}

func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// register reports whether o is one of RegisterModel's operations.
func (o Op) register() bool { return o == OpWrite || o == OpRead || o == OpDelete }

// namespace reports whether o is one of NamespaceModel's operations.
func (o Op) namespace() bool { return o == OpCreate || o == OpExists || o == OpRemove }

// Result is what the client learnt from an operation.
type Result uint8

const (
	// OK: the operation succeeded (a read or Exists found the file).
	OK Result = iota + 1
	// Absent: the file did not exist (FileNotFoundException, delete
	// returning false, Exists false).
	Absent
	// Exists: create without overwrite found the file there.
	Exists
	// Torn: a read returned bytes that are not a whole written value.
	Torn
	// Failed: the server definitely did not apply the operation.
	Failed
	// Unknown: the operation may or may not have taken effect.
	Unknown
)

var resultNames = [...]string{OK: "ok", Absent: "absent", Exists: "exists", Torn: "torn", Failed: "failed", Unknown: "unknown"}

func (r Result) String() string {
	if int(r) < len(resultNames) && resultNames[r] != "" {
		return resultNames[r]
	}
	return fmt.Sprintf("Result(%d)", uint8(r))
}

// Input is a porcupine.Operation's Input: an operation on one key (a path).
// Value is the content a Write stores; empty otherwise.
type Input struct {
	Op    Op
	Key   string
	Value string
}

// Output is a porcupine.Operation's Output. Value is the content a Read
// with Result OK returned; empty otherwise.
type Output struct {
	Result Result
	Value  string
}

// Recorder collects a history of operations. It is safe for concurrent
// use. Times come from one clock, which must never go backwards.
type Recorder struct {
	clock func() int64

	mu   sync.Mutex
	ops  []porcupine.Operation
	open map[*Call]struct{}
}

// NewRecorder returns an empty Recorder. clock gives the time as an int64
// that never decreases; nil means nanoseconds on the monotonic clock since
// NewRecorder.
func NewRecorder(clock func() int64) *Recorder {
	if clock == nil {
		start := time.Now()
		clock = func() int64 { return int64(time.Since(start)) }
	}
	return &Recorder{clock: clock, open: map[*Call]struct{}{}}
}

// Call is an operation that has been invoked and not yet recorded as
// finished.
type Call struct {
	r      *Recorder
	client int
	in     Input
	start  int64
}

// Begin records the invocation of in by client (a small non-negative id;
// porcupine's visualisation draws one row per id). The time is taken
// after the call is registered, so it is no later than the real start.
func (r *Recorder) Begin(client int, in Input) *Call {
	c := &Call{r: r, client: client, in: in}
	r.mu.Lock()
	r.open[c] = struct{}{}
	c.start = r.clock()
	r.mu.Unlock()
	return c
}

// End records the response. With Result Unknown the response time is
// math.MaxInt64: the operation may take effect at any later instant. err,
// if not nil, is kept as the operation's metadata for the visualisation.
// End must be called at most once per Call.
func (c *Call) End(out Output, err error) {
	r := c.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.open[c]; !ok {
		panic("histcheck: Call.End called twice")
	}
	delete(r.open, c)
	ret := r.clock()
	if out.Result == Unknown {
		ret = math.MaxInt64
	}
	var meta any
	if err != nil {
		meta = err.Error()
	}
	r.ops = append(r.ops, porcupine.Operation{ClientId: c.client, Input: c.in, Call: c.start, Output: out, Return: ret, Metadata: meta})
}

// Operations returns the history so far: every ended operation except
// reads with unknown outcome (they constrain nothing), and every call not
// yet ended as Unknown. The slice is a copy.
func (r *Recorder) Operations() []porcupine.Operation {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := make([]porcupine.Operation, 0, len(r.ops)+len(r.open))
	for _, op := range r.ops {
		if skip(op) {
			continue
		}
		h = append(h, op)
	}
	for c := range r.open {
		op := porcupine.Operation{ClientId: c.client, Input: c.in, Call: c.start, Output: Output{Result: Unknown}, Return: math.MaxInt64, Metadata: "still running"}
		if !skip(op) {
			h = append(h, op)
		}
	}
	return h
}

// skip reports whether op has no effect and no observation: an
// observation whose outcome is unknown.
func skip(op porcupine.Operation) bool {
	in, out := op.Input.(Input), op.Output.(Output)
	return out.Result == Unknown && (in.Op == OpRead || in.Op == OpExists)
}

// Stats counts the recorded operations by kind and result.
func (r *Recorder) Stats() map[Op]map[Result]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := map[Op]map[Result]int{}
	for _, op := range r.ops {
		in, out := op.Input.(Input), op.Output.(Output)
		if s[in.Op] == nil {
			s[in.Op] = map[Result]int{}
		}
		s[in.Op][out.Result]++
	}
	return s
}
