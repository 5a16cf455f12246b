package ipc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/ipcpb"
)

// Method is one RPC method of a protocol: how to make an empty request and
// how to serve it. Build one with Unary.
type Method struct {
	name       string // set by Register
	newRequest func() proto.Message
	handle     func(ctx context.Context, req proto.Message) (proto.Message, error)
	inline     bool
}

// Inline returns m marked as quick: its handler computes its answer from
// memory and never waits for I/O, another call or a peer (a lock held only
// for in-memory work is fine). The connection's reader then runs the call
// itself, saving the hand-off to another goroutine, whenever no further
// request of the connection is already buffered; pipelined requests still
// run concurrently. An inline call may still wait now and then (the
// NameNode's: for the namesystem lock while a writer holds it across a
// journal append, or for a user's group lookup before the read lock);
// only that connection's own next requests wait for it, never another
// client's. Guard and Around return unmarked methods: a wrapper may wait.
func (m Method) Inline() Method {
	m.inline = true
	return m
}

// Unary adapts a typed handler to a Method. The handler runs on its own
// goroutine; it may block (for example on an edit-log sync).
func Unary[T any, Req interface {
	*T
	proto.Message
}, Resp proto.Message](f func(context.Context, Req) (Resp, error)) Method {
	return Method{
		newRequest: func() proto.Message { return Req(new(T)) },
		handle: func(ctx context.Context, req proto.Message) (proto.Message, error) {
			return f(ctx, req.(Req))
		},
	}
}

// Guard returns m with check run before its handler: a refusal by check
// is the call's error (a server's per-method authorization).
func (m Method) Guard(check func(ctx context.Context) error) Method {
	h := m.handle
	m.handle = func(ctx context.Context, req proto.Message) (proto.Message, error) {
		if err := check(ctx); err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
	m.inline = false
	return m
}

// Caller describes who made the call being served.
type Caller struct {
	// User is the effective user from the connection context.
	User string
	// RealUser is set when User is proxied by another user.
	RealUser string
	Remote   net.Addr
	ClientID []byte
	CallID   int32
	Retry    int32
	Protocol string
	// Auth is how the connection authenticated its (real) user.
	Auth AuthMethod
	// Authorized: the server's service authorization (SASLConfig.Authorize)
	// admitted the caller to Protocol.
	Authorized bool
}

// AuthMethod is how a connection authenticated, by Hadoop's names
// (UserGroupInformation.AuthenticationMethod as the server sees it).
type AuthMethod string

const (
	// AuthMethodSimple: the client named its user; nothing was proven.
	AuthMethodSimple AuthMethod = "SIMPLE"
	// AuthMethodKerberos: SASL GSSAPI with a Kerberos ticket.
	AuthMethodKerberos AuthMethod = "KERBEROS"
	// AuthMethodToken: SASL DIGEST-MD5 with a delegation token.
	AuthMethodToken AuthMethod = "TOKEN"
)

type callerKey struct{}

// CallerFrom returns the caller of the RPC that ctx belongs to.
func CallerFrom(ctx context.Context) (*Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(*Caller)
	return c, ok
}

// WithCaller returns ctx carrying c; for tests and in-process calls.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// ServerConfig configures a Server.
type ServerConfig struct {
	// MaxDataLength bounds a request frame, in bytes
	// (ipc.maximum.data.length; default 128 MiB).
	MaxDataLength int
	// MaxInFlight bounds the handlers running at once over all
	// connections; a connection's reader waits when it is reached. A slot
	// is released when the handler returns, before its reply is written,
	// so clients that do not read their replies cannot hold it. Default 1024.
	MaxInFlight int
	// MaxConnInFlight bounds one connection's calls between the read of
	// the request and the end of the reply's write; its reader waits when
	// it is reached (TCP pushes back on that client alone). Default 128,
	// as strata.ipc.server.connection.max-inflight.
	MaxConnInFlight int
	// MaxConnections bounds the open connections; a connection past it is
	// closed at once (ipc.server.max.connections; 0, the default, means
	// no limit, as in Hadoop).
	MaxConnections int
	// HeaderTimeout bounds how long a new connection may take to send its
	// connection header. Default 20 s.
	HeaderTimeout time.Duration
	// IdleTimeout closes a connection that stops sending in the middle of
	// a frame for this long, and, while more than IdleThreshold connections
	// are open, one with no call in flight that sends nothing for this long
	// (Hadoop: twice ipc.client.connection.maxidletime, 20 s). Default 20 s.
	IdleTimeout time.Duration
	// IdleThreshold is the number of open connections above which idle
	// ones are closed (ipc.client.idlethreshold, 4000 as in Hadoop; below
	// it an idle client keeps its connection, which clients such as
	// colinmarc/hdfs rely on). Negative: always.
	IdleThreshold int
	// WriteTimeout bounds the write of one reply; a client that does not
	// read for this long loses its connection
	// (strata.ipc.server.write.timeout). Default 60 s.
	WriteTimeout time.Duration
	Logger       *slog.Logger
	// SASL, when set, requires every client to authenticate by one of its
	// mechanisms (secure mode; sasl.go). Nil: simple authentication.
	SASL *SASLConfig
}

// Defaults of ServerConfig's limits.
const (
	DefaultMaxInFlight     = 1024
	DefaultMaxConnInFlight = 128
	DefaultHeaderTimeout   = 20 * time.Second
	DefaultIdleTimeout     = 20 * time.Second
	DefaultIdleThreshold   = 4000
	DefaultWriteTimeout    = 60 * time.Second
)

// Server serves registered protocols over Hadoop IPC.
type Server struct {
	cfg       ServerConfig
	log       *slog.Logger
	protocols map[string]*protocol
	sem       chan struct{}
	workers   workerPool

	mu     sync.Mutex
	ln     net.Listener
	conns  map[*serverConn]struct{}
	closed bool
	wg     sync.WaitGroup

	stats ServerStats
}

// ServerStats are counters for metrics. Read them with Stats.
type ServerStats struct {
	Calls       atomic.Int64
	Errors      atomic.Int64
	Connections atomic.Int64
	Rejected    atomic.Int64 // connections closed for a protocol violation or over the limit
	Idle        atomic.Int64 // connections closed for idleness
	SlowReaders atomic.Int64 // connections closed because a reply could not be written in time
}

// NewServer returns a Server with no protocols.
func NewServer(cfg ServerConfig) *Server {
	if cfg.MaxDataLength <= 0 {
		cfg.MaxDataLength = DefaultMaxDataLength
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.MaxConnInFlight <= 0 {
		cfg.MaxConnInFlight = DefaultMaxConnInFlight
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = DefaultHeaderTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.IdleThreshold == 0 {
		cfg.IdleThreshold = DefaultIdleThreshold
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Server{
		cfg:       cfg,
		log:       cfg.Logger,
		protocols: map[string]*protocol{},
		sem:       make(chan struct{}, cfg.MaxInFlight),
		workers:   newWorkerPool(cfg.MaxInFlight),
		conns:     map[*serverConn]struct{}{},
	}
}

// protocol is a registered protocol: its name, and its methods by name.
type protocol struct {
	name    string
	methods map[string]Method
}

// Register adds a protocol (its Java interface name, e.g.
// "org.apache.hadoop.hdfs.protocol.ClientProtocol") with its methods.
// Register before Serve.
func (s *Server) Register(name string, methods map[string]Method) {
	named := make(map[string]Method, len(methods))
	for n, m := range methods {
		m.name = n
		named[n] = m
	}
	s.protocols[name] = &protocol{name: name, methods: named}
}

// Stats returns the server's counters.
func (s *Server) Stats() *ServerStats { return &s.stats }

// Serve accepts connections on ln until Close. It returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		// Closed before Serve began: the listener is ours to close, or
		// its address stays taken.
		s.mu.Unlock()
		ln.Close()
		return errors.New("ipc: server closed")
	}
	s.ln = ln
	s.mu.Unlock()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscallEMFILE) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("ipc: accept failed; retrying", "err", err, "in", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		c := s.newConn(nc)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return nil
		}
		if s.cfg.MaxConnections > 0 && len(s.conns) >= s.cfg.MaxConnections {
			s.mu.Unlock()
			s.stats.Rejected.Add(1)
			s.log.Warn("ipc: connection limit reached; closing", "remote", nc.RemoteAddr(), "limit", s.cfg.MaxConnections)
			nc.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		s.stats.Connections.Add(1)
		go func() {
			defer s.wg.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Close stops accepting, closes every connection and waits for their
// goroutines. Calls being handled see their context cancelled. Safe to call
// twice.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.ln != nil {
		s.ln.Close()
	}
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.workers.close()
	return nil
}

type serverConn struct {
	srv *Server
	nc  net.Conn
	br  io.Reader // the connection; a saslReader once replies are wrapped

	wmu   sync.Mutex    // guards writes to nc
	slots chan struct{} // this connection's calls from request read to reply written

	imu      sync.Mutex // guards inflight and the read deadline it decides
	inflight int
	// deadline: a read deadline is set (idle or stall), so that arming
	// "none" must clear it; without one the clearing call, a runtime
	// timer update per call, is skipped.
	deadline bool

	// lastClientID is the client id of the connection's last call, which
	// the next, carrying the same, shares (serve goroutine only).
	lastClientID []byte

	// Set once, by the serve goroutine, before any call runs.
	user, realUser, protocol string
	haveContext              bool
	// authz caches service authorization per protocol (nil: allowed).
	amu   sync.Mutex
	authz map[string]error
	sasl  *saslState // secure mode: the exchange and its outcome
}

func (s *Server) newConn(nc net.Conn) *serverConn {
	return &serverConn{srv: s, nc: nc, br: bufioReader(nc), slots: make(chan struct{}, s.cfg.MaxConnInFlight)}
}

// serve runs the connection: header, then frames until EOF or a fatal error.
func (c *serverConn) serve() {
	defer c.nc.Close()
	defer func() {
		// A bug reachable by a peer's bytes (a decoder, gokrb5) costs
		// that peer its connection, never the daemon.
		if r := recover(); r != nil {
			c.srv.log.Error("ipc: connection goroutine panicked; closing", "remote", c.nc.RemoteAddr(), "panic", r, "stack", string(debug.Stack()))
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	var calls sync.WaitGroup
	defer func() {
		cancel()
		calls.Wait()
	}()
	if err := c.readHeader(); err != nil {
		if !errors.Is(err, io.EOF) {
			c.srv.stats.Rejected.Add(1)
			c.srv.log.Debug("ipc: bad connection header", "remote", c.nc.RemoteAddr(), "err", err)
		}
		return
	}
	for {
		c.armIdle(0)
		pending := c.saslPending()
		// A frame that fits is read into a pooled buffer, taken once its
		// length has arrived (an idle connection holds none); a call
		// returns it once its request is decoded (dispatch), the
		// connection's own frames once handled, fatal paths drop it.
		frame, bp, err := readPooledFrame(c.br, c.maxFrame(), c.stallDeadline)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				c.srv.stats.Idle.Add(1)
				c.srv.log.Debug("ipc: closing idle connection", "remote", c.nc.RemoteAddr())
			}
			if errors.Is(err, ErrFrameTooLarge) {
				c.srv.stats.Rejected.Add(1)
				c.fatal(-1, ClassRPCServerException, ipcpb.RpcResponseHeaderProto_FATAL_UNKNOWN, err.Error())
			}
			return
		}
		req, err := decodeRequestWith(frame, c.lastClientID)
		if err != nil {
			c.srv.stats.Rejected.Add(1)
			c.fatal(-1, ClassRPCServerException, ipcpb.RpcResponseHeaderProto_FATAL_DESERIALIZING_REQUEST, err.Error())
			return
		}
		if pending && req.callID != callIDSASL {
			c.fatal(req.callID, ClassAccessControl, ipcpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, "SASL authentication not complete")
			return
		}
		switch req.callID {
		case callIDConnectionContext:
			if c.haveContext {
				// Hadoop's words; the user of a connection never changes.
				c.fatal(callIDConnectionContext, ClassRPCServerException, ipcpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, "Connection context already processed")
				return
			}
			cc, err := parseContext(req.body)
			if err == nil && cc.user == "" && c.sasl == nil {
				err = errors.New("connection context names no user")
			}
			if err != nil {
				c.fatal(callIDConnectionContext, ClassRPCServerException, ipcpb.RpcResponseHeaderProto_FATAL_DESERIALIZING_REQUEST, err.Error())
				return
			}
			if c.sasl != nil {
				if err := c.saslContext(&cc); err != nil {
					c.fatalErr(callIDConnectionContext, err)
					return
				}
			}
			// Only now, checked, and before any call's goroutine
			// starts (which orders these writes before its reads).
			c.user, c.realUser, c.protocol = cc.user, cc.realUser, cc.protocol
			c.haveContext = true
			putBuffer(bp)
			continue
		case callIDPing:
			putBuffer(bp)
			continue
		case callIDSASL:
			if c.srv.cfg.SASL != nil {
				if err := c.saslStep(req.body); err != nil {
					c.srv.log.Info("ipc: SASL authentication failed", "remote", c.nc.RemoteAddr(), "err", err)
					c.fatalErr(callIDSASL, err)
					return
				}
				putBuffer(bp) // the exchange keeps copies (proto.Unmarshal)
				continue
			}
			if err := c.answerSASL(req.body); err != nil {
				c.fatal(callIDSASL, "javax.security.sasl.SaslException", ipcpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, err.Error())
				return
			}
			putBuffer(bp)
			continue
		}
		if req.callID < 0 {
			c.fatal(req.callID, ClassRPCServerException, ipcpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, fmt.Sprintf("unknown special call id %d", req.callID))
			return
		}
		if !c.haveContext {
			c.fatal(req.callID, ClassRPCServerException, ipcpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, "connection context not established")
			return
		}
		if req.kind != ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER {
			c.fatal(req.callID, ClassRPCServerException, ipcpb.RpcResponseHeaderProto_FATAL_UNSUPPORTED_SERIALIZATION, fmt.Sprintf("unsupported rpc kind %v", req.kind))
			return
		}
		if req.op == ipcpb.RpcRequestHeaderProto_RPC_CLOSE_CONNECTION {
			return
		}
		c.lastClientID = req.clientID
		req.buf = bp
		c.route(req)
		// Bound the calls in flight, first this connection's, then the
		// server's: the reader waits here, which pushes back on this
		// client through TCP and on no one else.
		select {
		case c.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		select {
		case c.srv.sem <- struct{}{}:
		case <-ctx.Done():
			<-c.slots
			return
		}
		calls.Add(1)
		if (req.routeErr != nil || req.method.inline) && !arriving(c.br) {
			// On the reader, which sets the idle deadline once, at the
			// top of the loop: the call is not counted in flight.
			func() {
				defer calls.Done()
				defer func() { <-c.slots }()
				c.handle(ctx, req, func() { <-c.srv.sem })
			}()
			continue
		}
		c.armIdle(+1)
		c.srv.workers.run(func() {
			defer calls.Done()
			defer func() { <-c.slots }()
			defer c.armIdle(-1)
			c.handle(ctx, req, func() { <-c.srv.sem })
		})
	}
}

// armIdle adds delta to the calls in flight on workers and sets the read
// deadline that closes an idle connection: IdleTimeout from now when no
// call is in flight and the server has more than IdleThreshold
// connections, none otherwise (a client waiting for a slow reply sends
// nothing, and is not idle).
func (c *serverConn) armIdle(delta int) {
	c.imu.Lock()
	defer c.imu.Unlock()
	c.inflight += delta
	if c.inflight == 0 && c.srv.overIdleThreshold() {
		c.nc.SetReadDeadline(time.Now().Add(c.srv.cfg.IdleTimeout))
		c.deadline = true
	} else if delta >= 0 && c.deadline {
		c.nc.SetReadDeadline(time.Time{})
		c.deadline = false
	}
}

// stallDeadline gives the next chunk of a frame IdleTimeout to arrive: a
// slow client that keeps sending is served, one that stops mid-frame is
// not kept forever.
func (c *serverConn) stallDeadline() {
	c.imu.Lock()
	defer c.imu.Unlock()
	c.nc.SetReadDeadline(time.Now().Add(c.srv.cfg.IdleTimeout))
	c.deadline = true
}

func (s *Server) overIdleThreshold() bool {
	if s.cfg.IdleThreshold < 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns) > s.cfg.IdleThreshold
}

func (c *serverConn) readHeader() error {
	c.nc.SetReadDeadline(time.Now().Add(c.srv.cfg.HeaderTimeout))
	defer c.nc.SetReadDeadline(time.Time{})
	var hdr [7]byte
	if _, err := io.ReadFull(c.br, hdr[:4]); err != nil {
		return err
	}
	if string(hdr[:4]) == "GET " || string(hdr[:4]) == "POST" || string(hdr[:4]) == "HEAD" {
		body := "It looks like you are making an HTTP request to a Hadoop IPC port. This is not the correct port for the web interface on this daemon.\r\n"
		fmt.Fprintf(c.nc, "HTTP/1.1 404 Not Found\r\nContent-type: text/plain\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		return errors.New("HTTP request on IPC port")
	}
	if _, err := io.ReadFull(c.br, hdr[4:]); err != nil {
		return err
	}
	if [4]byte(hdr[:4]) != headerMagic || hdr[4] != Version {
		msg := fmt.Sprintf("Server IPC version %d cannot communicate with client version %d", Version, hdr[4])
		if [4]byte(hdr[:4]) != headerMagic {
			msg = fmt.Sprintf("bad connection header magic %q", hdr[:4])
		}
		c.fatal(-1, ClassVersionMismatch, ipcpb.RpcResponseHeaderProto_FATAL_VERSION_MISMATCH, msg)
		return errors.New(msg)
	}
	switch hdr[6] {
	case AuthSimple, AuthSASL:
	default:
		msg := fmt.Sprintf("unknown auth protocol 0x%02x", hdr[6])
		c.fatal(-1, ClassRPCServerException, ipcpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, msg)
		return errors.New(msg)
	}
	if c.srv.cfg.SASL != nil {
		return c.saslHeader(hdr[6])
	}
	return nil
}

// connContext is what a connection context names.
type connContext struct{ user, realUser, protocol string }

func parseContext(body []byte) (connContext, error) {
	var cc ipcpb.IpcConnectionContextProto
	if _, err := unmarshalDelimited(body, &cc); err != nil {
		return connContext{}, err
	}
	ui := cc.GetUserInfo()
	out := connContext{user: ui.GetEffectiveUser(), realUser: ui.GetRealUser(), protocol: cc.GetProtocol()}
	if out.user == "" {
		out.user = out.realUser
	}
	// A TOKEN client may name no user: the authenticated one stands
	// (the caller checks an unauthenticated connection names one).
	return out, nil
}

// answerSASL answers a NEGOTIATE with SUCCESS: this server does simple
// authentication only, and a Hadoop client then falls back to simple.
func (c *serverConn) answerSASL(body []byte) error {
	var m ipcpb.RpcSaslProto
	if _, err := unmarshalDelimited(body, &m); err != nil {
		return err
	}
	if m.GetState() != ipcpb.RpcSaslProto_NEGOTIATE {
		return fmt.Errorf("SASL %v not supported: this server uses simple authentication", m.GetState())
	}
	hdr := &ipcpb.RpcResponseHeaderProto{
		CallId:              proto.Uint32(wireCallID(callIDSASL)),
		Status:              ipcpb.RpcResponseHeaderProto_SUCCESS.Enum(),
		ServerIpcVersionNum: proto.Uint32(Version),
	}
	return c.write(hdr, &ipcpb.RpcSaslProto{State: ipcpb.RpcSaslProto_SUCCESS.Enum()})
}

// handle serves one call and writes its reply; done runs when the handler
// has returned, before the reply is written.
func (c *serverConn) handle(ctx context.Context, req *request, done func()) {
	s := c.srv
	s.stats.Calls.Add(1)
	hdr := responseHeader{
		callID:   wireCallID(req.callID),
		status:   ipcpb.RpcResponseHeaderProto_SUCCESS,
		clientID: req.clientID,
		retry:    req.retry, hasRetry: true,
	}
	resp, err := c.dispatch(ctx, req)
	done()
	if err != nil {
		s.stats.Errors.Add(1)
		re := &RemoteError{Class: ClassIOException, Message: err.Error()}
		errors.As(err, &re)
		code := ipcpb.RpcResponseHeaderProto_ERROR_APPLICATION
		if re.Code != 0 {
			code = ipcpb.RpcResponseHeaderProto_RpcErrorCodeProto(re.Code)
		}
		hdr.status = ipcpb.RpcResponseHeaderProto_ERROR
		hdr.class, hdr.msg, hdr.hasError = re.Class, re.Message, true
		hdr.detail, hdr.hasDetail = code, true
		resp = nil
	}
	if err := c.writeReply(&hdr, resp); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			s.stats.SlowReaders.Add(1)
			s.log.Warn("ipc: client does not read its replies; closing", "remote", c.nc.RemoteAddr(), "timeout", s.cfg.WriteTimeout)
		} else {
			s.log.Debug("ipc: writing response", "remote", c.nc.RemoteAddr(), "err", err)
		}
		c.nc.Close()
	}
}

// route decodes a call's RequestHeaderProto and finds its method, or the
// error the call is answered with.
func (c *serverConn) route(req *request) {
	msg, rest, err := nextDelimited(req.body)
	var rh methodHeader
	if err == nil {
		rh, err = decodeMethodHeader(msg)
	}
	if err != nil {
		req.routeErr = &RemoteError{Class: ClassRPCServerException, Message: err.Error(), Code: int32(ipcpb.RpcResponseHeaderProto_ERROR_RPC_SERVER)}
		return
	}
	p, ok := c.srv.protocols[string(rh.protocol)]
	if !ok {
		req.routeErr = &RemoteError{Class: ClassRPCNoSuchProtocol, Message: "Unknown protocol: " + string(rh.protocol), Code: int32(ipcpb.RpcResponseHeaderProto_ERROR_NO_SUCH_PROTOCOL)}
		return
	}
	m, ok := p.methods[string(rh.method)]
	if !ok {
		req.routeErr = &RemoteError{Class: ClassRPCNoSuchMethod, Message: fmt.Sprintf("Unknown method %s called on %s protocol.", rh.method, p.name), Code: int32(ipcpb.RpcResponseHeaderProto_ERROR_NO_SUCH_METHOD)}
		return
	}
	req.protocol, req.method, req.body = p, m, rest
}

// dispatch runs the call's method. A panic in it becomes an error
// response; it never takes the daemon down.
func (c *serverConn) dispatch(ctx context.Context, req *request) (resp proto.Message, err error) {
	if req.routeErr != nil {
		putBuffer(req.buf)
		req.buf, req.body = nil, nil
		return nil, req.routeErr
	}
	p, m, rest := req.protocol, req.method, req.body
	// First, so that a panic anywhere in the call (authorization, the
	// request's decoding, the handler) is the call's error: handle then
	// releases its slots, and a worker goroutine never dies of it.
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Error("ipc: handler panicked", "method", m.name, "panic", r, "stack", string(debug.Stack()))
			resp, err = nil, &RemoteError{Class: ClassIOException, Message: fmt.Sprintf("internal error in %s: %v", m.name, r)}
		}
	}()
	// Service authorization is per call, by the protocol the call is
	// routed by: the connection context's protocol says nothing of it.
	authorized, err := c.authorizeCall(p.name)
	if err != nil {
		return nil, err
	}
	in := m.newRequest()
	if len(rest) > 0 {
		if _, err := unmarshalDelimited(rest, in); err != nil {
			return nil, &RemoteError{Class: ClassRPCServerException, Message: err.Error(), Code: int32(ipcpb.RpcResponseHeaderProto_ERROR_RPC_SERVER)}
		}
	}
	// The request message holds copies of what it needs (proto.Unmarshal
	// never aliases its input): the frame's buffer can serve another.
	putBuffer(req.buf)
	req.buf, req.body = nil, nil
	caller := &Caller{
		User: c.user, RealUser: c.realUser, Remote: c.nc.RemoteAddr(),
		ClientID: req.clientID, CallID: req.callID, Retry: req.retry,
		Protocol:   p.name,
		Auth:       c.authMethod(),
		Authorized: authorized,
	}
	return m.handle(WithCaller(ctx, caller), in)
}

// fatalErr sends err as a FATAL_UNAUTHORIZED response: a RemoteError's
// class and message, else a SaslException.
func (c *serverConn) fatalErr(callID int32, err error) {
	re := &RemoteError{Class: ClassSaslException, Message: err.Error()}
	errors.As(err, &re)
	c.fatal(callID, re.Class, ipcpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, re.Message)
}

// fatal sends a FATAL response; the caller then closes the connection.
func (c *serverConn) fatal(callID int32, class string, code ipcpb.RpcResponseHeaderProto_RpcErrorCodeProto, msg string) {
	hdr := &ipcpb.RpcResponseHeaderProto{
		CallId:              proto.Uint32(wireCallID(callID)),
		Status:              ipcpb.RpcResponseHeaderProto_FATAL.Enum(),
		ServerIpcVersionNum: proto.Uint32(Version),
		ExceptionClassName:  proto.String(class),
		ErrorMsg:            proto.String(msg),
		ErrorDetail:         code.Enum(),
	}
	c.write(hdr, nil)
}

// write sends a reply whose header is a generated message (the
// connection's setup and its fatal errors).
func (c *serverConn) write(hdr *ipcpb.RpcResponseHeaderProto, resp proto.Message) error {
	buf, err := appendFrame(nil, hdr, resp)
	if err != nil {
		return err
	}
	return c.send(buf)
}

// writeReply sends a call's reply, framed in a pooled buffer.
func (c *serverConn) writeReply(hdr *responseHeader, resp proto.Message) error {
	bp := getBuffer()
	defer putBuffer(bp)
	buf := append((*bp)[:0], 0, 0, 0, 0)
	buf = appendResponseHeader(buf, hdr)
	buf, err := appendMessage(buf, resp)
	if err != nil {
		return err
	}
	setFrameLength(buf)
	*bp = buf
	return c.send(buf)
}

// send writes one frame, wrapped when the connection wraps its replies,
// within WriteTimeout.
func (c *serverConn) send(buf []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	buf, err := c.wrapOut(buf)
	if err != nil {
		return err
	}
	c.nc.SetWriteDeadline(time.Now().Add(c.srv.cfg.WriteTimeout))
	_, err = c.nc.Write(buf)
	return err
}

// request is a decoded request frame: the RPC header's fields and the rest
// of the frame (RequestHeaderProto and the request message, or a special
// call's body).
type request struct {
	callID   int32
	clientID []byte
	retry    int32
	kind     ipcpb.RpcKindProto
	op       ipcpb.RpcRequestHeaderProto_OperationProto
	body     []byte
	// buf is the pooled buffer body is in, if any: dispatch returns it
	// once the request message is decoded, and body is not used after.
	buf *[]byte

	// Set by route: the call's protocol and method, body then holding
	// the request message; or the error it is answered with.
	protocol *protocol
	method   Method
	routeErr error
}

// decodeRequest decodes a request frame's RPC header. It is the entry point
// of everything a client can send after the connection header, and is
// fuzzed.
func decodeRequest(frame []byte) (*request, error) { return decodeRequestWith(frame, nil) }

// decodeRequestWith is decodeRequest sharing lastClientID when the
// request's client id equals it (decodeRPCHeader).
func decodeRequestWith(frame, lastClientID []byte) (*request, error) {
	msg, rest, err := nextDelimited(frame)
	if err != nil {
		return nil, err
	}
	r := &request{body: rest}
	if err := decodeRPCHeader(msg, r, lastClientID); err != nil {
		return nil, err
	}
	return r, nil
}

// wireCallID converts a request's signed call id to the response header's
// unsigned field, as Hadoop's server does (-33 becomes 4294967263).
func wireCallID(id int32) uint32 { return uint32(id) }
