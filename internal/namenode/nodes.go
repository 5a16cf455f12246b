package namenode

import (
	"context"
	"fmt"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/topology"
)

// Which DataNodes may join, which are leaving, and where they are: the
// hosts files (dfs.hosts, dfs.hosts.exclude, refreshNodes) and the rack
// topology (net.topology.*).

const (
	keyHosts                = "dfs.hosts"
	keyHostsExclude         = "dfs.hosts.exclude"
	keyHostsProvider        = "dfs.namenode.hosts.provider.classname"
	keyMaintenanceMinRepl   = "dfs.namenode.maintenance.replication.min"
	keyTopologyImpl         = "net.topology.node.switch.mapping.impl"
	keyTopologyScript       = "net.topology.script.file.name"
	keyTopologyScriptArgs   = "net.topology.script.number.args"
	keyTopologyTable        = "net.topology.table.file.name"
	hostFileManagerClass    = "org.apache.hadoop.hdfs.server.blockmanagement.HostFileManager"
	classDisallowedDatanode = "org.apache.hadoop.hdfs.server.protocol.DisallowedDatanodeException"
)

// NodesConfig is the Config part for DataNode membership and racks.
type NodesConfig struct {
	// Hosts are the hosts files, read at start and by refreshNodes.
	Hosts blockmgmt.HostsFiles
	// Topology selects the rack mapping.
	Topology topology.Config
	// MaintenanceMinReplication is
	// dfs.namenode.maintenance.replication.min (1).
	MaintenanceMinReplication int
}

func nodesConfigFrom(c *conf.Configuration, r *conf.Reader, cfg *Config) {
	n := &cfg.Nodes
	n.Hosts.Include, n.Hosts.Exclude = c.Get(keyHosts), c.Get(keyHostsExclude)
	switch p := c.Get(keyHostsProvider); p {
	case hostFileManagerClass, "":
	case blockmgmt.CombinedHostFileManagerClass:
		n.Hosts.Combined = true
	default:
		r.Add(fmt.Errorf("%s: unsupported hosts provider %q", keyHostsProvider, p))
	}
	n.Topology = topology.Config{
		Impl: c.Get(keyTopologyImpl), Script: c.Get(keyTopologyScript),
		ScriptArgs: int(r.Int(keyTopologyScriptArgs)), Table: c.Get(keyTopologyTable),
	}
	if _, err := topology.New(n.Topology); err != nil {
		r.Add(err)
	}
	n.MaintenanceMinReplication = int(r.Int(keyMaintenanceMinRepl))
}

// initNodes reads the hosts files and sets up the rack mapping.
func (s *Namesystem) initNodes(c NodesConfig) error {
	m, err := topology.New(c.Topology)
	if err != nil {
		return err
	}
	s.topo = m
	s.hostsFiles = c.Hosts
	h, err := blockmgmt.LoadHosts(c.Hosts)
	if err != nil {
		return fmt.Errorf("namenode: reading the hosts files: %w", err)
	}
	s.mu.Lock()
	s.hosts = h
	s.bm.SetHosts(h)
	s.mu.Unlock()
	return nil
}

// clientRack places a reader that is not a DataNode, from what the
// mapping knows without running anything.
func (s *Namesystem) clientRack(ip string) string {
	if s.topo == nil {
		return ""
	}
	r, _ := s.topo.Cached(ip)
	return r
}

// RefreshNodes re-reads the hosts files and applies them (dfsadmin
// -refreshNodes): nodes no longer included are disallowed, excluded nodes
// start decommissioning, re-included ones return to service.
func (s *Namesystem) RefreshNodes(ctx context.Context) error {
	if err := s.checker(ctx).Superuser("refreshNodes"); err != nil {
		return err
	}
	h, err := blockmgmt.LoadHosts(s.hostsFiles)
	if err != nil {
		return ipc.Errorf(ipc.ClassIOException, "%v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hosts = h
	s.bm.SetHosts(h)
	s.log.Info("namenode: refreshed the hosts files", "include", s.hostsFiles.Include, "exclude", s.hostsFiles.Exclude)
	return nil
}

func (c *clientProtocol) refreshNodes(ctx context.Context, _ *hdfspb.RefreshNodesRequestProto) (*hdfspb.RefreshNodesResponseProto, error) {
	return &hdfspb.RefreshNodesResponseProto{}, c.ns.RefreshNodes(ctx)
}
