package localcluster

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/minikdc"
	"github.com/stratafs/strata/internal/security"
)

// SecureHost is the host of a local secure cluster's service principals
// (nn/localhost, HTTP/localhost, ...): its daemons bind loopback
// addresses, for which _HOST is "localhost".
const SecureHost = "localhost"

// Realm is `strata local -secure`'s Kerberos side: a KDC (package
// minikdc) in <dir>/kdc, a keytab per daemon, and a password principal
// for the user. A new realm is made on every start (its keys and the
// user's password change); nothing of it outlives Close but its files.
type Realm struct {
	KDC      *minikdc.KDC
	Dir      string // <dir>/kdc
	User     string // the user principal's short name
	Password string
	// Keytabs are the keytab files by service: nn, dn, jt, tt and HTTP.
	Keytabs map[string]string
	// SecretFile signs the web endpoints' hadoop.auth cookies; every
	// daemon shares it, so one SPNEGO login serves all the web UIs on the
	// host (a cookie is sent to every port of it).
	SecretFile string
	// CCache is where KinitLine puts the user's ticket.
	CCache string
}

// Services are the daemons' principal names, as Hadoop's examples name
// them, with the configuration keys of their principal and keytab.
var Services = []struct{ Name, PrincipalKey, KeytabKey string }{
	{"nn", "dfs.namenode.kerberos.principal", "dfs.namenode.keytab.file"},
	{"dn", "dfs.datanode.kerberos.principal", "dfs.datanode.keytab.file"},
	{"jt", "mapreduce.jobtracker.kerberos.principal", "mapreduce.jobtracker.keytab.file"},
	{"tt", "mapreduce.tasktracker.kerberos.principal", "mapreduce.tasktracker.keytab.file"},
}

// StartRealm starts a KDC under dir/kdc (replacing any earlier one) and
// makes the principals: <service>/localhost for every service, also
// dn/<host> and tt/<host> for every node host name (a DataNode or
// TaskTracker may name itself so), HTTP/localhost, and user with a
// random password.
func StartRealm(dir, user string, hosts []string) (*Realm, error) {
	kdir := filepath.Join(dir, "kdc")
	if err := os.RemoveAll(kdir); err != nil {
		return nil, err
	}
	kdc, err := minikdc.Start(kdir, minikdc.Options{})
	if err != nil {
		return nil, err
	}
	r := &Realm{KDC: kdc, Dir: kdir, User: user, Keytabs: map[string]string{},
		SecretFile: filepath.Join(kdir, "http-signature-secret"), CCache: filepath.Join(kdir, user+".ccache")}
	fail := func(err error) (*Realm, error) {
		kdc.Close()
		return nil, fmt.Errorf("localcluster: secure realm: %w", err)
	}
	for _, s := range Services {
		names := []string{s.Name + "/" + SecureHost}
		if s.Name == "dn" || s.Name == "tt" {
			for _, h := range hosts {
				if h != SecureHost {
					names = append(names, s.Name+"/"+h)
				}
			}
		}
		kt := filepath.Join(kdir, s.Name+".keytab")
		if err := kdc.AddService(kt, names...); err != nil {
			return fail(err)
		}
		r.Keytabs[s.Name] = kt
	}
	r.Keytabs["HTTP"] = filepath.Join(kdir, "http.keytab")
	if err := kdc.AddService(r.Keytabs["HTTP"], "HTTP/"+SecureHost); err != nil {
		return fail(err)
	}
	b := make([]byte, 10)
	if _, err := rand.Read(b); err != nil {
		return fail(err)
	}
	r.Password = strings.ToLower(base32.StdEncoding.EncodeToString(b))
	if err := kdc.AddUser(user, r.Password); err != nil {
		return fail(err)
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(r.SecretFile, []byte(hex.EncodeToString(secret)), 0o600); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(kdir, user+".password"), []byte(r.Password+"\n"), 0o600); err != nil {
		return fail(err)
	}
	return r, nil
}

// ServerConf is what every daemon of the secure cluster is configured
// with: Kerberos authentication, block access tokens, data transfer
// protection, each daemon's principal (with _HOST) and keytab, and SPNEGO
// on the web endpoints.
func (r *Realm) ServerConf() map[string]string {
	m := r.ClientConf()
	for _, s := range Services {
		m[s.KeytabKey] = r.Keytabs[s.Name]
		// Every daemon connects from 127.0.0.1, whose _HOST on the
		// server's side (service authorization) is localhost, whatever
		// name a node reports (localhost-dn<i>): the nodes log in as
		// <service>/localhost.
		m[s.PrincipalKey] = s.Name + "/" + SecureHost + "@" + r.KDC.Realm
	}
	m[httpauth.KeyType] = httpauth.TypeKerberos
	m[httpauth.KeyPrincipal] = "HTTP/_HOST@" + r.KDC.Realm
	m[httpauth.KeyKeytab] = r.Keytabs["HTTP"]
	m[httpauth.KeySecretFile] = r.SecretFile
	return m
}

// ClientConf is what a client of the cluster needs to know: that it is
// secure and the servers' principals (never their keytabs).
func (r *Realm) ClientConf() map[string]string {
	m := map[string]string{
		"hadoop.security.authentication": "kerberos",
		KeyBlockTokens:                   "true",
		"dfs.data.transfer.protection":   "authentication",
	}
	for _, s := range Services {
		m[s.PrincipalKey] = s.Name + "/_HOST@" + r.KDC.Realm
	}
	return m
}

// Apply returns c with ServerConf set.
func (r *Realm) Apply(c *conf.Configuration) *conf.Configuration {
	c = c.Clone()
	m := r.ServerConf()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c.Set(k, m[k])
	}
	return c
}

// Env is the environment of a client of the realm: its krb5.conf and a
// ticket cache of its own (not the user's default one).
func (r *Realm) Env() []string { return r.KDC.Env(r.CCache) }

// KinitLine is the shell command that gets the user's ticket.
func (r *Realm) KinitLine() string {
	return fmt.Sprintf("KRB5_CONFIG=%s KRB5CCNAME=FILE:%s kinit %s", r.KDC.ConfigPath, r.CCache, r.KDC.Principal(r.User))
}

// Close stops the KDC.
func (r *Realm) Close() error { return r.KDC.Close() }

// Login logs this process in from the NameNode's keytab (nn/localhost)
// and makes it the login of every client the process opens itself (the
// trackers' file systems, the cluster's own setup), as Hadoop's
// UserGroupInformation.loginUserFromKeytab: `strata local` is the
// cluster's administrator, as its process user is in simple mode. Each
// daemon still speaks as its own principal where a protocol requires it
// (a DataNode's Config.Login). c is the servers' configuration
// (principals, hadoop.rpc.protection).
func (r *Realm) Login(c *conf.Configuration) (*security.Login, error) {
	s, err := ipc.SecureSettingsFrom(c, security.KeyNameNodePrincipal, security.KeyNameNodeKeytab)
	if err != nil {
		return nil, err
	}
	l, err := s.Login(SecureHost)
	if err != nil {
		return nil, fmt.Errorf("localcluster: secure realm: %w", err)
	}
	if err := ipc.SetLogin(l, c); err != nil {
		return nil, err
	}
	fs.SetLoginUser(l.User)
	return l, nil
}

// MakeHome gives the realm's user a home directory, /user/<user> owned by
// it, and a world-writable sticky /tmp, unless they exist: the root
// directory belongs to the superuser (nn) in secure mode, so without
// them the user could write nowhere. It runs as the process login (Login).
func (r *Realm) MakeHome(ctx context.Context, cl *Cluster) (string, error) {
	opts, err := hdfs.OptionsFrom(cl.ClientConf(cl.Conf()), strings.TrimPrefix(cl.DefaultFS(), "hdfs://"))
	if err != nil {
		return "", err
	}
	c, err := hdfs.New(opts)
	if err != nil {
		return "", err
	}
	defer c.Close()
	home := "/user/" + r.User
	if _, err := c.Stat(ctx, home); err != nil {
		if err := c.Mkdirs(ctx, home, 0o755); err != nil {
			return "", err
		}
		if err := c.SetOwner(ctx, home, r.User, ""); err != nil {
			return "", err
		}
	}
	if _, err := c.Stat(ctx, "/tmp"); err != nil {
		if err := c.Mkdirs(ctx, "/tmp", 0o777); err != nil {
			return "", err
		}
		if err := c.SetPermission(ctx, "/tmp", 0o1777); err != nil {
			return "", err
		}
	}
	return home, nil
}
