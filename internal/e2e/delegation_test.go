package e2e

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/testcluster"
)

// TestFetchdtThroughTheBinary: `strata fetchdt` fetches a delegation
// token into a Hadoop token file, prints, renews and cancels it; the
// token authenticates WebHDFS requests as its owner, survives a kill -9
// of the NameNode and, once cancelled, is refused across a restart.
func TestFetchdtThroughTheBinary(t *testing.T) {
	c := testcluster.NewProcess(t, testcluster.Config{Conf: map[string]string{"dfs.namenode.delegation.token.always-use": "true"}})
	su := c.Superuser()
	run := func(user string, args ...string) (string, string, int) { t.Helper(); return c.Run(user, args...) }
	mustRun(t, run, su, "dfs", "-mkdir", "-p", "/home/alice")
	mustRun(t, run, su, "dfs", "-chown", "alice", "/home/alice")
	mustRun(t, run, su, "dfs", "-chmod", "700", "/home/alice")

	file := filepath.Join(t.TempDir(), "alice.token")
	// A renewer too long to serialize is refused and logs nothing (the
	// token below is still sequence number 1); the NameNode goes on.
	if _, errb, code := run("alice", "fetchdt", "--renewer", strings.Repeat("r", delegation.MaxUserName+1), file); code == 0 ||
		!strings.Contains(errb, "java.io.IOException: renewer is too long to be serialized!") {
		t.Errorf("long renewer: %d %q", code, errb)
	}
	// An existing token file is made the user's alone.
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, run, "alice", "fetchdt", "--renewer", "alice", file)
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v %v", st.Mode().Perm(), err)
	}
	if !regexp.MustCompile(`^Fetched token for \S+:\d+ into ` + regexp.QuoteMeta("file:"+file) + "\n$").MatchString(out) {
		t.Errorf("fetch: %q", out)
	}
	data, err := os.ReadFile(file)
	if err != nil || !strings.HasPrefix(string(data), "HDTS\x00") {
		t.Fatalf("token file %q %v", data, err)
	}
	tokens, err := delegation.ReadCredentials(data)
	if err != nil || len(tokens) != 1 || tokens[0].Token.Kind != delegation.Kind {
		t.Fatalf("token file: %+v %v", tokens, err)
	}
	tok := tokens[0].Token
	out = mustRun(t, run, "bob", "fetchdt", "--print", file)
	if !regexp.MustCompile(`^Token \(owner=alice, renewer=alice, realUser=, issueDate=\d+, maxDate=\d+, sequenceNumber=1, masterKeyId=1\) for \S+\n$`).MatchString(out) {
		t.Errorf("print: %q", out)
	}

	var nnHTTP string
	for _, a := range c.ClientArgs() {
		if v, ok := strings.CutPrefix(a, "dfs.namenode.http-address="); ok {
			nnHTTP = v
		}
	}
	list := func(what string, want int) {
		t.Helper()
		resp, err := http.Get("http://" + nnHTTP + "/webhdfs/v1/home/alice?op=LISTSTATUS&delegation=" + url.QueryEscape(tok.EncodeToURLString()))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d %s, want %d", what, resp.StatusCode, body, want)
		}
		if want == 403 && !strings.Contains(string(body), `"javaClassName":"org.apache.hadoop.security.token.SecretManager$InvalidToken"`) {
			t.Errorf("%s: %s", what, body)
		}
	}
	list("token", 200)

	c.KillNameNode()
	c.StartNameNode()
	list("token after kill -9", 200)
	mustRun(t, run, "alice", "fetchdt", "--renew", file)
	if _, errb, code := run("bob", "fetchdt", "--renew", file); code == 0 ||
		!strings.Contains(errb, "org.apache.hadoop.security.AccessControlException: bob tries to renew a token (HDFS_DELEGATION_TOKEN token 1 for alice with renewer alice) with non-matching renewer alice") {
		t.Errorf("renew by bob: %d %s", code, errb)
	}
	if _, errb, code := run("bob", "fetchdt", "--cancel", file); code == 0 || !strings.Contains(errb, "bob is not authorized to cancel the token") {
		t.Errorf("cancel by bob: %d %s", code, errb)
	}
	mustRun(t, run, "alice", "fetchdt", "--cancel", file)
	list("cancelled token", 403)
	c.KillNameNode()
	c.StartNameNode()
	list("cancelled token after kill -9", 403)
	if _, errb, code := run("alice", "fetchdt", "--renew", file); code == 0 || !strings.Contains(errb, "SecretManager$InvalidToken") {
		t.Errorf("renew of the cancelled token: %d %s", code, errb)
	}
	if _, errb, code := run("alice", "fetchdt", "--print", "--cancel", file); code != 1 || !strings.Contains(errb, "ERROR: Only specify cancel, renew or print.") {
		t.Errorf("two actions: %d %s", code, errb)
	}
}
