package fsdataset

import (
	"errors"
	"os"
	"sync"
	"syscall"
)

const (
	// writeBehindBufs is how many buffers a streaming writer has: one
	// being filled by Write while the others are written out by its
	// write-behind goroutine. Write blocks when all are in flight. A
	// drain (hflush, hsync) returns all but the one being filled to the
	// pool, so an idle open writer holds one buffer (and an idle
	// goroutine).
	writeBehindBufs = 3
	// writebackWindow is the stride of early writeback on buffered
	// replicas: every writebackWindow bytes written, the kernel is asked
	// to start writing them to disk (sync_file_range), and the window two
	// behind is waited for, so Finalize's fsync finds little left to do
	// and a writer keeps at most ~3 windows of dirty pages.
	writebackWindow = 8 << 20
)

// writeBehind writes a ReplicaWriter's full buffers on its own goroutine,
// so the block receiver goes on reading the next packets while the disk
// (or, buffered, the page-cache copy) works. Jobs are done in order; the
// first error stops the rest and is reported by the next hand-off or
// drain. Flush, Sync, Finalize and Close drain it before they write the
// partial buffer themselves, so what they publish or fsync includes every
// handed-off byte.
type writeBehind struct {
	jobs chan wbJob
	free chan []byte // written buffers, back to the writer

	mu      sync.Mutex
	cond    *sync.Cond
	pending int   // jobs handed off and not finished
	err     error // first failure, sticky
	// noDirect is set when a direct write was refused with EINVAL (the
	// job then went through the page cache): the writer drops its direct
	// file at the next hand-off.
	noDirect bool
	refuse   func(error) // records a refused direct write on the volume

	// Owned by the goroutine.
	data, meta File
	os         *os.File // data as an *os.File for sync_file_range; nil: none
	drop       bool     // drop each window from the page cache once written out
	started    int64    // early writeback asked for [base, started)
	base       int64
}

// wbJob is one full buffer: data at off (through direct when non-nil),
// then the checksums of the chunks completed so far at meta offset
// sumOff.
type wbJob struct {
	buf    []byte
	off    int64
	direct File
	sums   []byte
	sumOff int64
}

func newWriteBehind(data, meta File, off int64, drop bool, refuse func(error)) *writeBehind {
	wb := &writeBehind{
		jobs: make(chan wbJob, writeBehindBufs),
		free: make(chan []byte, writeBehindBufs),
		data: data, meta: meta, refuse: refuse, drop: drop,
		started: off, base: off,
	}
	// Early writeback goes through the descriptor: only for a real file,
	// not a wrapper (fault injection, emulated media) whose I/O it would
	// bypass.
	wb.os, _ = data.(*os.File)
	wb.cond = sync.NewCond(&wb.mu)
	go wb.run()
	return wb
}

func (wb *writeBehind) run() {
	for j := range wb.jobs {
		wb.mu.Lock()
		failed := wb.err != nil
		wb.mu.Unlock()
		var err error
		if !failed {
			err = wb.write(j)
		}
		wb.free <- j.buf
		wb.mu.Lock()
		if err != nil && wb.err == nil {
			wb.err = err
		}
		wb.pending--
		wb.cond.Broadcast()
		wb.mu.Unlock()
	}
}

func (wb *writeBehind) write(j wbJob) error {
	direct := false
	if j.direct != nil {
		_, err := j.direct.WriteAt(j.buf, j.off)
		if err == nil {
			direct = true
		} else if !isEINVAL(err) {
			return err
		} else {
			// The file system took the O_DIRECT open but refuses the
			// transfer: this buffer and the rest go through the page
			// cache.
			wb.refuse(err)
			wb.mu.Lock()
			wb.noDirect = true
			wb.mu.Unlock()
		}
	}
	if !direct {
		if _, err := wb.data.WriteAt(j.buf, j.off); err != nil {
			return err
		}
	}
	if len(j.sums) > 0 {
		if _, err := wb.meta.WriteAt(j.sums, j.sumOff); err != nil {
			return err
		}
	}
	if !direct {
		return wb.writeback(j.off + int64(len(j.buf)))
	}
	return nil
}

// writeback starts writeback of each full window below end and waits for
// the one two windows behind, as fs's local writer does; with drop, that
// window, now clean, leaves the page cache. A write error it reports is
// returned (and kept: the kernel reports it only once).
func (wb *writeBehind) writeback(end int64) error {
	if wb.os == nil {
		return nil
	}
	for end-wb.started >= writebackWindow {
		err := startWriteback(wb.os, wb.started, writebackWindow)
		if back := wb.started - 2*writebackWindow; back >= wb.base && err == nil {
			if err = awaitWriteback(wb.os, back, writebackWindow); err == nil && wb.drop {
				dropCache(wb.os, back, writebackWindow)
			}
		}
		if err != nil {
			if errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ESPIPE) {
				wb.os = nil // no writeback control here; Finalize's fsync does it all
				return nil
			}
			return err
		}
		wb.started += writebackWindow
	}
	return nil
}

// handOff queues j; the caller then needs a buffer from next.
func (wb *writeBehind) handOff(j wbJob) {
	wb.mu.Lock()
	wb.pending++
	wb.mu.Unlock()
	wb.jobs <- j
}

// failure returns the first error and whether a direct write was refused.
func (wb *writeBehind) failure() (error, bool) {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	return wb.err, wb.noDirect
}

// drain waits until every handed-off job is done and returns the first
// error.
func (wb *writeBehind) drain() error {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	for wb.pending > 0 {
		wb.cond.Wait()
	}
	return wb.err
}

// release returns the written buffers to the pool and says how many: once
// drained, a writer idle between hflushes keeps only the buffer it fills
// (a writer of a WAL holds its file open for hours). The next full buffer
// takes one from the pool again.
func (wb *writeBehind) release() int {
	n := 0
	for {
		select {
		case b := <-wb.free:
			putBuf(b)
			n++
		default:
			return n
		}
	}
}

// stop drains, ends the goroutine and returns its buffers.
func (wb *writeBehind) stop() {
	wb.drain()
	close(wb.jobs)
	wb.release()
}
