package netaddr

import (
	"errors"
	"os"
	"testing"
)

// TestAdvertised: the configured host wins, then the interface's address,
// then a specific bound host, then the address toward the master, then
// the machine's host name; an interface error is returned as is.
func TestAdvertised(t *testing.T) {
	hostname, _ := os.Hostname()
	errNoIface := errors.New("no such network interface")
	ifaces := func(name string) (string, error) {
		if name == "eth1" {
			return "192.0.2.7", nil
		}
		return "", errNoIface
	}
	for _, tc := range []struct {
		configured, iface, bound, local, want string
	}{
		{"node7.example", "eth1", "10.0.0.5", "10.0.0.9", "node7.example"},
		{"", "eth1", "10.0.0.5", "10.0.0.9", "192.0.2.7"},
		{"", "default", "10.0.0.5", "10.0.0.9", "10.0.0.5"},
		{"", "", "node5.example", "10.0.0.9", "node5.example"},
		{"", "default", "0.0.0.0", "10.0.0.9", "10.0.0.9"},
		{"", "", "::", "fd00::3", "fd00::3"},
		{"", "", "0.0.0.0", "", hostname},
	} {
		got, err := Advertised(tc.configured, tc.iface, tc.bound, ifaces, func() string { return tc.local })
		if err != nil || got != tc.want {
			t.Errorf("Advertised(%q, %q, %q, local %q) = %q, %v; want %q", tc.configured, tc.iface, tc.bound, tc.local, got, err, tc.want)
		}
	}
	if _, err := Advertised("", "nope0", "0.0.0.0", ifaces, func() string { return "" }); !errors.Is(err, errNoIface) {
		t.Errorf("a missing interface: %v", err)
	}
}

// TestLocalAddrTo: the address toward a loopback peer is loopback (a UDP
// socket that sends nothing); an address that does not parse gives "".
func TestLocalAddrTo(t *testing.T) {
	if got := LocalAddrTo("127.0.0.1:8021"); got != "127.0.0.1" {
		t.Errorf("LocalAddrTo(127.0.0.1:8021) = %q", got)
	}
	if got := LocalAddrTo("no-port"); got != "" {
		t.Errorf("LocalAddrTo(no-port) = %q", got)
	}
}
