package quorum

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// raftMagic starts every Raft connection, where Hadoop IPC sends "hrpc".
var raftMagic = []byte("SRFT")

const (
	// sniffTimeout bounds how long a new connection may take to send its
	// first four bytes.
	sniffTimeout = 10 * time.Second
	// maxSniffing bounds the connections whose first bytes are awaited
	// at once; beyond it new connections are closed.
	maxSniffing = 256
)

// Mux splits one listener into the Hadoop IPC connections (Accept) and the
// Raft connections (Raft, a raft.StreamLayer).
type Mux struct {
	ln      net.Listener
	log     *slog.Logger
	allowed func(net.Addr) bool

	ipc   chan net.Conn
	raft  chan net.Conn
	slots chan struct{}
	perMu sync.Mutex
	perIP map[string]int

	closeOnce sync.Once
	closed    chan struct{}
}

// NewMux starts accepting on ln. allowed says which remote addresses may
// open Raft connections (nil: any).
func NewMux(ln net.Listener, allowed func(net.Addr) bool, logger *slog.Logger) *Mux {
	if logger == nil {
		logger = slog.Default()
	}
	m := &Mux{
		ln: ln, log: logger, allowed: allowed,
		ipc: make(chan net.Conn), raft: make(chan net.Conn),
		slots: make(chan struct{}, maxSniffing), perIP: map[string]int{}, closed: make(chan struct{}),
	}
	go m.acceptLoop()
	return m
}

func (m *Mux) acceptLoop() {
	backoff := 5 * time.Millisecond
	for {
		c, err := m.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				m.Close()
				return
			}
			// Out of file descriptors, a connection reset before accept,
			// ...: the listener still works; wait and go on, as the IPC
			// server does.
			m.log.Warn("namenode: accept failed; retrying", "err", err, "in", backoff)
			select {
			case <-time.After(backoff):
			case <-m.closed:
				return
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		ip := remoteIP(c)
		if !m.takeSlot(ip) {
			c.Close()
			continue
		}
		go m.sniff(c, ip)
	}
}

// maxSniffingPerIP bounds one address's share of the sniffing slots, so
// that one host's silent connections cannot lock everyone else out.
const maxSniffingPerIP = 32

func remoteIP(c net.Conn) string {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	return c.RemoteAddr().String()
}

func (m *Mux) takeSlot(ip string) bool {
	m.perMu.Lock()
	defer m.perMu.Unlock()
	if m.perIP[ip] >= maxSniffingPerIP {
		return false
	}
	select {
	case m.slots <- struct{}{}:
	default:
		return false
	}
	m.perIP[ip]++
	return true
}

func (m *Mux) releaseSlot(ip string) {
	m.perMu.Lock()
	if m.perIP[ip]--; m.perIP[ip] <= 0 {
		delete(m.perIP, ip)
	}
	m.perMu.Unlock()
	<-m.slots
}

// sniff reads a connection's first four bytes and hands it on.
func (m *Mux) sniff(c net.Conn, ip string) {
	defer m.releaseSlot(ip)
	c.SetReadDeadline(time.Now().Add(sniffTimeout))
	head := make([]byte, len(raftMagic))
	if _, err := io.ReadFull(c, head); err != nil {
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	out, pc := m.ipc, net.Conn(&prefixConn{Conn: c, prefix: head})
	if bytes.Equal(head, raftMagic) {
		if m.allowed != nil && !m.allowed(c.RemoteAddr()) {
			m.log.Warn("namenode: refused a Raft connection from outside the nameservice", "remote", c.RemoteAddr().String())
			c.Close()
			return
		}
		out, pc = m.raft, c
	}
	select {
	case out <- pc:
	case <-m.closed:
		c.Close()
	}
}

// Accept returns the next Hadoop IPC connection (with its first bytes
// still to be read).
func (m *Mux) Accept() (net.Conn, error) {
	select {
	case c := <-m.ipc:
		return c, nil
	case <-m.closed:
		return nil, net.ErrClosed
	}
}

// Close stops accepting for both kinds of connection.
func (m *Mux) Close() error {
	var err error
	m.closeOnce.Do(func() {
		close(m.closed)
		err = m.ln.Close()
	})
	return err
}

// Addr is the shared listener's address.
func (m *Mux) Addr() net.Addr { return m.ln.Addr() }

// Raft is the Raft side of the listener.
func (m *Mux) Raft() raft.StreamLayer { return raftLayer{m} }

type raftLayer struct{ m *Mux }

func (l raftLayer) Accept() (net.Conn, error) {
	select {
	case c := <-l.m.raft:
		return c, nil
	case <-l.m.closed:
		return nil, net.ErrClosed
	}
}

// Close is a no-op: the transport closes its stream layer on shutdown,
// but the listener belongs to the NameNode (Mux.Close).
func (l raftLayer) Close() error   { return nil }
func (l raftLayer) Addr() net.Addr { return l.m.ln.Addr() }

func (l raftLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", string(addr), timeout)
	if err != nil {
		return nil, err
	}
	c.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := c.Write(raftMagic); err != nil {
		c.Close()
		return nil, err
	}
	c.SetWriteDeadline(time.Time{})
	return c, nil
}

// prefixConn gives back the bytes sniffed off a connection before the
// rest of it.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}
