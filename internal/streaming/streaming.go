// Package streaming is Hadoop Streaming: MapReduce jobs whose mapper,
// combiner and reducer are any executables reading records as lines on
// stdin and writing "key<TAB>value" lines on stdout.
//
//	strata streaming -input in -output out -mapper cat -reducer 'wc -l'
//
// The mapper receives each input line (TextInputFormat's value); the
// reducer and combiner receive "key<TAB>value" lines sorted by key. An
// output line is split at its first tab; a line without one is a key with
// an empty value. Each task runs the command with /bin/sh -c in a working
// directory holding the -file files, which is also first in PATH.
package streaming

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/mapreduce"
)

// Usage is the streaming command line.
const Usage = "streaming -input <path> [-input <path> ...] -output <path> -mapper <cmd> [-reducer <cmd>|NONE] [-combiner <cmd>] [-numReduceTasks <n>] [-file <file> ...] [-cmdenv NAME=VALUE ...]"

func init() {
	mapreduce.Register("streaming", Usage, NewJob)
}

// options are the parsed streaming arguments.
type options struct {
	inputs                    []string
	output                    string
	mapper, reducer, combiner string
	reduces                   int
	files                     []string
	env                       []string
}

func parse(args []string, c *conf.Configuration) (*options, error) {
	o := &options{reduces: -1}
	for i := 0; i < len(args); i++ {
		need := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("streaming: %s needs an argument\nUsage: %s", args[i], Usage)
			}
			i++
			return args[i], nil
		}
		var v string
		var err error
		switch args[i] {
		case "-input", "-output", "-mapper", "-reducer", "-combiner", "-numReduceTasks", "-file", "-cmdenv":
			if v, err = need(); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("streaming: unknown option %q\nUsage: %s", args[i], Usage)
		}
		switch args[i-1] {
		case "-input":
			o.inputs = append(o.inputs, v)
		case "-output":
			o.output = v
		case "-mapper":
			o.mapper = v
		case "-reducer":
			o.reducer = v
		case "-combiner":
			o.combiner = v
		case "-numReduceTasks":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("streaming: -numReduceTasks needs a number ≥ 0, got %q", v)
			}
			o.reduces = n
		case "-file":
			abs, err := filepath.Abs(v)
			if err != nil {
				return nil, err
			}
			if _, err := os.Stat(abs); err != nil {
				return nil, fmt.Errorf("streaming: -file %s: %w", v, err)
			}
			o.files = append(o.files, abs)
		case "-cmdenv":
			if !strings.Contains(v, "=") {
				return nil, fmt.Errorf("streaming: -cmdenv needs NAME=VALUE, got %q", v)
			}
			o.env = append(o.env, v)
		}
	}
	if len(o.inputs) == 0 || o.output == "" || o.mapper == "" {
		return nil, fmt.Errorf("streaming: -input, -output and -mapper are required\nUsage: %s", Usage)
	}
	if o.reduces < 0 {
		o.reduces = 1
		if n, err := c.GetInt("mapreduce.job.reduces"); err == nil {
			o.reduces = int(n)
		}
	}
	if o.reducer == "NONE" {
		o.reducer, o.reduces = "", 0
	}
	return o, nil
}

// NewJob builds a streaming job from its command line.
func NewJob(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
	o, err := parse(args, c)
	if err != nil {
		return nil, err
	}
	job := &mapreduce.Job{
		Name: "streaming: " + o.mapper, Conf: c,
		NewMapper: func() mapreduce.Mapper { return &mapper{pipe: &pipe{o: o, cmd: o.mapper}} },
		Input:     mapreduce.TextInputFormat{}, InputPaths: o.inputs,
		Output: mapreduce.TextOutputFormat{}, OutputPath: o.output,
		NumReducers: o.reduces,
	}
	if o.reducer != "" && o.reduces > 0 {
		job.NewReducer = func() mapreduce.Reducer { return &reducer{pipe: &pipe{o: o, cmd: o.reducer}} }
	}
	if o.combiner != "" && job.NewReducer != nil {
		job.NewCombiner = func() mapreduce.Reducer { return &combiner{o: o} }
	}
	return job, nil
}

// pipe is a running command: records go to its stdin, its stdout lines
// come back through a queue that a goroutine fills, so the command never
// blocks on a full stdout while we block on its full stdin.
type pipe struct {
	o   *options
	cmd string

	proc   *exec.Cmd
	stdin  *bufio.Writer
	inPipe io.WriteCloser
	dir    string
	stderr tailBuffer

	mu    sync.Mutex
	lines [][]byte
	eof   chan struct{}
	rerr  error
}

func (p *pipe) start() (err error) {
	dir, err := os.MkdirTemp("", "streaming-task-")
	if err != nil {
		return err
	}
	p.dir = dir
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	for _, f := range p.o.files {
		if err := os.Symlink(f, filepath.Join(dir, filepath.Base(f))); err != nil {
			return err
		}
	}
	p.proc = exec.Command("/bin/sh", "-c", p.cmd)
	p.proc.Dir = dir
	p.proc.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	p.proc.Env = append(p.proc.Env, p.o.env...)
	p.proc.Stderr = &p.stderr
	in, err := p.proc.StdinPipe()
	if err != nil {
		return err
	}
	out, err := p.proc.StdoutPipe()
	if err != nil {
		return err
	}
	if err := p.proc.Start(); err != nil {
		return fmt.Errorf("streaming: starting %q: %w", p.cmd, err)
	}
	p.inPipe = in
	p.stdin = bufio.NewWriterSize(in, 64<<10)
	p.eof = make(chan struct{})
	go func() {
		defer close(p.eof)
		r := bufio.NewReaderSize(out, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
				p.mu.Lock()
				p.lines = append(p.lines, line)
				p.mu.Unlock()
			}
			if err != nil {
				if err != io.EOF {
					p.mu.Lock()
					p.rerr = err
					p.mu.Unlock()
				}
				return
			}
		}
	}()
	return nil
}

// write sends one line to the command.
func (p *pipe) write(parts ...[]byte) error {
	for _, b := range parts {
		if _, err := p.stdin.Write(b); err != nil {
			return p.failed(err)
		}
	}
	return nil
}

// drain emits every output line received so far.
func (p *pipe) drain(out mapreduce.Emitter) error {
	p.mu.Lock()
	lines := p.lines
	p.lines = nil
	p.mu.Unlock()
	for _, l := range lines {
		k, v, _ := bytes.Cut(l, []byte{'\t'})
		if err := out.Emit(k, v); err != nil {
			return err
		}
	}
	return nil
}

// finish closes stdin, emits the rest of the output and checks the exit
// status.
func (p *pipe) finish(out mapreduce.Emitter) error {
	defer os.RemoveAll(p.dir)
	if err := p.stdin.Flush(); err != nil {
		return p.failed(err)
	}
	p.inPipe.Close()
	<-p.eof
	if err := p.drain(out); err != nil {
		return err
	}
	if err := p.proc.Wait(); err != nil {
		return p.failed(err)
	}
	return p.rerr
}

// failed ends the command after err and removes its directory: a task
// that fails is not cleaned up by finish.
func (p *pipe) failed(err error) error {
	if p.proc.ProcessState == nil {
		p.proc.Process.Kill()
		p.proc.Wait()
	}
	os.RemoveAll(p.dir)
	code := -1
	if p.proc.ProcessState != nil {
		code = p.proc.ProcessState.ExitCode()
	}
	return fmt.Errorf("streaming: subprocess %q failed with code %d: %v; stderr: %s", p.cmd, code, err, strings.TrimSpace(p.stderr.String()))
}

type mapper struct{ pipe *pipe }

func (m *mapper) Setup(ctx *mapreduce.TaskContext) error { return m.pipe.start() }

func (m *mapper) Map(ctx *mapreduce.TaskContext, _, value []byte, out mapreduce.Emitter) error {
	if err := m.pipe.write(value, []byte{'\n'}); err != nil {
		return err
	}
	return m.pipe.drain(out)
}

func (m *mapper) Cleanup(ctx *mapreduce.TaskContext, out mapreduce.Emitter) error {
	return m.pipe.finish(out)
}

type reducer struct {
	pipe    *pipe
	started bool
}

func (r *reducer) Reduce(ctx *mapreduce.TaskContext, key []byte, values *mapreduce.Values, out mapreduce.Emitter) error {
	if !r.started {
		if err := r.pipe.start(); err != nil {
			return err
		}
		r.started = true
	}
	for values.Next() {
		if err := r.pipe.write(key, []byte{'\t'}, values.Value(), []byte{'\n'}); err != nil {
			return err
		}
	}
	return r.pipe.drain(out)
}

func (r *reducer) Cleanup(ctx *mapreduce.TaskContext, out mapreduce.Emitter) error {
	if !r.started {
		if err := r.pipe.start(); err != nil {
			return err
		}
		r.started = true
	}
	return r.pipe.finish(out)
}

// combiner runs the combiner command once per key group: the sort
// buffer combines key by key with no signal at the end of a spill, so a
// command kept running could not be drained at the right moment. This is
// correct but costs a process per key; use it for few, heavy keys.
type combiner struct{ o *options }

func (c *combiner) Reduce(ctx *mapreduce.TaskContext, key []byte, values *mapreduce.Values, out mapreduce.Emitter) error {
	p := &pipe{o: c.o, cmd: c.o.combiner}
	if err := p.start(); err != nil {
		return err
	}
	for values.Next() {
		if err := p.write(key, []byte{'\t'}, values.Value(), []byte{'\n'}); err != nil {
			return err
		}
	}
	return p.finish(out)
}

// tailBuffer keeps the last 4 KiB written, for error messages.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
