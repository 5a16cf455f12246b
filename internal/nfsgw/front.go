package nfsgw

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// front sits between a client's TCP connection and go-nfs. It reads the
// ONC RPC record stream (RFC 5531: a 4-byte record mark, then the call)
// and
//
//   - validates every call header and remembers its credentials: go-nfs
//     serves a connection's calls one at a time, reading the next call only
//     after the current one is handled, so "the credentials of the call
//     being served" is well defined and picks the acting user;
//   - serves WRITE, COMMIT and FSINFO itself (go-nfs writes synchronously,
//     always answers FILE_SYNC and cannot refuse an overwrite with a
//     clear status), and READ (with fewer copies than go-nfs), replying on
//     the same connection;
//   - passes every other call to go-nfs unchanged, one record at a time.
//
// A malformed record closes the connection; nothing a client sends can
// make the front allocate more than maxRecord bytes.
type front struct {
	g  *Gateway
	nc net.Conn
	br *bufio.Reader

	rw bool // the host may change the file system (see Exports)

	// Reader side, used only by go-nfs's connection goroutine.
	left int // bytes of the current passed-through record not yet read

	cred atomic.Pointer[credential]

	// Writer side: replies are whole records; wmu keeps go-nfs's replies
	// (which reach Write in pieces) and the front's own from interleaving.
	wmu     sync.Mutex
	outLeft int // bytes of go-nfs's current reply still to come

	inflight chan struct{} // bounds WRITEs being served at once
	calls    sync.WaitGroup

	once   sync.Once
	closed chan struct{}
	ln     *oneConnListener
}

type credential struct {
	flavor uint32
	uid    uint32
	user   string
}

// ONC RPC and NFS constants (RFC 5531, RFC 1813).
const (
	rpcCall      = 0
	rpcReply     = 1
	rpcVersion   = 2
	authNull     = 0
	authUnix     = 1
	maxAuthBytes = 400

	progNFS  = 100003
	progMNT  = 100005
	nfsVers3 = 3

	procRead   = 6
	procWrite  = 7
	procFSInfo = 19
	procCommit = 21

	// maxRead is the rtmax FSINFO advertises (Hadoop's nfs.rtmax default),
	// maxWrite the wtmax: larger than Hadoop's 1 MiB, so a client that
	// writes FILE_SYNC (one hsync per WRITE) syncs less often; Linux
	// clients cap their writes at 1 MiB anyway. maxRecord bounds any
	// record a client sends.
	maxRead   = 1 << 20
	maxWrite  = 4 << 20
	maxRecord = maxWrite + 64<<10

	maxInflightWrites = 16
)

var errBadRecord = errors.New("nfsgw: malformed RPC record")

func newFront(g *Gateway, nc net.Conn, rw bool) *front {
	f := &front{
		g: g, nc: nc, br: bufio.NewReaderSize(nc, 64<<10), rw: rw,
		inflight: make(chan struct{}, maxInflightWrites),
		closed:   make(chan struct{}),
	}
	f.cred.Store(&credential{user: g.ids.actingUser(nobodyID)})
	f.ln = &oneConnListener{c: f, ch: make(chan net.Conn, 1), closed: f.closed}
	f.ln.ch <- f
	return f
}

// user is the HDFS user the call being served acts as.
func (f *front) user() string { return f.cred.Load().user }

func (f *front) listener() net.Listener { return f.ln }

// Read implements net.Conn for go-nfs: the bytes of one record at most.
func (f *front) Read(p []byte) (int, error) {
	for f.left == 0 {
		if err := f.nextRecord(); err != nil {
			f.Close()
			return 0, err
		}
	}
	if len(p) > f.left {
		p = p[:f.left]
	}
	n, err := f.br.Read(p)
	f.left -= n
	if err != nil {
		f.Close()
	}
	return n, err
}

// callHeader is the part of a call the front looks at.
type callHeader struct {
	xid, prog, vers, proc uint32
	cred                  credential
	args                  []byte // what follows the header, as far as peeked
}

// nextRecord reads the next record's header. Calls the front serves are
// consumed here; for others it sets f.left so Read passes the record on.
func (f *front) nextRecord() error {
	mark, err := f.br.Peek(4)
	if err != nil {
		return err
	}
	m := binary.BigEndian.Uint32(mark)
	n := int(m & 0x7fffffff)
	if m&0x80000000 == 0 || n < 40 || n > maxRecord {
		f.g.log.Warn("nfs3: closing connection: bad record mark", "remote", f.nc.RemoteAddr(), "mark", fmt.Sprintf("%#x", m))
		return errBadRecord
	}
	peek, err := f.br.Peek(4 + min(n, 1024))
	if err != nil {
		return err
	}
	h, err := parseCall(peek[4:])
	if err != nil {
		f.g.log.Warn("nfs3: closing connection: bad call", "remote", f.nc.RemoteAddr(), "err", err)
		return errBadRecord
	}
	h.cred.user = f.g.ids.actingUser(h.cred.uid)
	if h.cred.flavor != authUnix {
		h.cred.user = nobody
	}
	f.cred.Store(&h.cred)
	if !f.rw && h.prog == progNFS && h.vers == nfsVers3 {
		if _, ok := mutatingProcs[h.proc]; ok {
			return f.refuseReadOnly(h, n)
		}
	}
	if h.prog != progNFS || h.vers != nfsVers3 || (h.proc != procRead && h.proc != procWrite && h.proc != procCommit && h.proc != procFSInfo) {
		if err := f.checkPassThrough(h, n, len(peek)-4-len(h.args)); err != nil {
			f.g.log.Warn("nfs3: closing connection: bad arguments", "remote", f.nc.RemoteAddr(), "proc", h.proc, "err", err)
			return errBadRecord
		}
		f.left = 4 + n
		return nil
	}
	rec := getBuf(4 + n)
	if _, err := io.ReadFull(f.br, rec); err != nil {
		putBuf(rec)
		return err
	}
	hdrLen := len(peek) - 4 - len(h.args)
	args := rec[4+hdrLen:]
	cred := h.cred
	switch h.proc {
	case procFSInfo:
		f.reply(h.xid, fsinfoReply())
		putBuf(rec)
	case procRead:
		body := f.g.read(cred, args)
		putBuf(rec)
		f.reply(h.xid, body)
		putBuf(body)
	case procCommit:
		f.serveAsync(func() { f.reply(h.xid, f.g.commit(cred, args)); putBuf(rec) })
	case procWrite:
		serve := func() {
			body := f.g.write(cred, args, &rec) // may keep rec
			f.reply(h.xid, body)
			if rec != nil {
				putBuf(rec)
			}
		}
		if isUnstableWrite(args) {
			// Never waits: served in arrival order, which keeps a
			// client's pipelined WRITEs contiguous.
			serve()
		} else {
			f.serveAsync(serve)
		}
	}
	return nil
}

// WRITE records are read into pooled buffers. A buffer is free again once
// the reply is sent, unless the gateway kept the record for its data
// (tail.go); it gives the buffer back when it drops that data.
var recordPool sync.Pool

func getBuf(n int) []byte {
	if b, ok := recordPool.Get().(*[]byte); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]byte, n, max(n, maxRead+4096))
}

func putBuf(b []byte) {
	if cap(b) <= maxRecord+4 {
		recordPool.Put(&b)
	}
}

// maxSmallRecord bounds the calls go-nfs serves: none carries data.
const maxSmallRecord = 60 << 10

// checkPassThrough validates the variable-length arguments of a call for
// go-nfs: its XDR decoder allocates whatever length an opaque claims, so
// every opaque must fit in the record. hdrLen is the call header's size.
func (f *front) checkPassThrough(h callHeader, n, hdrLen int) error {
	if h.prog != progNFS && h.prog != progMNT {
		return nil // go-nfs answers PROG_UNAVAIL without decoding
	}
	if n > maxSmallRecord {
		return fmt.Errorf("call of %d bytes", n)
	}
	rec, err := f.br.Peek(4 + n)
	if err != nil {
		return err
	}
	return checkArgs(h.prog, h.vers, h.proc, rec[4+hdrLen:])
}

// checkArgs checks the opaques of NFSv3 and MOUNTv3 arguments (RFC 1813).
func checkArgs(prog, vers, proc uint32, args []byte) error {
	r := xdrReader{b: args}
	whole := len(args)
	switch {
	case prog == progMNT:
		if proc == 1 || proc == 3 { // MNT, UMNT: dirpath
			r.opaque(1024)
		}
	case vers != nfsVers3 || proc == 0:
	default:
		r.opaque(64) // every NFSv3 procedure starts with a file handle
		switch proc {
		case 3, 8, 9, 10, 11, 12, 13: // diropargs3: dir handle, name
			r.opaque(whole)
			if proc == 10 { // SYMLINK: sattr3, then the target path
				skipSattr3(&r)
				r.opaque(whole)
			}
		case 14: // RENAME: from (dir, name), to (dir, name)
			r.opaque(whole)
			r.opaque(64)
			r.opaque(whole)
		case 15: // LINK: file, then link (dir, name)
			r.opaque(64)
			r.opaque(whole)
		}
	}
	return r.err
}

// skipSattr3 reads past a sattr3.
func skipSattr3(r *xdrReader) {
	for range 3 { // mode, uid, gid
		if r.u32() != 0 {
			r.u32()
		}
	}
	if r.u32() != 0 { // size
		r.u64()
	}
	for range 2 { // atime, mtime
		if r.u32() == 2 { // SET_TO_CLIENT_TIME
			r.u64()
		}
	}
}

// isUnstableWrite reports whether WRITE3args ask for an UNSTABLE write.
func isUnstableWrite(args []byte) bool {
	r := xdrReader{b: args}
	r.opaque(64)
	r.u64()
	r.u32()
	return r.u32() == unstable && r.err == nil
}

// serveAsync runs a stable WRITE or a COMMIT on its own goroutine: either
// may wait for a gap to fill, and the connection must go on reading the
// WRITE that fills it. At most maxInflightWrites run at once.
func (f *front) serveAsync(fn func()) {
	select {
	case f.inflight <- struct{}{}:
	case <-f.closed:
		return
	}
	f.calls.Add(1)
	go func() {
		defer func() { <-f.inflight; f.calls.Done() }()
		fn()
	}()
}

// parseCall decodes an RPC call header (RFC 5531 call_body) from b.
func parseCall(b []byte) (callHeader, error) {
	var h callHeader
	r := xdrReader{b: b}
	h.xid = r.u32()
	mtype := r.u32()
	rpcvers := r.u32()
	h.prog, h.vers, h.proc = r.u32(), r.u32(), r.u32()
	h.cred.flavor = r.u32()
	cred := r.opaque(maxAuthBytes)
	r.u32() // verifier flavor
	r.opaque(maxAuthBytes)
	if r.err != nil {
		return h, r.err
	}
	if mtype != rpcCall {
		return h, fmt.Errorf("message type %d is not a call", mtype)
	}
	if rpcvers != rpcVersion {
		return h, fmt.Errorf("RPC version %d", rpcvers)
	}
	h.cred.uid = nobodyID
	if h.cred.flavor == authUnix {
		c := xdrReader{b: cred}
		c.u32()       // stamp
		c.opaque(255) // machine name
		h.cred.uid = c.u32()
		if c.err != nil {
			return h, fmt.Errorf("AUTH_UNIX credentials: %w", c.err)
		}
	}
	h.args = r.b
	return h, nil
}

// reply sends an accepted, successful RPC reply with body.
func (f *front) reply(xid uint32, body []byte) {
	var hdr [28]byte
	binary.BigEndian.PutUint32(hdr[0:], uint32(24+len(body))|0x80000000)
	binary.BigEndian.PutUint32(hdr[4:], xid)
	binary.BigEndian.PutUint32(hdr[8:], rpcReply)
	// Then zeros: MSG_ACCEPTED, an AUTH_NULL verifier, SUCCESS.
	bufs := net.Buffers{hdr[:], body}
	f.wmu.Lock()
	defer f.wmu.Unlock()
	if _, err := bufs.WriteTo(f.nc); err != nil {
		f.Close()
	}
}

// Write implements net.Conn for go-nfs's replies.
func (f *front) Write(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		if f.outLeft == 0 {
			if len(p) < 4 {
				return total, errBadRecord
			}
			f.wmu.Lock()
			f.outLeft = 4 + int(binary.BigEndian.Uint32(p)&0x7fffffff)
		}
		k := min(len(p), f.outLeft)
		n, err := f.nc.Write(p[:k])
		total += n
		f.outLeft -= n
		p = p[n:]
		if err != nil {
			f.outLeft = 0
		}
		if f.outLeft == 0 {
			f.wmu.Unlock()
		}
		if err != nil {
			f.Close()
			return total, err
		}
	}
	return total, nil
}

// Close closes the connection. Safe to call more than once.
func (f *front) Close() error {
	f.once.Do(func() {
		close(f.closed)
		f.nc.Close()
	})
	return nil
}

// wait returns when the front's own WRITE and COMMIT calls are done.
func (f *front) wait() { f.calls.Wait() }

func (f *front) LocalAddr() net.Addr  { return f.nc.LocalAddr() }
func (f *front) RemoteAddr() net.Addr { return f.nc.RemoteAddr() }
func (f *front) SetDeadline(t time.Time) error {
	return f.nc.SetDeadline(t)
}
func (f *front) SetReadDeadline(t time.Time) error  { return f.nc.SetReadDeadline(t) }
func (f *front) SetWriteDeadline(t time.Time) error { return f.nc.SetWriteDeadline(t) }

// oneConnListener hands one connection to a go-nfs server, then blocks
// until that connection closes, so the server ends with its connection.
type oneConnListener struct {
	c      *front
	ch     chan net.Conn
	closed chan struct{}
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}
func (l *oneConnListener) Close() error   { return nil }
func (l *oneConnListener) Addr() net.Addr { return l.c.LocalAddr() }

// xdrReader decodes XDR items, remembering the first error.
type xdrReader struct {
	b   []byte
	err error
}

func (r *xdrReader) u32() uint32 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 4 {
		r.err = io.ErrUnexpectedEOF
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *xdrReader) u64() uint64 {
	hi := r.u32()
	return uint64(hi)<<32 | uint64(r.u32())
}

// opaque reads a variable-length opaque of at most max bytes (and its
// padding) without copying.
func (r *xdrReader) opaque(max int) []byte {
	n := r.u32()
	if r.err != nil {
		return nil
	}
	if n > uint32(max) {
		r.err = fmt.Errorf("opaque of %d bytes exceeds %d", n, max)
		return nil
	}
	padded := (int(n) + 3) &^ 3
	if len(r.b) < padded {
		r.err = io.ErrUnexpectedEOF
		return nil
	}
	v := r.b[:n]
	r.b = r.b[padded:]
	return v
}
