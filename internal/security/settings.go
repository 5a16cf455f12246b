package security

import "fmt"

// Settings are a daemon's secure-mode settings as configured, before any
// login: what its ConfigFrom reads (and nothing in simple mode but
// hadoop.security.authentication), so that reading a configuration has
// no side effects; the daemon logs in when it starts.
type Settings struct {
	// Kerberos is hadoop.security.authentication=kerberos.
	Kerberos bool
	// QOPs is hadoop.rpc.protection as a bitmask.
	QOPs byte
	// AuthToLocal and AuthToLocalMechanism are the mapping rules.
	AuthToLocal, AuthToLocalMechanism string
	// Principal (may hold _HOST) and Keytab are the daemon's own.
	Principal, Keytab string
	// ProxyUsers are the hadoop.proxyuser.* rules (servers).
	ProxyUsers *ProxyUsers
	// ClientPrincipals maps a protocol to the principal its callers must
	// have (service authorization; may hold _HOST).
	ClientPrincipals map[string]string
	// RequireWrappedRequests is strata.ipc.sasl.require-wrapped-requests.
	RequireWrappedRequests bool
}

// Rules parses the auth_to_local rules.
func (s Settings) Rules() (*AuthToLocal, error) {
	return ParseAuthToLocal(s.AuthToLocal, s.AuthToLocalMechanism)
}

// UserOf is the user of the daemon's principal with _HOST made host:
// what its login will be, known without logging in (the NameNode's
// superuser). The principal's own realm counts as the default realm.
func (s Settings) UserOf(host string) (string, error) {
	p, err := ServerPrincipal(s.Principal, host)
	if err != nil {
		return "", err
	}
	if p == "" {
		return "", fmt.Errorf("%s=kerberos needs the daemon's principal", KeyAuthentication)
	}
	rules, err := s.Rules()
	if err != nil {
		return "", err
	}
	_, _, rules.DefaultRealm = SplitPrincipal(p)
	return rules.ShortName(p)
}

// Login logs the daemon in from its keytab, _HOST being host's name.
func (s Settings) Login(host string) (*Login, error) {
	kc, err := Krb5Config()
	if err != nil {
		return nil, err
	}
	rules, err := s.Rules()
	if err != nil {
		return nil, err
	}
	p, err := ServerPrincipal(s.Principal, host)
	if err != nil {
		return nil, err
	}
	return LoginFromKeytabFile(kc, p, s.Keytab, rules)
}
