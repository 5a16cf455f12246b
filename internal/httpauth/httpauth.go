package httpauth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/security"
)

// Hadoop's configuration keys (core-default.xml).
const (
	KeyType             = "hadoop.http.authentication.type"
	KeyAnonymousAllowed = "hadoop.http.authentication.simple.anonymous.allowed"
	KeyPrincipal        = "hadoop.http.authentication.kerberos.principal"
	KeyKeytab           = "hadoop.http.authentication.kerberos.keytab"
	KeyTokenValidity    = "hadoop.http.authentication.token.validity"
	KeySecretFile       = "hadoop.http.authentication.signature.secret.file"
	KeyCookieDomain     = "hadoop.http.authentication.cookie.domain"
	KeyCookiePath       = "hadoop.http.authentication.cookie.path"

	// KeySecurityAuthentication is kerberos in secure mode, when the
	// NameNode's WebHDFS needs SPNEGO whatever KeyType says, with
	// KeyWebHDFSPrincipal and KeyWebHDFSKeytab (HDFS's keys; empty: the
	// hadoop.http.authentication ones).
	KeySecurityAuthentication = "hadoop.security.authentication"
	KeyWebHDFSPrincipal       = "dfs.web.authentication.kerberos.principal"
	KeyWebHDFSKeytab          = "dfs.web.authentication.kerberos.keytab"
)

// Authentication types, as the token's t= attribute names them.
const (
	TypeSimple   = "simple"
	TypeKerberos = "kerberos"
)

// StaticUser is the user of a request simple authentication cannot
// trust (secure mode): hadoop.http.staticuser.user's default.
const StaticUser = "dr.who"

// CookieName is Hadoop's AuthenticatedURL.AUTH_COOKIE.
const CookieName = "hadoop.auth"

// Bounds on what a client sends before the filter decodes it. Hadoop's
// HttpServer2 caps a request header at 64 KiB; a Kerberos AP-REQ is a few
// KiB even with a large PAC.
const (
	MaxAuthHeader = 64 << 10
	MaxCookie     = 4 << 10
)

// MinSecret is the shortest signature secret file accepted: a short
// secret makes the HMAC guessable offline from one cookie.
const MinSecret = 32

// DefaultValidity is hadoop.http.authentication.token.validity's default.
const DefaultValidity = 36000 * time.Second

// Config is the filter's configuration.
type Config struct {
	// Type is TypeSimple or TypeKerberos.
	Type string
	// AnonymousAllowed (simple only): requests without user.name pass.
	AnonymousAllowed bool
	// Secure is hadoop.security.authentication=kerberos. With Type simple
	// the filter then trusts no user.name: every request acts as
	// StaticUser, as the anonymous web user (hadoop.http.staticuser.user's
	// default), so a page cannot be driven as the superuser by naming it.
	Secure bool
	// Principal is the HTTP service principal, "HTTP/_HOST" with or without
	// "@REALM"; _HOST is replaced by Host. Without a realm the default realm
	// of krb5.conf ($KRB5_CONFIG, else /etc/krb5.conf) is used.
	Principal string
	// Host replaces _HOST in Principal; when empty, ServerHost(Addr).
	Host string
	// Addr is the server's listen address (the daemon sets it when it
	// starts its HTTP server).
	Addr string
	// Keytab is the path of the keytab holding Principal's keys.
	Keytab string
	// Validity is how long a hadoop.auth cookie is accepted.
	Validity time.Duration
	// Secret signs cookies; when empty, New reads SecretFile, and without
	// one makes a random secret for this process.
	Secret []byte
	// SecretFile holds the secret (hadoop.http.authentication.signature.secret.file).
	SecretFile string
	// CookieDomain and CookiePath are the cookie's Domain and Path
	// attributes (Path defaults to "/").
	CookieDomain, CookiePath string
	// Now is the clock for cookie expiry (default time.Now).
	Now func() time.Time
	// Log receives authentication failures at debug level (default: none).
	Log *slog.Logger
	// AuthToLocal and AuthToLocalMechanism are hadoop.security.auth_to_local
	// and its .mechanism: how a ticket's principal becomes the user
	// (default DEFAULT: krb5.conf's default realm only).
	AuthToLocal, AuthToLocalMechanism string
}

// ConfigFrom reads the hadoop.http.authentication.* keys.
func ConfigFrom(c *conf.Configuration) (Config, error) {
	cfg := Config{
		Type:         strings.ToLower(c.GetTrimmed(KeyType)),
		Principal:    c.GetTrimmed(KeyPrincipal),
		Keytab:       c.GetTrimmed(KeyKeytab),
		CookieDomain: c.GetTrimmed(KeyCookieDomain),
		CookiePath:   c.GetTrimmed(KeyCookiePath),
		SecretFile:   c.GetTrimmed(KeySecretFile),
	}
	if cfg.Type == "" {
		cfg.Type = TypeSimple
	}
	cfg.Secure = strings.EqualFold(c.GetTrimmed(KeySecurityAuthentication), TypeKerberos)
	if cfg.Type == TypeKerberos || cfg.Secure {
		// Only Kerberos names are mapped.
		cfg.AuthToLocal, cfg.AuthToLocalMechanism = c.Get(security.KeyAuthToLocal), c.Get(security.KeyAuthToLocalMech)
	}
	r := conf.NewReader(c, "")
	cfg.AnonymousAllowed = r.Bool(KeyAnonymousAllowed)
	cfg.Validity = r.Duration(KeyTokenValidity, time.Second)
	return cfg, r.Err()
}

// ServerHost is the name _HOST stands for on a server listening on addr,
// as Hadoop's SecurityUtil.getServerPrincipal finds it: the address's host
// name, the machine's name for a wildcard address, "localhost" for a
// loopback address, else the address's reverse-DNS name; lower case.
func ServerHost(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip := net.ParseIP(host)
	switch {
	case host == "" || (ip != nil && ip.IsUnspecified()):
		h, err := os.Hostname()
		if err != nil {
			return "localhost"
		}
		host = h
	case ip != nil && ip.IsLoopback():
		host = "localhost"
	case ip != nil:
		if names, err := net.LookupAddr(host); err == nil && len(names) > 0 {
			host = strings.TrimSuffix(names[0], ".")
		}
	}
	return strings.ToLower(host)
}

// Filter is the authentication filter; Wrap puts it in front of handlers.
type Filter struct {
	cfg       Config
	kt        *keytab.Keytab
	principal string // service principal without the realm
	realm     string // the service principal's realm
	local     string // krb5.conf's default_realm (else realm), for auth_to_local
	rules     *security.AuthToLocal
	secret    []byte
	now       func() time.Time
	log       *slog.Logger
}

// New checks cfg and, for kerberos, loads the keytab.
func New(cfg Config) (*Filter, error) {
	f := &Filter{cfg: cfg, now: cfg.Now, log: cfg.Log, secret: cfg.Secret}
	if f.now == nil {
		f.now = time.Now
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	if f.cfg.Validity <= 0 {
		f.cfg.Validity = DefaultValidity
	}
	if f.cfg.CookiePath == "" {
		f.cfg.CookiePath = "/"
	}
	if f.secret == nil && cfg.SecretFile != "" {
		b, err := os.ReadFile(cfg.SecretFile)
		if err != nil {
			return nil, fmt.Errorf("httpauth: %s: %w", KeySecretFile, err)
		}
		if f.secret = []byte(strings.TrimSpace(string(b))); len(f.secret) < MinSecret {
			return nil, fmt.Errorf("httpauth: %s: %s holds %d bytes; a cookie secret needs at least %d", KeySecretFile, cfg.SecretFile, len(f.secret), MinSecret)
		}
	}
	if f.secret == nil {
		f.secret = make([]byte, 32)
		if _, err := rand.Read(f.secret); err != nil {
			return nil, err
		}
	}
	switch cfg.Type {
	case "", TypeSimple: // the zero Config is simple, anonymous allowed
		if cfg.Type == "" {
			f.cfg.Type, f.cfg.AnonymousAllowed = TypeSimple, true
		}
		return f, nil
	case TypeKerberos:
	default:
		return nil, fmt.Errorf("httpauth: %s: unknown type %q (simple or kerberos)", KeyType, cfg.Type)
	}
	if cfg.Keytab == "" {
		return nil, fmt.Errorf("httpauth: %s must name the keytab of %s when %s is kerberos", KeyKeytab, KeyPrincipal, KeyType)
	}
	kt, err := keytab.Load(cfg.Keytab)
	if err != nil {
		return nil, fmt.Errorf("httpauth: %s %s: %w", KeyKeytab, cfg.Keytab, err)
	}
	f.kt = kt
	p := cfg.Principal
	if p == "" {
		p = "HTTP/_HOST"
	}
	host := cfg.Host
	if host == "" {
		host = ServerHost(cfg.Addr)
	}
	p = strings.ReplaceAll(p, "_HOST", host)
	name, realm, _ := strings.Cut(p, "@")
	if realm == "" {
		if realm = defaultRealm(); realm == "" {
			return nil, fmt.Errorf("httpauth: %s %q names no realm and krb5.conf has no default_realm", KeyPrincipal, cfg.Principal)
		}
	}
	f.principal, f.realm, f.local = name, realm, defaultRealm()
	if f.local == "" {
		f.local = realm
	}
	if f.rules, err = security.ParseAuthToLocal(cfg.AuthToLocal, cfg.AuthToLocalMechanism); err != nil {
		return nil, fmt.Errorf("httpauth: %w", err)
	}
	f.rules.DefaultRealm = f.local
	if !hasKey(kt, name, realm) {
		return nil, fmt.Errorf("httpauth: keytab %s has no key for %s@%s (%s)", cfg.Keytab, name, realm, KeyPrincipal)
	}
	return f, nil
}

func hasKey(kt *keytab.Keytab, name, realm string) bool {
	for _, e := range kt.Entries {
		if e.Principal.Realm == realm && strings.Join(e.Principal.Components, "/") == name {
			return true
		}
	}
	return false
}

func defaultRealm() string {
	path := os.Getenv("KRB5_CONFIG")
	if path == "" {
		path = "/etc/krb5.conf"
	}
	c, err := config.Load(path)
	if err != nil {
		return ""
	}
	return c.LibDefaults.DefaultRealm
}

// Kerberos reports whether the filter requires SPNEGO.
func (f *Filter) Kerberos() bool { return f != nil && f.cfg.Type == TypeKerberos }

// Principal is the service principal requests authenticate to
// ("HTTP/host@REALM"), or "" in simple mode.
func (f *Filter) Principal() string {
	if !f.Kerberos() {
		return ""
	}
	return f.principal + "@" + f.realm
}

// Wrap puts the filter in front of next. A nil filter, and simple mode
// with anonymous requests allowed, return next itself: nothing changes.
// Simple mode in a secure cluster (Config.Secure) serves every request as
// StaticUser with user.name removed.
func (f *Filter) Wrap(next http.Handler) http.Handler {
	if f != nil && f.cfg.Type == TypeSimple && f.cfg.Secure {
		static := Identity{User: StaticUser, Principal: StaticUser, Type: TypeSimple}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.serveAs(w, r, next, static) })
	}
	if f == nil || (f.cfg.Type == TypeSimple && f.cfg.AnonymousAllowed) {
		return next
	}
	if f.cfg.Type == TypeSimple {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.serveSimple(w, r, next) })
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.serveKerberos(w, r, next) })
}

// WrapExcept is Wrap for every path but those under the given prefixes,
// which reach next unauthenticated: the endpoints Hadoop authenticates
// otherwise (the shuffle's job token, the DataNode's WebHDFS delegation
// token) or not at all.
func (f *Filter) WrapExcept(next http.Handler, prefixes ...string) http.Handler {
	guarded := f.Wrap(next)
	if guarded == next || len(prefixes) == 0 {
		return guarded
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, p := range prefixes {
			if strings.HasPrefix(r.URL.Path, p) {
				next.ServeHTTP(w, r)
				return
			}
		}
		guarded.ServeHTTP(w, r)
	})
}

// Identity is who a request authenticated as.
type Identity struct {
	User      string // the short name handlers act as
	Principal string // the Kerberos principal (the user name in simple mode)
	Type      string // TypeSimple or TypeKerberos
}

type ctxKey struct{}

// User is the authenticated user of a request that passed the filter
// (its context), and whether there is one: false for requests the filter
// did not see or passed without authentication (simple mode, anonymous).
func User(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(ctxKey{}).(Identity)
	return id.User, ok
}

// IdentityOf is the request's full Identity (see User).
func IdentityOf(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(ctxKey{}).(Identity)
	return id, ok
}

// WithIdentity returns ctx carrying id, for tests of handlers.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// serveSimple is Hadoop's PseudoAuthenticationHandler with anonymous
// requests refused: user.name, or a cookie issued for one, is required.
func (f *Filter) serveSimple(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if id, ok := f.fromCookie(r, TypeSimple); ok {
		next.ServeHTTP(w, r.WithContext(WithIdentity(r.Context(), id)))
		return
	}
	u := r.URL.Query().Get("user.name")
	if u == "" || len(u) > 256 || strings.ContainsAny(u, "&=\"\\;, \t\r\n") {
		w.Header().Set("WWW-Authenticate", "PseudoAuth")
		http.Error(w, "Authentication required: anonymous requests are disallowed", http.StatusForbidden)
		return
	}
	id := Identity{User: u, Principal: u, Type: TypeSimple}
	if err := f.setCookie(w, r, id); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	next.ServeHTTP(w, r.WithContext(WithIdentity(r.Context(), id)))
}

func (f *Filter) serveKerberos(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if id, ok := f.fromCookie(r, TypeKerberos); ok {
		f.serveAs(w, r, next, id)
		return
	}
	if _, err := r.Cookie(CookieName); err == nil {
		f.clearCookie(w, r) // present but invalid or expired: drop it
	}
	if len(r.Header.Get("Authorization")) > MaxAuthHeader {
		http.Error(w, "Authorization header too large", http.StatusRequestHeaderFieldsTooLarge)
		return
	}
	a, err := f.acceptSPNEGO(r.Header.Get("Authorization"), r.RemoteAddr)
	switch {
	case errors.Is(err, errNoNegotiate):
		w.Header().Set("WWW-Authenticate", "Negotiate")
		http.Error(w, "Authentication required", http.StatusUnauthorized)
		return
	case errors.Is(err, errIncomplete):
		challenge(w, negotiateIncomplete)
		return
	case err != nil: // expired ticket, wrong key, replay, forged identity
		f.log.Debug("httpauth: SPNEGO refused", "remote", r.RemoteAddr, "err", err)
		challenge(w, negotiateReject)
		return
	}
	principal := a.name + "@" + a.realm
	user, err := f.shortName(a.name, a.realm)
	if err != nil {
		f.log.Debug("httpauth: SPNEGO principal not mapped", "principal", principal, "err", err)
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	id := Identity{User: user, Principal: principal, Type: TypeKerberos}
	if err := f.setCookie(w, r, id); err != nil {
		f.log.Debug("httpauth: SPNEGO principal refused", "principal", principal, "err", err)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	w.Header().Set("WWW-Authenticate", a.answer)
	f.serveAs(w, r, next, id)
}

// serveAs runs next as id, with user.name removed from the query so no
// handler can act as a name the client chose.
func (f *Filter) serveAs(w http.ResponseWriter, r *http.Request, next http.Handler, id Identity) {
	r = r.WithContext(WithIdentity(r.Context(), id))
	if q, changed := dropUserName(r.URL.RawQuery); changed {
		u := *r.URL
		u.RawQuery = q
		r.URL = &u
	}
	next.ServeHTTP(w, r)
}

// dropUserName removes every user.name parameter from a raw query, in
// any case (WebHDFS's names are case-insensitive) and any escaping,
// keeping the others as sent and in their order.
func dropUserName(raw string) (string, bool) {
	if raw == "" {
		return raw, false
	}
	var kept []string
	changed := false
	for pair := range strings.SplitSeq(raw, "&") {
		k, _, _ := strings.Cut(pair, "=")
		if uk, err := url.QueryUnescape(k); err == nil && strings.EqualFold(uk, "user.name") {
			changed = true
			continue
		}
		kept = append(kept, pair)
	}
	return strings.Join(kept, "&"), changed
}

// shortName maps a principal to the user handlers act as by
// hadoop.security.auth_to_local, as IPC does (package security): by
// DEFAULT the first component of a principal of krb5.conf's default
// realm (alice@R -> alice, nn/host@R -> nn), and a principal of another
// realm only if a rule maps it; one of three or more components is
// malformed (KerberosName's grammar is name[/host]@realm).
func (f *Filter) shortName(name, realm string) (string, error) {
	if strings.Count(name, "/") > 1 || strings.ContainsAny(name, "@") {
		return "", fmt.Errorf("Malformed Kerberos name: %s@%s", name, realm)
	}
	first, host, _ := strings.Cut(name, "/")
	if first == "" || (strings.Contains(name, "/") && host == "") {
		return "", fmt.Errorf("No rules applied to %s@%s", name, realm)
	}
	rules := f.rules
	if rules == nil { // a Filter not made by New (tests): DEFAULT
		rules, _ = security.ParseAuthToLocal("", "")
		rules.DefaultRealm = f.local
	}
	return rules.ShortName(name + "@" + realm)
}

// token is Hadoop's AuthToken string, unsigned:
// u=<user>&p=<principal>&t=<type>&e=<expiry ms>. The values are not
// escaped, so, as AuthToken does, a name holding the separators is
// refused: it could otherwise carry attributes of its own into the
// signed string.
func token(id Identity, expires time.Time) (string, error) {
	for _, v := range []string{id.User, id.Principal, id.Type} {
		if v == "" || strings.ContainsAny(v, "&=") {
			return "", fmt.Errorf("invalid authentication token attribute %q: empty or contains '&' or '='", v)
		}
	}
	return "u=" + id.User + "&p=" + id.Principal + "&t=" + id.Type + "&e=" + strconv.FormatInt(expires.UnixMilli(), 10), nil
}

// sign is Hadoop's Signer.sign: str + "&s=" + base64(HMAC-SHA256(secret, str)).
func sign(secret []byte, str string) string {
	return str + "&s=" + signature(secret, str)
}

func signature(secret []byte, str string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(str))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

var errBadToken = errors.New("invalid authentication token")

// tokenAttrs are AuthToken's attributes; any other, or one twice, makes
// the token invalid.
var tokenAttrs = map[string]bool{"u": true, "p": true, "t": true, "e": true, "i": true}

// verify is Signer.verifyAndExtract then AuthToken.parse, with expiry
// checked at now.
func verify(secret []byte, signed string, now time.Time) (Identity, error) {
	signed = strings.TrimSuffix(strings.TrimPrefix(signed, `"`), `"`)
	i := strings.LastIndex(signed, "&s=")
	if i < 0 {
		return Identity{}, errBadToken
	}
	raw, sig := signed[:i], signed[i+len("&s="):]
	if !hmac.Equal([]byte(sig), []byte(signature(secret, raw))) {
		return Identity{}, errors.New("invalid signature")
	}
	attrs := map[string]string{}
	for part := range strings.SplitSeq(raw, "&") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return Identity{}, errBadToken
		}
		if _, dup := attrs[k]; dup || !tokenAttrs[k] {
			return Identity{}, errBadToken
		}
		attrs[k] = v
	}
	id := Identity{User: attrs["u"], Principal: attrs["p"], Type: attrs["t"]}
	e, err := strconv.ParseInt(attrs["e"], 10, 64)
	if err != nil || id.User == "" || id.Principal == "" || id.Type == "" {
		return Identity{}, errBadToken
	}
	if now.UnixMilli() > e {
		return Identity{}, errors.New("expired token")
	}
	if i, ok := attrs["i"]; ok { // max-inactive, when a filter sets one
		if n, err := strconv.ParseInt(i, 10, 64); err != nil || (n != -1 && now.UnixMilli() > n) {
			return Identity{}, errors.New("expired token")
		}
	}
	return id, nil
}

// fromCookie is the identity of a valid hadoop.auth cookie of type typ.
func (f *Filter) fromCookie(r *http.Request, typ string) (Identity, bool) {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" || len(c.Value) > MaxCookie {
		return Identity{}, false
	}
	id, err := verify(f.secret, c.Value, f.now())
	if err == nil && id.Type != typ {
		err = fmt.Errorf("invalid AuthenticationToken type %q", id.Type)
	}
	if err != nil {
		f.log.Debug("httpauth: hadoop.auth cookie ignored", "remote", r.RemoteAddr, "err", err)
		return Identity{}, false
	}
	return id, true
}

// setCookie writes the signed token as Hadoop's createAuthCookie does: a
// quoted value, Path, Domain when configured, HttpOnly, Secure over TLS;
// a session cookie (Hadoop's default, cookie.persistent=false).
func (f *Filter) setCookie(w http.ResponseWriter, r *http.Request, id Identity) error {
	t, err := token(id, f.now().Add(f.cfg.Validity))
	if err != nil {
		return err
	}
	w.Header().Add("Set-Cookie", f.cookie(r, `"`+sign(f.secret, t)+`"`))
	return nil
}

func (f *Filter) clearCookie(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Set-Cookie", f.cookie(r, "")+"; Max-Age=0")
}

func (f *Filter) cookie(r *http.Request, value string) string {
	var b strings.Builder
	b.WriteString(CookieName + "=" + value)
	if f.cfg.CookieDomain != "" {
		b.WriteString("; Domain=" + f.cfg.CookieDomain)
	}
	b.WriteString("; Path=" + f.cfg.CookiePath)
	if r.TLS != nil {
		b.WriteString("; Secure")
	}
	b.WriteString("; HttpOnly")
	return b.String()
}
