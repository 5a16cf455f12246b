package security

import (
	"fmt"
	"net"
	"strings"

	"github.com/stratafs/strata/conf"
)

// ClassAuthorization is the Java class of an impersonation refusal.
const ClassAuthorization = "org.apache.hadoop.security.authorize.AuthorizationException"

// ProxyUsers holds the hadoop.proxyuser.<user>.{hosts,groups,users} rules:
// which real users may act as which others, from where
// (DefaultImpersonationProvider).
type ProxyUsers struct {
	users  map[string]map[string]bool // real user -> users it may act as; "*" all
	groups map[string]map[string]bool // real user -> groups whose members it may act as
	hosts  map[string][]string        // real user -> hosts, IPs or CIDRs; "*" all
	// Groups returns a user's groups (the NameNode's group mapping); nil
	// means none.
	Groups func(user string) []string
	// LookupHost resolves a host name in a .hosts list (nil:
	// net.LookupHost).
	LookupHost func(string) ([]string, error)
}

// ProxyUsersFromConf reads every hadoop.proxyuser.* key of c.
func ProxyUsersFromConf(c *conf.Configuration) *ProxyUsers {
	p := &ProxyUsers{users: map[string]map[string]bool{}, groups: map[string]map[string]bool{}, hosts: map[string][]string{}}
	if c == nil {
		return p
	}
	for _, k := range c.Keys() {
		rest, ok := strings.CutPrefix(k, "hadoop.proxyuser.")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '.')
		if i <= 0 {
			continue
		}
		user, kind := rest[:i], rest[i+1:]
		list := conf.TrimmedStrings(c.Get(k))
		switch kind {
		case "users":
			p.users[user] = setOf(p.users[user], list)
		case "groups":
			p.groups[user] = setOf(p.groups[user], list)
		case "hosts":
			p.hosts[user] = append(p.hosts[user], list...)
		}
	}
	return p
}

func setOf(m map[string]bool, list []string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	for _, v := range list {
		m[v] = true
	}
	return m
}

// AuthorizationError is Hadoop's AuthorizationException.
type AuthorizationError struct{ Msg string }

func (e *AuthorizationError) Error() string { return e.Msg }

// Authorize checks that realUser may act as user from remoteIP, with
// Hadoop's messages on refusal.
func (p *ProxyUsers) Authorize(realUser, user, remoteIP string) error {
	ok := p.users[realUser]["*"] || p.users[realUser][user] || p.groups[realUser]["*"]
	if !ok && p.Groups != nil && len(p.groups[realUser]) > 0 {
		for _, g := range p.Groups(user) {
			if p.groups[realUser][g] {
				ok = true
				break
			}
		}
	}
	if !ok {
		return &AuthorizationError{Msg: fmt.Sprintf("User: %s is not allowed to impersonate %s", realUser, user)}
	}
	if !p.hostAllowed(realUser, remoteIP) {
		return &AuthorizationError{Msg: fmt.Sprintf("Unauthorized connection for super-user: %s from IP %s", realUser, remoteIP)}
	}
	return nil
}

// hostAllowed is Hadoop's MachineList: "*", IPs, CIDRs and host names.
func (p *ProxyUsers) hostAllowed(realUser, remoteIP string) bool {
	ip := net.ParseIP(remoteIP)
	for _, h := range p.hosts[realUser] {
		if h == "*" {
			return true
		}
		if strings.Contains(h, "/") {
			if _, n, err := net.ParseCIDR(h); err == nil && ip != nil && n.Contains(ip) {
				return true
			}
			continue
		}
		if hip := net.ParseIP(h); hip != nil {
			if ip != nil && hip.Equal(ip) {
				return true
			}
			continue
		}
		lookup := p.LookupHost
		if lookup == nil {
			lookup = net.LookupHost
		}
		addrs, err := lookup(h)
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if aip := net.ParseIP(a); aip != nil && ip != nil && aip.Equal(ip) {
				return true
			}
		}
	}
	return false
}
