// Package netaddr holds the rule by which strata's daemons choose the
// address they advertise to their peers (a TaskTracker's name and shuffle
// URL, a DataNode's host name), so that every daemon follows the same one
// and a DataNode and the TaskTracker on its host report the same host.
package netaddr

import (
	"fmt"
	"net"
	"os"
)

// Advertised is the host a daemon advertises:
//
//   - configured (slave.host.name, dfs.datanode.hostname), if set;
//   - else the first address of iface (mapred.tasktracker.dns.interface,
//     dfs.datanode.dns.interface) unless it is "" or "default";
//   - else the host it is bound to (bound, a listener's host), unless it
//     is a wildcard address;
//   - else local(), the local address of the interface that reaches its
//     master (NameNode, JobTracker), so that daemons in different network
//     namespaces that share the machine's host name stay apart;
//   - else the machine's host name.
//
// Hadoop's default is the host's DNS name (DNS.getDefaultHost); strata
// prefers an address its peers reach, as a namespace's host name is that
// of the machine. ifaceAddr looks an interface up (InterfaceAddr); its
// error is returned as is, for the caller to name its key.
func Advertised(configured, iface, bound string, ifaceAddr func(string) (string, error), local func() string) (string, error) {
	if configured != "" {
		return configured, nil
	}
	if iface != "" && iface != "default" {
		return ifaceAddr(iface)
	}
	if ip := net.ParseIP(bound); ip != nil && !ip.IsUnspecified() {
		return bound, nil
	}
	if bound != "" && net.ParseIP(bound) == nil {
		return bound, nil // a host name to bind is also the one to give
	}
	if l := local(); l != "" {
		return l, nil
	}
	h, _ := os.Hostname()
	return h, nil
}

// LocalAddrTo is the local address the kernel picks to reach addr
// (host:port): that of a connected UDP socket, which sends nothing. ""
// when addr does not resolve or has no route.
func LocalAddrTo(addr string) string {
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

// InterfaceAddr is the first address of a network interface, IPv4 first.
func InterfaceAddr(name string) (string, error) {
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
