package ipc

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/proto/ipcpb"
	"github.com/stratafs/strata/internal/security"
)

// ClientConfig configures a Client.
type ClientConfig struct {
	// Addr is the server's host:port.
	Addr string
	// User is the effective user sent in the connection context.
	User string
	// Protocol is the Java interface name of the protocol spoken, e.g.
	// "org.apache.hadoop.hdfs.protocol.ClientProtocol".
	Protocol string
	// ProtocolVersion is sent with every call (1 for Hadoop's protocols).
	ProtocolVersion uint64
	// DialTimeout bounds connecting (ipc.client.connect.timeout, 20 s).
	DialTimeout time.Duration
	// LocalIP is the address to connect from; "" lets the system choose.
	// A DataNode sets its transfer address: the NameNode knows it by the
	// address it connects from.
	LocalIP string
	// MaxDataLength bounds a response frame (default 128 MiB).
	MaxDataLength int
	// ClientID is the 16-byte client id sent with every call, which a
	// server's retry cache keys calls by; nil means a random one. Clients
	// of one logical caller on several servers (a failover group) share
	// it, and then must draw call ids from one NextCallID.
	ClientID []byte
	// Login authenticates the connection with Kerberos (SASL GSSAPI);
	// nil means the process login (SetLogin), if any, else simple
	// authentication. User is then sent only when it differs from the
	// login's user, to act as that user (a proxy user).
	Login *security.Login
	// ServerPrincipal is the server's principal (may hold _HOST); ""
	// means the one its protocol's KerberosInfo key names.
	ServerPrincipal string
	// QOPs are the protection levels the client accepts (a
	// hadoop.rpc.protection bitmask; 0: the process configuration's).
	QOPs byte
	// Tokens are presented for TOKEN authentication when the server
	// offers it (the one of the protocol's kind whose service is Addr);
	// nil means the process tokens (SetTokens).
	Tokens []delegation.Token
	// TokenOnly authenticates with Tokens alone: never with a Kerberos
	// login (Login or the process's), and no connection when none of
	// them is for Addr. A gateway acting on a caller's token uses it so
	// that it never falls back to its own identity.
	TokenOnly bool
	// CallProtocol, when set, is the protocol each call's header names
	// (declaringClassProtocolName, which the server routes by) instead
	// of Protocol, the connection context's: Hadoop's clients name the
	// interface that declares the method.
	CallProtocol string

	// plainRequests: see clientSASL.plainRequests.
	plainRequests bool
}

// ClientIDLength is the length of a client id (a Java UUID's bytes).
const ClientIDLength = 16

// NewClientID returns a random client id.
func NewClientID() []byte {
	id := make([]byte, ClientIDLength)
	rand.Read(id)
	return id
}

// Client makes calls over one Hadoop IPC connection, opened on first use
// and re-opened after it breaks. Calls may be made concurrently; they are
// multiplexed on the connection by call id. A Client is safe for concurrent
// use.
type Client struct {
	cfg      ClientConfig
	clientID []byte

	mu     sync.Mutex
	conn   *clientConn
	nextID int32
	closed bool
}

// NewClient returns a Client; it does not connect yet. A cfg.ClientID of
// the wrong length is replaced by a random one, as the server would refuse
// it.
func NewClient(cfg ClientConfig) *Client {
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 20 * time.Second
	}
	if cfg.MaxDataLength <= 0 {
		cfg.MaxDataLength = DefaultMaxDataLength
	}
	if cfg.ProtocolVersion == 0 {
		cfg.ProtocolVersion = 1
	}
	id := NewClientID()
	if len(cfg.ClientID) == ClientIDLength {
		copy(id, cfg.ClientID)
	}
	cfg.ClientID = id
	return &Client{cfg: cfg, clientID: id}
}

// ClientID returns the client id the Client sends.
func (c *Client) ClientID() []byte { return append([]byte(nil), c.clientID...) }

// Addr returns the server address the Client calls.
func (c *Client) Addr() string { return c.cfg.Addr }

// ErrClientClosed is returned by Call after Close.
var ErrClientClosed = errors.New("ipc: client closed")

// Call invokes method with req and decodes the answer into resp. A
// server-side failure is returned as *RemoteError; a broken connection as a
// plain error (the call may or may not have run).
// The call is sent without a retry count (the server sees -1, Hadoop's
// "not retried" value).
func (c *Client) Call(ctx context.Context, method string, req, resp proto.Message) error {
	return c.CallWith(ctx, method, req, resp, c.NextCallID(), retryNone)
}

// retryNone is RpcRequestHeaderProto's default retryCount.
const retryNone = -1

// NextCallID returns a call id not yet used by this Client: ids count up
// from 0 and wrap at 2^31-1, as Hadoop's Client.nextCallId.
func (c *Client) NextCallID() int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nextID == 1<<31-1 {
		c.nextID = 0
	}
	id := c.nextID
	c.nextID++
	return id
}

// CallWith is Call with the call id and retry count given: a caller that
// retries an at-most-once call sends it again with the same id and retry
// one higher, so that the server's retry cache (keyed by client id and
// call id) answers the first attempt's outcome instead of running it
// twice. id must come from NextCallID of c, or of a Client sharing c's
// ClientID, and not be in flight on c; retry < 0 sends no retry count.
//
// A failure to connect, or a connection that breaks before the answer
// arrives, is returned as a *ConnError (IsConnError); the call may have
// run only in the second case.
func (c *Client) CallWith(ctx context.Context, method string, req, resp proto.Message, id, retry int32) error {
	conn, err := c.connection(ctx)
	if err != nil {
		return err
	}
	return conn.call(ctx, id, retry, c, method, req, resp)
}

func (c *Client) connection(ctx context.Context) (*clientConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClientClosed
	}
	if c.conn != nil && c.conn.err() == nil {
		return c.conn, nil
	}
	conn, err := dial(ctx, c.cfg, c.clientID)
	if err != nil {
		return nil, err
	}
	c.conn = conn
	return conn, nil
}

// Close closes the connection; calls in flight fail. Safe to call twice.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.conn != nil {
		c.conn.shutdown(ErrClientClosed)
	}
	return nil
}

type result struct {
	hdr  responseHeader
	body []byte
	buf  *[]byte // the pooled buffer body is in, or nil
}

// resultChans holds the one-slot channels calls wait on. A channel is
// returned only by a call that received its result, after which no one
// else sends on it or closes it.
var resultChans = sync.Pool{New: func() any { return make(chan result, 1) }}

type clientConn struct {
	nc   net.Conn
	br   *bufio.Reader
	cfg  ClientConfig
	sasl *clientSASL // nil: simple authentication

	wmu sync.Mutex

	mu      sync.Mutex
	pending map[int32]chan result
	broken  error
}

func dial(ctx context.Context, cfg ClientConfig, clientID []byte) (*clientConn, error) {
	d := net.Dialer{Timeout: cfg.DialTimeout}
	if ip := net.ParseIP(cfg.LocalIP); ip != nil {
		d.LocalAddr = &net.TCPAddr{IP: ip}
	}
	nc, err := d.DialContext(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, connErr(fmt.Errorf("ipc: connecting to %s: %w", cfg.Addr, err))
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	hdr := []byte{'h', 'r', 'p', 'c', Version, 0, AuthSimple}
	br := bufio.NewReaderSize(nc, 64<<10)
	user := cfg.User
	var sasl *clientSASL
	pl := cfg.kerberos()
	tok, tokQOPs := cfg.selectToken()
	if cfg.TokenOnly && tok == nil {
		nc.Close()
		return nil, &RemoteError{Class: ClassAccessControl, Message: "Client cannot authenticate via:[TOKEN]: no token for " + cfg.Addr, Fatal: true}
	}
	if pl != nil || tok != nil {
		nc.SetDeadline(saslDeadline(ctx, cfg.DialTimeout))
		_, err := nc.Write([]byte{'h', 'r', 'p', 'c', Version, 0, AuthSASL})
		if err == nil {
			sasl, err = saslConnect(nc, br, &cfg, pl, tok, tokQOPs, clientID)
		}
		if sasl != nil {
			sasl.plainRequests = cfg.plainRequests
		}
		if err != nil {
			nc.Close()
			var re *RemoteError
			if errors.As(err, &re) {
				return nil, err
			}
			return nil, connErr(fmt.Errorf("ipc: authenticating to %s: %w", cfg.Addr, err))
		}
		nc.SetDeadline(time.Time{})
		hdr = nil
		switch {
		case sasl.token:
			// The token names both users; Hadoop's client sends none.
			user = ""
		case user == "" || user == pl.login.User:
			user = pl.login.Principal
		}
	}
	ctxMsg := &ipcpb.IpcConnectionContextProto{Protocol: proto.String(cfg.Protocol)}
	if user != "" {
		ctxMsg.UserInfo = &ipcpb.UserInformationProto{EffectiveUser: proto.String(user)}
	}
	rpcHdr := &ipcpb.RpcRequestHeaderProto{
		RpcKind:  ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
		RpcOp:    ipcpb.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
		CallId:   proto.Int32(callIDConnectionContext),
		ClientId: clientID,
	}
	buf, err := appendFrame(hdr, rpcHdr, ctxMsg)
	if err == nil && sasl.wrapsRequests() {
		buf, err = sasl.wrapFrame(buf, clientID)
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	if _, err := nc.Write(buf); err != nil {
		nc.Close()
		return nil, connErr(fmt.Errorf("ipc: connecting to %s: %w", cfg.Addr, err))
	}
	cc := &clientConn{nc: nc, br: br, cfg: cfg, sasl: sasl, pending: map[int32]chan result{}}
	go cc.readLoop()
	return cc, nil
}

func (cc *clientConn) err() error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.broken
}

// shutdown marks the connection broken and fails every pending call.
func (cc *clientConn) shutdown(err error) {
	cc.mu.Lock()
	if cc.broken == nil {
		cc.broken = err
	}
	pending := cc.pending
	cc.pending = map[int32]chan result{}
	cc.mu.Unlock()
	cc.nc.Close()
	for _, ch := range pending {
		close(ch)
	}
}

func (cc *clientConn) readLoop() {
	for {
		// A pooled buffer is taken once a frame's length has arrived (an
		// idle connection holds none). Not under wrapping: the frames
		// inside a WRAP message may alias its buffer, not to be reused.
		var frame []byte
		var bp *[]byte
		var err error
		if cc.sasl.wrapping() {
			frame, err = readFrame(cc.br, cc.cfg.MaxDataLength, nil)
		} else {
			frame, bp, err = readPooledFrame(cc.br, cc.cfg.MaxDataLength, nil)
		}
		if err != nil {
			cc.shutdown(connErr(fmt.Errorf("ipc: connection to %s: %w", cc.cfg.Addr, err)))
			return
		}
		if !cc.deliver(frame, false, bp) {
			return
		}
	}
}

// deliver hands one response frame to its call; false means the
// connection is done. inner is a frame that came out of a WRAP message.
// buf, when not nil, is the pooled buffer frame is in, which goes with a
// successful result to the call to return once it has decoded it.
func (cc *clientConn) deliver(frame []byte, inner bool, buf *[]byte) bool {
	{
		msg, rest, err := nextDelimited(frame)
		var hdr responseHeader
		if err == nil {
			hdr, err = decodeResponseHeader(msg)
		}
		if err != nil {
			cc.shutdown(fmt.Errorf("ipc: response from %s: %w", cc.cfg.Addr, err))
			return false
		}
		id := int32(hdr.callID)
		if cc.sasl.wrapping() && !inner {
			// Once integrity or privacy is on, every frame from the
			// server is a WRAP message, as Hadoop's client insists: an
			// unwrapped one could be anyone's.
			if id != callIDSASL {
				cc.shutdown(fmt.Errorf("ipc: response from %s: %w", cc.cfg.Addr, errNonWrapped))
				return false
			}
			frames, err := cc.sasl.unwrapFrames(rest, cc.cfg.MaxDataLength)
			if err != nil {
				cc.shutdown(fmt.Errorf("ipc: response from %s: %w", cc.cfg.Addr, err))
				return false
			}
			for _, f := range frames {
				if !cc.deliver(f, true, nil) {
					return false
				}
			}
			return true
		}
		if hdr.status == ipcpb.RpcResponseHeaderProto_FATAL {
			re := &RemoteError{Class: hdr.class, Message: hdr.msg, Code: hdr.code(), Fatal: true}
			cc.mu.Lock()
			ch := cc.pending[id]
			delete(cc.pending, id)
			cc.mu.Unlock()
			if ch != nil {
				ch <- result{hdr: hdr}
			}
			cc.shutdown(re)
			return false
		}
		cc.mu.Lock()
		ch := cc.pending[id]
		delete(cc.pending, id)
		cc.mu.Unlock()
		if ch != nil {
			ch <- result{hdr: hdr, body: rest, buf: buf}
		}
	}
	return true
}

func (cc *clientConn) call(ctx context.Context, id, retry int32, c *Client, method string, req, resp proto.Message) error {
	ch := resultChans.Get().(chan result)
	cc.mu.Lock()
	if cc.broken != nil {
		err := cc.broken
		cc.mu.Unlock()
		return err
	}
	if _, dup := cc.pending[id]; dup {
		cc.mu.Unlock()
		return fmt.Errorf("ipc: call id %d already in flight to %s", id, c.cfg.Addr)
	}
	cc.pending[id] = ch
	cc.mu.Unlock()

	bp := getBuffer() // returned once written; dropped on the error paths
	buf := append((*bp)[:0], 0, 0, 0, 0)
	buf = appendRequestHeaders(buf, id, retry, c.clientID, method, cmp.Or(c.cfg.CallProtocol, c.cfg.Protocol), c.cfg.ProtocolVersion)
	buf, err := appendMessage(buf, req)
	if err != nil {
		cc.forget(id)
		return err
	}
	setFrameLength(buf)
	*bp = buf
	cc.wmu.Lock()
	if cc.sasl.wrapsRequests() {
		if buf, err = cc.sasl.wrapFrame(buf, c.clientID); err != nil {
			cc.wmu.Unlock()
			cc.forget(id)
			return err
		}
	}
	// The write deadline is only ever set here, under wmu, so a call
	// without one finds none set.
	dl, hasDL := ctx.Deadline()
	if hasDL {
		cc.nc.SetWriteDeadline(dl)
	}
	_, err = cc.nc.Write(buf)
	if hasDL {
		cc.nc.SetWriteDeadline(time.Time{})
	}
	cc.wmu.Unlock()
	putBuffer(bp)
	if err != nil {
		var re *RemoteError
		if be := cc.err(); errors.As(be, &re) {
			// The server refused the connection (say, its authentication)
			// before the request went out.
			return be
		}
		cc.shutdown(connErr(fmt.Errorf("ipc: writing to %s: %w", c.cfg.Addr, err)))
		return connErr(fmt.Errorf("ipc: calling %s on %s: %w", method, c.cfg.Addr, err))
	}

	select {
	case r, ok := <-ch:
		if !ok {
			if err := cc.err(); err != nil {
				return err
			}
			return connErr(fmt.Errorf("ipc: connection to %s closed", c.cfg.Addr))
		}
		resultChans.Put(ch)
		switch r.hdr.status {
		case ipcpb.RpcResponseHeaderProto_SUCCESS:
			if resp == nil {
				return nil
			}
			if len(r.body) == 0 {
				// An empty response message encodes as nothing at all.
				proto.Reset(resp)
				return nil
			}
			_, err := unmarshalDelimited(r.body, resp)
			if r.buf != nil {
				// resp holds copies (proto.Unmarshal never aliases).
				putBuffer(r.buf)
			}
			return err
		default:
			return &RemoteError{
				Class:   r.hdr.class,
				Message: r.hdr.msg,
				Code:    r.hdr.code(),
				Fatal:   r.hdr.status == ipcpb.RpcResponseHeaderProto_FATAL,
			}
		}
	case <-ctx.Done():
		cc.forget(id)
		return ctx.Err()
	}
}

func (cc *clientConn) forget(id int32) {
	cc.mu.Lock()
	delete(cc.pending, id)
	cc.mu.Unlock()
}

// ConnError is a failure of the connection under a call: connecting,
// writing the request, or the connection breaking before the answer came.
// It is never a server's answer (RemoteError), so another server may be
// tried; the call may have run when the break came after the write.
type ConnError struct{ Err error }

func (e *ConnError) Error() string { return e.Err.Error() }
func (e *ConnError) Unwrap() error { return e.Err }

func connErr(err error) error { return &ConnError{Err: err} }

// IsConnError reports whether err is, or wraps, a *ConnError.
func IsConnError(err error) bool {
	var ce *ConnError
	return errors.As(err, &ce)
}
