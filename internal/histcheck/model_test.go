package histcheck

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/ipc"
)

const inf = math.MaxInt64

func op(client int, call, ret int64, in Input, out Output) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Call: call, Return: ret, Input: in, Output: out}
}

func wr(k, v string) Input    { return Input{Op: OpWrite, Key: k, Value: v} }
func rd(k string) Input       { return Input{Op: OpRead, Key: k} }
func del(k string) Input      { return Input{Op: OpDelete, Key: k} }
func res(r Result) Output     { return Output{Result: r} }
func val(v string) Output     { return Output{Result: OK, Value: v} }
func ns(o Op, k string) Input { return Input{Op: o, Key: k} }

func TestRegisterModel(t *testing.T) {
	tests := []struct {
		name string
		h    []porcupine.Operation
		ok   bool
	}{
		{"linearizable", []porcupine.Operation{
			op(0, 0, 10, wr("a", "1"), res(OK)),
			op(1, 5, 15, rd("a"), val("1")), // concurrent with the write
			op(0, 20, 30, wr("a", "2"), res(OK)),
			op(1, 25, 26, rd("a"), val("1")), // write 2 not yet applied
			op(1, 27, 28, rd("a"), val("2")),
			op(2, 40, 50, del("a"), res(OK)),
			op(1, 60, 70, rd("a"), res(Absent)),
			op(2, 80, 90, del("a"), res(Absent)),
		}, true},
		{"read before any write is absent", []porcupine.Operation{
			op(0, 0, 1, rd("a"), res(Absent)),
		}, true},
		{"stale read", []porcupine.Operation{
			op(0, 0, 10, wr("a", "1"), res(OK)),
			op(0, 20, 30, wr("a", "2"), res(OK)),
			op(1, 40, 50, rd("a"), val("1")),
		}, false},
		{"lost acknowledged write", []porcupine.Operation{
			op(0, 0, 10, wr("a", "1"), res(OK)),
			op(1, 20, 30, rd("a"), res(Absent)),
		}, false},
		{"value never written", []porcupine.Operation{
			op(0, 0, 10, wr("a", "1"), res(OK)),
			op(1, 20, 30, rd("a"), val("")),
		}, false},
		{"unknown write that later appears", []porcupine.Operation{
			op(0, 0, 10, wr("a", "1"), res(OK)),
			op(0, 20, inf, wr("a", "2"), res(Unknown)),
			op(1, 30, 40, rd("a"), val("1")),
			op(1, 50, 60, rd("a"), val("2")),
			op(1, 70, 80, rd("a"), val("2")),
		}, true},
		{"unknown write that never appears", []porcupine.Operation{
			op(0, 0, 10, wr("a", "1"), res(OK)),
			op(0, 20, inf, wr("a", "2"), res(Unknown)),
			op(1, 30, 40, rd("a"), val("1")),
			op(1, 50, 60, rd("a"), val("1")),
		}, true},
		{"unknown write seen before it was invoked", []porcupine.Operation{
			op(1, 0, 5, rd("a"), val("2")),
			op(0, 20, inf, wr("a", "2"), res(Unknown)),
		}, false},
		{"unknown write cannot apply twice", []porcupine.Operation{
			op(0, 0, inf, wr("a", "2"), res(Unknown)),
			op(1, 10, 20, rd("a"), val("2")),
			op(2, 30, 40, wr("a", "3"), res(OK)),
			op(1, 50, 60, rd("a"), val("2")),
		}, false},
		{"failed write has no effect", []porcupine.Operation{
			op(0, 0, 10, wr("a", "1"), res(Failed)),
			op(1, 20, 30, rd("a"), val("1")),
		}, false},
		{"delete of absent file reports true", []porcupine.Operation{
			op(0, 0, 10, del("a"), res(OK)),
		}, false},
		{"retried delete reports absent", []porcupine.Operation{
			op(0, 0, 10, wr("a", "1"), res(OK)),
			op(0, 20, 30, del("a"), res(Absent)),
		}, false},
		{"unknown delete", []porcupine.Operation{
			op(0, 0, 10, wr("a", "1"), res(OK)),
			op(0, 20, inf, del("a"), res(Unknown)),
			op(1, 30, 40, rd("a"), val("1")),
			op(1, 50, 60, rd("a"), res(Absent)),
		}, true},
		{"torn read constrains nothing", []porcupine.Operation{
			op(0, 0, 10, wr("a", "1"), res(OK)),
			op(1, 20, 30, rd("a"), Output{Result: Torn}),
		}, true},
		{"keys are independent", []porcupine.Operation{
			op(0, 0, 10, wr("a", "1"), res(OK)),
			op(1, 20, 30, rd("b"), res(Absent)),
			op(1, 20, 30, rd("a"), val("1")),
		}, true},
		{"violation on one key of two", []porcupine.Operation{
			op(0, 0, 10, wr("a", "1"), res(OK)),
			op(0, 0, 10, wr("b", "1"), res(OK)),
			op(1, 20, 30, rd("a"), val("1")),
			op(1, 20, 30, rd("b"), res(Absent)),
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, rep := Check(RegisterModel, tt.h, 10*time.Second, "")
			if ok != tt.ok {
				t.Fatalf("Check = %v (%v), want %v", ok, rep, tt.ok)
			}
		})
	}
}

func TestNamespaceModel(t *testing.T) {
	tests := []struct {
		name string
		h    []porcupine.Operation
		ok   bool
	}{
		{"create once", []porcupine.Operation{
			op(0, 0, 10, ns(OpCreate, "a"), res(OK)),
			op(1, 5, 15, ns(OpCreate, "a"), res(Exists)),
			op(1, 20, 30, ns(OpExists, "a"), res(OK)),
			op(0, 40, 50, ns(OpRemove, "a"), res(OK)),
			op(1, 60, 70, ns(OpExists, "a"), res(Absent)),
			op(1, 80, 90, ns(OpCreate, "a"), res(OK)),
		}, true},
		{"two creates both succeed", []porcupine.Operation{
			op(0, 0, 10, ns(OpCreate, "a"), res(OK)),
			op(1, 5, 15, ns(OpCreate, "a"), res(OK)),
		}, false},
		{"retried create reports exists", []porcupine.Operation{
			// The first attempt applied; the retry was not answered from a
			// retry cache. Nobody else created the name.
			op(0, 0, 10, ns(OpCreate, "a"), res(Exists)),
		}, false},
		{"unknown create that applied", []porcupine.Operation{
			op(0, 0, inf, ns(OpCreate, "a"), res(Unknown)),
			op(1, 10, 20, ns(OpCreate, "a"), res(Exists)),
		}, true},
		{"unknown create that did not apply", []porcupine.Operation{
			op(0, 0, inf, ns(OpCreate, "a"), res(Unknown)),
			op(1, 10, 20, ns(OpExists, "a"), res(Absent)),
			op(1, 30, 40, ns(OpCreate, "a"), res(OK)),
		}, true},
		{"lost create", []porcupine.Operation{
			op(0, 0, 10, ns(OpCreate, "a"), res(OK)),
			op(1, 20, 30, ns(OpExists, "a"), res(Absent)),
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, rep := Check(NamespaceModel, tt.h, 10*time.Second, "")
			if ok != tt.ok {
				t.Fatalf("Check = %v (%v), want %v", ok, rep, tt.ok)
			}
		})
	}
}

// Each model checks only its own operations, so one history can hold both.
func TestModelsPartitionTheirOwnOps(t *testing.T) {
	h := []porcupine.Operation{
		op(0, 0, 10, wr("/r0", "1"), res(OK)),
		op(1, 20, 30, rd("/r0"), val("1")),
		op(0, 0, 10, ns(OpCreate, "/n0"), res(OK)),
		op(1, 20, 30, ns(OpExists, "/n0"), res(Absent)), // violation
	}
	if ok, rep := Check(RegisterModel, h, 0, ""); !ok || rep.Keys != 1 || rep.Ops != 2 {
		t.Errorf("register: %v %v", ok, rep)
	}
	if ok, rep := Check(NamespaceModel, h, 0, ""); ok || rep.Keys != 1 || len(rep.Illegal) != 1 || rep.Illegal[0] != "/n0" {
		t.Errorf("namespace: %v %v", ok, rep)
	}
}

func TestCheckNamesKeyAndWritesVisualization(t *testing.T) {
	h := []porcupine.Operation{
		op(0, 0, 10, wr("/ok", "1"), res(OK)),
		op(1, 20, 30, rd("/ok"), val("1")),
		op(0, 0, 10, wr("/bad", "1"), res(OK)),
		op(0, 20, 30, wr("/bad", "2"), res(OK)),
		op(1, 40, 50, rd("/bad"), val("1")),
	}
	path := filepath.Join(t.TempDir(), "viz.html")
	ok, rep := Check(RegisterModel, h, 10*time.Second, path)
	if ok || rep.Result != porcupine.Illegal {
		t.Fatalf("Check = %v %v, want Illegal", ok, rep)
	}
	if len(rep.Illegal) != 1 || rep.Illegal[0] != "/bad" {
		t.Errorf("Illegal = %q, want [/bad]", rep.Illegal)
	}
	if rep.Visualization != path || rep.VisualizationErr != nil {
		t.Fatalf("visualization %q, %v", rep.Visualization, rep.VisualizationErr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "/bad") || strings.Contains(string(b), "/ok ") {
		t.Errorf("visualization should show only the bad key")
	}
	if !strings.Contains(rep.String(), "/bad") {
		t.Errorf("report %q does not name the key", rep)
	}
}

func TestRecorder(t *testing.T) {
	now := int64(0)
	clock := func() int64 { now++; return now }
	r := NewRecorder(clock)
	w := r.Begin(0, wr("a", "1"))    // call 1
	rdUnknown := r.Begin(1, rd("a")) // call 2
	open := r.Begin(2, wr("a", "2")) // call 3, never ended
	w.End(res(OK), nil)              // return 4
	rdUnknown.End(res(Unknown), os.ErrDeadlineExceeded)
	u := r.Begin(1, del("a")) // call 6
	u.End(res(Unknown), os.ErrDeadlineExceeded)

	h := r.Operations()
	if len(h) != 3 {
		t.Fatalf("got %d operations, want 3 (unknown read left out): %+v", len(h), h)
	}
	byOp := map[Op]porcupine.Operation{}
	for _, o := range h {
		byOp[o.Input.(Input).Op] = o
	}
	if o := byOp[OpDelete]; o.Call != 6 || o.Return != math.MaxInt64 || o.Metadata == nil {
		t.Errorf("unknown delete = %+v, want call 6, return MaxInt64, error kept", o)
	}
	if o := byOp[OpWrite]; o.Input.(Input).Value == "1" && (o.Call != 1 || o.Return != 4) {
		t.Errorf("write = %+v, want [1,4]", o)
	}
	var sawOpen bool
	for _, o := range h {
		if o.Input.(Input).Value == "2" {
			sawOpen = o.Call == 3 && o.Return == math.MaxInt64 && o.Output.(Output).Result == Unknown
		}
	}
	if !sawOpen {
		t.Errorf("open call not reported as unknown: %+v", h)
	}
	open.End(res(OK), nil)
	if s := r.Stats(); s[OpWrite][OK] != 2 || s[OpRead][Unknown] != 1 {
		t.Errorf("Stats = %v", s)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		op   Op
		err  error
		want Result
	}{
		{OpRead, nil, OK},
		{OpRead, &os.PathError{Op: "open", Path: "/a", Err: os.ErrNotExist}, Absent},
		{OpDelete, os.ErrNotExist, Absent},
		{OpWrite, os.ErrNotExist, Unknown},
		{OpCreate, os.ErrExist, Exists},
		{OpWrite, os.ErrExist, Failed},
		{OpWrite, os.ErrPermission, Failed},
		{OpWrite, os.ErrDeadlineExceeded, Unknown},
		{OpRead, os.ErrClosed, Unknown},
		{OpWrite, &hdfs.RemoteError{Class: ipc.ClassStandby}, Unknown},
		{OpWrite, &hdfs.RemoteError{Class: ipc.ClassIOException}, Unknown},
		{OpWrite, &hdfs.RemoteError{Class: ipc.ClassSafeMode}, Failed},
		{OpWrite, &hdfs.RemoteError{Class: ipc.ClassAccessControl}, Failed},
		{OpRead, &os.PathError{Op: "open", Path: "/a", Err: &hdfs.RemoteError{Class: ipc.ClassFileNotFound}}, Absent},
		{OpCreate, &hdfs.RemoteError{Class: ipc.ClassFileAlreadyExists}, Exists},
		{OpWrite, &hdfs.RemoteError{Class: ipc.ClassAlreadyBeingCreated, Message: "Failed to CREATE_FILE /a for c2 on h because this file lease is currently owned by c1 on h"}, Failed},
		{OpCreate, &hdfs.RemoteError{Class: ipc.ClassAlreadyBeingCreated, Message: "failed to create file /a for c1 for client h because current leaseholder is trying to recreate file."}, Unknown},
		{OpWrite, errors.Join(nil, context.DeadlineExceeded), Unknown},
	}
	for _, tt := range tests {
		if got := Classify(tt.op, tt.err); got != tt.want {
			t.Errorf("Classify(%v, %v) = %v, want %v", tt.op, tt.err, got, tt.want)
		}
	}
}
