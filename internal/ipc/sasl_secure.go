package ipc

import (
	"fmt"
	"net"
	"strings"

	"github.com/jcmturner/gokrb5/v8/config"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/security"
)

// SecureSettingsFrom reads a daemon's secure-mode settings from c: in
// simple mode only hadoop.security.authentication; in kerberos mode also
// hadoop.rpc.protection, auth_to_local, the daemon's principal and keytab
// (principalKey, keytabKey), the proxy users, and the client principal of
// every protocol registered with a KerberosInfo client key. Nothing is
// logged in.
func SecureSettingsFrom(c *conf.Configuration, principalKey, keytabKey string) (security.Settings, error) {
	var s security.Settings
	switch v := strings.ToLower(strings.TrimSpace(c.Get(security.KeyAuthentication))); v {
	case "", "simple":
		return s, nil
	case "kerberos":
	default:
		return s, fmt.Errorf("%s: %q: want simple or kerberos", security.KeyAuthentication, v)
	}
	q, err := security.ParseProtection(c.Get(security.KeyRPCProtection))
	if err != nil {
		return s, err
	}
	s = security.Settings{
		Kerberos: true, QOPs: q,
		AuthToLocal: c.Get(security.KeyAuthToLocal), AuthToLocalMechanism: c.Get(security.KeyAuthToLocalMech),
		Principal: c.GetTrimmed(principalKey), Keytab: c.GetTrimmed(keytabKey),
		ProxyUsers:       security.ProxyUsersFromConf(c),
		ClientPrincipals: map[string]string{},
	}
	if s.RequireWrappedRequests, err = c.GetBool(security.KeyRequireWrappedRequests); err != nil {
		return s, err
	}
	if _, err := s.Rules(); err != nil {
		return s, err
	}
	kinfoMu.RLock()
	defer kinfoMu.RUnlock()
	for p, info := range kinfo {
		if info.ClientPrincipalKey != "" {
			s.ClientPrincipals[p] = c.GetTrimmed(info.ClientPrincipalKey)
		}
	}
	return s, nil
}

// SecureServer is what a daemon needs to serve IPC in kerberos mode:
// the SASL configuration for its Server and its own login (from its
// keytab) for the clients it opens.
type SecureServer struct {
	SASL  *SASLConfig
	Login *security.Login
}

// KerberosServer logs a daemon in from its keytab (_HOST becomes the
// canonical name of addr's host, its RPC address) and builds its SASL
// configuration: GSSAPI with hadoop.rpc.protection, auth_to_local, the
// proxy users (groups resolves a user's groups) and service authorization
// (the superuser, the login's user, may call the protocols that allow
// it). It returns nil, nil in simple mode. krb5 nil means $KRB5_CONFIG or
// /etc/krb5.conf.
func KerberosServer(s security.Settings, krb5 *config.Config, addr string, groups func(string) []string) (*SecureServer, error) {
	if !s.Kerberos {
		return nil, nil
	}
	var err error
	if krb5 == nil {
		if krb5, err = security.Krb5Config(); err != nil {
			return nil, err
		}
	}
	rules, err := s.Rules()
	if err != nil {
		return nil, err
	}
	rules.DefaultRealm = krb5.LibDefaults.DefaultRealm
	principal, err := security.ServerPrincipal(s.Principal, addr)
	if err != nil {
		return nil, err
	}
	login, err := security.LoginFromKeytabFile(krb5, principal, s.Keytab, rules)
	if err != nil {
		return nil, err
	}
	proxy := s.ProxyUsers
	if proxy == nil {
		proxy = security.ProxyUsersFromConf(nil)
	}
	p := *proxy
	p.Groups = groups
	cfg := &SASLConfig{
		Mechanisms: []SASLMechanism{&GSSAPIMechanism{
			Principal: login.Principal, Keytab: login.Keytab,
			ClockSkew: security.ClockSkew(krb5), QOPs: s.QOPs,
		}},
		MapUser:     rules.ShortName,
		Impersonate: p.Authorize,
		Authorize:   ServiceAuthorizer(s.ClientPrincipals, login.User),

		RequireWrappedRequests: s.RequireWrappedRequests,
	}
	return &SecureServer{SASL: cfg, Login: login}, nil
}

// ServiceAuthorizer checks a caller's principal against its protocol's
// client principal (principals: protocol → configured principal), _HOST
// being the caller's host name, as Hadoop's ServiceAuthorizationManager:
// only a DataNode's principal may speak DatanodeProtocol, only a
// TaskTracker's InterTrackerProtocol. A protocol whose KerberosInfo allows
// it may also be called by superuser. An unconfigured client principal
// admits no one.
func ServiceAuthorizer(principals map[string]string, superuser string) func(protocol, principal, user string, remote net.Addr) error {
	return func(protocol, principal, user string, remote net.Addr) error {
		info, ok := KerberosInfoOf(protocol)
		if !ok || info.ClientPrincipalKey == "" {
			return nil
		}
		if info.SuperuserMayCall && superuser != "" && user == superuser {
			return nil
		}
		want := principals[protocol]
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
