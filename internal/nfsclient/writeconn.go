package nfsclient

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	nfsc "github.com/willscott/go-nfs-client/nfs"
)

// writeConn sends WRITE calls on a TCP connection of its own, several in
// flight, as the kernel client sends a file's dirty pages: each call's
// header is encoded by hand and written together with the caller's data
// in one writev, so the data is copied once, into the socket. (go-nfs-
// client's Call XDR-encodes the whole call, data included, into a
// growing buffer and copies it once more to put the record mark in
// front: three copies and a clear of every byte written, on the same
// CPUs as the server in bench/gateways.sh.) The bytes on the wire are
// the same as Call's.
type writeConn struct {
	nc   net.Conn
	cred []byte // the AUTH_UNIX credentials' body

	wmu sync.Mutex // one call's bytes at a time

	mu      sync.Mutex
	xid     uint32
	waiting map[uint32]chan []byte // replies by xid
	err     error                  // the connection's failure, sticky
}

// maxReply bounds a WRITE reply: status, wcc_data (at most 24 + 84
// bytes of attributes), count, committed, verifier, and the RPC header.
const maxReply = 4 << 10

func dialWrites(addr string, cred []byte) (*writeConn, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("nfs: dial %s: %w", addr, err)
	}
	w := &writeConn{nc: nc, cred: cred, waiting: map[uint32]chan []byte{}}
	go w.readReplies()
	return w, nil
}

func (w *writeConn) close() { w.nc.Close() }

// readReplies hands each reply record to the call waiting for its xid.
func (w *writeConn) readReplies() {
	r := bufio.NewReaderSize(w.nc, 64<<10)
	var err error
	for {
		var mark [4]byte
		if _, err = io.ReadFull(r, mark[:]); err != nil {
			break
		}
		m := binary.BigEndian.Uint32(mark[:])
		n := int(m & 0x7fffffff)
		if m&0x80000000 == 0 || n < 4 || n > maxReply {
			err = fmt.Errorf("nfs: bad reply record mark %#x", m)
			break
		}
		rec := make([]byte, n)
		if _, err = io.ReadFull(r, rec); err != nil {
			break
		}
		xid := binary.BigEndian.Uint32(rec)
		w.mu.Lock()
		ch := w.waiting[xid]
		delete(w.waiting, xid)
		w.mu.Unlock()
		if ch != nil {
			ch <- rec
		}
	}
	w.nc.Close()
	w.mu.Lock()
	if w.err == nil {
		w.err = fmt.Errorf("nfs: WRITE connection: %w", noEOF(err))
	}
	for xid, ch := range w.waiting {
		close(ch)
		delete(w.waiting, xid)
	}
	w.mu.Unlock()
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// write sends WRITE3args for data and returns the reply's WRITE3res.
func (w *writeConn) write(fh []byte, off uint64, data []byte, how uint32) ([]byte, error) {
	pad := func(n int) int { return (4 - n%4) % 4 }
	hdr := make([]byte, 0, 128+len(w.cred)+len(fh))
	u32 := func(v uint32) { hdr = binary.BigEndian.AppendUint32(hdr, v) }
	opaque := func(b []byte) {
		u32(uint32(len(b)))
		hdr = append(hdr, b...)
		hdr = append(hdr, make([]byte, pad(len(b)))...)
	}
	ch := make(chan []byte, 1)
	w.mu.Lock()
	if w.err != nil {
		w.mu.Unlock()
		return nil, w.err
	}
	w.xid++
	xid := w.xid
	w.waiting[xid] = ch
	w.mu.Unlock()

	u32(0) // record mark, below
	u32(xid)
	u32(0) // CALL
	u32(2) // RPC version
	u32(nfsc.Nfs3Prog)
	u32(nfsc.Nfs3Vers)
	u32(nfsc.NFSProc3Write)
	u32(1) // AUTH_UNIX
	opaque(w.cred)
	u32(0) // AUTH_NULL verifier
	u32(0)
	opaque(fh)
	hdr = binary.BigEndian.AppendUint64(hdr, off)
	u32(uint32(len(data))) // count
	u32(how)
	u32(uint32(len(data))) // the data's opaque length
	bufs := net.Buffers{hdr, data, make([]byte, pad(len(data)))}
	binary.BigEndian.PutUint32(hdr, uint32(len(hdr)-4+len(data)+pad(len(data)))|0x80000000)
	w.wmu.Lock()
	_, err := bufs.WriteTo(w.nc)
	w.wmu.Unlock()
	if err != nil {
		w.nc.Close() // readReplies fails every waiting call
	}
	rec, ok := <-ch
	if !ok {
		w.mu.Lock()
		defer w.mu.Unlock()
		return nil, w.err
	}
	return acceptedBody(rec)
}

// acceptedBody returns what follows the header of an accepted, successful
// RPC reply (RFC 5531 reply_body).
func acceptedBody(rec []byte) ([]byte, error) {
	r := reader{b: rec}
	r.u32() // xid
	if r.u32() != 1 {
		return nil, errors.New("nfs: a reply that is not one")
	}
	if st := r.u32(); st != 0 {
		return nil, fmt.Errorf("nfs: call denied (reply_stat %d)", st)
	}
	r.u32()         // verifier flavor
	r.skip(r.u32()) // verifier body
	st := r.u32()   // accept_stat
	if r.err != nil {
		return nil, fmt.Errorf("nfs: reply: %w", r.err)
	}
	if st != 0 {
		return nil, fmt.Errorf("nfs: call not accepted (accept_stat %d)", st)
	}
	return r.b, nil
}

// reader decodes XDR items from b, remembering the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) u32() uint32 {
	if r.err != nil || len(r.b) < 4 {
		r.err = io.ErrUnexpectedEOF
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) skip(n uint32) {
	n = (n + 3) &^ 3
	if r.err != nil || uint32(len(r.b)) < n {
		r.err = io.ErrUnexpectedEOF
		return
	}
	r.b = r.b[n:]
}

// parseWriteRes decodes WRITE3res: the status (an error unless NFS3_OK),
// then wcc_data, then the count and the stability reached.
func parseWriteRes(what string, b []byte) (count, committed uint32, err error) {
	r := reader{b: b}
	st := r.u32()
	if r.u32() != 0 { // pre_op_attr: size, mtime, ctime
		r.skip(24)
	}
	if r.u32() != 0 { // post_op_attr: fattr3
		r.skip(84)
	}
	if r.err == nil && st != nfsc.NFS3Ok {
		return 0, 0, &StatusError{Op: what, Status: st}
	}
	count, committed = r.u32(), r.u32()
	r.skip(8) // write verifier
	if r.err != nil {
		return 0, 0, fmt.Errorf("nfs: WRITE reply: %w", r.err)
	}
	return count, committed, nil
}
