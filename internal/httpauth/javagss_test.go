package httpauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/httpauth/spnegotest"
)

// mutualClient is what Hadoop's KerberosAuthenticator does with Java's
// GSS-API: a context requesting mutual authentication, its token sent as
// Negotiate, and the server's answer fed back to the context, which must
// then be established (Java checks the AP-REP against the session key
// and the authenticator's time).
const mutualClient = `
import java.net.*;
import java.util.Base64;
import org.ietf.jgss.*;

public class Mutual {
  public static void main(String[] a) throws Exception {
    GSSManager m = GSSManager.getInstance();
    GSSName server = m.createName("HTTP@localhost", GSSName.NT_HOSTBASED_SERVICE);
    GSSContext ctx = m.createContext(server, new Oid("1.3.6.1.5.5.2"), null, GSSContext.DEFAULT_LIFETIME);
    ctx.requestMutualAuth(true);
    byte[] tok = ctx.initSecContext(new byte[0], 0, 0);
    HttpURLConnection c = (HttpURLConnection) new URL(a[0]).openConnection();
    c.setRequestProperty("Authorization", "Negotiate " + Base64.getEncoder().encodeToString(tok));
    int code = c.getResponseCode();
    String h = c.getHeaderField("WWW-Authenticate");
    System.out.println("status " + code);
    if (h == null || !h.startsWith("Negotiate ")) { System.out.println("no token"); System.exit(2); }
    byte[] in = Base64.getDecoder().decode(h.substring(10).trim());
    ctx.initSecContext(in, 0, in.length);
    System.out.println("established " + ctx.isEstablished() + " mutual " + ctx.getMutualAuthState());
  }
}
`

// TestMutualAuthWithJavaGSS: Java's GSS-API, as Hadoop's clients use it,
// requests mutual authentication and accepts the filter's AP-REP; a
// corrupted AP-REP makes it fail, so the check is real.
func TestMutualAuthWithJavaGSS(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("java not installed")
	}
	realm := spnegotest.Start(t)
	f, err := httpauth.New(realm.Config())
	if err != nil {
		t.Fatal(err)
	}
	var corrupt atomic.Bool
	srv := httptest.NewServer(f.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := w.Header().Get("WWW-Authenticate"); corrupt.Load() && len(v) > 20 {
			w.Header().Set("WWW-Authenticate", v[:len(v)-8]+"AAAAAAAA")
		}
		u, _ := httpauth.User(r.Context())
		w.Write([]byte(u))
	})))
	defer srv.Close()
	src := filepath.Join(t.TempDir(), "Mutual.java")
	if err := os.WriteFile(src, []byte(mutualClient), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "java", "-Djava.security.krb5.conf="+realm.KDC.ConfigPath,
			"-Djavax.security.auth.useSubjectCredsOnly=false", src, spnegotest.URL(srv.Listener.Addr().String(), "/x"))
		cmd.Env = append(os.Environ(), "KRB5CCNAME=FILE:"+realm.CCache)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run()
	if err != nil || !strings.Contains(out, "status 200") || !strings.Contains(out, "established true mutual true") {
		t.Fatalf("Java GSS client: %v\n%s", err, out)
	}
	corrupt.Store(true)
	out, err = run()
	t.Logf("corrupted: %v\n%s", err, out)
	if err == nil || strings.Contains(out, "established true") {
		t.Fatalf("corrupted AP-REP accepted: %v\n%s", err, out)
	}
}
