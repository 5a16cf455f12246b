package datanode

import (
	"fmt"
	"net"
	"strconv"

	"github.com/stratafs/strata/internal/netaddr"
	"github.com/stratafs/strata/internal/proto/hdfspb"
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

// peerAddr is the transfer address of another DataNode: by its reported
// host name with dfs.datanode.use.datanode.hostname, else by its IP.
func (d *DataNode) peerAddr(id *hdfspb.DatanodeIDProto) string {
	host := id.GetIpAddr()
	if h := id.GetHostName(); d.cfg.UseDatanodeHostname && h != "" {
		host = h
	}
	return net.JoinHostPort(host, strconv.Itoa(int(id.GetXferPort())))
}
