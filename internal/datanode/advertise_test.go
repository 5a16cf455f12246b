package datanode

import (
	"errors"
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"google.golang.org/protobuf/proto"
)

// TestAdvertisedHost: the rule is netaddr's (tested there); a missing
// interface is an error naming the key.
func TestAdvertisedHost(t *testing.T) {
	ifaces := func(string) (string, error) { return "", errors.New("no such network interface") }
	if _, err := advertisedHost("", "nope0", "0.0.0.0", ifaces, func() string { return "" }); err == nil ||
		!strings.Contains(err.Error(), "dfs.datanode.dns.interface=nope0") {
		t.Errorf("a missing interface: %v, want an error naming the key", err)
	}
	if h, err := advertisedHost("", "", "0.0.0.0", ifaces, func() string { return "10.0.0.9" }); err != nil || h != "10.0.0.9" {
		t.Errorf("wildcard-bound: %q, %v; want the address toward the master", h, err)
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

// dfs.datanode.use.datanode.hostname: a DataNode dials another (a
// pipeline mirror, a transfer target) by the host name it reported only
// when asked to, else by its IP address.
func TestPeerAddr(t *testing.T) {
	id := &hdfspb.DatanodeIDProto{IpAddr: proto.String("10.0.0.7"), HostName: proto.String("dn7"), XferPort: proto.Uint32(9866)}
	if got := (&DataNode{}).peerAddr(id); got != "10.0.0.7:9866" {
		t.Errorf("default: %s", got)
	}
	d := &DataNode{cfg: Config{UseDatanodeHostname: true}}
	if got := d.peerAddr(id); got != "dn7:9866" {
		t.Errorf("by host name: %s", got)
	}
	if got := d.peerAddr(&hdfspb.DatanodeIDProto{IpAddr: proto.String("10.0.0.7"), XferPort: proto.Uint32(9866)}); got != "10.0.0.7:9866" {
		t.Errorf("no host name reported: %s", got)
	}
}
