package tasktracker

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
)

// TestAdvertisedHost: slave.host.name wins, then the DNS interface's
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
		!strings.Contains(err.Error(), "mapred.tasktracker.dns.interface=nope0") {
		t.Errorf("a missing interface: %v, want an error naming the key", err)
	}
}

// TestHostKeys: slave.host.name and mapred.tasktracker.dns.interface
// reach the Config; unset, Host is empty (chosen at Start).
func TestHostKeys(t *testing.T) {
	c := conf.New()
	c.Set("slave.host.name", " node3 ")
	c.Set("mapred.tasktracker.dns.interface", "eth0")
	cfg := read(c)
	if cfg.Host != "node3" || cfg.DNSInterface != "eth0" {
		t.Errorf("Host %q DNSInterface %q", cfg.Host, cfg.DNSInterface)
	}
	if d := DefaultConfig(); d.Host != "" || d.DNSInterface != "default" {
		t.Errorf("defaults: Host %q DNSInterface %q", d.Host, d.DNSInterface)
	}
}

// TestLocalAddrTo: the address toward a loopback peer is loopback (a UDP
// socket that sends nothing); an address that does not parse gives "".
func TestLocalAddrTo(t *testing.T) {
	if got := localAddrTo("127.0.0.1:8021"); got != "127.0.0.1" {
		t.Errorf("localAddrTo(127.0.0.1:8021) = %q", got)
	}
	if got := localAddrTo("no-port"); got != "" {
		t.Errorf("localAddrTo(no-port) = %q", got)
	}
}
