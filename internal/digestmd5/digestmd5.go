package digestmd5

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Quality of protection names, as in the qop directive.
const (
	Auth     = "auth"      // authentication only
	AuthInt  = "auth-int"  // integrity: every message carries a MAC
	AuthConf = "auth-conf" // privacy: every message is encrypted and carries a MAC
)

// Limits on what a peer may send (RFC 2831 caps a challenge at 2048 bytes
// and a response at 4096).
const (
	MaxChallenge = 2048
	MaxResponse  = 4096
	// DefaultMaxBuf is the maxbuf a side assumes when its peer names none.
	DefaultMaxBuf = 65536
	// MaxMaxBuf is the largest maxbuf RFC 2831 allows.
	MaxMaxBuf = 16777215
	minMaxBuf = 16
)

// Ciphers is every auth-conf cipher this package implements, strongest
// first.
var Ciphers = []string{"rc4", "rc4-56", "rc4-40"}

// DefaultCiphers is what a side offers or accepts unless configured
// otherwise: the challenge's cipher list is not covered by any digest, so
// an on-path attacker could strip it to rc4-40 (a 40-bit key, which would
// also wrap any AES keys sent over the layer); the weaker ciphers are
// used only where both sides name them.
var DefaultCiphers = []string{"rc4"}

// Errors a handshake can end with. A refused password or a mismatched
// digest is ErrAuthentication; a callback's refusal is a *CredentialError.
var (
	ErrAuthentication = errors.New("DIGEST-MD5: digest response format violation. Mismatched response.")
	ErrServerAuth     = errors.New("DIGEST-MD5: server's rspauth does not match: the server does not know the password")
)

// CredentialError is the Credentials callback's refusal of a username
// (an unknown or expired token, say); Err is the callback's error.
type CredentialError struct{ Err error }

func (e *CredentialError) Error() string {
	return "DIGEST-MD5: IO error acquiring password: " + e.Err.Error()
}
func (e *CredentialError) Unwrap() error { return e.Err }

// directives is a parsed challenge or response: name → value, names
// lower-cased. A name may appear once.
type directives map[string]string

// parseDirectives parses RFC 2831's comma-separated name=value and
// name="quoted value" list, with optional spaces around the commas and
// backslash escapes in quoted strings.
func parseDirectives(b []byte, limit int) (directives, error) {
	if len(b) > limit {
		return nil, fmt.Errorf("DIGEST-MD5: message of %d bytes exceeds %d", len(b), limit)
	}
	d := directives{}
	s := string(b)
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
			i++
		}
	}
	for {
		skip()
		for i < len(s) && s[i] == ',' {
			i++
			skip()
		}
		if i == len(s) {
			return d, nil
		}
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ',' && s[i] != ' ' {
			i++
		}
		name := strings.ToLower(s[start:i])
		skip()
		if name == "" || i == len(s) || s[i] != '=' {
			return nil, fmt.Errorf("DIGEST-MD5: malformed directive near byte %d", start)
		}
		i++
		skip()
		var val strings.Builder
		if i < len(s) && s[i] == '"' {
			i++
			closed := false
			for i < len(s) {
				c := s[i]
				i++
				if c == '\\' && i < len(s) {
					val.WriteByte(s[i])
					i++
					continue
				}
				if c == '"' {
					closed = true
					break
				}
				val.WriteByte(c)
			}
			if !closed {
				return nil, errors.New("DIGEST-MD5: unterminated quoted string")
			}
		} else {
			start := i
			for i < len(s) && s[i] != ',' && s[i] != ' ' && s[i] != '\t' {
				i++
			}
			val.WriteString(s[start:i])
		}
		skip()
		if i < len(s) && s[i] != ',' {
			return nil, fmt.Errorf("DIGEST-MD5: missing comma after directive %s", name)
		}
		if _, dup := d[name]; dup {
			return nil, fmt.Errorf("DIGEST-MD5: directive %s appears twice", name)
		}
		d[name] = val.String()
	}
}

// quote renders s as a quoted-string.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

func h(s ...[]byte) []byte {
	m := md5.New()
	for _, b := range s {
		m.Write(b)
	}
	return m.Sum(nil)
}

func hexs(b []byte) string { return hex.EncodeToString(b) }

// session is what both sides compute from a completed exchange.
type session struct {
	user, realm, password, nonce, cnonce, authzid, qop, digestURI, cipher string
	nc                                                                    string
}

// ha1 is H(A1) for md5-sess: H(H(user:realm:pass) : nonce : cnonce [: authzid]).
func (s *session) ha1() []byte {
	inner := h([]byte(s.user + ":" + s.realm + ":" + s.password))
	a1 := slices.Concat(inner, []byte(":"+s.nonce+":"+s.cnonce))
	if s.authzid != "" {
		a1 = append(a1, []byte(":"+s.authzid)...)
	}
	return h(a1)
}

// digest is the response value (client = true) or the rspauth value.
func (s *session) digest(client bool) string {
	a2 := ":" + s.digestURI
	if client {
		a2 = "AUTHENTICATE" + a2
	}
	if s.qop == AuthInt || s.qop == AuthConf {
		a2 += ":00000000000000000000000000000000"
	}
	kd := hexs(s.ha1()) + ":" + s.nonce + ":" + s.nc + ":" + s.cnonce + ":" + s.qop + ":" + hexs(h([]byte(a2)))
	return hexs(h([]byte(kd)))
}

// security builds the negotiated layer; client says which side this is.
func (s *session) security(client bool, recvMax, sendMax int) (*Security, error) {
	if s.qop == Auth {
		return nil, nil
	}
	ha1 := s.ha1()
	kic := h(ha1, []byte("Digest session key to client-to-server signing key magic constant"))
	kis := h(ha1, []byte("Digest session key to server-to-client signing key magic constant"))
	sec := &Security{qop: s.qop, recvMax: recvMax, sendMax: sendMax}
	if client {
		sec.macOut, sec.macIn = hmac.New(md5.New, kic), hmac.New(md5.New, kis)
	} else {
		sec.macOut, sec.macIn = hmac.New(md5.New, kis), hmac.New(md5.New, kic)
	}
	if s.qop == AuthConf {
		n := 16
		switch s.cipher {
		case "rc4":
		case "rc4-56":
			n = 7
		case "rc4-40":
			n = 5
		default:
			return nil, fmt.Errorf("DIGEST-MD5: unsupported cipher %q", s.cipher)
		}
		kcc := h(ha1[:n], []byte("Digest H(A1) to client-to-server sealing key magic constant"))
		kcs := h(ha1[:n], []byte("Digest H(A1) to server-to-client sealing key magic constant"))
		var err error
		if client {
			err = sec.setCiphers(kcc, kcs)
		} else {
			err = sec.setCiphers(kcs, kcc)
		}
		if err != nil {
			return nil, err
		}
	}
	return sec, nil
}

func randomString(r io.Reader, n int) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("DIGEST-MD5: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// checkCiphers defaults an empty list to DefaultCiphers and refuses
// ciphers this package does not implement.
func checkCiphers(cs []string) ([]string, error) {
	if len(cs) == 0 {
		return DefaultCiphers, nil
	}
	for _, c := range cs {
		if !slices.Contains(Ciphers, c) {
			return nil, fmt.Errorf("DIGEST-MD5: unsupported cipher %q", c)
		}
	}
	return cs, nil
}

func validQOP(q string) bool { return q == Auth || q == AuthInt || q == AuthConf }

func parseMaxBuf(v string) (int, error) {
	if v == "" {
		return DefaultMaxBuf, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < minMaxBuf || n > MaxMaxBuf {
		return 0, fmt.Errorf("DIGEST-MD5: maxbuf %q out of range", v)
	}
	return n, nil
}

// ServerConfig configures a server session.
type ServerConfig struct {
	// Protocol and ServerName make the digest-uri the client must name,
	// Protocol/ServerName ("hdfs" and "0" for DataTransferProtocol).
	Protocol, ServerName string
	// Realm defaults to ServerName, as Java's server does.
	Realm string
	// QOPs are offered in this order (default [auth]).
	QOPs []string
	// Ciphers offered for auth-conf (default DefaultCiphers); each must
	// be one of Ciphers.
	Ciphers []string
	// MaxBuf is the largest wrapped message this side accepts (default
	// DefaultMaxBuf, at most MaxMaxBuf).
	MaxBuf int
	// Credentials returns the password for a username, or an error that
	// refuses it (the handshake ends with a *CredentialError).
	Credentials func(username string) (string, error)
	// Rand makes the nonce (default crypto/rand).
	Rand io.Reader
}

// Server is the server side of one handshake. It is not safe for
// concurrent use.
type Server struct {
	cfg     ServerConfig
	nonce   string
	step    int
	user    string
	qop     string
	sec     *Security
	sendMax int
}

// checkOptions applies the defaults both sides share to their qops,
// ciphers and maxbuf, and checks them.
func checkOptions(qops, ciphers []string, maxBuf int) ([]string, []string, int, error) {
	if len(qops) == 0 {
		qops = []string{Auth}
	}
	for _, q := range qops {
		if !validQOP(q) {
			return nil, nil, 0, fmt.Errorf("DIGEST-MD5: unknown qop %q", q)
		}
	}
	ciphers, err := checkCiphers(ciphers)
	if err != nil {
		return nil, nil, 0, err
	}
	if maxBuf == 0 {
		maxBuf = DefaultMaxBuf
	}
	if maxBuf < minMaxBuf || maxBuf > MaxMaxBuf {
		return nil, nil, 0, fmt.Errorf("DIGEST-MD5: maxbuf %d out of range", maxBuf)
	}
	return qops, ciphers, maxBuf, nil
}

// NewServer returns a server session.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Realm == "" {
		cfg.Realm = cfg.ServerName
	}
	var err error
	if cfg.QOPs, cfg.Ciphers, cfg.MaxBuf, err = checkOptions(cfg.QOPs, cfg.Ciphers, cfg.MaxBuf); err != nil {
		return nil, err
	}
	if cfg.Credentials == nil {
		return nil, errors.New("DIGEST-MD5: server without a Credentials callback")
	}
	return &Server{cfg: cfg}, nil
}

// Challenge returns the digest-challenge, the server's first message.
func (s *Server) Challenge() ([]byte, error) {
	if s.step != 0 {
		return nil, errors.New("DIGEST-MD5: challenge already sent")
	}
	nonce, err := randomString(s.cfg.Rand, 30)
	if err != nil {
		return nil, err
	}
	s.nonce = nonce
	s.step = 1
	var b strings.Builder
	fmt.Fprintf(&b, "realm=%s,nonce=%s,qop=%s", quote(s.cfg.Realm), quote(nonce), quote(strings.Join(s.cfg.QOPs, ",")))
	if s.cfg.MaxBuf != DefaultMaxBuf {
		fmt.Fprintf(&b, ",maxbuf=%d", s.cfg.MaxBuf)
	}
	b.WriteString(",charset=utf-8")
	if slices.Contains(s.cfg.QOPs, AuthConf) {
		fmt.Fprintf(&b, ",cipher=%s", quote(strings.Join(s.cfg.Ciphers, ",")))
	}
	b.WriteString(",algorithm=md5-sess")
	return []byte(b.String()), nil
}

// Respond checks the client's digest-response and returns the
// response-auth (rspauth=...) to send back. After it succeeds, Username,
// QOP and Security describe the session.
func (s *Server) Respond(resp []byte) ([]byte, error) {
	if s.step != 1 {
		return nil, errors.New("DIGEST-MD5: response out of turn")
	}
	s.step = 2 // one try only
	d, err := parseDirectives(resp, MaxResponse)
	if err != nil {
		return nil, err
	}
	qop := d["qop"]
	if qop == "" {
		qop = Auth
	}
	if !slices.Contains(s.cfg.QOPs, qop) {
		return nil, fmt.Errorf("DIGEST-MD5: client selected qop %q, not one offered (%s)", qop, strings.Join(s.cfg.QOPs, ","))
	}
	user := d["username"]
	switch {
	case user == "":
		return nil, errors.New("DIGEST-MD5: digest response format violation: missing username")
	case d["nonce"] != s.nonce:
		return nil, errors.New("DIGEST-MD5: digest response format violation: nonce mismatch")
	case d["cnonce"] == "":
		return nil, errors.New("DIGEST-MD5: digest response format violation: missing cnonce")
	case d["nc"] != "00000001":
		return nil, fmt.Errorf("DIGEST-MD5: nonce count %q is not 00000001", d["nc"])
	case d["realm"] != "" && d["realm"] != s.cfg.Realm:
		return nil, fmt.Errorf("DIGEST-MD5: digest response format violation: realm %q is not %q", d["realm"], s.cfg.Realm)
	case d["digest-uri"] != s.cfg.Protocol+"/"+s.cfg.ServerName:
		return nil, fmt.Errorf("DIGEST-MD5: digest response format violation: digest-uri %q is not %s/%s", d["digest-uri"], s.cfg.Protocol, s.cfg.ServerName)
	case d["charset"] != "" && !strings.EqualFold(d["charset"], "utf-8"):
		return nil, fmt.Errorf("DIGEST-MD5: unsupported charset %q", d["charset"])
	case len(d["response"]) != 32:
		return nil, errors.New("DIGEST-MD5: digest response format violation: missing or malformed response")
	case d["authzid"] != "" && d["authzid"] != user:
		return nil, fmt.Errorf("DIGEST-MD5: %s may not act as %s", user, d["authzid"])
	}
	cipher := d["cipher"]
	if qop == AuthConf && !slices.Contains(s.cfg.Ciphers, cipher) {
		return nil, fmt.Errorf("DIGEST-MD5: cipher %q was not offered", cipher)
	}
	sendMax, err := parseMaxBuf(d["maxbuf"])
	if err != nil {
		return nil, err
	}
	pass, err := s.cfg.Credentials(user)
	if err != nil {
		return nil, &CredentialError{Err: err}
	}
	ss := &session{user: user, realm: d["realm"], password: pass, nonce: s.nonce, cnonce: d["cnonce"],
		authzid: d["authzid"], qop: qop, digestURI: d["digest-uri"], cipher: cipher, nc: d["nc"]}
	if subtle.ConstantTimeCompare([]byte(ss.digest(true)), []byte(strings.ToLower(d["response"]))) != 1 {
		return nil, ErrAuthentication
	}
	sec, err := ss.security(false, s.cfg.MaxBuf, sendMax)
	if err != nil {
		return nil, err
	}
	s.user, s.qop, s.sec, s.sendMax, s.step = user, qop, sec, sendMax, 3
	return []byte("rspauth=" + ss.digest(false)), nil
}

// Complete reports whether Respond succeeded.
func (s *Server) Complete() bool { return s.step == 3 }

// Username is the authenticated client's username.
func (s *Server) Username() string { return s.user }

// QOP is the negotiated quality of protection.
func (s *Server) QOP() string { return s.qop }

// Security is the negotiated layer, nil for auth.
func (s *Server) Security() *Security { return s.sec }

// ClientConfig configures a client session.
type ClientConfig struct {
	// Protocol and ServerName name the server (digest-uri).
	Protocol, ServerName string
	// Username and Password are the credentials.
	Username, Password string
	// QOPs the client accepts, most wanted first (default [auth]); it
	// picks the first the server offers.
	QOPs []string
	// Ciphers the client accepts for auth-conf (default DefaultCiphers);
	// it picks the strongest the server offers.
	Ciphers []string
	// MaxBuf is the largest wrapped message this side accepts (default
	// DefaultMaxBuf).
	MaxBuf int
	// Rand makes the cnonce (default crypto/rand).
	Rand io.Reader
}

// Client is the client side of one handshake. It is not safe for
// concurrent use.
type Client struct {
	cfg  ClientConfig
	ss   *session
	step int
	sec  *Security
}

// NewClient returns a client session.
func NewClient(cfg ClientConfig) (*Client, error) {
	var err error
	if cfg.QOPs, cfg.Ciphers, cfg.MaxBuf, err = checkOptions(cfg.QOPs, cfg.Ciphers, cfg.MaxBuf); err != nil {
		return nil, err
	}
	return &Client{cfg: cfg}, nil
}

// Respond answers the server's digest-challenge with a digest-response.
func (c *Client) Respond(challenge []byte) ([]byte, error) {
	if c.step != 0 {
		return nil, errors.New("DIGEST-MD5: challenge out of turn")
	}
	c.step = 1
	d, err := parseDirectives(challenge, MaxChallenge)
	if err != nil {
		return nil, err
	}
	if d["nonce"] == "" {
		return nil, errors.New("DIGEST-MD5: challenge without a nonce")
	}
	if a := d["algorithm"]; a != "md5-sess" {
		return nil, fmt.Errorf("DIGEST-MD5: challenge algorithm %q is not md5-sess", a)
	}
	offered := strings.Split(d["qop"], ",")
	if d["qop"] == "" {
		offered = []string{Auth}
	}
	for i := range offered {
		offered[i] = strings.TrimSpace(offered[i])
	}
	qop := ""
	for _, q := range c.cfg.QOPs {
		if slices.Contains(offered, q) {
			qop = q
			break
		}
	}
	if qop == "" {
		return nil, fmt.Errorf("DIGEST-MD5: no common qop: the server offers %s, the client accepts %s", strings.Join(offered, ","), strings.Join(c.cfg.QOPs, ","))
	}
	cipher := ""
	if qop == AuthConf {
		ciphers := strings.Split(d["cipher"], ",")
		for _, want := range Ciphers {
			if slices.Contains(c.cfg.Ciphers, want) && slices.ContainsFunc(ciphers, func(s string) bool { return strings.TrimSpace(s) == want }) {
				cipher = want
				break
			}
		}
		if cipher == "" {
			return nil, fmt.Errorf("DIGEST-MD5: no common cipher: the server offers %q, the client accepts %s", d["cipher"], strings.Join(c.cfg.Ciphers, ","))
		}
	}
	sendMax, err := parseMaxBuf(d["maxbuf"])
	if err != nil {
		return nil, err
	}
	cnonce, err := randomString(c.cfg.Rand, 12)
	if err != nil {
		return nil, err
	}
	c.ss = &session{user: c.cfg.Username, realm: d["realm"], password: c.cfg.Password, nonce: d["nonce"],
		cnonce: cnonce, qop: qop, digestURI: c.cfg.Protocol + "/" + c.cfg.ServerName, cipher: cipher, nc: "00000001"}
	sec, err := c.ss.security(true, c.cfg.MaxBuf, sendMax)
	if err != nil {
		return nil, err
	}
	c.sec = sec
	var b strings.Builder
	fmt.Fprintf(&b, "charset=utf-8,username=%s", quote(c.ss.user))
	if c.ss.realm != "" {
		fmt.Fprintf(&b, ",realm=%s", quote(c.ss.realm))
	}
	fmt.Fprintf(&b, ",nonce=%s,nc=%s,cnonce=%s,digest-uri=%s", quote(c.ss.nonce), c.ss.nc, quote(cnonce), quote(c.ss.digestURI))
	if c.cfg.MaxBuf != DefaultMaxBuf {
		fmt.Fprintf(&b, ",maxbuf=%d", c.cfg.MaxBuf)
	}
	fmt.Fprintf(&b, ",response=%s,qop=%s", c.ss.digest(true), qop)
	if cipher != "" {
		fmt.Fprintf(&b, ",cipher=%s", quote(cipher))
	}
	return []byte(b.String()), nil
}

// Verify checks the server's response-auth: the server proved it knows
// the password too.
func (c *Client) Verify(rspauth []byte) error {
	if c.step != 1 || c.ss == nil {
		return errors.New("DIGEST-MD5: rspauth out of turn")
	}
	c.step = 2
	d, err := parseDirectives(rspauth, MaxChallenge)
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare([]byte(d["rspauth"]), []byte(c.ss.digest(false))) != 1 {
		return ErrServerAuth
	}
	c.step = 3
	return nil
}

// Complete reports whether Verify succeeded.
func (c *Client) Complete() bool { return c.step == 3 }

// QOP is the negotiated quality of protection (known after Respond).
func (c *Client) QOP() string {
	if c.ss == nil {
		return ""
	}
	return c.ss.qop
}

// Security is the negotiated layer, nil for auth; use it only after
// Verify succeeded.
func (c *Client) Security() *Security {
	if c.step != 3 {
		return nil
	}
	return c.sec
}
