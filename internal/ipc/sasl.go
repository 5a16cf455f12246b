package ipc

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/ipcpb"
	"github.com/stratafs/strata/internal/security"
)

// SASLMechanism is one way a client may authenticate to a Server in
// secure mode, as one entry of Hadoop's NEGOTIATE reply: Kerberos
// (GSSAPI) here, delegation tokens (DIGEST-MD5) beside it. A Server offers
// its mechanisms in order; the client picks one in its INITIATE.
type SASLMechanism interface {
	// Auth is the mechanism's entry in the NEGOTIATE reply: method
	// (KERBEROS, TOKEN), mechanism (GSSAPI, DIGEST-MD5), protocol and
	// serverId, and an optional initial challenge.
	Auth() *ipcpb.RpcSaslProto_SaslAuth
	// Method is what Caller.Auth says of a connection it authenticated.
	Method() AuthMethod
	// NewSession starts the exchange of one connection from remote.
	NewSession(remote net.Addr) (SASLSession, error)
}

// SASLSession is one connection's exchange with a SASLMechanism.
type SASLSession interface {
	// Step takes the client's token (the INITIATE's, then each
	// RESPONSE's) and returns the token to send back; done means the
	// exchange is complete and the reply is SUCCESS. An error refuses the
	// client (javax.security.sasl.SaslException, FATAL_UNAUTHORIZED).
	// Tokens are bounded by the Server (maxSASLToken) before Step sees them.
	Step(token []byte) (reply []byte, done bool, err error)
	// Principal is the authenticated client, valid once done: a Kerberos
	// principal (mapped by auth_to_local) or a token's owner.
	Principal() string
	// QOP is the negotiated protection, valid once done.
	QOP() security.QOP
	// Wrap and Unwrap protect each message when QOP is integrity or
	// privacy; they are called from one goroutine each.
	Wrap(msg []byte) ([]byte, error)
	Unwrap(tok []byte) ([]byte, error)
}

// SASLConfig makes a Server require SASL (hadoop.security.authentication
// other than simple).
type SASLConfig struct {
	Mechanisms []SASLMechanism
	// MapUser maps an authenticated principal to a user (auth_to_local).
	MapUser func(principal string) (string, error)
	// Impersonate authorizes a real user to act as another from an IP
	// (hadoop.proxyuser.*); nil refuses every impersonation.
	Impersonate func(realUser, user, remoteIP string) error
	// Authorize is service authorization: whether principal (and its
	// mapped user) may call protocol at all; nil allows all.
	Authorize func(protocol, principal, user string, remote net.Addr) error
	// RequireWrappedRequests refuses a client whose connection context
	// comes unwrapped under integrity or privacy (colinmarc/hdfs)
	// (strata.ipc.sasl.require-wrapped-requests).
	RequireWrappedRequests bool
	// HandshakeTimeout bounds the whole exchange (default 20 s).
	HandshakeTimeout time.Duration
}

// SetSASL makes the server require SASL (secure mode); call it before
// Serve.
func (s *Server) SetSASL(cfg *SASLConfig) { s.cfg.SASL = cfg }

// maxSASLToken bounds a frame during the SASL exchange: Kerberos tickets
// with PACs stay well under it.
const maxSASLToken = 64 << 10

// Class names of the errors a refused SASL client sees.
const (
	ClassSaslException = "javax.security.sasl.SaslException"
)

// saslState is the server side of one connection's SASL exchange.
type saslState struct {
	mech     SASLMechanism
	sess     SASLSession
	done     bool
	deadline time.Time
	user     string // mapped user
	realUser string // a token's real user
	wrap     bool   // QOP integrity or privacy
	// early are the sessions NEGOTIATE started for mechanisms whose
	// server speaks first (TOKEN), by method.
	early map[AuthMethod]SASLSession
}

// qopHint is a TOKEN (DIGEST-MD5) entry for the NEGOTIATE reply when no
// token mechanism is configured and the Kerberos mechanism offers
// integrity or privacy. Hadoop's servers always list TOKEN in secure mode,
// and colinmarc/hdfs learns the protection level of a Kerberos
// connection only from that entry's challenge (its qop list); without it
// colinmarc would not expect wrapped replies. A client that then chooses
// TOKEN is refused ("TOKEN authentication is not enabled"), which is the
// truth until a delegation-token mechanism is configured; that mechanism's
// own entry replaces this one.
func (cfg *SASLConfig) qopHint() *ipcpb.RpcSaslProto_SaslAuth {
	var qops byte
	for _, m := range cfg.Mechanisms {
		if m.Method() == AuthMethodToken {
			return nil
		}
		if g, ok := m.(*GSSAPIMechanism); ok {
			qops |= g.QOPs
		}
	}
	if qops&^byte(security.QOPAuth) == 0 {
		return nil
	}
	var names []string
	for _, q := range []security.QOP{security.QOPPrivacy, security.QOPIntegrity, security.QOPAuth} {
		if qops&byte(q) != 0 {
			names = append(names, q.SASLName())
		}
	}
	nonce := make([]byte, 18)
	rand.Read(nonce)
	ch := fmt.Sprintf(`realm="default",nonce="%s",qop="%s",charset=utf-8,algorithm=md5-sess`, base64.StdEncoding.EncodeToString(nonce), strings.Join(names, ","))
	return &ipcpb.RpcSaslProto_SaslAuth{
		Method: proto.String(string(AuthMethodToken)), Mechanism: proto.String("DIGEST-MD5"),
		Protocol: proto.String(""), ServerId: proto.String("default"), Challenge: []byte(ch),
	}
}

// availableAuths is Hadoop's "Available:[...]" list.
func (cfg *SASLConfig) availableAuths() string {
	var names []string
	for _, m := range cfg.Mechanisms {
		names = append(names, string(m.Method()))
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// saslHeader decides on a connection header's auth byte under SASL.
func (c *serverConn) saslHeader(auth byte) error {
	cfg := c.srv.cfg.SASL
	if auth != AuthSASL {
		msg := "SIMPLE authentication is not enabled.  Available:" + cfg.availableAuths()
		c.fatal(callIDSASL, ClassAccessControl, ipcpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, msg)
		return errors.New(msg)
	}
	t := cfg.HandshakeTimeout
	if t <= 0 {
		t = c.srv.cfg.HeaderTimeout
	}
	c.sasl = &saslState{deadline: time.Now().Add(t)}
	return nil
}

// saslPending reports whether the connection must still authenticate;
// it re-arms the handshake deadline.
func (c *serverConn) saslPending() bool {
	if c.srv.cfg.SASL == nil || (c.sasl != nil && c.sasl.done) {
		return false
	}
	if c.sasl != nil {
		c.imu.Lock()
		c.nc.SetReadDeadline(c.sasl.deadline)
		c.deadline = true // for armIdle to clear
		c.imu.Unlock()
	}
	return true
}

// maxFrame is the frame limit: small until the client has authenticated.
func (c *serverConn) maxFrame() int {
	if c.srv.cfg.SASL != nil && (c.sasl == nil || !c.sasl.done) {
		return min(maxSASLToken, c.srv.cfg.MaxDataLength)
	}
	return c.srv.cfg.MaxDataLength
}

// saslStep serves one SASL message (call id -33) of the exchange.
func (c *serverConn) saslStep(body []byte) error {
	cfg := c.srv.cfg.SASL
	st := c.sasl
	var m ipcpb.RpcSaslProto
	if _, err := unmarshalDelimited(body, &m); err != nil {
		return err
	}
	if st.done {
		return errors.New("SASL exchange already complete")
	}
	reply := &ipcpb.RpcSaslProto{}
	switch m.GetState() {
	case ipcpb.RpcSaslProto_NEGOTIATE:
		if st.mech != nil {
			return errors.New("NEGOTIATE after INITIATE")
		}
		reply.State = ipcpb.RpcSaslProto_NEGOTIATE.Enum()
		for _, mech := range cfg.Mechanisms {
			sf, ok := mech.(serverFirst)
			if !ok {
				reply.Auths = append(reply.Auths, mech.Auth())
				continue
			}
			a, sess, err := sf.negotiate(c.nc.RemoteAddr())
			if err != nil {
				return err
			}
			if st.early == nil {
				st.early = map[AuthMethod]SASLSession{}
			}
			st.early[mech.Method()] = sess
			reply.Auths = append(reply.Auths, a)
		}
		if hint := cfg.qopHint(); hint != nil {
			reply.Auths = append(reply.Auths, hint)
		}
		return c.saslReply(reply)
	case ipcpb.RpcSaslProto_INITIATE:
		if st.mech != nil || len(m.GetAuths()) != 1 {
			return errors.New("INITIATE must name one auth, once")
		}
		want := m.GetAuths()[0]
		for _, mech := range cfg.Mechanisms {
			a := mech.Auth()
			if a.GetMethod() == want.GetMethod() && a.GetMechanism() == want.GetMechanism() {
				st.mech = mech
			}
		}
		if st.mech == nil {
			// Hadoop's text for an auth it does not offer.
			return &RemoteError{Class: ClassAccessControl, Message: fmt.Sprintf("%s authentication is not enabled.  Available:%s", want.GetMethod(), cfg.availableAuths())}
		}
		if _, ok := st.mech.(serverFirst); ok {
			// Its challenge went out in the NEGOTIATE; without one
			// the client cannot have answered it.
			if st.sess = st.early[st.mech.Method()]; st.sess == nil {
				return &RemoteError{Class: ClassSaslException, Message: "DIGEST-MD5: INITIATE without NEGOTIATE"}
			}
			st.early = nil
			break
		}
		sess, err := st.mech.NewSession(c.nc.RemoteAddr())
		if err != nil {
			return err
		}
		st.sess = sess
	case ipcpb.RpcSaslProto_RESPONSE:
		if st.sess == nil {
			return errors.New("RESPONSE before INITIATE")
		}
	default:
		return fmt.Errorf("unexpected SASL state %v during the exchange", m.GetState())
	}
	tok, done, err := st.sess.Step(m.GetToken())
	if err != nil {
		return err
	}
	if !done {
		reply.State = ipcpb.RpcSaslProto_CHALLENGE.Enum()
		reply.Token = tok
		return c.saslReply(reply)
	}
	if tu, ok := st.sess.(interface{ tokenUsers() (string, string) }); ok {
		st.user, st.realUser = tu.tokenUsers()
	} else {
		user, err := cfg.MapUser(st.sess.Principal())
		if err != nil {
			return &RemoteError{Class: ClassAccessControl, Message: err.Error()}
		}
		st.user = user
	}
	// Hadoop's SecurityLogger line, which tests and operators look for.
	c.srv.log.Info("Auth successful for "+st.user+" (auth:"+string(st.mech.Method())+")", "remote", c.nc.RemoteAddr())
	reply.State = ipcpb.RpcSaslProto_SUCCESS.Enum()
	reply.Token = tok
	if err := c.saslReply(reply); err != nil {
		return err
	}
	st.done = true
	c.nc.SetReadDeadline(time.Time{})
	if q := st.sess.QOP(); q == security.QOPIntegrity || q == security.QOPPrivacy {
		// From now on the client's requests may come wrapped, and every
		// reply is.
		st.wrap = true
		c.br = &saslReader{c: c, under: c.br}
	}
	return nil
}

func (c *serverConn) saslReply(m *ipcpb.RpcSaslProto) error {
	hdr := &ipcpb.RpcResponseHeaderProto{
		CallId:              proto.Uint32(wireCallID(callIDSASL)),
		Status:              ipcpb.RpcResponseHeaderProto_SUCCESS.Enum(),
		ServerIpcVersionNum: proto.Uint32(Version),
	}
	return c.write(hdr, m)
}

// saslContext checks the connection context cc of an authenticated
// connection: the user it names is the principal itself (as a full
// principal or its short name) or one the principal may impersonate;
// then service authorization of its protocol. It sets cc's users to the
// checked ones; the caller assigns them to the connection.
func (c *serverConn) saslContext(cc *connContext) error {
	cfg := c.srv.cfg.SASL
	st := c.sasl
	principal := st.sess.Principal()
	if r, ok := c.br.(*saslReader); ok {
		if err := r.contextArrived(); err != nil {
			return err
		}
	}
	named := cc.user
	cc.user, cc.realUser = st.user, ""
	if st.mech.Method() == AuthMethodToken {
		// A token names its user and real user; the client may not
		// claim another (Server.processConnectionContext).
		if named != "" && named != st.user {
			return &RemoteError{Class: ClassAccessControl, Code: int32(ipcpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED),
				Message: fmt.Sprintf("Authenticated user (%s (auth:TOKEN)) doesn't match what the client claims to be (%s)", st.user, named)}
		}
		cc.realUser = st.realUser
	} else if named != "" && named != principal && named != st.user {
		ip := ""
		if ta, ok := c.nc.RemoteAddr().(*net.TCPAddr); ok {
			ip = ta.IP.String()
		}
		var err error = &security.AuthorizationError{Msg: fmt.Sprintf("User: %s is not allowed to impersonate %s", st.user, named)}
		if cfg.Impersonate != nil {
			err = cfg.Impersonate(st.user, named, ip)
		}
		if err != nil {
			return &RemoteError{Class: security.ClassAuthorization, Message: err.Error(), Code: int32(ipcpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED)}
		}
		cc.user, cc.realUser = named, st.user
	}
	if _, err := c.authorizeCall(cc.protocol); err != nil {
		var re *RemoteError
		errors.As(err, &re)
		return &RemoteError{Class: re.Class, Message: re.Message, Code: int32(ipcpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED)}
	}
	return nil
}

// authorizeCall is service authorization of protocol for this
// connection's authenticated principal, decided once per protocol; ok
// reports that an Authorize function admitted it.
func (c *serverConn) authorizeCall(protocol string) (ok bool, err error) {
	cfg := c.srv.cfg.SASL
	if cfg == nil || cfg.Authorize == nil || c.sasl == nil || !c.sasl.done {
		return false, nil
	}
	c.amu.Lock()
	defer c.amu.Unlock()
	err, seen := c.authz[protocol]
	if !seen {
		if len(c.authz) >= maxAuthzCache {
			// A client cycling through names gets no cache, only checks.
			return false, c.authorize(protocol)
		}
		err = c.authorize(protocol)
		if c.authz == nil {
			c.authz = map[string]error{}
		}
		c.authz[protocol] = err
	}
	return err == nil, err
}

// maxAuthzCache bounds the protocols whose decision a connection keeps.
const maxAuthzCache = 16

func (c *serverConn) authorize(protocol string) error {
	st := c.sasl
	if err := c.srv.cfg.SASL.Authorize(protocol, st.sess.Principal(), st.user, c.nc.RemoteAddr()); err != nil {
		return &RemoteError{Class: security.ClassAuthorization, Message: err.Error()}
	}
	return nil
}

// authMethod is how the connection's caller authenticated.
func (c *serverConn) authMethod() AuthMethod {
	if c.sasl != nil && c.sasl.done {
		return c.sasl.mech.Method()
	}
	return AuthMethodSimple
}

// wrapOut wraps a reply frame when the connection negotiated integrity or
// privacy: the frame, length included, travels as the token of a WRAP
// message in a call id -33 frame, as Hadoop's Server.wrapWithSasl.
func (c *serverConn) wrapOut(buf []byte) ([]byte, error) {
	if c.sasl == nil || !c.sasl.wrap {
		return buf, nil
	}
	tok, err := c.sasl.sess.Wrap(buf)
	if err != nil {
		return nil, err
	}
	hdr := &ipcpb.RpcResponseHeaderProto{
		CallId:              proto.Uint32(wireCallID(callIDSASL)),
		Status:              ipcpb.RpcResponseHeaderProto_SUCCESS.Enum(),
		ServerIpcVersionNum: proto.Uint32(Version),
	}
	return appendFrame(nil, hdr, &ipcpb.RpcSaslProto{State: ipcpb.RpcSaslProto_WRAP.Enum(), Token: tok})
}

// saslReader is the connection's input once integrity or privacy is
// negotiated: a WRAP message is unwrapped and its content (one or more
// whole frames) read in its place. A frame that is not wrapped passes
// through, as Hadoop's server accepts it (colinmarc/hdfs wraps only
// replies); its replies are wrapped all the same.
type saslReader struct {
	c     *serverConn
	under io.Reader
	buf   bytes.Reader
	// lastWrapped: the bytes in buf came out of a WRAP message.
	lastWrapped bool
	// strict: the connection context came wrapped (Java, strata), so
	// every later frame must; a plain one would be unprotected bytes
	// injected into a protected connection.
	strict bool
}

// contextArrived decides, at the connection context, whether this
// connection's requests must stay wrapped: yes when the context was, and
// a plain context is refused when SASLConfig.RequireWrappedRequests.
func (r *saslReader) contextArrived() error {
	if r.lastWrapped {
		r.strict = true
		return nil
	}
	if r.c.srv.cfg.SASL.RequireWrappedRequests {
		return &RemoteError{Class: ClassAccessControl, Message: "Requests must be wrapped under the negotiated protection (" + r.c.sasl.sess.QOP().String() + "); this client sends them unwrapped"}
	}
	// colinmarc/hdfs wraps nothing it sends; Hadoop's server accepts
	// that, so does this one unless told not to.
	r.c.srv.log.Info("ipc: client sends requests unwrapped under SASL protection; its requests are not protected", "remote", r.c.nc.RemoteAddr(), "qop", r.c.sasl.sess.QOP().String())
	return nil
}

// Buffered is how many bytes of unwrapped frames a read returns without
// reading the connection (bufferedReader). Bytes in the connection's
// buffer beneath are not counted: they may be part of a WRAP message
// whose rest is still on the network.
func (r *saslReader) Buffered() int { return r.buf.Len() }

func (r *saslReader) Read(p []byte) (int, error) {
	for r.buf.Len() == 0 {
		frame, err := readFrame(r.under, r.c.srv.cfg.MaxDataLength, r.c.stallDeadline)
		if err != nil {
			return 0, err
		}
		data, err := r.unwrapFrame(frame)
		if err != nil {
			return 0, err
		}
		r.buf.Reset(data)
	}
	return r.buf.Read(p)
}

func (r *saslReader) unwrapFrame(frame []byte) ([]byte, error) {
	var h ipcpb.RpcRequestHeaderProto
	var m ipcpb.RpcSaslProto
	rest, err := unmarshalDelimited(frame, &h)
	wrapped := err == nil && h.GetCallId() == callIDSASL
	if wrapped {
		_, err := unmarshalDelimited(rest, &m)
		wrapped = err == nil && m.GetState() == ipcpb.RpcSaslProto_WRAP
	}
	if !wrapped {
		if r.strict {
			return nil, errors.New("ipc: unwrapped request on a connection whose requests are wrapped")
		}
		r.lastWrapped = false
		return appendLength(frame), nil
	}
	if mb, ok := r.c.sasl.sess.(interface{ maxWrapped() int }); ok && len(m.GetToken()) > mb.maxWrapped() {
		return nil, fmt.Errorf("ipc: wrapped request of %d bytes exceeds the advertised max buffer %d", len(m.GetToken()), mb.maxWrapped())
	}
	data, err := r.c.sasl.sess.Unwrap(m.GetToken())
	if err != nil {
		return nil, fmt.Errorf("ipc: unwrapping a request: %w", err)
	}
	r.lastWrapped = true
	return data, nil
}

func appendLength(frame []byte) []byte {
	out := make([]byte, 4, 4+len(frame))
	out[0], out[1], out[2], out[3] = byte(len(frame)>>24), byte(len(frame)>>16), byte(len(frame)>>8), byte(len(frame))
	return append(out, frame...)
}
