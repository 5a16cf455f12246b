package httpauth

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/spnego"

	"github.com/stratafs/strata/internal/minikdc"
)

// TestSPNEGOWithGokrb5Client runs a real KDC and authenticates to the
// filter with gokrb5's SPNEGO client: no credentials is the Negotiate
// challenge; a ticket is 200 as the principal's short name with a signed
// hadoop.auth cookie; the cookie alone then suffices until it expires or is
// changed; user.name cannot override the authenticated user.
func TestSPNEGOWithGokrb5Client(t *testing.T) {
	if err := minikdc.Available(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	kdc, err := minikdc.Start(dir, minikdc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kdc.Close()
	t.Setenv("KRB5_CONFIG", kdc.ConfigPath) // default_realm, for auth_to_local
	kt := filepath.Join(dir, "http.keytab")
	if err := kdc.AddService(kt, "HTTP/localhost", "nn/localhost"); err != nil {
		t.Fatal(err)
	}
	if err := kdc.AddUser("alice", "alice-pw"); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Now()}
	f, err := New(Config{Type: TypeKerberos, Principal: "HTTP/_HOST@" + kdc.Realm, Host: "localhost", Keytab: kt, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	if f.Principal() != "HTTP/localhost@"+kdc.Realm {
		t.Fatalf("principal %q", f.Principal())
	}
	srv := httptest.NewServer(f.Wrap(echoUser()))
	defer srv.Close()

	resp := get(t, srv.URL+"/page", nil)
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != "Negotiate" {
		t.Fatalf("no credentials: %d %v", resp.StatusCode, resp.Header)
	}

	kcfg, err := config.Load(kdc.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cl := client.NewWithPassword("alice", kdc.Realm, "alice-pw", kcfg, client.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		t.Fatal(err)
	}
	defer cl.Destroy()
	sc := spnego.NewClient(cl, nil, "HTTP/localhost")
	resp, err = sc.Get(srv.URL + "/page?user.name=root")
	if err != nil {
		t.Fatal(err)
	}
	ck := authCookie(t, resp)
	if got := body(resp); resp.StatusCode != 200 || got != "alice" {
		t.Fatalf("SPNEGO: %d %q (user.name must be dropped)", resp.StatusCode, got)
	}
	raw := strings.Trim(ck.Value, `"`)
	if !strings.HasPrefix(raw, "u=alice&p=alice@"+kdc.Realm+"&t=kerberos&e=") || !strings.Contains(raw, "&s=") {
		t.Fatalf("cookie %q", raw)
	}
	if setc := resp.Header.Get("Set-Cookie"); !strings.Contains(setc, "Path=/") || !strings.Contains(setc, "HttpOnly") {
		t.Fatalf("Set-Cookie %q", setc)
	}

	// The cookie alone, without a ticket.
	resp = get(t, srv.URL+"/page?user.name=root", ck)
	if got := body(resp); resp.StatusCode != 200 || got != "alice" {
		t.Fatalf("cookie: %d %q", resp.StatusCode, got)
	}
	// Tampered: another user, same signature.
	bad := *ck
	bad.Value = strings.Replace(ck.Value, "u=alice", "u=root", 1)
	if resp := get(t, srv.URL+"/page", &bad); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != "Negotiate" {
		t.Fatalf("tampered cookie: %d", resp.StatusCode)
	}
	// A cookie is not valid for another filter (another secret).
	f2, err := New(Config{Type: TypeKerberos, Principal: "HTTP/localhost@" + kdc.Realm, Keytab: kt, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(f2.Wrap(echoUser()))
	defer srv2.Close()
	if resp := get(t, srv2.URL+"/page", ck); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("cookie of another secret: %d", resp.StatusCode)
	}
	// Expired: token.validity later.
	c.add(DefaultValidity + time.Second)
	resp = get(t, srv.URL+"/page", ck)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("expired cookie: %d %v", resp.StatusCode, resp.Header)
	}
	// A ticket for another service in the keytab is not for this filter.
	sc2 := spnego.NewClient(cl, nil, "nn/localhost")
	resp, err = sc2.Get(srv.URL + "/page")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("ticket for nn/localhost: %d", resp.StatusCode)
	}
	// An oversized Authorization header is refused before decoding.
	req, _ := http.NewRequest("GET", srv.URL+"/page", nil)
	req.Header.Set("Authorization", "Negotiate "+strings.Repeat("A", MaxAuthHeader))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("large header: %d", resp.StatusCode)
	}
	// Garbage after Negotiate is a 401, not a crash.
	req.Header.Set("Authorization", "Negotiate AAAA")
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("garbage token: %v %v", resp, err)
	}
}
