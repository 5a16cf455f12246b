package fusefs

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/stratafs/strata/hdfs"
)

// handle is an open file: a reader with its read-ahead window and, once
// the handle writes, an HDFS writer at the file's end.
type handle struct {
	f      *fsys
	n      *node
	c      *hdfs.Client // acts as the user who opened the file
	append bool         // O_APPEND: every write goes to the end

	mu       sync.Mutex
	released bool
	cache    int // how the kernel caches the handle's data (node.openFlags)

	// Reading.
	r         *hdfs.FileReader
	stale     bool  // the file changed through this handle since r was opened
	streamPos int64 // where r's sequential stream is
	win       *window
	prev      *window // the window before win: concurrent reads arrive out of order
	winSize   int
	next      chan *window // the window being fetched in the background, if any

	// Writing. Writes are queued to wq and a pump goroutine streams them
	// into w, so the caller's next write overlaps the DataNode traffic;
	// settle waits for the queue to empty.
	w     *hdfs.FileWriter
	pos   int64 // the file offset the next write must have
	wq    chan []byte
	wend  chan error            // the pump's result once wq is closed
	wfail atomic.Pointer[error] // set by the pump when a write fails
	werr  error                 // a write error the pump met, reported by later calls
}

// writeBehind is how many FUSE writes a handle queues ahead of HDFS.
const writeBehind = 8

// window is a piece of the file read ahead. Replies to the kernel are
// sent straight from windows; the buffer is reused once the handle has
// dropped the window and no reply refers to it.
type window struct {
	off  int64
	data []byte
	err  error        // io.EOF when the window ends the file
	refs atomic.Int32 // the handle's, and one per reply being sent
}

// reply is a read's answer: slices of windows, written to the kernel
// with writev and released when go-fuse is done with them.
type reply struct {
	f    *fsys
	vecs [][]byte
	wins []*window
}

func (r *reply) Size() int {
	n := 0
	for _, v := range r.vecs {
		n += len(v)
	}
	return n
}

// Slices lets go-fuse write the slices without joining them.
func (r *reply) Slices() ([][]byte, fuse.Status) { return r.vecs, fuse.OK }

func (r *reply) Bytes(buf []byte) ([]byte, fuse.Status) {
	buf = buf[:0]
	for _, v := range r.vecs {
		buf = append(buf, v...)
	}
	return buf, fuse.OK
}

func (r *reply) Done() {
	for _, w := range r.wins {
		r.f.unref(w)
	}
	r.wins = nil
}

// unref drops a reference to w, reusing its buffer after the last.
func (f *fsys) unref(w *window) {
	if w.refs.Add(-1) == 0 && cap(w.data) > 0 {
		f.readBufs.put(w.data)
	}
}

var (
	_ gofs.FileReader   = (*handle)(nil)
	_ gofs.FileWriter   = (*handle)(nil)
	_ gofs.FileFlusher  = (*handle)(nil)
	_ gofs.FileFsyncer  = (*handle)(nil)
	_ gofs.FileReleaser = (*handle)(nil)
)

func newHandle(f *fsys, n *node, c *hdfs.Client, flags uint32) *handle {
	h := &handle{f: f, n: n, c: c, append: flags&syscall.O_APPEND != 0}
	f.addHandle(h)
	return h
}

// minWindow is the first window of a handle; each sequential fetch
// doubles it up to Options.ReadAhead.
const minWindow = 256 << 10

// openReader (re)opens the HDFS file for reading.
func (h *handle) openReader() syscall.Errno {
	h.closeReader()
	p := h.n.path()
	r, err := h.c.OpenFile(h.f.ctx, p)
	if err != nil {
		return h.f.errno("open", p, err)
	}
	h.r, h.stale, h.streamPos, h.winSize = r, false, 0, min(minWindow, h.f.opts.ReadAhead)
	return 0
}

func (h *handle) closeReader() {
	h.retire(h.drain())
	if h.r != nil {
		h.r.Close()
		h.r = nil
	}
	h.retire(h.win)
	h.retire(h.prev)
	h.win, h.prev = nil, nil
}

// retire drops the handle's window w.
func (h *handle) retire(w *window) {
	if w != nil {
		h.f.windowBytes.Add(-int64(cap(w.data)))
		h.f.unref(w)
	}
}

// advance makes w the current window.
func (h *handle) advance(w *window) {
	h.retire(h.prev)
	h.prev, h.win = h.win, w
}

// drain waits for a background fetch, dropping its window.
func (h *handle) drain() *window {
	if h.next == nil {
		return nil
	}
	w := <-h.next
	h.next = nil
	return w
}

// fetch reads size bytes at off from the stream; only one fetch runs at
// a time.
func (h *handle) fetch(off int64, size int) *window {
	if h.streamPos != off {
		if _, err := h.r.Seek(off, io.SeekStart); err != nil {
			w := &window{off: off, err: err}
			w.refs.Store(1)
			return w
		}
		h.streamPos = off
	}
	buf := h.f.readBufs.get(int(min(int64(size), max(h.r.Length()-off, 0))))
	h.f.windowBytes.Add(int64(cap(buf)))
	n, err := io.ReadFull(h.r, buf)
	h.streamPos += int64(n)
	switch {
	case err == io.ErrUnexpectedEOF || (err == nil && off+int64(n) >= h.r.Length()):
		err = io.EOF
	case err != nil:
		h.streamPos = -1 // where the stream stopped is unknown: seek next time
	}
	w := &window{off: off, data: buf[:n], err: err}
	w.refs.Store(1)
	return w
}

// maxWindowBytes bounds the memory all handles of a mount hold in
// windows; beyond it reads are not read ahead and windows stay small.
const maxWindowBytes = 256 << 20

// prefetch fetches the window after the current one in the background.
func (h *handle) prefetch(off int64) {
	if h.f.windowBytes.Load() > maxWindowBytes {
		h.winSize = min(minWindow, h.f.opts.ReadAhead)
		return
	}
	h.winSize = min(2*h.winSize, h.f.opts.ReadAhead)
	ch := make(chan *window, 1)
	h.next = ch
	size := h.winSize
	go func() { ch <- h.fetch(off, size) }()
}

// Read implements gofs.FileReader from the read-ahead window.
func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return nil, syscall.EBADF
	}
	if h.w != nil {
		// Make what this handle wrote visible to its reader.
		if e := h.closeWriter(); e != 0 {
			return nil, e
		}
	}
	if h.r == nil || h.stale {
		if e := h.openReader(); e != 0 {
			return nil, e
		}
	}
	// A short read is end of file to the kernel: answer all of dest.
	r := &reply{f: h.f}
	for n := 0; n < len(dest); {
		w, data, err := h.readAt(off+int64(n), len(dest)-n)
		if err != nil {
			r.Done()
			return nil, h.f.errno("read", h.n.path(), err)
		}
		if len(data) == 0 {
			break
		}
		w.refs.Add(1)
		r.wins, r.vecs = append(r.wins, w), append(r.vecs, data)
		n += len(data)
	}
	return r, 0
}

func (w *window) has(off int64) bool {
	return w != nil && off >= w.off && off < w.off+int64(len(w.data))
}

// readAt returns up to size bytes at off and the window holding them,
// fetching as needed; nothing at end of file.
func (h *handle) readAt(off int64, size int) (*window, []byte, error) {
	if off >= h.r.Length() || size == 0 {
		return nil, nil, nil
	}
	if w := h.prev; w.has(off) {
		i := off - w.off
		return w, w.data[i:min(int64(len(w.data)), i+int64(size))], nil
	}
	for {
		if w := h.win; w.has(off) {
			i := off - w.off
			out := w.data[i:min(int64(len(w.data)), i+int64(size))]
			if h.next == nil && w.err == nil && i+int64(size) > int64(len(w.data))/2 {
				h.prefetch(w.off + int64(len(w.data)))
			}
			return w, out, nil
		}
		// Not in the window: take the one read ahead if it follows,
		// else read at off.
		if w := h.drain(); w != nil {
			if w.err != nil && w.err != io.EOF {
				h.retire(w)
				return nil, nil, w.err
			}
			h.advance(w)
			if w.has(off) {
				continue
			}
		}
		if h.win == nil || off != h.win.off+int64(len(h.win.data)) {
			h.winSize = min(minWindow, h.f.opts.ReadAhead) // not sequential: start small
		}
		w := h.fetch(off, max(size, h.winSize))
		if w.err != nil && w.err != io.EOF {
			h.retire(w)
			return nil, nil, w.err
		}
		h.advance(w)
		if len(w.data) == 0 {
			return nil, nil, nil
		}
	}
}

// Write implements gofs.FileWriter. HDFS files are write-once: a write is
// taken only at the end of the file.
func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return 0, syscall.EBADF
	}
	p := h.n.path()
	if h.w == nil {
		st, err := h.c.Stat(ctx, p)
		if err != nil {
			return 0, h.f.errno("write", p, err)
		}
		if h.append {
			off = st.Length
		}
		if off != st.Length {
			return 0, h.refuse(p, off, st.Length)
		}
		w, err := h.c.Append(h.f.ctx, p)
		if err != nil {
			return 0, h.f.errno("append", p, err)
		}
		h.startWriter(w, st.Length)
	} else if h.append {
		off = h.pos
	}
	if off != h.pos {
		return 0, h.refuse(p, off, h.pos)
	}
	if h.werr == nil && h.wfail.Load() != nil {
		h.settle() // the pump has failed: collect its error
	}
	if h.werr != nil {
		return 0, h.f.errno("write", p, h.werr)
	}
	if h.wq == nil {
		h.wq, h.wend = make(chan []byte, writeBehind), make(chan error, 1)
		h.wfail.Store(nil)
		go pump(h.w, h.wq, h.wend, &h.wfail, &h.f.writeBufs)
	}
	// The kernel's buffer is reused once Write returns.
	buf := h.f.writeBufs.get(len(data))
	copy(buf, data)
	h.wq <- buf
	h.pos += int64(len(data))
	h.stale = true
	h.n.wrote(h.pos)
	return uint32(len(data)), 0
}

// pump writes the queued buffers into w until q is closed and sends the
// first error to end; it flags the error in failed at once, and then only
// drains q.
func pump(w *hdfs.FileWriter, q chan []byte, end chan error, failed *atomic.Pointer[error], bufs *bufPool) {
	var err error
	for buf := range q {
		if err == nil {
			if _, err = w.Write(buf); err != nil {
				failed.Store(&err)
			}
		}
		bufs.put(buf)
	}
	end <- err
}

// settle waits until every queued write has reached the HDFS writer and
// returns the first error one met.
func (h *handle) settle() error {
	if h.wq != nil {
		close(h.wq)
		if err := <-h.wend; err != nil && h.werr == nil {
			h.werr = err
		}
		h.wq, h.wend = nil, nil
	}
	return h.werr
}

// bufPool recycles buffers (read windows, queued writes), so streaming a
// large file does not allocate for every piece.
type bufPool struct{ p sync.Pool }

func (p *bufPool) get(n int) []byte {
	if b, ok := p.p.Get().(*[]byte); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]byte, n)
}

func (p *bufPool) put(b []byte) { p.p.Put(&b) }

// errWriteOnce explains a refused write in the log.
var errWriteOnce = errors.New("HDFS files are write-once: writes are taken only at the end of the file")

func (h *handle) refuse(p string, off, end int64) syscall.Errno {
	h.f.log.Warn("fuse: refused a write", "path", p, "offset", off, "end", end, "reason", errWriteOnce)
	return syscall.ENOTSUP
}

func (h *handle) startWriter(w *hdfs.FileWriter, at int64) {
	h.w, h.pos = w, at
	h.stale = true
	h.n.writerStarted(at)
}

// closeWriter closes the HDFS file: once it returns 0 the data is
// durable and the file complete.
func (h *handle) closeWriter() syscall.Errno {
	if h.w == nil {
		return 0
	}
	err := h.settle()
	if err != nil {
		h.w.Close() // releases the lease; the write error is the one to report
	} else {
		err = h.w.Close()
	}
	h.w, h.werr = nil, nil
	h.n.writerDone()
	p := h.n.path()
	h.f.cache.drop(p, false)
	return h.f.errno("close", p, err)
}

// Flush implements gofs.FileFlusher: close(2) closes the HDFS file and
// returns its error.
func (h *handle) Flush(ctx context.Context) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closeWriter()
}

// Fsync implements gofs.FileFsyncer with hsync.
func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w == nil {
		return 0
	}
	err := h.settle()
	if err == nil {
		err = h.w.Sync()
	}
	return h.f.errno("fsync", h.n.path(), err)
}

// Release implements gofs.FileReleaser.
func (h *handle) Release(ctx context.Context) syscall.Errno {
	h.release()
	return 0
}

func (h *handle) release() {
	h.mu.Lock()
	if !h.released {
		h.released = true
		h.closeWriter()
		h.closeReader()
		h.n.handleClosed(h)
	}
	h.mu.Unlock()
	h.f.dropHandle(h)
}

// truncating prepares h for a truncate to size: done when h's own writer
// is already there, else the writer is closed so HDFS can truncate.
func (h *handle) truncating(size int64) (done bool, e syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stale = true
	if h.w == nil {
		return false, 0
	}
	if size == h.pos {
		return true, 0
	}
	if e := h.closeWriter(); e != 0 {
		return true, e
	}
	return false, 0
}
