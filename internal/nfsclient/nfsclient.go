// Package nfsclient drives an NFSv3 server the way the Linux kernel's
// client does on its data path, on top of github.com/willscott/go-nfs-client
// (which speaks the protocol but writes FILE_SYNC one request at a time
// and reads one request at a time).
//
// A Conn is one TCP connection with AUTH_UNIX credentials and the mounted
// export. Copy writes a stream as UNSTABLE WRITEs of a fixed size with
// several in flight, then one COMMIT — the pattern of `cp` onto an NFS
// mount, and the case a gateway's out-of-order buffering exists for.
// ReadTo reads a file with several READs in flight (the kernel's
// read-ahead) and hands the bytes on in order. Write and Commit expose
// single calls, with the server's NFS status as an *nfsc.Error-compatible
// error, so tests can check what a refused write answers.
package nfsclient

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	nfsc "github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"
	"github.com/willscott/go-nfs-client/nfs/xdr"
)

// Stability levels of a WRITE (RFC 1813, stable_how).
const (
	Unstable = 0
	DataSync = 1
	FileSync = 2
)

// Conn is a mounted export reached over one connection, and a second
// one for WRITEs (writeconn.go).
type Conn struct {
	*nfsc.Target
	rpc  *rpc.Client
	auth rpc.Auth
	wc   *writeConn
}

// Dial connects to the server at addr (NFS and MOUNT on the same port)
// and mounts export as uid/gid with AUTH_UNIX.
func Dial(addr, export string, uid, gid uint32) (*Conn, error) {
	if err := probe(addr); err != nil {
		return nil, err
	}
	// The client binds a privileged-range local port picked at random;
	// retry when another connection holds it.
	var c *rpc.Client
	var err error
	for range 20 {
		if c, err = rpc.DialTCP("tcp", addr, false); err == nil || !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("nfs: dial %s: %w", addr, err)
	}
	auth := rpc.NewAuthUnix("strata", uid, gid).Auth()
	m := nfsc.Mount{Client: c}
	t, err := m.Mount(export, auth)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("nfs: mount %s:%s as uid %d: %w", addr, export, uid, err)
	}
	wc, err := dialWrites(addr, auth.Body)
	if err != nil {
		c.Close()
		return nil, err
	}
	return &Conn{Target: t, rpc: c, auth: auth, wc: wc}, nil
}

// probe makes sure the server answers this host before the library
// client is made: go-nfs-client reconnects forever to a server that
// closes its connections (a host outside nfs.exports.allowed.hosts), and
// each reconnect closes its pending reply channels again — a panic ("close
// of closed channel") once it happens twice. So: one MOUNT NULL call on a
// connection of its own; the server hanging up before any reply byte
// means it refuses this host.
func probe(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return fmt.Errorf("nfs: dial %s: %w", addr, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	// Record mark (last fragment, 40 bytes), then xid, CALL, RPC version
	// 2, MOUNT program and version, procedure NULL, AUTH_NULL cred and verf.
	call := []uint32{0x80000000 | 40, 1, 0, 2, nfsc.MountProg, nfsc.MountVers, 0, 0, 0, 0, 0}
	buf := make([]byte, 4*len(call))
	for i, v := range call {
		binary.BigEndian.PutUint32(buf[4*i:], v)
	}
	if _, err := conn.Write(buf); err != nil {
		return fmt.Errorf("nfs: %s refused the connection: %w", addr, err)
	}
	if _, err := io.ReadFull(conn, buf[:4]); err != nil {
		return fmt.Errorf("nfs: %s closed the connection without answering (not exported to this host?): %w", addr, err)
	}
	return nil
}

// Close closes the connection.
func (c *Conn) Close() {
	c.wc.close()
	c.rpc.Close()
}

func (c *Conn) header(proc uint32) rpc.Header {
	return rpc.Header{Rpcvers: 2, Prog: nfsc.Nfs3Prog, Vers: nfsc.Nfs3Vers, Proc: proc, Cred: c.auth, Verf: rpc.AuthNull}
}

// status reads a reply's nfsstat3 and turns a failure into an error.
func status(what string, res io.Reader) error {
	st, err := xdr.ReadUint32(res)
	if err != nil {
		return fmt.Errorf("nfs: %s reply: %w", what, err)
	}
	if st != nfsc.NFS3Ok {
		return &StatusError{Op: what, Status: st}
	}
	return nil
}

// StatusError is a call the server answered with a status other than
// NFS3_OK.
type StatusError struct {
	Op     string
	Status uint32
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("nfs: %s: %v (status %d)", e.Op, nfsc.NFS3Error(e.Status), e.Status)
}

// Unwrap gives os.ErrPermission, os.ErrNotExist, ... where one fits.
func (e *StatusError) Unwrap() error { return nfsc.NFS3Error(e.Status) }

// Write sends one WRITE of data at off with the given stability and
// returns the stability the server committed it with.
func (c *Conn) Write(fh []byte, off uint64, data []byte, how uint32) (committed uint32, err error) {
	what := fmt.Sprintf("WRITE of %d bytes at %d", len(data), off)
	res, err := c.wc.write(fh, off, data, how)
	if err != nil {
		return 0, fmt.Errorf("nfs: WRITE: %w", err)
	}
	count, committed, err := parseWriteRes(what, res)
	if err != nil {
		return 0, err
	}
	if count != uint32(len(data)) {
		return 0, fmt.Errorf("nfs: %s: server took %d", what, count)
	}
	return committed, nil
}

// Commit asks the server to make every WRITE to fh durable.
func (c *Conn) Commit(fh []byte) error {
	type commitArgs struct {
		rpc.Header
		FH     []byte
		Offset uint64
		Count  uint32
	}
	res, err := c.rpc.Call(&commitArgs{Header: c.header(nfsc.NFSProc3Commit), FH: fh})
	if err != nil {
		return fmt.Errorf("nfs: COMMIT: %w", err)
	}
	return status("COMMIT", res)
}

// Copy creates path (mode perm) and writes r into it as UNSTABLE WRITEs
// of chunk bytes with up to inflight outstanding, then COMMITs. It
// returns the bytes written.
func (c *Conn) Copy(path string, perm uint32, r io.Reader, chunk, inflight int) (int64, error) {
	fh, err := c.Create(path, 0)
	if err != nil {
		return 0, fmt.Errorf("nfs: create %s: %w", path, err)
	}
	if perm != 0 {
		// CREATE of go-nfs-client sends no mode; set it as cp would.
		if err := c.Setattr(path, nfsc.Sattr3{Mode: nfsc.SetMode{SetIt: true, Mode: perm}}); err != nil {
			return 0, fmt.Errorf("nfs: chmod %s: %w", path, err)
		}
	}
	return c.WriteAll(fh, r, chunk, inflight)
}

// WriteAll writes r from offset 0 of fh as UNSTABLE WRITEs of chunk bytes
// with up to inflight outstanding, then COMMITs.
func (c *Conn) WriteAll(fh []byte, r io.Reader, chunk, inflight int) (int64, error) {
	bufs := make(chan []byte, inflight)
	for range inflight {
		bufs <- make([]byte, chunk)
	}
	errc := make(chan error, inflight)
	var first error
	var off int64
	pending := 0
	for first == nil {
		buf := <-bufs
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			pending++
			go func(buf []byte, n int, off int64) {
				_, err := c.Write(fh, uint64(off), buf[:n], Unstable)
				bufs <- buf
				errc <- err
			}(buf, n, off)
			off += int64(n)
		} else {
			bufs <- buf
		}
		// Collect finished writes without waiting.
		for drained := false; !drained; {
			select {
			case err := <-errc:
				pending--
				if err != nil && first == nil {
					first = err
				}
			default:
				drained = true
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil && first == nil {
			first = rerr
		}
	}
	for ; pending > 0; pending-- {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return off, first
	}
	return off, c.Commit(fh)
}

// Read sends one READ of up to count bytes at off and returns the bytes
// and whether they reach the end of the file.
func (c *Conn) Read(fh []byte, off uint64, count uint32) ([]byte, bool, error) {
	type readArgs struct {
		rpc.Header
		FH     []byte
		Offset uint64
		Count  uint32
	}
	res, err := c.rpc.Call(&readArgs{Header: c.header(nfsc.NFSProc3Read), FH: fh, Offset: off, Count: count})
	if err != nil {
		return nil, false, fmt.Errorf("nfs: READ: %w", err)
	}
	if err := status(fmt.Sprintf("READ of %d bytes at %d", count, off), res); err != nil {
		return nil, false, err
	}
	var ok struct {
		Attr  nfsc.PostOpAttr
		Count uint32
		EOF   bool
		Data  []byte
	}
	if err := xdr.Read(res, &ok); err != nil {
		return nil, false, fmt.Errorf("nfs: READ reply: %w", err)
	}
	if len(ok.Data) > int(count) || int(ok.Count) != len(ok.Data) {
		return nil, false, fmt.Errorf("nfs: READ of %d bytes at %d: reply claims %d bytes and carries %d", count, off, ok.Count, len(ok.Data))
	}
	return ok.Data, ok.EOF, nil
}

// ReadTo reads path from start to end into w with READs of chunk bytes,
// up to inflight outstanding, and returns the bytes read.
func (c *Conn) ReadTo(w io.Writer, path string, chunk, inflight int) (int64, error) {
	_, fh, err := c.Lookup(path)
	if err != nil {
		return 0, fmt.Errorf("nfs: lookup %s: %w", path, err)
	}
	return c.ReadAll(w, fh, chunk, inflight)
}

// ReadAll reads fh from start to end into w with READs of chunk bytes, up
// to inflight outstanding, and returns the bytes read.
func (c *Conn) ReadAll(w io.Writer, fh []byte, chunk, inflight int) (int64, error) {
	attr, err := c.GetAttr(fh)
	if err != nil {
		return 0, fmt.Errorf("nfs: GETATTR: %w", err)
	}
	size := int64(attr.Filesize)
	type result struct {
		buf []byte
		err error
	}
	// Each piece's result arrives on its own channel; they are handed on
	// in order while later ones are in flight.
	queue := make(chan chan result, inflight)
	go func() {
		defer close(queue)
		for off := int64(0); off < size; off += int64(chunk) {
			ch := make(chan result, 1)
			queue <- ch
			go func(off int64) {
				buf, err := c.readFull(fh, off, int(min(int64(chunk), size-off)))
				ch <- result{buf, err}
			}(off)
		}
	}()
	var n int64
	var first error
	for ch := range queue {
		res := <-ch
		if first != nil {
			continue
		}
		if res.err != nil {
			first = res.err
			continue
		}
		if _, err := w.Write(res.buf); err != nil {
			first = err
			continue
		}
		n += int64(len(res.buf))
	}
	return n, first
}

// readFull reads n bytes from off, with more READs if the server answers
// short ones.
func (c *Conn) readFull(fh []byte, off int64, n int) ([]byte, error) {
	buf := make([]byte, 0, n)
	for len(buf) < n {
		b, eof, err := c.Read(fh, uint64(off)+uint64(len(buf)), uint32(n-len(buf)))
		if err != nil {
			return nil, err
		}
		buf = append(buf, b...)
		if len(buf) < n && (eof || len(b) == 0) {
			return nil, fmt.Errorf("nfs: READ at %d: %w", off+int64(len(buf)), io.ErrUnexpectedEOF)
		}
	}
	return buf, nil
}
