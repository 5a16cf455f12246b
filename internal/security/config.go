package security

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/stratafs/strata/conf"
)

// Configuration keys (Hadoop's names).
const (
	KeyAuthentication  = "hadoop.security.authentication"
	KeyRPCProtection   = "hadoop.rpc.protection"
	KeyAuthToLocal     = "hadoop.security.auth_to_local"
	KeyAuthToLocalMech = "hadoop.security.auth_to_local.mechanism"
	// KeyRequireWrappedRequests refuses IPC clients that send requests
	// unwrapped under integrity or privacy.
	KeyRequireWrappedRequests = "strata.ipc.sasl.require-wrapped-requests"

	KeyNameNodePrincipal    = "dfs.namenode.kerberos.principal"
	KeyNameNodeKeytab       = "dfs.namenode.keytab.file"
	KeyDataNodePrincipal    = "dfs.datanode.kerberos.principal"
	KeyDataNodeKeytab       = "dfs.datanode.keytab.file"
	KeyJobTrackerPrincipal  = "mapreduce.jobtracker.kerberos.principal"
	KeyJobTrackerKeytab     = "mapreduce.jobtracker.keytab.file"
	KeyTaskTrackerPrincipal = "mapreduce.tasktracker.kerberos.principal"
	KeyTaskTrackerKeytab    = "mapreduce.tasktracker.keytab.file"
)

// QOP is a SASL quality of protection, as RFC 4752's security-layer
// bitmask: what hadoop.rpc.protection's authentication, integrity and
// privacy stand for.
type QOP byte

const (
	QOPAuth      QOP = 1 // authentication only
	QOPIntegrity QOP = 2 // every message signed
	QOPPrivacy   QOP = 4 // every message signed and encrypted
)

// String is Hadoop's hadoop.rpc.protection name of q.
func (q QOP) String() string {
	switch q {
	case QOPAuth:
		return "authentication"
	case QOPIntegrity:
		return "integrity"
	case QOPPrivacy:
		return "privacy"
	}
	return fmt.Sprintf("qop(%d)", byte(q))
}

// SASLName is the javax.security.sasl QOP name (auth, auth-int, auth-conf).
func (q QOP) SASLName() string {
	switch q {
	case QOPIntegrity:
		return "auth-int"
	case QOPPrivacy:
		return "auth-conf"
	}
	return "auth"
}

// Strongest returns the strongest QOP in the bitmask mask, 0 for none.
func Strongest(mask byte) QOP {
	for _, q := range []QOP{QOPPrivacy, QOPIntegrity, QOPAuth} {
		if mask&byte(q) != 0 {
			return q
		}
	}
	return 0
}

// Config is a process's security settings.
type Config struct {
	// Kerberos is hadoop.security.authentication=kerberos.
	Kerberos bool
	// QOPs is hadoop.rpc.protection as a bitmask of QOP values.
	QOPs byte
	// Rules maps principals to local users.
	Rules *AuthToLocal
}

// FromConf reads the security settings of c (nil: defaults).
func FromConf(c *conf.Configuration) (*Config, error) {
	get := func(k string) string {
		if c == nil {
			return ""
		}
		return strings.TrimSpace(c.Get(k))
	}
	cfg := &Config{}
	switch strings.ToLower(get(KeyAuthentication)) {
	case "", "simple":
	case "kerberos":
		cfg.Kerberos = true
	default:
		return nil, fmt.Errorf("%s: %q: want simple or kerberos", KeyAuthentication, get(KeyAuthentication))
	}
	mask, err := ParseProtection(get(KeyRPCProtection))
	if err != nil {
		return nil, err
	}
	cfg.QOPs = mask
	rules, err := ParseAuthToLocal(get(KeyAuthToLocal), get(KeyAuthToLocalMech))
	if err != nil {
		return nil, err
	}
	cfg.Rules = rules
	return cfg, nil
}

// ParseProtection parses hadoop.rpc.protection: a comma list of
// authentication, integrity and privacy ("" is authentication).
func ParseProtection(v string) (byte, error) {
	var mask byte
	for _, p := range strings.Split(v, ",") {
		switch strings.ToLower(strings.TrimSpace(p)) {
		case "":
		case "authentication":
			mask |= byte(QOPAuth)
		case "integrity":
			mask |= byte(QOPIntegrity)
		case "privacy":
			mask |= byte(QOPPrivacy)
		default:
			return 0, fmt.Errorf("%s: %q: want authentication, integrity or privacy", KeyRPCProtection, p)
		}
	}
	if mask == 0 {
		mask = byte(QOPAuth)
	}
	return mask, nil
}

// ServerPrincipal substitutes host for a _HOST component of principal
// (nn/_HOST@REALM), as Hadoop's SecurityUtil.getServerPrincipal: host is
// lower-cased, and an empty or wildcard host ("0.0.0.0") is replaced by
// this machine's name. A principal without _HOST is returned unchanged.
func ServerPrincipal(principal, host string) (string, error) {
	comps := strings.FieldsFunc(principal, func(r rune) bool { return r == '/' || r == '@' })
	if len(comps) != 3 || comps[1] != "_HOST" {
		return principal, nil
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		// An address stands for its canonical name, as Java's
		// InetAddress.getCanonicalHostName (127.0.0.1: localhost).
		if names, err := LookupAddr(host); err == nil && len(names) > 0 {
			host = strings.TrimSuffix(names[0], ".")
		}
	} else if host == "" || ip != nil {
		h, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("security: substituting _HOST in %s: %w", principal, err)
		}
		host = h
	}
	return comps[0] + "/" + strings.ToLower(host) + "@" + comps[2], nil
}

// LookupAddr resolves an address to host names (net.LookupAddr; tests
// replace it).
var LookupAddr = net.LookupAddr

// SplitPrincipal splits primary/instance@REALM into its parts; instance
// and realm may be empty.
func SplitPrincipal(p string) (primary, instance, realm string) {
	if i := strings.LastIndexByte(p, '@'); i >= 0 {
		p, realm = p[:i], p[i+1:]
	}
	primary, instance, _ = strings.Cut(p, "/")
	return primary, instance, realm
}
