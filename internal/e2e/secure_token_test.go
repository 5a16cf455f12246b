package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/testcluster"
)

// TestSecureTokenAuth: a process without a Kerberos ticket reaches a
// secure NameNode with a delegation token from a token file
// (HADOOP_TOKEN_FILE_LOCATION), authenticating with TOKEN (DIGEST-MD5) at
// privacy; it acts as the token's owner, cannot get tokens with a token,
// and is refused once the token is cancelled.
func TestSecureTokenAuth(t *testing.T) {
	r := startRealm(t)
	const prot = "privacy"
	r.testLogin(t, r.settings(prot))
	p := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1, Conf: r.settings(prot)})
	tokFile := filepath.Join(r.dir, "alice.token")
	if _, errs, code := r.runAs(p, prot, r.alice, nil, "fetchdt", "--renewer", "alice", tokFile); code != 0 {
		t.Fatalf("fetchdt as alice: %s", errs)
	}
	if _, errs, code := r.runAs(p, prot, r.nn_, nil, "dfs", "-mkdir", "-p", "/user/alice"); code != 0 {
		t.Fatalf("mkdir: %s", errs)
	}
	if _, errs, code := r.runAs(p, prot, r.nn_, nil, "dfs", "-chown", "alice", "/user/alice"); code != 0 {
		t.Fatalf("chown: %s", errs)
	}
	noTicket := filepath.Join(r.dir, "none.cc")
	withToken := func(args ...string) (string, string, int) {
		t.Setenv("HADOOP_TOKEN_FILE_LOCATION", tokFile)
		defer os.Unsetenv("HADOOP_TOKEN_FILE_LOCATION")
		return r.runAs(p, prot, noTicket, nil, args...)
	}
	// Without a ticket or a token: refused.
	if _, errs, code := r.runAs(p, prot, noTicket, nil, "dfs", "-ls", "/"); code == 0 || !strings.Contains(errs, "SIMPLE authentication is not enabled.  Available:[TOKEN, KERBEROS]") {
		t.Fatalf("no credentials: exit %d, %s", code, errs)
	}
	if _, errs, code := withToken("dfs", "-mkdir", "/user/alice/by-token"); code != 0 {
		t.Fatalf("mkdir with the token: %s", errs)
	}
	out, errs, code := withToken("dfs", "-ls", "/user/alice")
	if code != 0 || !strings.Contains(out, "alice") || !strings.Contains(out, "/user/alice/by-token") {
		t.Fatalf("ls with the token: exit %d\n%s%s", code, out, errs)
	}
	if log := p.NameNodeProcess().Log(); !strings.Contains(log, "Auth successful for alice (auth:TOKEN)") {
		t.Fatalf("the NameNode logged no TOKEN authentication:\n%s", log)
	}
	// A token does not beget tokens.
	if _, errs, code := withToken("fetchdt", filepath.Join(r.dir, "second.token")); code == 0 || !strings.Contains(errs, "Delegation Token can be issued only with kerberos or web authentication") {
		t.Fatalf("fetchdt with a token: exit %d, %s", code, errs)
	}
	// Cancelled (by its owner, with her ticket): the token is refused.
	if _, errs, code := r.runAs(p, prot, r.alice, nil, "fetchdt", "--cancel", tokFile); code != 0 {
		t.Fatalf("fetchdt --cancel: %s", errs)
	}
	_, errs, code = withToken("dfs", "-ls", "/user/alice")
	if code == 0 || !strings.Contains(errs, "token (HDFS_DELEGATION_TOKEN token 1 for alice with renewer alice) can't be found in cache") {
		t.Fatalf("ls with a cancelled token: exit %d, %s", code, errs)
	}
}
