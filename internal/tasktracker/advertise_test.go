package tasktracker

import (
	"errors"
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
)

// TestAdvertisedHost: the rule is netaddr's (tested there); a missing
// interface is an error naming the key.
func TestAdvertisedHost(t *testing.T) {
	ifaces := func(string) (string, error) { return "", errors.New("no such network interface") }
	if _, err := advertisedHost("", "nope0", "0.0.0.0", ifaces, func() string { return "" }); err == nil ||
		!strings.Contains(err.Error(), "mapred.tasktracker.dns.interface=nope0") {
		t.Errorf("a missing interface: %v, want an error naming the key", err)
	}
	if h, err := advertisedHost("", "", "0.0.0.0", ifaces, func() string { return "10.0.0.9" }); err != nil || h != "10.0.0.9" {
		t.Errorf("wildcard-bound: %q, %v; want the address toward the master", h, err)
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
