package httpauth

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/security"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestTokenFormat checks the cookie value is Hadoop's signed AuthToken and
// that verify refuses every change to it.
func TestTokenFormat(t *testing.T) {
	secret := []byte("secret")
	exp := time.UnixMilli(1700000000123)
	id := Identity{User: "alice", Principal: "alice@EXAMPLE.COM", Type: TypeKerberos}
	raw, err := token(id, exp)
	if err != nil {
		t.Fatal(err)
	}
	s := sign(secret, raw)
	want := "u=alice&p=alice@EXAMPLE.COM&t=kerberos&e=1700000000123&s="
	if !strings.HasPrefix(s, want) {
		t.Fatalf("token %q, want prefix %q", s, want)
	}
	// HMAC-SHA256 of the unsigned part, standard base64 (Hadoop's Signer).
	if sig := s[len(want):]; sig != signature(secret, want[:len(want)-3]) || len(sig) != 44 {
		t.Fatalf("signature %q", sig)
	}
	got, err := verify(secret, `"`+s+`"`, exp.Add(-time.Second))
	if err != nil || got != id {
		t.Fatalf("verify = %+v, %v", got, err)
	}
	if _, err := verify(secret, s, exp.Add(time.Millisecond)); err == nil {
		t.Fatal("expired token verified")
	}
	for _, bad := range []string{
		strings.Replace(s, "u=alice", "u=root", 1),
		strings.Replace(s, "e=1700000000123", "e=1800000000123", 1),
		s[:len(s)-2] + "AA",
		raw,
		"",
	} {
		if _, err := verify(secret, bad, exp.Add(-time.Second)); err == nil {
			t.Errorf("verify(%q) succeeded", bad)
		}
	}
	if _, err := verify([]byte("other"), s, exp.Add(-time.Second)); err == nil {
		t.Error("token verified with another secret")
	}
}

func TestShortNameDefaultRule(t *testing.T) {
	f := &Filter{realm: "SVC.TEST", local: "R.TEST"}
	for in, want := range map[string]string{"alice": "alice", "nn/host.example.com": "nn", "HTTP/localhost": "HTTP"} {
		if got, err := f.shortName(in, "R.TEST"); err != nil || got != want {
			t.Errorf("shortName(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := f.shortName("alice", "OTHER.TEST"); err == nil || !strings.Contains(err.Error(), "No rules applied to alice@OTHER.TEST") {
		t.Errorf("foreign realm: %v", err)
	}
	// The service's own realm is not the default realm: no mapping.
	if _, err := f.shortName("alice", "SVC.TEST"); err == nil {
		t.Error("a realm other than default_realm mapped")
	}
	for _, bad := range []string{"a/b/c", "hdfs/host/x", "/host", "nn/"} {
		if got, err := f.shortName(bad, "R.TEST"); err == nil {
			t.Errorf("shortName(%s) = %q", bad, got)
		}
	}
}

func TestSecretFileLength(t *testing.T) {
	dir := t.TempDir()
	short, long := dir+"/short", dir+"/long"
	os.WriteFile(short, []byte("0123456789abcdef\n"), 0o600)
	os.WriteFile(long, []byte(strings.Repeat("k", MinSecret)+"\n"), 0o600)
	if _, err := New(Config{Type: TypeSimple, SecretFile: short}); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Errorf("16-byte secret: %v", err)
	}
	if _, err := New(Config{Type: TypeSimple, SecretFile: long}); err != nil {
		t.Errorf("32-byte secret: %v", err)
	}
}

func TestServerHost(t *testing.T) {
	for in, want := range map[string]string{"127.0.0.1:9870": "localhost", "LocalHost:1": "localhost", "nn1.Example.com:50070": "nn1.example.com"} {
		if got := ServerHost(in); got != want {
			t.Errorf("ServerHost(%s) = %q, want %q", in, got, want)
		}
	}
	if ServerHost("0.0.0.0:1") == "" || ServerHost(":1") == "" {
		t.Error("wildcard address has no host")
	}
}

func TestSimpleModeUnchanged(t *testing.T) {
	f, err := New(Config{Type: TypeSimple, AnonymousAllowed: true})
	if err != nil {
		t.Fatal(err)
	}
	// A request without user.name (or with one) reaches the handler, with
	// no identity: the handler applies its own default user.
	var nilFilter *Filter
	for _, h := range []http.Handler{f.Wrap(echoUser()), nilFilter.Wrap(echoUser())} {
		for target, want := range map[string]string{"/x": "<none>", "/x?user.name=bob": "<none>|bob"} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
			if rec.Code != 200 || rec.Body.String() != want || rec.Header().Get("Set-Cookie") != "" {
				t.Errorf("%s: %d %q %v, want 200 %q and no cookie", target, rec.Code, rec.Body, rec.Header(), want)
			}
		}
	}
	if nilFilter.Kerberos() {
		t.Fatal("nil filter")
	}
	if _, err := New(Config{Type: "digest"}); err == nil {
		t.Fatal("unknown type accepted")
	}
	if _, err := New(Config{Type: TypeKerberos}); err == nil || !strings.Contains(err.Error(), KeyKeytab) {
		t.Fatalf("kerberos without keytab: %v", err)
	}
}

// TestSimpleAnonymousDisallowed is PseudoAuthenticationHandler with
// simple.anonymous.allowed=false: 403 without user.name; the cookie it
// issues carries the user to the next request.
func TestSimpleAnonymousDisallowed(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	f, err := New(Config{Type: TypeSimple, Now: c.now, Secret: []byte("s")})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f.Wrap(echoUser()))
	defer srv.Close()
	resp := get(t, srv.URL+"/x", nil)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("WWW-Authenticate") != "PseudoAuth" {
		t.Fatalf("anonymous: %d %v", resp.StatusCode, resp.Header)
	}
	resp = get(t, srv.URL+"/x?user.name=bob", nil)
	if resp.StatusCode != 200 || body(resp) != "bob" {
		t.Fatalf("user.name=bob: %d", resp.StatusCode)
	}
	ck := authCookie(t, resp)
	if !strings.Contains(ck.Value, "t=simple") {
		t.Fatalf("cookie %q", ck.Value)
	}
	resp = get(t, srv.URL+"/x", ck)
	if resp.StatusCode != 200 || body(resp) != "bob" {
		t.Fatalf("with cookie: %d", resp.StatusCode)
	}
	c.add(DefaultValidity + time.Second)
	if resp := get(t, srv.URL+"/x", ck); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("expired cookie: %d", resp.StatusCode)
	}
}

// echoUser writes the request's authenticated user and the user.name it
// sees, "user" or "user|name".
func echoUser() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := User(r.Context())
		if !ok {
			u = "<none>"
		}
		if n := r.URL.Query().Get("user.name"); n != "" && n != u {
			u += "|" + n
		}
		w.Write([]byte(u))
	})
}

func get(t *testing.T, u string, c *http.Cookie) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c != nil {
		req.AddCookie(c)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func body(resp *http.Response) string {
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

func authCookie(t *testing.T, resp *http.Response) *http.Cookie {
	t.Helper()
	for _, c := range resp.Cookies() {
		if c.Name == CookieName && c.Value != "" {
			return c
		}
	}
	t.Fatalf("no %s cookie in %v", CookieName, resp.Header["Set-Cookie"])
	return nil
}

func TestDropUserName(t *testing.T) {
	for in, want := range map[string]string{
		"":                                     "",
		"op=OPEN":                              "op=OPEN",
		"op=OPEN&user.name=root":               "op=OPEN",
		"User.Name=root&OP=x&op=y":             "OP=x&op=y",
		"user%2Ename=root&path=%2Fa&user.name": "path=%2Fa",
	} {
		if got, _ := dropUserName(in); got != want {
			t.Errorf("dropUserName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTokenForgery: a name carrying the token's separators is refused
// when minting (else "x&u=hdfs&x=" would sign a token parsed as hdfs),
// and a signed string with a duplicate or unknown attribute is invalid.
func TestTokenForgery(t *testing.T) {
	exp := time.UnixMilli(1700000000123)
	for _, id := range []Identity{
		{User: "x", Principal: "x&u=hdfs&x=", Type: TypeKerberos},
		{User: "x&u=hdfs", Principal: "x@R", Type: TypeKerberos},
		{User: "a=b", Principal: "a@R", Type: TypeKerberos},
		{User: "", Principal: "a@R", Type: TypeKerberos},
	} {
		if tok, err := token(id, exp); err == nil {
			t.Errorf("token(%+v) = %q", id, tok)
		}
	}
	secret := []byte("secret")
	for _, raw := range []string{
		"u=x&p=x&u=hdfs&x=&t=kerberos&e=1700000000123",
		"u=alice&p=alice@R&t=kerberos&e=1700000000123&u=hdfs",
		"u=alice&p=alice@R&t=kerberos&e=1700000000123&x=1",
	} {
		if id, err := verify(secret, sign(secret, raw), exp.Add(-time.Second)); err == nil {
			t.Errorf("verify(%q) = %+v", raw, id)
		}
	}
	// Through the filter: simple mode answers such a user.name 403.
	f, err := New(Config{Type: TypeSimple, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	f.Wrap(echoUser()).ServeHTTP(rec, httptest.NewRequest("GET", "/x?user.name=x%26u%3Dhdfs", nil))
	if rec.Code != http.StatusForbidden || rec.Header().Get("Set-Cookie") != "" {
		t.Fatalf("user.name with '&': %d %v", rec.Code, rec.Header())
	}
}

// TestSecureSimpleActsAsStaticUser: in a secure cluster a simple filter
// trusts no user.name (nor the user cookie a page set): every request
// reaches the handler as dr.who with user.name removed.
func TestSecureSimpleActsAsStaticUser(t *testing.T) {
	c := conf.New()
	c.Set(KeySecurityAuthentication, "KERBEROS")
	cfg, err := ConfigFrom(c)
	if err != nil || !cfg.Secure || cfg.Type != TypeSimple {
		t.Fatalf("ConfigFrom: %+v %v", cfg, err)
	}
	for _, anon := range []bool{true, false} {
		cfg.AnonymousAllowed = anon
		f, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range []string{"/x", "/x?user.name=hdfs", "/x?User.Name=hdfs&op=y"} {
			rec := httptest.NewRecorder()
			f.Wrap(echoUser()).ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
			if rec.Code != 200 || rec.Body.String() != StaticUser {
				t.Errorf("anonymous.allowed=%v %s: %d %q, want %s", anon, target, rec.Code, rec.Body, StaticUser)
			}
		}
	}
}

// TestShortNameAuthToLocal: the filter maps principals by
// hadoop.security.auth_to_local as IPC does: a foreign realm maps only
// through a rule that names it.
func TestShortNameAuthToLocal(t *testing.T) {
	c := conf.New()
	c.Set(KeyType, TypeKerberos)
	c.Set("hadoop.security.auth_to_local", `RULE:[1:$1@$0](.*@PARTNER\.TEST)s/@.*//L RULE:[2:$1@$0](svc@R\.TEST)s/.*/daemon/ DEFAULT`)
	cfg, err := ConfigFrom(c)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := security.ParseAuthToLocal(cfg.AuthToLocal, cfg.AuthToLocalMechanism)
	if err != nil {
		t.Fatal(err)
	}
	rules.DefaultRealm = "R.TEST"
	f := &Filter{realm: "R.TEST", local: "R.TEST", rules: rules}
	for in, want := range map[string]string{"Bob@PARTNER.TEST": "bob", "svc/h@R.TEST": "daemon", "alice@R.TEST": "alice"} {
		name, realm, _ := strings.Cut(in, "@")
		if got, err := f.shortName(name, realm); err != nil || got != want {
			t.Errorf("shortName(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	if got, err := f.shortName("alice", "OTHER.TEST"); err == nil {
		t.Errorf("alice@OTHER.TEST mapped to %q without a rule", got)
	}
}
