// Package nameservice reads Hadoop's HA configuration: which NameNodes
// make up a nameservice, their RPC and HTTP addresses, and which of them
// this process is.
//
// The keys are Hadoop's:
//
//	dfs.nameservices                       ns1[,ns2...]
//	dfs.ha.namenodes.<ns>                  nn1,nn2,nn3
//	dfs.namenode.rpc-address.<ns>.<nn>     host:port
//	dfs.namenode.http-address.<ns>.<nn>    host:port
//	dfs.client.failover.proxy.provider.<ns> (a Java class name; any value
//	                                       marks ns as an HA nameservice for
//	                                       clients, as in Hadoop)
//	dfs.ha.namenode.id                     this NameNode's id (else found
//	                                       from its own addresses)
//
// A URI authority that names a configured nameservice resolves to all its
// NameNodes; any other authority is one host[:8020].
package nameservice

import (
	"fmt"
	"net"
	"strings"

	"github.com/stratafs/strata/conf"
)

// Keys, for the configuration table and messages.
const (
	KeyNameservices   = "dfs.nameservices"
	KeyNameNodeID     = "dfs.ha.namenode.id"
	PrefixNameNodes   = "dfs.ha.namenodes."
	PrefixRPCAddress  = "dfs.namenode.rpc-address."
	PrefixHTTPAddress = "dfs.namenode.http-address."
	PrefixProvider    = "dfs.client.failover.proxy.provider."
)

// MaxNameNodes bounds a nameservice's size (Hadoop recommends 3, allows
// up to 5 in practice; a Raft group beyond 7 only slows commits).
const MaxNameNodes = 7

// DefaultRPCPort is the NameNode RPC port of an hdfs:// URI without one.
const DefaultRPCPort = "8020"

// NameNode is one member of a nameservice.
type NameNode struct {
	ID       string // e.g. "nn1"
	RPCAddr  string // host:port
	HTTPAddr string // host:port, "" when not configured
}

// Nameservice is a configured HA nameservice.
type Nameservice struct {
	ID        string
	NameNodes []NameNode // in dfs.ha.namenodes order
}

// RPCAddrs lists the members' RPC addresses in configuration order.
func (n Nameservice) RPCAddrs() []string {
	out := make([]string, len(n.NameNodes))
	for i, m := range n.NameNodes {
		out[i] = m.RPCAddr
	}
	return out
}

// Member returns the member with id.
func (n Nameservice) Member(id string) (NameNode, bool) {
	for _, m := range n.NameNodes {
		if m.ID == id {
			return m, true
		}
	}
	return NameNode{}, false
}

// IDs lists the configured nameservices (dfs.nameservices).
func IDs(c *conf.Configuration) []string { return conf.TrimmedStrings(c.Get(KeyNameservices)) }

// Lookup returns nameservice id as configured. ok is false when id is not
// listed in dfs.nameservices or has no dfs.ha.namenodes.<id>; err reports
// a listed nameservice whose members are misconfigured.
func Lookup(c *conf.Configuration, id string) (ns Nameservice, ok bool, err error) {
	if c == nil || id == "" || !contains(IDs(c), id) {
		return Nameservice{}, false, nil
	}
	ids := conf.TrimmedStrings(c.Get(PrefixNameNodes + id))
	if len(ids) == 0 {
		return Nameservice{}, false, nil
	}
	if len(ids) > MaxNameNodes {
		return Nameservice{}, true, fmt.Errorf("nameservice %s: %d NameNodes in %s%s, at most %d", id, len(ids), PrefixNameNodes, id, MaxNameNodes)
	}
	ns.ID = id
	seen := map[string]bool{}
	for _, nn := range ids {
		if seen[nn] {
			return Nameservice{}, true, fmt.Errorf("nameservice %s: NameNode id %q listed twice", id, nn)
		}
		seen[nn] = true
		rpc := strings.TrimSpace(c.Get(PrefixRPCAddress + id + "." + nn))
		if rpc == "" {
			return Nameservice{}, true, fmt.Errorf("nameservice %s: %s%s.%s is not set", id, PrefixRPCAddress, id, nn)
		}
		if _, _, err := net.SplitHostPort(rpc); err != nil {
			return Nameservice{}, true, fmt.Errorf("nameservice %s: %s%s.%s: %v", id, PrefixRPCAddress, id, nn, err)
		}
		ns.NameNodes = append(ns.NameNodes, NameNode{ID: nn, RPCAddr: rpc, HTTPAddr: strings.TrimSpace(c.Get(PrefixHTTPAddress + id + "." + nn))})
	}
	return ns, true, nil
}

// Resolve returns the NameNode RPC addresses an hdfs:// URI authority
// stands for: every member of the nameservice it names, or the one
// host:port (port 8020 when absent).
func Resolve(c *conf.Configuration, authority string) ([]string, error) {
	if authority == "" {
		return nil, fmt.Errorf("nameservice: empty hdfs authority")
	}
	if ns, ok, err := Lookup(c, authority); err != nil {
		return nil, err
	} else if ok {
		return ns.RPCAddrs(), nil
	}
	if _, _, err := net.SplitHostPort(authority); err != nil {
		return []string{net.JoinHostPort(authority, DefaultRPCPort)}, nil
	}
	return []string{authority}, nil
}

// Self finds this NameNode in its nameservice: the one named by
// dfs.ha.namenode.id, else the only member whose RPC address is local
// (isLocal reports whether a host names an address of this machine; nil
// means net.InterfaceAddrs). nsID "" means the single entry of
// dfs.nameservices. ok is false when no HA nameservice is configured.
func Self(c *conf.Configuration, nsID string, isLocal func(host string) bool) (self NameNode, ns Nameservice, ok bool, err error) {
	if nsID == "" {
		ids := IDs(c)
		switch len(ids) {
		case 0:
			return NameNode{}, Nameservice{}, false, nil
		case 1:
			nsID = ids[0]
		default:
			return NameNode{}, Nameservice{}, true, fmt.Errorf("nameservice: %s lists %d nameservices; one NameNode serves one (federation is not supported)", KeyNameservices, len(ids))
		}
	}
	ns, ok, err = Lookup(c, nsID)
	if err != nil || !ok {
		return NameNode{}, ns, ok, err
	}
	if id := strings.TrimSpace(c.Get(KeyNameNodeID)); id != "" {
		m, found := ns.Member(id)
		if !found {
			return NameNode{}, ns, true, fmt.Errorf("nameservice %s: %s=%s is not in %s%s", nsID, KeyNameNodeID, id, PrefixNameNodes, nsID)
		}
		return m, ns, true, nil
	}
	if isLocal == nil {
		isLocal = localHost
	}
	var matches []NameNode
	for _, m := range ns.NameNodes {
		host, _, _ := net.SplitHostPort(m.RPCAddr)
		if isLocal(host) {
			matches = append(matches, m)
		}
	}
	if len(matches) != 1 {
		return NameNode{}, ns, true, fmt.Errorf("nameservice %s: %d members have a local RPC address; set %s", nsID, len(matches), KeyNameNodeID)
	}
	return matches[0], ns, true, nil
}

// localHost reports whether host resolves to an address of one of this
// machine's interfaces.
func localHost(host string) bool {
	ips, err := net.LookupIP(host)
	if err != nil {
		return false
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		for _, ip := range ips {
			if n.IP.Equal(ip) {
				return true
			}
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
