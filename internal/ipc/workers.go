package ipc

import (
	"sync"
	"sync/atomic"
)

// workerPool runs calls on goroutines that are kept once started: a call
// handed to an idle worker costs neither a new goroutine nor the growth
// of a fresh one's stack (a mutation's handler grows its stack in the
// edit's marshal: a tenth of the CPU of a mkdirs when every call had a new
// goroutine). A call never waits for a worker: with none idle it gets a
// new goroutine, so blocking handlers (an edit-log sync, a slow reply
// write) cannot hold up others, and the number of goroutines stays what
// the callers bound it to (the server's and connections' in-flight
// limits). At most maxIdle workers wait for work; one more finishing
// exits.
type workerPool struct {
	work    chan func()
	done    chan struct{}
	maxIdle int

	idle      atomic.Int32
	closeOnce sync.Once
}

func newWorkerPool(maxIdle int) workerPool {
	return workerPool{work: make(chan func()), done: make(chan struct{}), maxIdle: maxIdle}
}

// run runs f on an idle worker, or on a new goroutine that then stays a
// worker.
func (p *workerPool) run(f func()) {
	select {
	case p.work <- f:
	default:
		go p.worker(f)
	}
}

func (p *workerPool) worker(f func()) {
	for {
		f()
		if p.idle.Add(1) > int32(p.maxIdle) {
			p.idle.Add(-1)
			return
		}
		select {
		case f = <-p.work:
		case <-p.done:
			f = nil
		}
		p.idle.Add(-1)
		if f == nil {
			return
		}
	}
}

// close lets the idle workers exit; run still works afterwards (each call
// on a goroutine of its own that exits when done).
func (p *workerPool) close() { p.closeOnce.Do(func() { close(p.done) }) }
