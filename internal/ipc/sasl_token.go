package ipc

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/digestmd5"
	"github.com/stratafs/strata/internal/proto/ipcpb"
	"github.com/stratafs/strata/internal/security"
)

// TOKEN authentication (Hadoop's SaslRpcServer AuthMethod TOKEN): SASL
// DIGEST-MD5 with protocol "" and server id "default", the username the
// base64 of the token's identifier and the password the base64 of its
// password (SaslRpcServer.encodeIdentifier/encodePassword). The server
// speaks first: its digest-challenge travels in the NEGOTIATE entry, the
// client's digest-response in the INITIATE, the rspauth in the SUCCESS.
const (
	tokenMechanism = "DIGEST-MD5"
	tokenServerID  = "default"
)

// TokenRetriever returns the password of the live token with identifier
// and the user it authenticates (the owner; realUser when the owner was
// proxied), or an error that refuses it — an *RemoteError of class
// SecretManager$InvalidToken reaches the client as it is.
type TokenRetriever func(identifier []byte) (password []byte, user, realUser string, err error)

// TokenMechanism is the server side of TOKEN authentication over a secret
// manager (the NameNode's delegation tokens, the JobTracker's job tokens).
type TokenMechanism struct {
	// QOPs are offered (hadoop.rpc.protection bitmask; 0: authentication).
	QOPs     byte
	Retrieve TokenRetriever
}

// Auth is the mechanism's NEGOTIATE entry without its challenge.
func (m *TokenMechanism) Auth() *ipcpb.RpcSaslProto_SaslAuth {
	return &ipcpb.RpcSaslProto_SaslAuth{
		Method: proto.String(string(AuthMethodToken)), Mechanism: proto.String(tokenMechanism),
		Protocol: proto.String(""), ServerId: proto.String(tokenServerID),
	}
}

// Method is TOKEN.
func (m *TokenMechanism) Method() AuthMethod { return AuthMethodToken }

// NewSession starts one connection's DIGEST-MD5 exchange.
func (m *TokenMechanism) NewSession(remote net.Addr) (SASLSession, error) {
	s := &tokenSession{}
	qops := m.QOPs
	if qops == 0 {
		qops = byte(security.QOPAuth)
	}
	var names []string
	for _, q := range []security.QOP{security.QOPPrivacy, security.QOPIntegrity, security.QOPAuth} {
		if qops&byte(q) != 0 {
			names = append(names, q.SASLName())
		}
	}
	srv, err := digestmd5.NewServer(digestmd5.ServerConfig{
		Protocol: "", ServerName: tokenServerID, QOPs: names, MaxBuf: digestmd5.MaxMaxBuf,
		Credentials: func(username string) (string, error) {
			if len(username) > 2*delegation.MaxIdentifier {
				return "", errors.New("token identifier too long")
			}
			id, err := base64.StdEncoding.DecodeString(username)
			if err != nil {
				return "", fmt.Errorf("token identifier is not base64: %w", err)
			}
			pw, user, real, err := m.Retrieve(id)
			if err != nil {
				return "", err
			}
			if user == "" {
				return "", errors.New("token names no owner")
			}
			s.user, s.realUser = user, real
			return base64.StdEncoding.EncodeToString(pw), nil
		},
	})
	if err != nil {
		return nil, err
	}
	s.srv = srv
	return s, nil
}

// negotiate makes the challenge for the NEGOTIATE entry.
func (m *TokenMechanism) negotiate(remote net.Addr) (*ipcpb.RpcSaslProto_SaslAuth, SASLSession, error) {
	sess, err := m.NewSession(remote)
	if err != nil {
		return nil, nil, err
	}
	ch, err := sess.(*tokenSession).srv.Challenge()
	if err != nil {
		return nil, nil, err
	}
	a := m.Auth()
	a.Challenge = ch
	return a, sess, nil
}

// serverFirst is a mechanism whose server speaks first: NEGOTIATE carries
// its challenge and starts the session that INITIATE continues.
type serverFirst interface {
	negotiate(remote net.Addr) (*ipcpb.RpcSaslProto_SaslAuth, SASLSession, error)
}

type tokenSession struct {
	srv            *digestmd5.Server
	user, realUser string
}

func (s *tokenSession) Step(token []byte) ([]byte, bool, error) {
	rsp, err := s.srv.Respond(token)
	if err != nil {
		// Hadoop's server sends the InvalidToken a callback raised as it
		// is (Server.saslProcess looks for it among the causes).
		var re *RemoteError
		if errors.As(err, &re) {
			return nil, false, re
		}
		return nil, false, err
	}
	return rsp, true, nil
}

func (s *tokenSession) Principal() string { return s.user }

// tokenUsers is the authenticated user and real user: a token names them
// itself, auth_to_local plays no part.
func (s *tokenSession) tokenUsers() (string, string) { return s.user, s.realUser }

func (s *tokenSession) QOP() security.QOP { return qopOfDigest(s.srv.QOP()) }

func (s *tokenSession) Wrap(msg []byte) ([]byte, error) {
	sec := s.srv.Security()
	if sec == nil {
		return nil, errors.New("ipc: no DIGEST-MD5 security layer")
	}
	sec.SetSendLimit(digestmd5.MaxMaxBuf)
	return sec.Wrap(msg)
}

func (s *tokenSession) Unwrap(tok []byte) ([]byte, error) {
	sec := s.srv.Security()
	if sec == nil {
		return nil, errors.New("ipc: no DIGEST-MD5 security layer")
	}
	return sec.Unwrap(tok)
}

func qopOfDigest(q string) security.QOP {
	switch q {
	case digestmd5.AuthConf:
		return security.QOPPrivacy
	case digestmd5.AuthInt:
		return security.QOPIntegrity
	}
	return security.QOPAuth
}

// DelegationRetriever adapts a secret manager's retrievePassword (the
// NameNode's Namesystem.RetrieveDelegationPassword) to a TokenRetriever
// for delegation token identifiers: the user is the owner's short name,
// the real user that of the identifier's real user (Hadoop's
// AbstractDelegationTokenIdentifier.getUser).
func DelegationRetriever(retrieve func(identifier []byte) ([]byte, string, error)) TokenRetriever {
	return func(identifier []byte) ([]byte, string, string, error) {
		pw, user, err := retrieve(identifier)
		if err != nil {
			return nil, "", "", err
		}
		id, err := delegation.DecodeIdentifier(identifier)
		if err != nil {
			return nil, "", "", err
		}
		real := ""
		if id.RealUser != "" {
			real = delegation.ShortName(id.RealUser)
		}
		return pw, user, real, nil
	}
}

// Client side.

// processTokens are the tokens every Client of this process may present
// (Hadoop's UserGroupInformation credentials: HADOOP_TOKEN_FILE_LOCATION).
type processTokens struct {
	tokens []delegation.Token
	qops   byte
}

var procTokens atomic.Pointer[processTokens]

// SetTokens makes tokens the credentials every Client of this process
// presents to a server that offers TOKEN authentication (the token whose
// kind the protocol's KerberosInfo names and whose service is the server's
// address); c supplies hadoop.rpc.protection.
func SetTokens(tokens []delegation.Token, c *conf.Configuration) error {
	qops := byte(security.QOPAuth)
	if c != nil {
		q, err := security.ParseProtection(c.Get(security.KeyRPCProtection))
		if err != nil {
			return err
		}
		qops = q
	}
	procTokens.Store(&processTokens{tokens: append([]delegation.Token(nil), tokens...), qops: qops})
	return nil
}

// Tokens returns the process tokens set by SetTokens.
func Tokens() []delegation.Token {
	if p := procTokens.Load(); p != nil {
		return p.tokens
	}
	return nil
}

// LoadTokenFile reads a Hadoop token file (HADOOP_TOKEN_FILE_LOCATION)
// into the process tokens, as UserGroupInformation's login does.
func LoadTokenFile(path string, c *conf.Configuration) error {
	ats, err := delegation.ReadCredentialsFile(path)
	if err != nil {
		return fmt.Errorf("ipc: token file %s: %w", path, err)
	}
	toks := make([]delegation.Token, len(ats))
	for i, at := range ats {
		toks[i] = at.Token
	}
	return SetTokens(toks, c)
}

// TokenService is the service a token for a server at addr carries:
// ip:port, as Hadoop's SecurityUtil.buildTokenService with
// hadoop.security.token.service.use_ip (the default).
func TokenService(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip != nil {
		return net.JoinHostPort(ip.String(), port)
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return addr
	}
	ip := ips[0]
	for _, c := range ips {
		if c.To4() != nil {
			ip = c
			break
		}
	}
	return net.JoinHostPort(ip.String(), port)
}

var serviceCache sync.Map // addr → TokenService(addr)

// selectToken is Hadoop's TokenSelector: a token of the protocol's kind
// whose service is the server's address (as given or as ip:port).
func (cfg *ClientConfig) selectToken() (*delegation.Token, byte) {
	toks, qops := cfg.Tokens, cfg.QOPs
	if p := procTokens.Load(); p != nil {
		if toks == nil {
			toks = p.tokens
		}
		if qops == 0 {
			qops = p.qops
		}
	}
	if len(toks) == 0 {
		return nil, 0
	}
	kind := delegation.Kind
	if info, ok := KerberosInfoOf(cfg.Protocol); ok && info.TokenKind != "" {
		kind = info.TokenKind
	}
	if qops == 0 {
		qops = byte(security.QOPAuth)
	}
	svc, ok := serviceCache.Load(cfg.Addr)
	if !ok {
		svc = TokenService(cfg.Addr)
		serviceCache.Store(cfg.Addr, svc)
	}
	for i := range toks {
		t := &toks[i]
		if t.Kind == kind && (t.Service == cfg.Addr || t.Service == svc.(string)) {
			return t, qops
		}
	}
	return nil, 0
}

// digestLayer is a client's DIGEST-MD5 security layer.
type digestLayer struct{ sec *digestmd5.Security }

func (d digestLayer) wrap(msg []byte, _ bool) ([]byte, error) { return d.sec.Wrap(msg) }
func (d digestLayer) unwrap(tok []byte) ([]byte, error)       { return d.sec.Unwrap(tok) }

// tokenConnect is the client side of TOKEN authentication once the
// server's NEGOTIATE offered entry: INITIATE with the digest-response to
// the entry's challenge, then SUCCESS with the rspauth.
func tokenConnect(entry *ipcpb.RpcSaslProto_SaslAuth, tok *delegation.Token, qops byte,
	send func(*ipcpb.RpcSaslProto) error, recv func(ipcpb.RpcSaslProto_SaslState) (*ipcpb.RpcSaslProto, error)) (*clientSASL, error) {
	var names []string
	for _, q := range []security.QOP{security.QOPPrivacy, security.QOPIntegrity, security.QOPAuth} {
		if qops&byte(q) != 0 {
			names = append(names, q.SASLName())
		}
	}
	dc, err := digestmd5.NewClient(digestmd5.ClientConfig{
		Protocol: entry.GetProtocol(), ServerName: entry.GetServerId(),
		Username: base64.StdEncoding.EncodeToString(tok.Identifier),
		Password: base64.StdEncoding.EncodeToString(tok.Password),
		QOPs:     names, MaxBuf: digestmd5.MaxMaxBuf,
	})
	if err != nil {
		return nil, err
	}
	resp, err := dc.Respond(entry.GetChallenge())
	if err != nil {
		return nil, err
	}
	if err := send(&ipcpb.RpcSaslProto{State: ipcpb.RpcSaslProto_INITIATE.Enum(), Token: resp, Auths: []*ipcpb.RpcSaslProto_SaslAuth{entry}}); err != nil {
		return nil, err
	}
	ok, err := recv(ipcpb.RpcSaslProto_SUCCESS)
	if err != nil {
		return nil, err
	}
	if err := dc.Verify(ok.GetToken()); err != nil {
		return nil, err
	}
	s := &clientSASL{qop: qopOfDigest(dc.QOP()), token: true}
	if sec := dc.Security(); sec != nil {
		sec.SetSendLimit(digestmd5.MaxMaxBuf)
		s.w = digestLayer{sec}
	}
	return s, nil
}
