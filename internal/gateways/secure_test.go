package gateways_test

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	gohdfs "github.com/colinmarc/hdfs/v2"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/fusefs"
	"github.com/stratafs/strata/internal/gwtest"
	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/localcluster"
	"github.com/stratafs/strata/internal/minikdc"
	"github.com/stratafs/strata/internal/nfsgw"
	"github.com/stratafs/strata/internal/security"
	"github.com/stratafs/strata/internal/testcluster"
)

// TestGatewaysSecure is TestGateways on a secure cluster: Kerberos on
// IPC, SPNEGO on WebHDFS, data transfer protection, block tokens. The
// FUSE mount and the NFS gateway log in as their own principals
// (fuse/localhost, nfs/localhost) and act for each calling user as
// Hadoop's proxy users, which hadoop.proxyuser.* allows; WebHDFS callers
// and the direct clients authenticate as each user with Kerberos.
func TestGatewaysSecure(t *testing.T) { testGateways(t, newSecureEnv(t)) }

// secureUsers are the Kerberos identities of a secure env: a login per
// user (the superuser nn, owner and intruder) and a SPNEGO client each.
type secureUsers struct {
	logins map[string]*security.Login
	web    map[string]*httpauth.Client
}

func newSecureEnv(t *testing.T) *env {
	gwtest.NeedFUSE(t)
	if err := minikdc.Available(); err != nil {
		t.Skip(err)
	}
	realm, err := localcluster.StartRealm(t.TempDir(), "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { realm.Close() })
	t.Setenv("KRB5_CONFIG", realm.KDC.ConfigPath)
	usersKT := filepath.Join(realm.Dir, "users.keytab")
	gwKT := filepath.Join(realm.Dir, "gateways.keytab")
	if err := realm.KDC.AddService(usersKT, owner, intruder); err != nil {
		t.Fatal(err)
	}
	if err := realm.KDC.AddService(gwKT, "nfs/localhost", "fuse/localhost"); err != nil {
		t.Fatal(err)
	}
	cc := realm.ServerConf()
	// The NFS gateway may act for anyone from this host; the mount only
	// for the users of this test.
	cc["hadoop.proxyuser.nfs.hosts"] = "127.0.0.1"
	cc["hadoop.proxyuser.nfs.users"] = "*"
	cc["hadoop.proxyuser.fuse.hosts"] = "127.0.0.1"
	cc["hadoop.proxyuser.fuse.users"] = "nn," + owner + "," + intruder
	c := testcluster.New(t, testcluster.Config{DataNodes: 1, Conf: cc})
	su := c.Superuser()
	if su != "nn" {
		t.Fatalf("superuser %q, want the NameNode principal's user nn", su)
	}

	login := func(principal, kt string) *security.Login {
		t.Helper()
		l, err := security.LoginFromKeytab(principal+"@"+realm.KDC.Realm, kt, nil)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	spnego := func(principal, kt string) *httpauth.Client {
		t.Helper()
		wc, err := httpauth.NewKeytabClient(noRedirect, principal+"@"+realm.KDC.Realm, kt)
		if err != nil {
			t.Fatal(err)
		}
		return wc
	}
	k := &secureUsers{
		logins: map[string]*security.Login{
			su: login("nn/localhost", realm.Keytabs["nn"]), owner: login(owner, usersKT), intruder: login(intruder, usersKT),
		},
		web: map[string]*httpauth.Client{
			su: spnego("nn/localhost", realm.Keytabs["nn"]), owner: spnego(owner, usersKT), intruder: spnego(intruder, usersKT),
		},
	}
	for u, l := range k.logins {
		if l.User != u {
			t.Fatalf("the login of %s is %s's", u, l.User)
		}
	}
	base := hdfs.Options{Replication: 1, BlockSize: blockSize, DataTransferProtection: "authentication"}
	withLogin := func(l *security.Login) hdfs.Options { o := base; o.Login = l; return o }

	e := &env{t: t, c: c, su: su, web: "http://" + c.NameNode().HTTPAddr() + "/webhdfs/v1", krb: k}
	fuseLogin, nfsLogin := login("fuse/localhost", gwKT), login("nfs/localhost", gwKT)
	e.mnt, _ = gwtest.MountFUSE(t, gwtest.ClientFactory(c, withLogin(fuseLogin)),
		fusefs.Options{User: su, AllowOther: true, AttrTimeout: -1, EntryTimeout: -1})
	e.nfs, _ = gwtest.ServeNFS(t, gwtest.ClientFactory(c, withLogin(nfsLogin)),
		nfsgw.Options{IDs: gwtest.IDs{0: su, uidOwner: owner, uidIntruder: intruder}})
	e.nfsSU = e.nfsConn(0)

	o := withLogin(k.logins[su])
	o.Addr, o.User = c.Addr(), su
	if e.hc, err = hdfs.New(o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.hc.Close() })
	e.gc = e.goClient(su)

	// What secure mode adds: a gateway acts only for whom its rules
	// allow, and nobody gets in without Kerberos.
	o = withLogin(fuseLogin)
	o.Addr, o.User = c.Addr(), "mallory"
	if out, err := hdfs.New(o); err == nil {
		_, err = out.Stat(t.Context(), "/")
		out.Close()
		if err == nil || !strings.Contains(err.Error(), "User: fuse is not allowed to impersonate mallory") {
			t.Errorf("the FUSE principal acting for a user its rules do not name: %v", err)
		}
	}
	if st, _, body := e.webURL("GET", e.web+"/?op=LISTSTATUS&user.name="+su, nil); st != http.StatusUnauthorized {
		t.Errorf("WebHDFS without SPNEGO naming the superuser: %d %s", st, body)
	}
	return e
}

// goOptions are colinmarc/hdfs's options for user: Kerberos with the
// user's login, data transfer protection on.
func (k *secureUsers) goOptions(t *testing.T, addr, user string) gohdfs.ClientOptions {
	l := k.logins[user]
	if l == nil {
		t.Fatalf("no Kerberos login for %s", user)
	}
	return gohdfs.ClientOptions{
		Addresses: []string{addr}, KerberosClient: l.Client, KerberosServicePrincipleName: "nn/localhost",
		DataTransferProtection: "authentication",
	}
}

// webDo sends a bodiless request to the NameNode with SPNEGO as user.
func (k *secureUsers) webDo(t *testing.T, method, u, user string) (int, http.Header, []byte) {
	t.Helper()
	wc := k.web[user]
	if wc == nil {
		t.Fatalf("no SPNEGO client for %s", user)
	}
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := wc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	return resp.StatusCode, resp.Header, b
}
