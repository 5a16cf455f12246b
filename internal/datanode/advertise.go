package datanode

import (
	"fmt"
	"net"

	"github.com/stratafs/strata/internal/netaddr"
)

// advertisedHost is the host name a DataNode reports to the NameNode (dfs.datanode.hostname, else slave.host.name; dfs.datanode.dns.interface; its transfer address; the address toward the NameNode),
// by netaddr.Advertised's rule, with the key named in its error.
func advertisedHost(configured, iface, bound string, ifaceAddr func(string) (string, error), local func() string) (string, error) {
	h, err := netaddr.Advertised(configured, iface, bound, ifaceAddr, local)
	if err != nil {
		return "", fmt.Errorf("datanode: %s=%s: %w", keyDNSInterface, iface, err)
	}
	return h, nil
}

// hostname is the host name this DataNode reports (advertisedHost).
func (d *DataNode) hostname() (string, error) {
	bound, _, _ := net.SplitHostPort(d.XferAddr())
	return advertisedHost(d.cfg.Hostname, d.cfg.DNSInterface, bound, netaddr.InterfaceAddr,
		func() string { return netaddr.LocalAddrTo(d.cfg.NameNodeAddr) })
}
