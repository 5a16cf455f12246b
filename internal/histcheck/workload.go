package histcheck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/ipc"
)

// FS is what the workload needs of a client. Paths are absolute. An error
// that matches fs.ErrNotExist, fs.ErrExist or fs.ErrPermission, or an
// *hdfs.RemoteError, says what happened; any other error leaves the
// outcome unknown (see Classify).
type FS interface {
	// WriteFile creates path, replacing any file there, writes data and
	// closes it.
	WriteFile(ctx context.Context, path string, data []byte) error
	// CreateFile creates path only if no file is there (an error matching
	// fs.ErrExist otherwise), writes data and closes it.
	CreateFile(ctx context.Context, path string, data []byte) error
	// ReadFile returns path's content (an error matching fs.ErrNotExist
	// if there is no file). It may stop after MaxRead bytes and a few more.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// Rename moves src to dst, replacing any file at dst.
	Rename(ctx context.Context, src, dst string) error
	// Delete removes the file at path (an error matching fs.ErrNotExist if
	// there was none).
	Delete(ctx context.Context, path string) error
	// Exists reports whether a file is at path.
	Exists(ctx context.Context, path string) (bool, error)
}

// MaxRead bounds what a read keeps: workload values are far shorter, so
// more means the content is not a value.
const MaxRead = 4096

// WriteMode is how the workload writes register keys.
type WriteMode uint8

const (
	// WriteMixed uses rename for even keys and overwrite for odd ones.
	WriteMixed WriteMode = iota
	// WriteRename writes a temporary file and renames it over the key.
	WriteRename
	// WriteOverwrite creates the key with overwrite and writes the value.
	WriteOverwrite
)

// Config is a workload.
type Config struct {
	// Root is a directory that must not exist yet (every key starts
	// absent); the workload's files go under it.
	Root string
	// Keys is the number of register keys (Root/r<i>), Names the number
	// of namespace keys (Root/n<i>). At least one of them must be > 0.
	Keys, Names int
	// Duration is how long each client keeps issuing operations.
	Duration time.Duration
	// Write is how register keys are written.
	Write WriteMode
	// OpTimeout bounds each operation; 0 means 10 s. An operation that
	// hits it is Unknown.
	OpTimeout time.Duration
	// Backoff is how long a client pauses after an operation that failed
	// or is unknown, so a dead cluster does not fill the history with
	// unknown writes (each makes checking costlier); 0 means 20 ms.
	Backoff time.Duration
	// Seed seeds each client's choice of operations (client i uses Seed+i).
	Seed uint64
}

// RegisterKey and NameKey are the paths of register key i and namespace
// key i under root.
func RegisterKey(root string, i int) string { return root + "/r" + strconv.Itoa(i) }
func NameKey(root string, i int) string     { return root + "/n" + strconv.Itoa(i) }

// Run has every client issue random operations on cfg's keys, one at a
// time, for cfg.Duration or until ctx is done, and records them in rec.
// Client i is recorded as porcupine client i; after an Unknown operation
// it goes on under a fresh id (i plus a multiple of len(clients)), since
// the unknown operation may still be in flight. Run returns when every
// client has stopped; its error is only for a bad Config.
func Run(ctx context.Context, clients []FS, cfg Config, rec *Recorder) error {
	if len(clients) == 0 || cfg.Keys < 0 || cfg.Names < 0 || cfg.Keys+cfg.Names == 0 || cfg.Root == "" || cfg.Duration <= 0 {
		return fmt.Errorf("histcheck: bad workload: %d clients, %d keys, %d names, root %q, duration %v", len(clients), cfg.Keys, cfg.Names, cfg.Root, cfg.Duration)
	}
	if cfg.OpTimeout <= 0 {
		cfg.OpTimeout = 10 * time.Second
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 20 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var wg sync.WaitGroup
	for i, c := range clients {
		w := &worker{cfg: cfg, fs: c, rec: rec, id: i, stride: len(clients), rng: rand.New(rand.NewPCG(cfg.Seed+uint64(i), 0x68697374))}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx)
		}()
	}
	wg.Wait()
	return nil
}

type worker struct {
	cfg    Config
	fs     FS
	rec    *Recorder
	id     int // porcupine client id; grows by stride after an Unknown
	stride int
	client int // index in clients, for values and temp names
	seq    int
	rng    *rand.Rand
}

func (w *worker) run(ctx context.Context) {
	w.client = w.id
	for ctx.Err() == nil {
		r := w.step(ctx)
		if r == Unknown {
			w.id += w.stride
		}
		if r == Unknown || r == Failed {
			select {
			case <-ctx.Done():
			case <-time.After(w.cfg.Backoff):
			}
		}
	}
}

// step does one random operation and returns its result.
func (w *worker) step(ctx context.Context) Result {
	octx, cancel := context.WithTimeout(ctx, w.cfg.OpTimeout)
	defer cancel()
	k := w.rng.IntN(w.cfg.Keys + w.cfg.Names)
	if k >= w.cfg.Keys {
		return w.nameOp(octx, NameKey(w.cfg.Root, k-w.cfg.Keys))
	}
	key, rename := RegisterKey(w.cfg.Root, k), w.cfg.Write == WriteRename || w.cfg.Write == WriteMixed && k%2 == 0
	switch p := w.rng.IntN(100); {
	case p < 45:
		return w.write(octx, key, rename)
	case p < 90:
		return w.read(octx, key, rename)
	default:
		return w.do(Input{Op: OpDelete, Key: key}, func() error { return w.fs.Delete(octx, key) })
	}
}

func (w *worker) nameOp(ctx context.Context, key string) Result {
	switch p := w.rng.IntN(100); {
	case p < 40:
		return w.do(Input{Op: OpCreate, Key: key}, func() error { return w.fs.CreateFile(ctx, key, nil) })
	case p < 80:
		c := w.rec.Begin(w.id, Input{Op: OpExists, Key: key})
		ok, err := w.fs.Exists(ctx, key)
		out := Output{Result: Classify(OpExists, err)}
		if err == nil && !ok {
			out.Result = Absent
		}
		c.End(out, err)
		return out.Result
	default:
		return w.do(Input{Op: OpRemove, Key: key}, func() error { return w.fs.Delete(ctx, key) })
	}
}

// do records one operation whose only output is its error.
func (w *worker) do(in Input, f func() error) Result {
	c := w.rec.Begin(w.id, in)
	err := f()
	r := Classify(in.Op, err)
	c.End(Output{Result: r}, err)
	return r
}

func (w *worker) write(ctx context.Context, key string, rename bool) Result {
	w.seq++
	v := fmt.Sprintf("v%d.%d\n", w.client, w.seq)
	in := Input{Op: OpWrite, Key: key, Value: v}
	if !rename {
		return w.do(in, func() error { return w.fs.WriteFile(ctx, key, []byte(v)) })
	}
	// The key is untouched until the rename, so the write's interval
	// starts there; a temp file that could not be written is not an
	// operation on the key.
	tmp := fmt.Sprintf("%s/tmp/c%d.%d", w.cfg.Root, w.client, w.seq)
	if err := w.fs.CreateFile(ctx, tmp, []byte(v)); err != nil {
		return Classify(OpCreate, err)
	}
	c := w.rec.Begin(w.id, in)
	err := w.fs.Rename(ctx, tmp, key)
	r := Classify(OpWrite, err)
	if errors.Is(err, fs.ErrNotExist) {
		// The temp file is gone. Only a retry of a rename that applied
		// gets this (Hadoop's retry cache answers such a retry with the
		// first result): Failed is what the client was told, and the
		// model objects if the value is read later.
		r = Failed
	}
	c.End(Output{Result: r}, err)
	return r
}

func (w *worker) read(ctx context.Context, key string, rename bool) Result {
	c := w.rec.Begin(w.id, Input{Op: OpRead, Key: key})
	b, err := w.fs.ReadFile(ctx, key)
	out := Output{Result: Classify(OpRead, err)}
	if err == nil {
		if len(b) > MaxRead {
			b = b[:MaxRead]
		}
		out.Value = string(b)
		// Overwritten keys are visible, empty or partly written, between
		// create and close; renamed ones never are.
		if !rename && !wholeValue(out.Value) {
			out = Output{Result: Torn, Value: out.Value}
		}
	}
	c.End(out, err)
	return out.Result
}

// wholeValue reports whether s is a complete value as write makes them:
// "v<client>.<seq>\n", so any strict prefix is not one.
func wholeValue(s string) bool {
	return strings.HasPrefix(s, "v") && strings.IndexByte(s, '\n') == len(s)-1
}

// Classify maps an operation's error to its Result. nil is OK. For reads
// and deletes, "no such file" is Absent; for creates, "already exists" is
// Exists. A definite rejection — permission, invalid path, safe mode, an
// overwrite of a file another client is writing — is Failed. Anything
// else is Unknown: timeouts, lost connections, StandbyException once the
// client's failover attempts ran out, IOExceptions, a write whose file
// vanished before close (its create applied), and AlreadyBeingCreated
// from a leaseholder recreating its own file (its earlier attempt
// applied).
func Classify(op Op, err error) Result {
	if err == nil {
		return OK
	}
	var re *hdfs.RemoteError
	remote := errors.As(err, &re)
	switch {
	case errors.Is(err, fs.ErrNotExist), remote && re.Class == ipc.ClassFileNotFound:
		switch op {
		case OpRead, OpDelete, OpRemove, OpExists:
			return Absent
		}
		// A create that applied and whose file was deleted before close.
		return Unknown
	case remote && re.Class == ipc.ClassAlreadyBeingCreated && strings.Contains(re.Message, "current leaseholder is trying to recreate file"):
		return Unknown
	case errors.Is(err, fs.ErrExist), remote && (re.Class == ipc.ClassFileAlreadyExists || re.Class == ipc.ClassAlreadyBeingCreated):
		if op == OpCreate {
			return Exists
		}
		// An overwrite of a file another client is writing: refused.
		return Failed
	case errors.Is(err, fs.ErrPermission), errors.Is(err, fs.ErrInvalid):
		return Failed
	case remote:
		switch re.Class {
		case ipc.ClassAccessControl, ipc.ClassSafeMode, ipc.ClassParentNotDirectory, ipc.ClassInvalidPath,
			ipc.ClassIllegalArgument, ipc.ClassPathComponentTooLong, ipc.ClassMaxDirectoryItems:
			return Failed
		}
	}
	return Unknown
}
