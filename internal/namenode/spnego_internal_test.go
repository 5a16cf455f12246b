package namenode

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/httpauth/spnegotest"
)

var setAuthCookie = regexp.MustCompile(`(?m)^Set-Cookie: hadoop\.auth=("[^"]*")`)

// TestSPNEGOWebHDFSAndPagesWithCurl runs a NameNode with
// hadoop.http.authentication.type=kerberos against a real KDC and talks to
// it with curl --negotiate, as a user would: WebHDFS and the pages answer
// 200 after kinit and 401 without a ticket or with an expired one; the
// SPNEGO user replaces user.name; the hadoop.auth cookie is reused and a
// tampered one refused.
func TestSPNEGOWebHDFSAndPagesWithCurl(t *testing.T) {
	realm := spnegotest.Start(t)
	nn := startTestNameNode(t, func(c *Config) { c.HTTPAuth = realm.Config() })
	addr := nn.HTTPAddr()
	list := spnegotest.URL(addr, "/webhdfs/v1/?op=LISTSTATUS")

	code, hdr, _ := realm.Curl(t, "", list)
	if code != 401 || !strings.Contains(strings.ToLower(hdr), "www-authenticate: negotiate") {
		t.Fatalf("no ticket: %d\n%s", code, hdr)
	}
	code, hdr, body := realm.Curl(t, realm.CCache, list)
	if code != 200 || !strings.Contains(body, `"FileStatuses"`) {
		t.Fatalf("after kinit: %d %s\n%s", code, body, hdr)
	}
	m := setAuthCookie.FindStringSubmatch(hdr)
	if m == nil {
		t.Fatalf("no hadoop.auth cookie:\n%s", hdr)
	}
	cookie := m[1]
	if !strings.HasPrefix(cookie, `"u=alice&p=alice@`+realm.KDC.Realm+`&t=kerberos&e=`) {
		t.Fatalf("cookie %s", cookie)
	}

	// The SPNEGO user acts; user.name is ignored.
	code, _, body = realm.Curl(t, realm.CCache, spnegotest.URL(addr, "/webhdfs/v1/?op=GETHOMEDIRECTORY&user.name=hdfs"))
	if code != 200 || !strings.Contains(body, `"/user/alice"`) {
		t.Fatalf("GETHOMEDIRECTORY as alice with user.name=hdfs: %d %s", code, body)
	}
	// MKDIRS under / (owned by the superuser hdfs) is refused to alice
	// even when she names hdfs.
	code, _, body = realm.Curl(t, realm.CCache, spnegotest.URL(addr, "/webhdfs/v1/x?op=MKDIRS&user.name=hdfs"), "-X", "PUT")
	if code != 403 || !strings.Contains(body, "user=alice") {
		t.Fatalf("MKDIRS as alice: %d %s", code, body)
	}

	for _, p := range []string{"/", "/dfshealth.html", "/datanodes", "/explorer?path=/&user.name=hdfs", "/jmx", "/stacks", "/status"} {
		if code, _, _ := realm.Curl(t, "", spnegotest.URL(addr, p)); code != 401 {
			t.Errorf("%s without a ticket: %d", p, code)
		}
		if code, _, body := realm.Curl(t, realm.CCache, spnegotest.URL(addr, p)); code != 200 {
			t.Errorf("%s after kinit: %d %.200s", p, code, body)
		}
	}
	// The explorer page shows the SPNEGO user, not user.name.
	if _, _, body := realm.Curl(t, realm.CCache, spnegotest.URL(addr, "/explorer?path=/&user.name=hdfs")); !strings.Contains(body, `value="alice"`) {
		t.Errorf("explorer does not act as alice")
	}
	// fsck runs as alice (not the superuser), whatever user.name or ugi say.
	if code, _, body := realm.Curl(t, realm.CCache, spnegotest.URL(addr, "/fsck?path=/&ugi=hdfs&user.name=hdfs")); code != 403 || !strings.Contains(body, "alice") {
		t.Errorf("fsck as alice: %d %s", code, body)
	}

	// The cookie alone, with no ticket at all.
	code, _, body = realm.Curl(t, "", list, "-b", "hadoop.auth="+cookie)
	if code != 200 || !strings.Contains(body, `"FileStatuses"`) {
		t.Fatalf("cookie reused: %d %s", code, body)
	}
	tampered := strings.Replace(cookie, "u=alice", "u=hdfs", 1)
	if code, _, _ := realm.Curl(t, "", list, "-b", "hadoop.auth="+tampered); code != 401 {
		t.Fatalf("tampered cookie: %d", code)
	}
	// The HA peers' endpoints stay open to peers.
	if code, _, _ := realm.Curl(t, "", spnegotest.URL(addr, "/strata/ha/version")); code == 401 {
		t.Fatalf("/strata/ha/version needs SPNEGO")
	}

	// A ticket that expires: good while valid, 401 after (lifetime 2 s,
	// the KDC's clock skew 2 s).
	short := realm.Dir + "/short.cc"
	if err := realm.KDC.Kinit(short, spnegotest.User, spnegotest.Password, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := realm.Curl(t, short, list); code != 200 {
		t.Fatalf("short ticket while valid: %d", code)
	}
	time.Sleep(5 * time.Second)
	if code, _, _ := realm.Curl(t, short, list); code != 401 {
		t.Fatalf("expired ticket: %d", code)
	}
}

// TestConfigWebHDFSAuth: with hadoop.security.authentication=kerberos,
// WebHDFS gets a Kerberos filter of its own, from dfs.web.authentication.*
// or else the hadoop.http.authentication keys.
func TestConfigWebHDFSAuth(t *testing.T) {
	c := baseConf()
	c.Set("hadoop.http.authentication.kerberos.keytab", "/etc/http.keytab")
	cfg, err := ConfigFrom(c)
	if err != nil || cfg.WebHDFSAuth.Type != "" {
		t.Fatalf("simple: %+v %v", cfg.WebHDFSAuth, err)
	}
	c.Set("hadoop.security.authentication", "kerberos")
	if cfg, err = ConfigFrom(c); err != nil || cfg.HTTPAuth.Type != "simple" || cfg.WebHDFSAuth.Type != "kerberos" ||
		cfg.WebHDFSAuth.Keytab != "/etc/http.keytab" || cfg.WebHDFSAuth.Principal != "HTTP/_HOST" {
		t.Fatalf("secure: %+v %v", cfg.WebHDFSAuth, err)
	}
	c.Set("dfs.web.authentication.kerberos.principal", "HTTP/nn.example@R")
	c.Set("dfs.web.authentication.kerberos.keytab", "/etc/web.keytab")
	if cfg, err = ConfigFrom(c); err != nil || cfg.WebHDFSAuth.Keytab != "/etc/web.keytab" || cfg.WebHDFSAuth.Principal != "HTTP/nn.example@R" {
		t.Fatalf("dfs.web keys: %+v %v", cfg.WebHDFSAuth, err)
	}
}

// TestSecureWebHDFSWithSimplePages: in secure mode WebHDFS needs SPNEGO
// even when the pages are simple (Hadoop's NameNode); without a keytab
// for it, WebHDFS refuses every request rather than trust user.name.
func TestSecureWebHDFSWithSimplePages(t *testing.T) {
	realm := spnegotest.Start(t)
	wc := realm.Config()
	wc.Host = ""
	nn := startTestNameNode(t, func(c *Config) { c.WebHDFSAuth = wc })
	addr := nn.HTTPAddr()
	list := spnegotest.URL(addr, "/webhdfs/v1/?op=LISTSTATUS&user.name=hdfs")
	if code, _, _ := realm.Curl(t, "", list); code != 401 {
		t.Fatalf("WebHDFS without a ticket: %d", code)
	}
	code, hdr, _ := realm.Curl(t, realm.CCache, list)
	if code != 200 {
		t.Fatalf("WebHDFS after kinit: %d", code)
	}
	cookie := setAuthCookie.FindStringSubmatch(hdr)
	if cookie == nil {
		t.Fatalf("no cookie:\n%s", hdr)
	}
	if code, _, _ := realm.Curl(t, "", list, "-b", "hadoop.auth="+cookie[1]); code != 200 {
		t.Fatalf("WebHDFS with its cookie: %d", code)
	}
	if code, _, _ := realm.Curl(t, "", spnegotest.URL(addr, "/")); code != 200 {
		t.Fatalf("simple page: %d", code)
	}
	// The pages that act as a user need SPNEGO too: user.name naming the
	// superuser does not browse or fsck as it.
	for _, p := range []string{"/explorer?path=/&user.name=hdfs", "/explorer.html?user.name=hdfs", "/fsck?path=/&user.name=hdfs", "/fsck?path=/&ugi=hdfs", "/fsckui?path=/&user.name=hdfs"} {
		if code, _, body := realm.Curl(t, "", spnegotest.URL(addr, p)); code != 401 {
			t.Errorf("%s without a ticket: %d %.200s", p, code, body)
		}
	}
	if code, _, body := realm.Curl(t, realm.CCache, spnegotest.URL(addr, "/explorer?path=/&user.name=hdfs")); code != 200 || !strings.Contains(body, `value="alice"`) {
		t.Errorf("explorer after kinit: %d, not as alice", code)
	}
	if code, _, body := realm.Curl(t, realm.CCache, spnegotest.URL(addr, "/fsck?path=/&user.name=hdfs")); code != 403 || !strings.Contains(body, "alice") {
		t.Errorf("fsck after kinit: %d %s (must run as alice)", code, body)
	}

	wc.Keytab = ""
	nn2 := startTestNameNode(t, func(c *Config) { c.WebHDFSAuth = wc })
	code, _, body := realm.Curl(t, realm.CCache, spnegotest.URL(nn2.HTTPAddr(), "/webhdfs/v1/?op=LISTSTATUS&user.name=hdfs"))
	if code == 200 || !strings.Contains(body, "dfs.web.authentication.kerberos.keytab") {
		t.Fatalf("WebHDFS without a keytab: %d %s", code, body)
	}
	for _, p := range []string{"/explorer?path=/&user.name=hdfs", "/fsck?path=/&user.name=hdfs"} {
		if code, _, body := realm.Curl(t, "", spnegotest.URL(nn2.HTTPAddr(), p)); code != 403 || !strings.Contains(body, "dfs.web.authentication.kerberos.keytab") {
			t.Errorf("%s without a keytab: %d %s", p, code, body)
		}
	}
}

// TestSecureHAEndpoints: in secure mode the NameNode-to-NameNode
// endpoints (the digest hashes the image under the namespace lock; the
// version names the cluster's ids) need SPNEGO from a NameNode principal:
// nothing without a ticket, 403 for a user, served to nn/localhost as a
// peer's client (-bootstrapStandby's fetchVersion) logs in from its keytab.
func TestSecureHAEndpoints(t *testing.T) {
	realm := spnegotest.Start(t)
	nnKeytab := filepath.Join(realm.Dir, "nn.keytab")
	if err := realm.KDC.AddService(nnKeytab, "nn/localhost"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KRB5_CONFIG", realm.KDC.ConfigPath)
	nn := startTestNameNode(t, func(c *Config) {
		c.WebHDFSAuth = realm.Config()
		c.NNPrincipal, c.NNKeytab = "nn/_HOST@"+realm.KDC.Realm, nnKeytab
	})
	addr := nn.HTTPAddr()
	for _, p := range []string{digestPath, versionPath} {
		if code, _, body := realm.Curl(t, "", spnegotest.URL(addr, p)); code != 401 || strings.Contains(body, "sha256") || strings.Contains(body, "clusterID") {
			t.Errorf("%s without a ticket: %d %s", p, code, body)
		}
		if code, _, body := realm.Curl(t, realm.CCache, spnegotest.URL(addr, p)); code != 403 || !strings.Contains(body, "Only NameNodes") {
			t.Errorf("%s as alice: %d %s", p, code, body)
		}
	}
	cfg := nn.cfg
	v, err := fetchVersion(&cfg, spnegotest.URL(addr, "")[len("http://"):])
	if err != nil || v.ClusterID != nn.edit.Version().ClusterID {
		t.Fatalf("fetchVersion as nn/localhost: %+v %v", v, err)
	}
	// Without a keytab the peer cannot log in, and says which keys to set.
	cfg.NNKeytab = ""
	if _, err := fetchVersion(&cfg, addr); err == nil || !strings.Contains(err.Error(), keyNNKeytab) {
		t.Fatalf("fetchVersion without a keytab: %v", err)
	}
}
