package datanode

import (
	"io"
	"net"
	"time"

	"github.com/stratafs/strata/internal/datatransfer"
)

// peerConn is a DataTransferProtocol connection on which no read waits
// longer than its read timeout and no write blocks longer than its write
// timeout: each Read and Write sets its own deadline, so a peer that stops
// sending (or stops reading) mid-transfer fails the transfer and frees its
// transfer slot, while a slow but moving one is unaffected (Hadoop's
// socket timeouts, dfs.client.socket-timeout and
// dfs.datanode.socket.write.timeout, work the same way).
//
// Reads happen on one goroutine and writes on at most one other, as the
// op handlers use a connection; setReadTimeout belongs to the reading
// goroutine.
type peerConn struct {
	net.Conn
	rt, wt time.Duration
	// layered: Conn is a SASL security layer over the socket (serveConn
	// sets it when the handshake wrapped the connection), so block data
	// cannot go out with sendfile(2).
	layered bool
}

func newPeerConn(c net.Conn, rt, wt time.Duration) *peerConn {
	if pc, ok := c.(*peerConn); ok {
		c = pc.Conn
	}
	// A connection the dialer wrapped (the DataNode's own, to other
	// DataNodes) is layered; serveConn marks the ones it wraps itself.
	_, tcp := c.(*net.TCPConn)
	_, unix := c.(*net.UnixConn)
	return &peerConn{Conn: c, rt: rt, wt: wt, layered: !tcp && !unix}
}

// setReadTimeout changes the read timeout of later Reads.
func (c *peerConn) setReadTimeout(d time.Duration) { c.rt = d }

func (c *peerConn) Read(p []byte) (int, error) {
	c.Conn.SetReadDeadline(time.Now().Add(c.rt))
	return c.Conn.Read(p)
}

func (c *peerConn) Write(p []byte) (int, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(c.wt))
	return c.Conn.Write(p)
}

// WriteBuffers writes b with one writev(2) on a TCP or Unix socket (one
// Write after another through a security layer); the write deadline
// covers the whole.
func (c *peerConn) WriteBuffers(b net.Buffers) (int64, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(c.wt))
	return b.WriteTo(c.Conn)
}

// ReadFrom keeps sendfile(2) for block data (datatransfer.SendBlock hands
// each packet's data to ReadFrom): the write deadline covers one packet.
func (c *peerConn) ReadFrom(r io.Reader) (int64, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(c.wt))
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// NoSendfile reports a connection whose bytes go through a security
// layer (SASL data transfer protection), where sendfile(2) cannot be used
// and SendBlock writes each packet whole. It is an explicit flag, not
// "Conn is no io.ReaderFrom": *net.UnixConn is none either, and
// short-circuit and unprotected Unix socket reads keep the ReadFrom path.
func (c *peerConn) NoSendfile() bool { return c.layered }

// Cork holds partial segments back while a block is streamed
// (datatransfer.Corker).
func (c *peerConn) Cork(on bool) error { return datatransfer.SetCork(c.Conn, on) }

// CloseWrite half-closes the connection when it can.
func (c *peerConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
