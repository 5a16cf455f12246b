package security

import (
	"testing"

	"github.com/stratafs/strata/conf"
)

func TestProxyUsers(t *testing.T) {
	c := conf.New()
	c.Set("hadoop.proxyuser.gw.hosts", "10.0.0.0/8,127.0.0.1,gwhost")
	c.Set("hadoop.proxyuser.gw.groups", "staff")
	c.Set("hadoop.proxyuser.gw.users", "carol")
	c.Set("hadoop.proxyuser.any.hosts", "*")
	c.Set("hadoop.proxyuser.any.groups", "*")
	p := ProxyUsersFromConf(c)
	p.Groups = func(u string) []string {
		if u == "alice" {
			return []string{"alice", "staff"}
		}
		return []string{u}
	}
	p.LookupHost = func(h string) ([]string, error) { return []string{"192.168.1.9"}, nil }
	for _, c := range []struct {
		real, user, ip, err string
	}{
		{"gw", "alice", "127.0.0.1", ""},
		{"gw", "carol", "10.1.2.3", ""},
		{"gw", "alice", "192.168.1.9", ""},
		{"gw", "bob", "127.0.0.1", "User: gw is not allowed to impersonate bob"},
		{"gw", "alice", "172.16.0.1", "Unauthorized connection for super-user: gw from IP 172.16.0.1"},
		{"any", "bob", "8.8.8.8", ""},
		{"nobody", "alice", "127.0.0.1", "User: nobody is not allowed to impersonate alice"},
	} {
		err := p.Authorize(c.real, c.user, c.ip)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.err {
			t.Errorf("Authorize(%s, %s, %s) = %q, want %q", c.real, c.user, c.ip, got, c.err)
		}
	}
}
