// Package spnegotest sets up what tests of SPNEGO-protected endpoints
// need: a real KDC (internal/minikdc), the HTTP/localhost principal in a
// keytab, a user kinit'd into a credential cache, and curl --negotiate
// run with that realm's environment. Tests skip when the KDC's tools are
// not installed.
package spnegotest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/minikdc"
)

// User and Password are the kinit'd user's.
const (
	User     = "alice"
	Password = "alice-pw"
)

// Realm is a running KDC with an HTTP keytab and a user's ticket cache.
type Realm struct {
	KDC    *minikdc.KDC
	Dir    string
	Keytab string // HTTP/localhost's keys
	CCache string // User's ticket
}

// Start runs the KDC (skipping t when it cannot), makes HTTP/localhost
// and User, kinits User into CCache, and points KRB5_CONFIG at the
// realm's krb5.conf for the test. The KDC stops at t's cleanup.
func Start(t testing.TB) *Realm {
	t.Helper()
	if err := minikdc.Available(); err != nil {
		t.Skip(err)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	dir := t.TempDir()
	kdc, err := minikdc.Start(dir, minikdc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kdc.Close() })
	// The filter maps principals of krb5.conf's default realm.
	t.Setenv("KRB5_CONFIG", kdc.ConfigPath)
	r := &Realm{KDC: kdc, Dir: dir, Keytab: filepath.Join(dir, "http.keytab"), CCache: filepath.Join(dir, "alice.cc")}
	if err := kdc.AddService(r.Keytab, "HTTP/localhost"); err != nil {
		t.Fatal(err)
	}
	if err := kdc.AddUser(User, Password); err != nil {
		t.Fatal(err)
	}
	if err := kdc.Kinit(r.CCache, User, Password, 0); err != nil {
		t.Fatal(err)
	}
	return r
}

// Config is a kerberos httpauth.Config for a server on localhost.
func (r *Realm) Config() httpauth.Config {
	return httpauth.Config{Type: httpauth.TypeKerberos, Principal: "HTTP/_HOST@" + r.KDC.Realm, Host: "localhost", Keytab: r.Keytab}
}

// Conf is the same as hadoop.http.authentication.* settings.
func (r *Realm) Conf() map[string]string {
	return map[string]string{
		httpauth.KeyType:      httpauth.TypeKerberos,
		httpauth.KeyPrincipal: "HTTP/_HOST@" + r.KDC.Realm,
		httpauth.KeyKeytab:    r.Keytab,
	}
}

// Curl runs curl against url with ccache's ticket (none when ccache is
// "": an empty cache) and extra arguments, and returns the HTTP status,
// the response headers and body. --negotiate -u : makes curl answer the
// Negotiate challenge with GSS-API, as a user would.
func (r *Realm) Curl(t testing.TB, ccache, url string, extra ...string) (int, string, string) {
	t.Helper()
	if ccache == "" {
		ccache = filepath.Join(r.Dir, "empty.cc")
	}
	hdr := filepath.Join(t.TempDir(), "headers")
	args := append([]string{"-sS", "--negotiate", "-u", ":", "-D", hdr, "-o", "-", "-w", "\n%{http_code}", "--max-time", "20"}, extra...)
	args = append(args, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "curl", args...)
	cmd.Env = append(curlEnv(), r.KDC.Env(ccache)...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("curl %s: %v: %s", url, err, stderr.String())
	}
	s := out.String()
	i := strings.LastIndexByte(s, '\n')
	code, err := strconv.Atoi(s[i+1:])
	if err != nil {
		t.Fatalf("curl %s: no status in %q", url, s)
	}
	h, _ := os.ReadFile(hdr)
	return code, string(h), s[:i]
}

// curlEnv is the test's environment without Kerberos or proxy settings.
func curlEnv() []string {
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		if strings.HasPrefix(k, "KRB5") || strings.Contains(strings.ToLower(k), "proxy") {
			continue
		}
		env = append(env, e)
	}
	return env
}

// URL is http://localhost:<port of addr><path>, the host name the
// HTTP/localhost principal is for.
func URL(addr, path string) string {
	i := strings.LastIndexByte(addr, ':')
	return fmt.Sprintf("http://localhost%s%s", addr[i:], path)
}
