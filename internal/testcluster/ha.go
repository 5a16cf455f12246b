package testcluster

import (
	"fmt"

	"github.com/stratafs/strata/internal/localcluster"
	"github.com/stratafs/strata/internal/nameservice"
)

// Nameservice is the id of a cluster's HA nameservice (Config.NameNodes > 1).
const Nameservice = "ns1"

// NameNodeID is the HA id of NameNode i: nn1, nn2, ...
func NameNodeID(i int) string { return fmt.Sprintf("nn%d", i+1) }

// HAConf is the configuration of nameservice Nameservice whose NameNode i
// serves RPC at rpc[i] and HTTP at http[i]: Hadoop's keys
// (localcluster.HAKeys) and fs.defaultFS, as every daemon and client of
// the cluster gets them.
func HAConf(rpc, http []string) map[string]string {
	ns := nameservice.Nameservice{ID: Nameservice}
	for i := range rpc {
		ns.NameNodes = append(ns.NameNodes, nameservice.NameNode{ID: NameNodeID(i), RPCAddr: rpc[i], HTTPAddr: http[i]})
	}
	m := localcluster.HAKeys(ns)
	m["fs.defaultFS"] = "hdfs://" + Nameservice
	return m
}
