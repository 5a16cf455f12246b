package testcluster

import (
	"fmt"
	"strings"
)

// Nameservice is the id of a cluster's HA nameservice (Config.NameNodes > 1).
const Nameservice = "ns1"

// NameNodeID is the HA id of NameNode i: nn1, nn2, ...
func NameNodeID(i int) string { return fmt.Sprintf("nn%d", i+1) }

// HAConf is the configuration of nameservice Nameservice whose NameNode i
// serves RPC at rpc[i] and HTTP at http[i]: Hadoop's keys, as every
// daemon and client of the cluster gets them.
func HAConf(rpc, http []string) map[string]string {
	ids := make([]string, len(rpc))
	for i := range rpc {
		ids[i] = NameNodeID(i)
	}
	m := map[string]string{
		"fs.defaultFS":                    "hdfs://" + Nameservice,
		"dfs.nameservices":                Nameservice,
		"dfs.ha.namenodes." + Nameservice: strings.Join(ids, ","),
		"dfs.client.failover.proxy.provider." + Nameservice: "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider",
	}
	for i, id := range ids {
		m["dfs.namenode.rpc-address."+Nameservice+"."+id] = rpc[i]
		m["dfs.namenode.http-address."+Nameservice+"."+id] = http[i]
	}
	return m
}
