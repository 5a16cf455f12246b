package datanode

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
)

// TestAdvertisedHost: dfs.datanode.hostname wins, then the DNS interface's
// address, then a specific bound address, then the address toward the
// JobTracker, then the machine's host name.
func TestAdvertisedHost(t *testing.T) {
	hostname, _ := os.Hostname()
	ifaces := func(name string) (string, error) {
		if name == "eth1" {
			return "192.0.2.7", nil
		}
		return "", errors.New("no such network interface")
	}
	for _, tc := range []struct {
		configured, iface, bound, local, want string
	}{
		{"node7.example", "eth1", "10.0.0.5", "10.0.0.9", "node7.example"},
		{"", "eth1", "10.0.0.5", "10.0.0.9", "192.0.2.7"},
		{"", "default", "10.0.0.5", "10.0.0.9", "10.0.0.5"},
		{"", "", "127.0.0.1", "10.0.0.9", "127.0.0.1"},
		{"", "default", "0.0.0.0", "10.0.0.9", "10.0.0.9"},
		{"", "", "::", "fd00::3", "fd00::3"},
		{"", "", "", "10.0.0.9", "10.0.0.9"},
		{"", "", "0.0.0.0", "", hostname},
	} {
		got, err := advertisedHost(tc.configured, tc.iface, tc.bound, ifaces, func() string { return tc.local })
		if err != nil || got != tc.want {
			t.Errorf("advertisedHost(%q, %q, %q, local %q) = %q, %v; want %q", tc.configured, tc.iface, tc.bound, tc.local, got, err, tc.want)
		}
	}
	if _, err := advertisedHost("", "nope0", "0.0.0.0", ifaces, func() string { return "" }); err == nil ||
		!strings.Contains(err.Error(), "dfs.datanode.dns.interface=nope0") {
		t.Errorf("a missing interface: %v, want an error naming the key", err)
	}
}

// TestHostKeys: dfs.datanode.hostname, else slave.host.name (Hadoop's
// deprecated name for it), and dfs.datanode.dns.interface reach the
// Config; unset, Hostname is empty (chosen at registration).
func TestHostKeys(t *testing.T) {
	c := conf.New()
	c.Set("slave.host.name", "node3")
	c.Set("dfs.datanode.dns.interface", "eth0")
	cfg, err := ConfigFrom(c, "127.0.0.1:8020")
	if err != nil || cfg.Hostname != "node3" || cfg.DNSInterface != "eth0" {
		t.Errorf("Hostname %q DNSInterface %q, %v", cfg.Hostname, cfg.DNSInterface, err)
	}
	c.Set("dfs.datanode.hostname", "dn3.example")
	if cfg, _ := ConfigFrom(c, "127.0.0.1:8020"); cfg.Hostname != "dn3.example" {
		t.Errorf("dfs.datanode.hostname: Hostname %q", cfg.Hostname)
	}
	if d := DefaultConfig(); d.Hostname != "" || d.DNSInterface != "default" {
		t.Errorf("defaults: Hostname %q DNSInterface %q", d.Hostname, d.DNSInterface)
	}
}
