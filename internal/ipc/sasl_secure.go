package ipc

import (
	"fmt"
	"net"

	"github.com/jcmturner/gokrb5/v8/config"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/security"
)

// SecureServer is what a daemon needs to serve IPC in kerberos mode:
// the SASL configuration for its Server and its own login (from its
// keytab) for the clients it opens.
type SecureServer struct {
	SASL  *SASLConfig
	Login *security.Login
}

// KerberosServer reads a daemon's secure-mode settings from c: its
// principal and keytab (principalKey, keytabKey; _HOST becomes the host
// of addr, the daemon's RPC address), hadoop.rpc.protection,
// auth_to_local, the proxy users, and service authorization by
// KerberosInfo (superuser may call the protocols that allow it). It
// returns nil, nil when c is not in kerberos mode. krb5 nil means
// $KRB5_CONFIG or /etc/krb5.conf.
func KerberosServer(c *conf.Configuration, krb5 *config.Config, principalKey, keytabKey, addr string, groups func(string) []string) (*SecureServer, error) {
	sc, err := security.FromConf(c)
	if err != nil || !sc.Kerberos {
		return nil, err
	}
	if krb5 == nil {
		if krb5, err = security.Krb5Config(); err != nil {
			return nil, err
		}
	}
	sc.Rules.DefaultRealm = krb5.LibDefaults.DefaultRealm
	principal, err := security.ServerPrincipal(c.Get(principalKey), addr)
	if err != nil {
		return nil, err
	}
	if principal == "" {
		return nil, fmt.Errorf("%s=kerberos needs %s", security.KeyAuthentication, principalKey)
	}
	login, err := security.LoginFromKeytabFile(krb5, principal, c.Get(keytabKey), sc.Rules)
	if err != nil {
		return nil, err
	}
	proxy := security.ProxyUsersFromConf(c)
	proxy.Groups = groups
	superuser := login.User
	cfg := &SASLConfig{
		Mechanisms: []SASLMechanism{&GSSAPIMechanism{
			Principal: login.Principal, Keytab: login.Keytab,
			ClockSkew: security.ClockSkew(krb5), QOPs: sc.QOPs,
		}},
		MapUser:     sc.Rules.ShortName,
		Impersonate: proxy.Authorize,
		Authorize:   ServiceAuthorizer(c, superuser),
	}
	return &SecureServer{SASL: cfg, Login: login}, nil
}

// ServiceAuthorizer checks a caller's principal against its protocol's
// KerberosInfo client principal, _HOST being the caller's host name, as
// Hadoop's ServiceAuthorizationManager: only a DataNode's principal may
// speak DatanodeProtocol, only a TaskTracker's InterTrackerProtocol.
func ServiceAuthorizer(c *conf.Configuration, superuser string) func(protocol, principal, user string, remote net.Addr) error {
	return func(protocol, principal, user string, remote net.Addr) error {
		info, ok := KerberosInfoOf(protocol)
		if !ok || info.ClientPrincipalKey == "" {
			return nil
		}
		if info.SuperuserMayCall && superuser != "" && user == superuser {
			return nil
		}
		want := c.Get(info.ClientPrincipalKey)
		host := ""
		if ta, ok := remote.(*net.TCPAddr); ok {
			host = ta.IP.String()
		}
		exp, err := security.ServerPrincipal(want, host)
		if err != nil {
			return err
		}
		if want != "" && principal == exp {
			return nil
		}
		return fmt.Errorf("User %s (auth:KERBEROS) is not authorized for protocol %s: expected client Kerberos principal is %s", principal, protocol, exp)
	}
}
