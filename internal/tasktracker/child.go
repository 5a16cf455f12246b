package tasktracker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/procstat"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/taskrun"
	"github.com/stratafs/strata/mapreduce"
)

// childGrace is how long a child that has exited may still hold its
// output pipes open through what it started (a streaming command), and
// how long a child whose input was closed may take to exit, before the
// TaskTracker stops waiting (and kills its process group).
const childGrace = 5 * time.Second

// readyWait bounds the wait for a new child's ReuseReady. A program that
// predates task reuse never says it; its attempt then runs as a child of
// its own, as does that of a child too slow to say it in time.
var readyWait = 5 * time.Second

// reuseLimit is how many attempts one child may run for the job:
// Hadoop's mapreduce.job.jvm.numtasks (the old
// mapred.job.reuse.jvm.num.tasks), 1 by default; -1 means any number,
// returned as 0. Values that make no sense (0, below -1, not a number)
// mean 1, as without the setting.
func reuseLimit(settings map[string]string) int {
	c := conf.New()
	for _, k := range []string{mapreduce.KeyJVMNumTasks, "mapred.job.reuse.jvm.num.tasks"} {
		if v, ok := settings[k]; ok {
			c.Set(k, v)
		}
	}
	n, err := strconv.Atoi(strings.TrimSpace(c.Get(mapreduce.KeyJVMNumTasks)))
	switch {
	case err != nil || n == 0 || n < -1:
		return 1
	case n == -1:
		return 0
	}
	return n
}

// childKey is what attempts sharing a child have in common: their job,
// their kind, the program and the user they run as.
type childKey struct {
	job   string
	isMap bool
	exe   string
	uid   int // -1: the TaskTracker's own user
}

// child is a task child process: one attempt's, or, when its job allows
// task reuse and the child said ReuseReady, several attempts' in turn,
// each handed a spec line on its stdin and answering with one result
// line on its stdout.
//
// Invariants: at most one attempt runs on a child at a time (cur, under
// tt.mu); a child is idle (in tt.idle) only between two attempts, when
// the last one succeeded, and the number of live children of a kind never
// exceeds that kind's slots; every child is reaped by its own goroutine,
// which closes done.
type child struct {
	key      childKey
	cmd      *exec.Cmd
	pid      int
	stdin    *os.File      // the spec pipe's write end (nil once closed)
	results  chan []byte   // its result lines; closed when its stdout ends
	done     chan struct{} // closed once it has been reaped
	ready    chan struct{} // closed when it says ReuseReady
	commitOK *os.File      // the commit answer pipe's write end
	reusable bool          // it said ReuseReady: it reads a spec per attempt
	limit    int           // attempts it may run (0: any number)
	ran      int           // attempts it was given
	tokenDir string        // its token file's directory, removed when it exits ("": none)
	cur      *attempt      // the attempt it runs now (tt.mu)
}

// childSpec is how to start a child.
type childSpec struct {
	key        childKey
	cred       *syscall.Credential
	stderr     *os.File
	env        []string
	reuse      bool // ask it to run attempts in turn (ReuseEnv)
	limit      int
	tokenDir   string
	memLimit   int64
	cpuProfile string // STRATA_CPUPROFILE for a profiled attempt
}

// startChild starts a child; with cs.reuse it waits (at most readyWait)
// for the child to say ReuseReady.
func (tt *TaskTracker) startChild(ctx context.Context, cs childSpec) (*child, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	cr, cw, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW, pr, pw)
		return nil, err
	}
	cmd := exec.Command(cs.key.exe, "task")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, cs.stderr
	cmd.ExtraFiles = []*os.File{pw, cr} // fd 3, 4
	cmd.Env = append(os.Environ(), taskrun.ProgressFDEnv+"=3", taskrun.CommitFDEnv+"=4", taskrun.JobTrackerEnv+"="+tt.cfg.JobTracker)
	cmd.Env = append(cmd.Env, cs.env...)
	if cs.reuse {
		cmd.Env = append(cmd.Env, taskrun.ReuseEnv+"=1")
	}
	if cs.cpuProfile != "" {
		cmd.Env = append(cmd.Env, "STRATA_CPUPROFILE="+cs.cpuProfile)
	}
	if cs.memLimit >= 2<<20 && os.Getenv("GOMEMLIMIT") == "" {
		// The Go runtime collects harder as the child nears its cap.
		cmd.Env = append(cmd.Env, "GOMEMLIMIT="+strconv.FormatInt(cs.memLimit*9/10>>20, 10)+"MiB")
	}
	// The child leads its own process group, so that killing the attempt
	// also kills what it started (a streaming command).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cs.cred}
	err = cmd.Start()
	closeAll(inR, outW, pw, cr)
	if err != nil {
		closeAll(inW, outR, pr, cw)
		return nil, err
	}
	c := &child{key: cs.key, cmd: cmd, pid: cmd.Process.Pid, stdin: inW, results: make(chan []byte, 1),
		done: make(chan struct{}), ready: make(chan struct{}), commitOK: cw, limit: cs.limit, tokenDir: cs.tokenDir}
	go readResults(outR, c.results, c.done)
	go tt.readProgress(c, pr)
	tt.wg.Add(1)
	go func() {
		defer tt.wg.Done()
		cmd.Wait()
		close(c.done)
		cw.Close()
		if c.tokenDir != "" {
			os.RemoveAll(c.tokenDir)
		}
		// What it started may hold its pipes open; they are closed
		// after the grace, which ends both readers.
		time.AfterFunc(childGrace, func() { outR.Close(); pr.Close() })
	}()
	if cs.reuse {
		t := time.NewTimer(readyWait)
		defer t.Stop()
		select {
		case <-c.ready:
			c.reusable = true
		case <-c.done:
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return c, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// readResults sends each result line of a child's stdout, at most
// taskrun.MaxResult bytes each; a longer line ends the results, and the
// rest of the output is read and dropped, so the child never blocks on it.
// A line nobody takes (the channel holds one) is dropped once the child
// has exited (done).
func readResults(out *os.File, results chan<- []byte, done <-chan struct{}) {
	defer close(results)
	r := bufio.NewReaderSize(out, 64<<10)
	for {
		line, err := taskrun.ReadLine(r, taskrun.MaxResult)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				io.Copy(io.Discard, r)
			}
			return
		}
		select {
		case results <- line: // room: never lost to done
			continue
		default:
		}
		select {
		case results <- line:
		case <-done:
			return
		}
	}
}

// readProgress passes a child's progress bytes to the attempt it runs:
// any byte resets the attempt's silence timer, CommitRequest marks it
// waiting for leave to commit; ReuseReady closes c.ready.
func (tt *TaskTracker) readProgress(c *child, pr *os.File) {
	b := make([]byte, 64)
	var once sync.Once
	for {
		n, err := pr.Read(b)
		if err != nil {
			return
		}
		if bytes.IndexByte(b[:n], taskrun.ReuseReady) >= 0 {
			once.Do(func() { close(c.ready) })
		}
		tt.mu.Lock()
		a := c.cur
		if a != nil && bytes.IndexByte(b[:n], taskrun.CommitRequest) >= 0 {
			a.commitPending = true
			tt.heartbeatSoon()
		}
		tt.mu.Unlock()
		if a != nil {
			select {
			case a.progress <- struct{}{}:
			default:
			}
		}
	}
}

// kill kills the child's process group.
func (c *child) kill() { syscall.Kill(-c.pid, syscall.SIGKILL) }

// closeInput closes the child's stdin: a child running attempts in turn
// exits, one running a single attempt reads its spec to the end.
func (c *child) closeInput() {
	if c.stdin != nil {
		c.stdin.Close()
		c.stdin = nil
	}
}

// retire ends a child that runs no more attempts: its input is closed,
// and if it has not exited after childGrace it is killed.
func (c *child) retire() {
	c.closeInput()
	go func() {
		t := time.NewTimer(childGrace)
		defer t.Stop()
		select {
		case <-c.done:
		case <-t.C:
			c.kill()
		}
	}()
}

// childRun is how an attempt on a child ended.
type childRun struct {
	out    []byte // its result line (nil: none)
	exited bool   // the child was reaped (else it waits for another spec)
	usage  procstat.Usage
}

// runOn gives the attempt's spec to c and waits for its result (a child
// running attempts in turn) or for c's exit (a single-attempt child),
// killing c's process group when ctx ends. The attempt's watchers
// (silence timeout, memory cap) run meanwhile and may kill c.
func (tt *TaskTracker) runOn(ctx context.Context, c *child, a *attempt, spec *mrpb.TaskSpec) (childRun, error) {
	var line strings.Builder
	if err := taskrun.WriteSpec(&line, spec); err != nil {
		return childRun{}, err
	}
	tt.mu.Lock()
	c.cur, a.commitOK = a, c.commitOK
	c.ran++
	tt.mu.Unlock()
	defer func() {
		tt.mu.Lock()
		c.cur = nil
		tt.mu.Unlock()
	}()
	in, reusable := c.stdin, c.reusable
	if in == nil {
		return childRun{}, errors.New("tasktracker: the child's input is closed")
	}
	go func() {
		// A child that does not read is killed by the attempt's
		// watchers, which ends the write.
		in.Write([]byte(line.String()))
		if !reusable {
			in.Close()
		}
	}()
	if !reusable {
		c.stdin = nil
	}
	var run childRun
	results, stop := c.results, ctx.Done()
	for {
		select {
		case out, ok := <-results:
			results = nil
			if ok {
				run.out = out
			}
			if ok && reusable {
				return run, nil
			}
			continue // the child's exit follows
		case <-c.done:
			run.exited = true
			if results != nil && run.out == nil {
				t := time.NewTimer(childGrace)
				select {
				case out, ok := <-results:
					if ok {
						run.out = out
					}
				case <-t.C:
				}
				t.Stop()
			}
			if u, ok := procstat.FromProcessState(c.cmd.ProcessState); ok {
				run.usage = u
			}
			return run, c.exitErr()
		case <-stop:
			stop = nil
			c.kill()
		}
	}
}

// exitErr is how a reaped child exited: nil for status 0.
func (c *child) exitErr() error {
	if ps := c.cmd.ProcessState; ps != nil && !ps.Success() {
		return &exec.ExitError{ProcessState: ps}
	}
	return nil
}

// takeIdle returns an idle child for the key, or nil.
func (tt *TaskTracker) takeIdle(key childKey) *child {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	for i, c := range tt.idle {
		if c.key == key {
			tt.idle = append(tt.idle[:i], tt.idle[i+1:]...)
			return c
		}
	}
	return nil
}

// makeRoom retires idle children of the kind until a new one fits: the
// live children of a kind (its running attempts, this one among them,
// and the idle ones) never outnumber its slots.
func (tt *TaskTracker) makeRoom(isMap bool) {
	tt.mu.Lock()
	var drop []*child
	free := tt.freeReduce
	if isMap {
		free = tt.freeMaps
	}
	idle := 0
	for _, c := range tt.idle {
		if c.key.isMap == isMap {
			idle++
		}
	}
	for i := 0; i < len(tt.idle) && idle > free; {
		if c := tt.idle[i]; c.key.isMap == isMap {
			drop = append(drop, c)
			tt.idle = append(tt.idle[:i], tt.idle[i+1:]...)
			idle--
			continue
		}
		i++
	}
	tt.mu.Unlock()
	for _, c := range drop {
		c.retire()
	}
}

// putIdle keeps c for the job's next attempt of its kind.
func (tt *TaskTracker) putIdle(c *child) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tt.ctx.Err() != nil {
		c.retire()
		return
	}
	tt.idle = append(tt.idle, c)
}

// idleOf removes the idle children of job (all of them for "") from the
// pool and returns them, to be retired; tt.mu is held.
func (tt *TaskTracker) idleOf(job string) []*child {
	var drop []*child
	keep := tt.idle[:0]
	for _, c := range tt.idle {
		if job == "" || c.key.job == job {
			drop = append(drop, c)
		} else {
			keep = append(keep, c)
		}
	}
	clear(tt.idle[len(keep):])
	tt.idle = keep
	return drop
}
