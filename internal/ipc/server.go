package ipc

import (
	"bufio"
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
	newRequest func() proto.Message
	handle     func(ctx context.Context, req proto.Message) (proto.Message, error)
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
}

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
	// MaxInFlight bounds the calls being served at once over all
	// connections; a connection's reader waits when it is reached. Default 1024.
	MaxInFlight int
	// HeaderTimeout bounds how long a new connection may take to send its
	// connection header. Default 20 s.
	HeaderTimeout time.Duration
	Logger        *slog.Logger
}

// Server serves registered protocols over Hadoop IPC.
type Server struct {
	cfg       ServerConfig
	log       *slog.Logger
	protocols map[string]map[string]Method
	sem       chan struct{}

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
	Rejected    atomic.Int64 // connections closed for a protocol violation
}

// NewServer returns a Server with no protocols.
func NewServer(cfg ServerConfig) *Server {
	if cfg.MaxDataLength <= 0 {
		cfg.MaxDataLength = DefaultMaxDataLength
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 1024
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = 20 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Server{
		cfg:       cfg,
		log:       cfg.Logger,
		protocols: map[string]map[string]Method{},
		sem:       make(chan struct{}, cfg.MaxInFlight),
		conns:     map[*serverConn]struct{}{},
	}
}

// Register adds a protocol (its Java interface name, e.g.
// "org.apache.hadoop.hdfs.protocol.ClientProtocol") with its methods.
// Register before Serve.
func (s *Server) Register(protocol string, methods map[string]Method) {
	s.protocols[protocol] = methods
}

// Stats returns the server's counters.
func (s *Server) Stats() *ServerStats { return &s.stats }

// Serve accepts connections on ln until Close. It returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
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
		c := &serverConn{srv: s, nc: nc, br: bufioReader(nc)}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return nil
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
	return nil
}

type serverConn struct {
	srv *Server
	nc  net.Conn
	br  *bufio.Reader

	wmu sync.Mutex // guards writes to nc

	user, realUser, protocol string
	haveContext              bool
}

// serve runs the connection: header, then frames until EOF or a fatal error.
func (c *serverConn) serve() {
	defer c.nc.Close()
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
		frame, err := readFrame(c.br, c.srv.cfg.MaxDataLength)
		if err != nil {
			if errors.Is(err, ErrFrameTooLarge) {
				c.srv.stats.Rejected.Add(1)
				c.fatal(-1, ClassRPCServerException, ipcpb.RpcResponseHeaderProto_FATAL_UNKNOWN, err.Error())
			}
			return
		}
		req, err := decodeRequest(frame)
		if err != nil {
			c.srv.stats.Rejected.Add(1)
			c.fatal(-1, ClassRPCServerException, ipcpb.RpcResponseHeaderProto_FATAL_DESERIALIZING_REQUEST, err.Error())
			return
		}
		switch req.callID {
		case callIDConnectionContext:
			if err := c.setContext(req.body); err != nil {
				c.fatal(callIDConnectionContext, ClassRPCServerException, ipcpb.RpcResponseHeaderProto_FATAL_DESERIALIZING_REQUEST, err.Error())
				return
			}
			continue
		case callIDPing:
			continue
		case callIDSASL:
			if err := c.answerSASL(req.body); err != nil {
				c.fatal(callIDSASL, "javax.security.sasl.SaslException", ipcpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, err.Error())
				return
			}
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
		// Bound the calls in flight: the reader waits here, which pushes
		// back on clients through TCP.
		select {
		case c.srv.sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		calls.Add(1)
		go func() {
			defer calls.Done()
			defer func() { <-c.srv.sem }()
			c.handle(ctx, req)
		}()
	}
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
	return nil
}

func (c *serverConn) setContext(body []byte) error {
	var cc ipcpb.IpcConnectionContextProto
	if _, err := unmarshalDelimited(body, &cc); err != nil {
		return err
	}
	ui := cc.GetUserInfo()
	c.user = ui.GetEffectiveUser()
	c.realUser = ui.GetRealUser()
	if c.user == "" {
		c.user = c.realUser
	}
	if c.user == "" {
		return errors.New("connection context names no user")
	}
	c.protocol = cc.GetProtocol()
	c.haveContext = true
	return nil
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

func (c *serverConn) handle(ctx context.Context, req *request) {
	s := c.srv
	s.stats.Calls.Add(1)
	hdr := &ipcpb.RpcResponseHeaderProto{
		CallId:              proto.Uint32(wireCallID(req.callID)),
		ServerIpcVersionNum: proto.Uint32(Version),
		ClientId:            req.clientID,
		RetryCount:          proto.Int32(req.retry),
	}
	resp, err := c.dispatch(ctx, req)
	if err != nil {
		s.stats.Errors.Add(1)
		hdr.Status = ipcpb.RpcResponseHeaderProto_ERROR.Enum()
		re := &RemoteError{Class: ClassIOException, Message: err.Error()}
		errors.As(err, &re)
		code := ipcpb.RpcResponseHeaderProto_ERROR_APPLICATION
		if re.Code != 0 {
			code = ipcpb.RpcResponseHeaderProto_RpcErrorCodeProto(re.Code)
		}
		hdr.ExceptionClassName = proto.String(re.Class)
		hdr.ErrorMsg = proto.String(re.Message)
		hdr.ErrorDetail = code.Enum()
		resp = nil
	} else {
		hdr.Status = ipcpb.RpcResponseHeaderProto_SUCCESS.Enum()
	}
	if err := c.write(hdr, resp); err != nil {
		s.log.Debug("ipc: writing response", "remote", c.nc.RemoteAddr(), "err", err)
		c.nc.Close()
	}
}

// dispatch finds and runs the handler. A panic in a handler becomes an
// error response; it never takes the daemon down.
func (c *serverConn) dispatch(ctx context.Context, req *request) (resp proto.Message, err error) {
	var rh ipcpb.RequestHeaderProto
	rest, err := unmarshalDelimited(req.body, &rh)
	if err != nil {
		return nil, &RemoteError{Class: ClassRPCServerException, Message: err.Error(), Code: int32(ipcpb.RpcResponseHeaderProto_ERROR_RPC_SERVER)}
	}
	methods, ok := c.srv.protocols[rh.GetDeclaringClassProtocolName()]
	if !ok {
		return nil, &RemoteError{Class: ClassRPCNoSuchProtocol, Message: "Unknown protocol: " + rh.GetDeclaringClassProtocolName(), Code: int32(ipcpb.RpcResponseHeaderProto_ERROR_NO_SUCH_PROTOCOL)}
	}
	m, ok := methods[rh.GetMethodName()]
	if !ok {
		return nil, &RemoteError{Class: ClassRPCNoSuchMethod, Message: fmt.Sprintf("Unknown method %s called on %s protocol.", rh.GetMethodName(), rh.GetDeclaringClassProtocolName()), Code: int32(ipcpb.RpcResponseHeaderProto_ERROR_NO_SUCH_METHOD)}
	}
	in := m.newRequest()
	if len(rest) > 0 {
		if _, err := unmarshalDelimited(rest, in); err != nil {
			return nil, &RemoteError{Class: ClassRPCServerException, Message: err.Error(), Code: int32(ipcpb.RpcResponseHeaderProto_ERROR_RPC_SERVER)}
		}
	}
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Error("ipc: handler panicked", "method", rh.GetMethodName(), "panic", r, "stack", string(debug.Stack()))
			resp, err = nil, &RemoteError{Class: ClassIOException, Message: fmt.Sprintf("internal error in %s: %v", rh.GetMethodName(), r)}
		}
	}()
	caller := &Caller{
		User: c.user, RealUser: c.realUser, Remote: c.nc.RemoteAddr(),
		ClientID: req.clientID, CallID: req.callID, Retry: req.retry,
		Protocol: rh.GetDeclaringClassProtocolName(),
	}
	return m.handle(WithCaller(ctx, caller), in)
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
	c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	c.write(hdr, nil)
}

func (c *serverConn) write(hdr *ipcpb.RpcResponseHeaderProto, resp proto.Message) error {
	buf, err := appendFrame(nil, hdr, resp)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
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
}

// decodeRequest decodes a request frame's RPC header. It is the entry point
// of everything a client can send after the connection header, and is
// fuzzed.
func decodeRequest(frame []byte) (*request, error) {
	var h ipcpb.RpcRequestHeaderProto
	rest, err := unmarshalDelimited(frame, &h)
	if err != nil {
		return nil, err
	}
	return &request{
		callID:   h.GetCallId(),
		clientID: h.GetClientId(),
		retry:    h.GetRetryCount(),
		kind:     h.GetRpcKind(),
		op:       h.GetRpcOp(),
		body:     rest,
	}, nil
}

// wireCallID converts a request's signed call id to the response header's
// unsigned field, as Hadoop's server does (-33 becomes 4294967263).
func wireCallID(id int32) uint32 { return uint32(id) }
