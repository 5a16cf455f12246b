package trackers

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/localcluster"
	"github.com/stratafs/strata/internal/minikdc"
)

// TestSecureClusterSPNEGOEverywhere starts a cluster as `strata local
// -secure` does (localcluster.StartRealm's KDC, keytabs and keys) and
// checks with kinit and curl --negotiate that every daemon's web endpoint
// wants SPNEGO: the NameNode's pages and WebHDFS, the DataNode's, the
// JobTracker's and the TaskTracker's pages answer 401 without a ticket and
// 200 with one; one daemon's hadoop.auth cookie is good at another (a
// shared secret); the shuffle answers with its own job-token refusal, not
// a Negotiate challenge.
func TestSecureClusterSPNEGOEverywhere(t *testing.T) {
	if err := minikdc.Available(); err != nil {
		t.Skip(err)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	dir := t.TempDir()
	realm, err := localcluster.StartRealm(dir, "carol", []string{localcluster.DefaultHostName(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer realm.Close()
	// The daemons run in this process: krb5.conf (default_realm, which
	// auth_to_local maps) is the realm's, as strata local -secure sets it.
	t.Setenv("KRB5_CONFIG", realm.KDC.ConfigPath)
	cl, err := localcluster.Start(localcluster.Config{Conf: realm.Apply(testConf()), Dir: dir, DataNodes: 1,
		MapReduce: Start, DefaultJobTracker: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := realm.KDC.Kinit(realm.CCache, "carol", realm.Password, 0); err != nil {
		t.Fatal(err)
	}
	tr := cl.MapReduce.(*Trackers)
	port := func(addr string) string { return addr[strings.LastIndexByte(addr, ':'):] }
	ttPort := port(tr.TaskTrackers[0].Name())
	urls := []string{
		"http://localhost" + port(cl.NameNode.HTTPAddr()) + "/webhdfs/v1/?op=LISTSTATUS",
		"http://localhost" + port(cl.NameNode.HTTPAddr()) + "/",
		"http://localhost" + port(cl.DataNodes[0].HTTPAddr()) + "/",
		"http://localhost" + port(tr.JobTracker.HTTPAddr()) + "/",
		"http://localhost" + ttPort + "/",
	}
	curl := func(ccache string, args ...string) (code, out string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "curl", append([]string{"-sS", "--negotiate", "-u", ":", "-D", "-", "-o", "/dev/null", "-w", "%{http_code}"}, args...)...)
		cmd.Env = realm.KDC.Env(ccache)
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("curl %v: %v", args, err)
		}
		s := string(b)
		return s[len(s)-3:], s
	}
	for _, u := range urls {
		if code, out := curl(dir+"/none.cc", u); code != "401" || !strings.Contains(strings.ToLower(out), "www-authenticate: negotiate") {
			t.Errorf("%s without a ticket: %s", u, out)
		}
		if code, out := curl(realm.CCache, u); code != "200" {
			t.Errorf("%s after kinit: %s", u, out)
		}
	}
	// The NameNode's cookie, at the JobTracker, with no ticket.
	_, out := curl(realm.CCache, urls[0])
	i := strings.Index(out, "hadoop.auth=")
	if i < 0 {
		t.Fatalf("no cookie: %s", out)
	}
	ck := out[i:]
	ck = ck[:strings.IndexByte(ck, ';')]
	if !strings.Contains(ck, "u=carol&p=carol@"+realm.KDC.Realm) {
		t.Fatalf("cookie %s", ck)
	}
	if code, out := curl(dir+"/none.cc", "-b", ck, urls[3]); code != "200" {
		t.Errorf("NameNode's cookie at the JobTracker: %s", out)
	}
	// The shuffle: its own authentication, never SPNEGO.
	code, out := curl(realm.CCache, "http://localhost"+ttPort+"/mapOutput?job=job_1_0001&map=attempt_1_0001_m_000000_0&reduce=0")
	if code == "200" || strings.Contains(strings.ToLower(out), "negotiate") {
		t.Errorf("shuffle without a job token: %s", out)
	}
}
