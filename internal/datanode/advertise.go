package datanode

import (
	"fmt"
	"net"
	"os"
)

// advertisedHost is the host name a DataNode reports to the NameNode:
//
//   - configured (dfs.datanode.hostname, else slave.host.name), if set;
//   - else the first address of iface (dfs.datanode.dns.interface)
//     unless it is "" or "default";
//   - else the transfer address it is bound to (bound, a listener's
//     host), unless it is a wildcard;
//   - else local(), the local address of the interface that reaches the
//     NameNode, so that DataNodes in different network namespaces that
//     share the machine's host name stay apart;
//   - else the machine's host name.
//
// Hadoop's default is the host's DNS name (DNS.getDefaultHost); strata
// prefers an address its peers reach. It matches the rule of the
// TaskTracker on the same host, so that the JobTracker's data-local
// matching finds the tracker by what the DataNode reported.
func advertisedHost(configured, iface, bound string, ifaceAddr func(string) (string, error), local func() string) (string, error) {
	if configured != "" {
		return configured, nil
	}
	if iface != "" && iface != "default" {
		a, err := ifaceAddr(iface)
		if err != nil {
			return "", fmt.Errorf("datanode: %s=%s: %w", keyDNSInterface, iface, err)
		}
		return a, nil
	}
	if ip := net.ParseIP(bound); ip != nil && !ip.IsUnspecified() {
		return bound, nil
	}
	if l := local(); l != "" {
		return l, nil
	}
	h, _ := os.Hostname()
	return h, nil
}

// localAddrTo is the local address the kernel picks to reach addr
// (host:port): that of a connected UDP socket, which sends nothing. ""
// when addr does not resolve or has no route.
func localAddrTo(addr string) string {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return ""
	}
	defer c.Close()
	ua, ok := c.LocalAddr().(*net.UDPAddr)
	if !ok || ua.IP.IsUnspecified() {
		return ""
	}
	return ua.IP.String()
}

// interfaceAddr is the first address of a network interface, IPv4 first.
func interfaceAddr(name string) (string, error) {
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return "", err
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return "", err
	}
	var v6 string
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		if ipn.IP.To4() != nil {
			return ipn.IP.String(), nil
		}
		if v6 == "" && !ipn.IP.IsLinkLocalUnicast() {
			v6 = ipn.IP.String()
		}
	}
	if v6 == "" {
		return "", fmt.Errorf("interface %s has no address", name)
	}
	return v6, nil
}

// hostname is the host name this DataNode reports (advertisedHost).
func (d *DataNode) hostname() (string, error) {
	bound, _, _ := net.SplitHostPort(d.XferAddr())
	return advertisedHost(d.cfg.Hostname, d.cfg.DNSInterface, bound, interfaceAddr,
		func() string { return localAddrTo(d.cfg.NameNodeAddr) })
}
