package digestmd5

import (
	"crypto/hmac"
	"crypto/rc4"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"sync"
)

// Wrapped-message layout sizes.
const (
	macLen   = 10
	typeLen  = 2
	seqLen   = 4
	trailer  = typeLen + seqLen
	overhead = macLen + trailer // what Wrap adds with rc4 (no padding)
)

// ErrIntegrity is Unwrap's error for a message whose MAC does not match.
var ErrIntegrity = errors.New("DIGEST-MD5: integrity check failed: the message was altered")

// Security is a negotiated auth-int or auth-conf layer. Wrap and Unwrap
// keep separate state, so one goroutine may Wrap while another Unwraps;
// neither is safe for concurrent use by itself.
type Security struct {
	qop     string
	recvMax int // our maxbuf: the largest wrapped message we accept
	sendMax int // the peer's maxbuf, unless SetSendLimit raised it

	outMu  sync.Mutex
	seqOut uint32
	// outDone: seqOut wrapped; Wrap refuses from then on.
	outDone bool
	macOut  hash.Hash
	encOut  *rc4.Cipher

	seqIn  uint32
	macIn  hash.Hash
	encIn  *rc4.Cipher
	broken bool
}

func (s *Security) setCiphers(out, in []byte) error {
	var err error
	if s.encOut, err = rc4.NewCipher(out); err != nil {
		return err
	}
	s.encIn, err = rc4.NewCipher(in)
	return err
}

// QOP is the layer's quality of protection, auth-int or auth-conf.
func (s *Security) QOP() string { return s.qop }

// MaxRecv is the largest wrapped message Unwrap's caller should accept:
// the maxbuf this side advertised.
func (s *Security) MaxRecv() int { return s.recvMax }

// MaxPlain is the longest message Wrap may be given so that the wrapped
// one fits the peer's maxbuf (or the limit SetSendLimit set).
func (s *Security) MaxPlain() int { return s.sendMax - overhead }

// SetSendLimit lets Wrap make wrapped messages of up to n bytes whatever
// the peer's maxbuf, for peers known to accept them: Hadoop's
// SaslInputStream and colinmarc/hdfs take any size, and Hadoop's
// SaslOutputStream wraps each write whole (a DataTransferProtocol packet,
// over 64 KiB), so some of them read correctly only when every packet is
// one message. n is capped at MaxMaxBuf.
func (s *Security) SetSendLimit(n int) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.sendMax = min(max(n, s.sendMax), MaxMaxBuf)
}

func (s *Security) mac(m hash.Hash, seq uint32, msg []byte) []byte {
	var sb [4]byte
	binary.BigEndian.PutUint32(sb[:], seq)
	m.Reset()
	m.Write(sb[:])
	m.Write(msg)
	return m.Sum(nil)[:macLen]
}

// Wrap protects msg and returns the wrapped message. msg must be at most
// MaxPlain bytes.
func (s *Security) Wrap(msg []byte) ([]byte, error) {
	if len(msg) > s.MaxPlain() {
		return nil, fmt.Errorf("DIGEST-MD5: message of %d bytes exceeds the peer's buffer (%d)", len(msg), s.MaxPlain())
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if s.outDone {
		// The next sequence number would repeat 0, and with it a MAC
		// (and an RC4 keystream position) the peer accepted before.
		return nil, errors.New("DIGEST-MD5: sequence numbers exhausted: the security layer cannot send more messages")
	}
	out := make([]byte, 0, len(msg)+overhead)
	out = append(out, msg...)
	out = append(out, s.mac(s.macOut, s.seqOut, msg)...)
	if s.encOut != nil {
		s.encOut.XORKeyStream(out, out)
	}
	out = append(out, 0, 1)
	out = binary.BigEndian.AppendUint32(out, s.seqOut)
	s.seqOut++
	s.outDone = s.seqOut == 0
	return out, nil
}

// Unwrap checks a wrapped message and returns what was wrapped. It may
// change w in place; the result shares w's memory. A message out of
// sequence (replayed, dropped or reordered), of the wrong type, or whose
// MAC does not match is refused, and the layer stays refused.
func (s *Security) Unwrap(w []byte) ([]byte, error) {
	if s.broken {
		return nil, errors.New("DIGEST-MD5: the security layer failed earlier")
	}
	if len(w) < overhead {
		s.broken = true
		return nil, fmt.Errorf("DIGEST-MD5: wrapped message of %d bytes is too short", len(w))
	}
	if len(w) > s.recvMax {
		s.broken = true
		return nil, fmt.Errorf("DIGEST-MD5: wrapped message of %d bytes exceeds maxbuf %d", len(w), s.recvMax)
	}
	body, tr := w[:len(w)-trailer], w[len(w)-trailer:]
	if tr[0] != 0 || tr[1] != 1 {
		s.broken = true
		return nil, errors.New("DIGEST-MD5: wrapped message of unknown type")
	}
	if seq := binary.BigEndian.Uint32(tr[2:]); seq != s.seqIn {
		s.broken = true
		return nil, fmt.Errorf("DIGEST-MD5: out of order sequencing of messages: got %d, expected %d", seq, s.seqIn)
	}
	if s.encIn != nil {
		s.encIn.XORKeyStream(body, body)
	}
	msg, mac := body[:len(body)-macLen], body[len(body)-macLen:]
	if !hmac.Equal(mac, s.mac(s.macIn, s.seqIn, msg)) {
		s.broken = true
		return nil, ErrIntegrity
	}
	s.seqIn++
	return msg, nil
}

// Conn carries a Security layer over a connection, as Hadoop's
// SaslInputStream and SaslOutputStream: every Write is sent as one or more
// wrapped messages, each a 4-byte big-endian length then the message, and
// Read unwraps them. Deadlines and addresses are the underlying
// connection's. One goroutine may Read while another Writes.
type Conn struct {
	net.Conn
	sec *Security

	rbuf    []byte // the current message's buffer
	pending []byte // unread plaintext of the current message
	rerr    error

	wmu sync.Mutex
}

// NewConn returns c with sec's layer on it.
func NewConn(c net.Conn, sec *Security) *Conn { return &Conn{Conn: c, sec: sec} }

// Security is the connection's layer.
func (c *Conn) Security() *Security { return c.sec }

func (c *Conn) Read(p []byte) (int, error) {
	for len(c.pending) == 0 {
		if c.rerr != nil {
			return 0, c.rerr
		}
		if err := c.next(); err != nil {
			c.rerr = err
			return 0, err
		}
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// next reads and unwraps one message; its buffer grows only as bytes
// arrive, so a peer claiming a huge length costs only what it sends.
func (c *Conn) next() error {
	var lb [4]byte
	if _, err := io.ReadFull(c.Conn, lb[:]); err != nil {
		return err
	}
	n := int(binary.BigEndian.Uint32(lb[:]))
	if n < overhead || n > c.sec.MaxRecv() {
		return fmt.Errorf("DIGEST-MD5: wrapped message length %d outside [%d, %d]", n, overhead, c.sec.MaxRecv())
	}
	buf := c.rbuf[:0]
	for len(buf) < n {
		if cap(buf) == len(buf) {
			grow := min(max(2*cap(buf), 64<<10), n)
			nb := make([]byte, len(buf), grow)
			copy(nb, buf)
			buf = nb
		}
		m, err := c.Conn.Read(buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			if len(buf) < n {
				return err
			}
		}
	}
	c.rbuf = buf
	msg, err := c.sec.Unwrap(buf)
	if err != nil {
		return err
	}
	c.pending = msg
	return nil
}

func (c *Conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	done := 0
	for done < len(p) {
		chunk := p[done:min(len(p), done+c.sec.MaxPlain())]
		w, err := c.sec.Wrap(chunk)
		if err != nil {
			return done, err
		}
		frame := make([]byte, 4, 4+len(w))
		binary.BigEndian.PutUint32(frame, uint32(len(w)))
		frame = append(frame, w...)
		if _, err := c.Conn.Write(frame); err != nil {
			return done, err
		}
		done += len(chunk)
	}
	return done, nil
}

// CloseWrite half-closes the underlying connection when it can.
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
