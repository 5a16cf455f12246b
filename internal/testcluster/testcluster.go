package testcluster

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/localcluster"
	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/storage"
)

// Config shapes a cluster, for both implementations. NameNode and
// DataNode adjust Go configurations and so apply in process only.
type Config struct {
	// DataNodes is the number of DataNodes (0: none).
	DataNodes int
	// NameNodes above 1 makes the cluster an HA nameservice, "ns1", of
	// that many NameNodes in one Raft group (ids nn1, nn2, ...; NameNode i
	// stores at <dir>/name, <dir>/name1, ...). Clients and daemons get
	// Hadoop's HA keys and fs.defaultFS hdfs://ns1 (HAConf).
	NameNodes int
	// Volumes are the storage types of each DataNode's volumes (default:
	// one SSD and one DISK volume), at <dir>/dn<i>/<TYPE><j>.
	Volumes []storage.Type
	// NameNode, if set, adjusts the NameNode's configuration (in process
	// only).
	NameNode func(*namenode.Config)
	// DataNode, if set, adjusts DataNode i's configuration (in process
	// only).
	DataNode func(i int, c *datanode.Config)
	// Verbose sends daemon logs to stderr (STRATA_TEST_LOG=1 does too).
	Verbose bool

	// Conf are configuration keys for every daemon, over Settings (and
	// MapReduceSettings): the way to configure both implementations alike.
	Conf map[string]string
	// MapReduce starts a JobTracker and TaskTrackers.
	MapReduce bool
	// TaskTrackers is the number of TaskTrackers with MapReduce (default
	// one per DataNode, at least one). In process there is one per
	// DataNode.
	TaskTrackers int
	// NoHDFS starts no NameNode and no DataNodes: MapReduce over file://
	// (process implementation only).
	NoHDFS bool
	// Executable runs TaskTrackers' attempts (default Binary(t)).
	Executable string
	// Hosts runs every node on a host of its own: a network namespace on
	// a bridge private to the cluster, with its own 10.x.y.z address that
	// its daemons advertise (process implementation only; needs root and
	// ip netns, else the test is skipped): the NameNode (NameNodeHost),
	// the JobTracker (JobTrackerHost) and node i, DataNode i and
	// TaskTracker i (DataNodeHost(i); TaskTrackerHost). HDFS daemons bind
	// their host's address, TaskTrackers 0.0.0.0:50060. The test process
	// and its clients are ClientHost, the bridge's address. Partition and
	// Heal cut and restore links between hosts; everything is removed at
	// cleanup, on failure too.
	Hosts bool
	// TrackerHosts, with Hosts, puts every TaskTracker on a host of its
	// own, "tt<i>" (TrackerHost), instead of its DataNode's: every daemon
	// in a namespace of its own, and every map reads over the network.
	TrackerHosts bool
	// HostCPU, if set, caps the CPU of every daemon on a host, and of the
	// task processes they start, at HostCPU(host) CPUs when that is
	// positive (0.5: half a core): a cgroup per host with a CFS quota
	// (cgroup.go; process implementation only; needs root and a cpu
	// controller, else the test is skipped). Hosts are named as with
	// Hosts (NameNodeHost, DataNodeHost(i), JobTrackerHost, TrackerHost),
	// with or without Hosts.
	HostCPU func(host string) float64
	// NameDirSize, if positive, makes the NameNode's name directory a
	// tmpfs of that many bytes (process implementation only; needs root):
	// the edit log's disk can fill up.
	NameDirSize int64
	// VolumeSize, if set, makes DataNode i's volume v a tmpfs of
	// VolumeSize(i, v) bytes when that is positive (process
	// implementation only; needs root): a disk that fills up.
	VolumeSize func(i, v int) int64
	// DataNodeConf, if set, gives DataNode i's process more keys, knowing
	// its volume directories (e.g. strata.media.dirs for one node's
	// volumes); process implementation only.
	DataNodeConf func(i int, volumes []string) map[string]string
	// DataNodeIP, if set, is the loopback address DataNode i binds and
	// advertises instead of 127.0.0.1 (e.g. 127.0.0.11): nodes a rack
	// mapping or a hosts file can tell apart without network namespaces
	// (process implementation only).
	DataNodeIP func(i int) string
	// Trackers starts the MapReduce daemons in process: with MapReduce,
	// New needs trackers.Start (package internal/localcluster/trackers).
	// This package cannot import it: the MapReduce engine's own tests use
	// testcluster, and the trackers import the engine.
	Trackers localcluster.StartMapReduce
}

// Cluster is the in-process implementation of Harness: every daemon is a
// library type in the test's process, started through package
// localcluster (the code `strata local` runs). Close is registered with
// t.Cleanup.
type Cluster struct {
	t   testing.TB
	cfg Config
	dir string
	lc  *localcluster.Cluster
	log *slog.Logger
	// super is the NameNode's superuser, which the DataNodes act as.
	super string
}

// New formats storage and starts a NameNode, cfg.DataNodes DataNodes and,
// with cfg.MapReduce, a JobTracker and one TaskTracker per DataNode; it
// waits for the DataNodes to be live and fails the test on error.
func New(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	if cfg.NoHDFS {
		t.Fatal("testcluster: NoHDFS needs the process implementation (NewProcess)")
	}
	if cfg.Hosts || cfg.NameDirSize > 0 || cfg.VolumeSize != nil || cfg.DataNodeConf != nil || cfg.HostCPU != nil {
		t.Fatal("testcluster: Hosts, NameDirSize, VolumeSize, DataNodeConf and HostCPU need the process implementation (NewProcess)")
	}
	if cfg.MapReduce && cfg.Trackers == nil {
		t.Fatal("testcluster: MapReduce in process needs Config.Trackers = trackers.Start (internal/localcluster/trackers)")
	}
	c := &Cluster{t: t, cfg: cfg, dir: t.TempDir(), log: testLogger(cfg.Verbose)}
	base := conf.New()
	base.Set("dfs.namenode.rpc-address", "127.0.0.1:0")
	base.Set("dfs.namenode.http-address", "127.0.0.1:0")
	for k, v := range Settings {
		base.Set(k, v)
	}
	exe := cfg.Executable
	if cfg.MapReduce {
		base.Set("mapreduce.jobtracker.address", "127.0.0.1:0")
		for k, v := range MapReduceSettings {
			base.Set(k, v)
		}
		if exe == "" {
			exe = Binary(t)
		}
	}
	if cfg.NameNodes > 1 {
		// Failover in about a second instead of the defaults' two.
		for k, v := range haSettings {
			base.Set(k, v)
		}
	}
	for k, v := range cfg.Conf {
		base.Set(k, v)
	}
	types := cfg.volumeTypes()
	var mr localcluster.StartMapReduce
	if cfg.MapReduce {
		mr = cfg.Trackers
	}
	lc, err := localcluster.Start(localcluster.Config{
		Conf: base, Dir: c.dir, DataNodes: cfg.DataNodes, NameNodes: cfg.NameNodes, MapReduce: mr,
		DefaultJobTracker: "127.0.0.1:0", Executable: exe, Logger: c.log, HostName: hostName,
		Layout: func(i int) localcluster.Node {
			var n localcluster.Node
			for j, ty := range types {
				n.Volumes = append(n.Volumes, fsdataset.VolumeConfig{Path: volumeDir(c.dir, i, j, ty), Type: ty})
			}
			n.LocalDirs = []string{fmt.Sprintf("%s/dn%d/mapred-local", c.dir, i)}
			return n
		},
		NameNodeConfig: func(nc *namenode.Config) {
			if cfg.NameNode != nil {
				cfg.NameNode(nc)
			}
			c.super = nc.Superuser
		},
		DataNodeConfig: func(i int, dc *datanode.Config) {
			dc.User = c.super
			if cfg.DataNode != nil {
				cfg.DataNode(i, dc)
			}
		},
	})
	if err != nil {
		t.Fatalf("testcluster: %v", err)
	}
	c.lc = lc
	t.Cleanup(c.Close)
	if cfg.DataNodes > 0 {
		c.WaitDataNodes(cfg.DataNodes)
	}
	return c
}

// Local is the underlying localcluster, for what Harness does not cover.
func (c *Cluster) Local() *localcluster.Cluster { return c.lc }

// AddDataNode starts one more DataNode and returns its index.
func (c *Cluster) AddDataNode() int {
	c.t.Helper()
	i, err := c.lc.AddDataNode()
	if err != nil {
		c.t.Fatalf("testcluster: %v", err)
	}
	return i
}

// DataNode returns DataNode i (nil while it is stopped).
func (c *Cluster) DataNode(i int) *datanode.DataNode { return c.lc.DataNodes[i] }

// NumDataNodes is the number of DataNodes ever added.
func (c *Cluster) NumDataNodes() int { return len(c.lc.DataNodes) }

// StopDataNode closes DataNode i, as a crash of its process would look to
// the others (its connections drop; its storage stays).
func (c *Cluster) StopDataNode(i int) { c.lc.StopDataNode(i) }

// KillDataNode is StopDataNode: in process, a DataNode's Close is already
// abrupt (connections dropped mid-operation, unfinalized replicas left in
// rbw for recovery), and nothing is saved that a crash would lose.
func (c *Cluster) KillDataNode(i int) { c.StopDataNode(i) }

// StartDataNode starts stopped DataNode i on the same storage and
// transfer address.
func (c *Cluster) StartDataNode(i int) {
	c.t.Helper()
	if err := c.lc.StartDataNode(i); err != nil {
		c.t.Fatalf("testcluster: %v", err)
	}
}

// RestartDataNode stops DataNode i and starts it on the same storage.
func (c *Cluster) RestartDataNode(i int) {
	c.t.Helper()
	c.StopDataNode(i)
	c.StartDataNode(i)
}

// DataNodeAddr is DataNode i's transfer address.
func (c *Cluster) DataNodeAddr(i int) string { return c.lc.DataNodeConfig(i).XferAddr }

// DataNodeByAddr is the index of the DataNode at a transfer address, or -1.
func (c *Cluster) DataNodeByAddr(addr string) int {
	for i := range c.lc.DataNodes {
		if c.DataNodeAddr(i) == addr {
			return i
		}
	}
	return -1
}

// DataNodeStatus is running DataNode i's own report.
func (c *Cluster) DataNodeStatus(i int) datanode.Status {
	c.t.Helper()
	d := c.lc.DataNodes[i]
	if d == nil {
		c.t.Fatalf("testcluster: datanode %d is stopped", i)
	}
	return d.Status()
}

// Host is node i's host name.
func (c *Cluster) Host(i int) string { return hostName(i) }

// WaitDataNodes waits until n DataNodes are live at the NameNode.
func (c *Cluster) WaitDataNodes(n int) {
	c.t.Helper()
	c.WaitFor(fmt.Sprintf("%d live datanodes", n), 30*time.Second, func() bool {
		return c.LiveDataNodes() >= n
	})
}

// LiveDataNodes is how many DataNodes the NameNode counts live.
func (c *Cluster) LiveDataNodes() int { return c.NameNode().Status().LiveDataNodes }

// WaitFor polls cond until it holds or the timeout passes (then the test
// fails, naming what).
func (c *Cluster) WaitFor(what string, timeout time.Duration, cond func() bool) {
	c.t.Helper()
	waitFor(c.t, what, timeout, cond)
}

// BlockReplicas lists, for each block of p, the storage types of its good
// replicas as the NameNode reports them.
func (c *Cluster) BlockReplicas(p string) [][]storage.Type {
	c.t.Helper()
	return blockReplicas(c.t, c.Client(c.Superuser()), p)
}

// WaitReplicated waits until every block of p has n good replicas.
func (c *Cluster) WaitReplicated(p string, n int, timeout time.Duration) {
	c.t.Helper()
	waitReplicated(c.t, c, p, n, timeout)
}

// haSettings are added for an HA nameservice: a standby calls an
// election after 500 ms without the active, an active that reaches no
// quorum steps down after 250 ms.
var haSettings = map[string]string{
	"strata.ha.raft.heartbeat.timeout.ms":    "500",
	"strata.ha.raft.election.timeout.ms":     "500",
	"strata.ha.raft.leader-lease.timeout.ms": "250",
}

// haClientSettings are in ClientConf (and so Client) for an HA
// nameservice: the client's backoff between failovers grows from 50 ms
// to at most 1 s. With Hadoop's 500 ms and 15 s, a client that calls
// while the members elect sleeps 1, 2, 4 s... and sees a one-second
// election as a ten-second outage.
var haClientSettings = map[string]string{
	"dfs.client.failover.sleep.base.millis": "50",
	"dfs.client.failover.sleep.max.millis":  "1000",
}

// NameNode returns the running NameNode (nil while it is stopped); in HA
// the active member, waiting for one as ActiveNameNode does.
func (c *Cluster) NameNode() *namenode.NameNode {
	if c.lc.Nameservice == "" {
		return c.lc.NameNode
	}
	c.t.Helper()
	return c.lc.NameNodes[c.ActiveNameNode()]
}

// NumNameNodes is the number of NameNodes, running or not: 1, or
// Config.NameNodes in HA.
func (c *Cluster) NumNameNodes() int { return c.lc.NumNameNodes() }

// NameNodeAt returns NameNode i (nil while it is stopped).
func (c *Cluster) NameNodeAt(i int) *namenode.NameNode { return c.lc.NameNodes[i] }

// ActiveNameNode waits up to 10 s until exactly one running NameNode is
// active and returns its index; it fails the test otherwise. Without HA
// it is 0 while the NameNode runs.
func (c *Cluster) ActiveNameNode() int {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := c.lc.WaitActive(ctx)
	if err != nil {
		c.t.Fatalf("testcluster: %v", err)
	}
	return a
}

// StopNameNodeAt closes NameNode i, saving a checkpoint; in HA the others
// elect an active if i was it and a quorum remains.
func (c *Cluster) StopNameNodeAt(i int) {
	c.t.Helper()
	if err := c.lc.StopNameNodeAt(i); err != nil {
		c.t.Fatalf("testcluster: namenode %d close: %v", i, err)
	}
}

// StartNameNodeAt starts stopped NameNode i on its storage and addresses;
// an HA member rejoins as a standby and catches up.
func (c *Cluster) StartNameNodeAt(i int) {
	c.t.Helper()
	if err := c.lc.StartNameNodeAt(i); err != nil {
		c.t.Fatalf("testcluster: namenode %d: %v", i, err)
	}
}

// Addr is the (first) NameNode's RPC address.
func (c *Cluster) Addr() string { return c.lc.NameNodeAddr() }

// URI is hdfs://<addr>, or hdfs://ns1 in HA.
func (c *Cluster) URI() string { return c.lc.DefaultFS() }

// Dir is the cluster's root directory.
func (c *Cluster) Dir() string { return c.dir }

// NameDir is the (first) NameNode's name directory, <dir>/name.
func (c *Cluster) NameDir() string { return c.lc.NameDir }

// Superuser is the user the NameNode treats as superuser.
func (c *Cluster) Superuser() string { return c.super }

// StopNameNode closes the NameNode, saving a checkpoint; in HA the active
// member (ActiveNameNode).
func (c *Cluster) StopNameNode() {
	c.t.Helper()
	if c.lc.Nameservice != "" {
		c.StopNameNodeAt(c.ActiveNameNode())
		return
	}
	if err := c.lc.StopNameNode(); err != nil {
		c.t.Fatalf("testcluster: namenode close: %v", err)
	}
}

// KillNameNode skips the test: an in-process NameNode has no stop without
// a checkpoint. Tests of kill -9 use the process implementation.
func (c *Cluster) KillNameNode() {
	c.t.Helper()
	c.t.Skip(errProcessOnly.Error())
}

// StartNameNode starts the stopped NameNode on the same storage and
// addresses; in HA every stopped member.
func (c *Cluster) StartNameNode() {
	c.t.Helper()
	if err := c.lc.StartNameNode(); err != nil {
		c.t.Fatalf("testcluster: namenode: %v", err)
	}
}

// RestartNameNode closes the NameNode (saving a checkpoint) and starts a
// new one on the same storage and address; in HA it stops the active and
// starts every stopped member.
func (c *Cluster) RestartNameNode() {
	c.t.Helper()
	c.StopNameNode()
	c.StartNameNode()
}

// JobTrackerAddr is the JobTracker's address, "" without MapReduce.
func (c *Cluster) JobTrackerAddr() string { return c.lc.JobTrackerAddr() }

// NumTaskTrackers is the number of TaskTrackers.
func (c *Cluster) NumTaskTrackers() int {
	if c.lc.MapReduce == nil {
		return 0
	}
	return c.lc.MapReduce.NumTaskTrackers()
}

// mr is the MapReduce daemons; it fails the test without.
func (c *Cluster) mr() localcluster.MapReduce {
	c.t.Helper()
	if c.lc.MapReduce == nil {
		c.t.Fatal("testcluster: the cluster has no MapReduce (Config.MapReduce)")
	}
	return c.lc.MapReduce
}

// StopJobTracker closes the JobTracker.
func (c *Cluster) StopJobTracker() { c.t.Helper(); c.mr().StopJobTracker() }

// KillJobTracker is StopJobTracker in process.
func (c *Cluster) KillJobTracker() { c.StopJobTracker() }

// StartJobTracker starts the JobTracker again on its address.
func (c *Cluster) StartJobTracker() {
	c.t.Helper()
	if err := c.mr().StartJobTracker(); err != nil {
		c.t.Fatalf("testcluster: %v", err)
	}
}

// StopTaskTracker closes TaskTracker i, killing its attempts.
func (c *Cluster) StopTaskTracker(i int) { c.t.Helper(); c.mr().StopTaskTracker(i) }

// KillTaskTracker is StopTaskTracker in process.
func (c *Cluster) KillTaskTracker(i int) { c.StopTaskTracker(i) }

// StartTaskTracker starts TaskTracker i again.
func (c *Cluster) StartTaskTracker(i int) {
	c.t.Helper()
	if err := c.mr().StartTaskTracker(i); err != nil {
		c.t.Fatalf("testcluster: %v", err)
	}
}

// Client returns a strata HDFS client acting as user, closed at cleanup;
// in HA one of the nameservice, which fails over among its members.
func (c *Cluster) Client(user string) *hdfs.Client {
	c.t.Helper()
	opts := hdfs.Options{Addr: c.Addr()}
	if ns := c.lc.Nameservice; ns != "" {
		var err error
		if opts, err = hdfs.OptionsFrom(c.ClientConf(), ns); err != nil {
			c.t.Fatal(err)
		}
	}
	opts.User = user
	cl, err := hdfs.New(opts)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { cl.Close() })
	return cl
}

// ClientConf is a client configuration for the cluster (in HA with the
// nameservice's keys and haClientSettings, unless Config.Conf sets them).
func (c *Cluster) ClientConf() *conf.Configuration {
	base := conf.New()
	if c.lc.Nameservice != "" {
		for k, v := range haClientSettings {
			if cv, ok := c.cfg.Conf[k]; ok {
				v = cv
			}
			base.Set(k, v)
		}
	}
	return c.lc.ClientConf(base)
}

// Close stops every daemon. Safe to call twice.
func (c *Cluster) Close() { c.lc.Close() }

// VolumeDir is the directory of DataNode i's volume v.
func (c *Cluster) VolumeDir(i, v int) string { return c.lc.DataNodeConfig(i).Volumes[v].Path }

// ReplicaFile returns the path of DataNode i's data file for blockID, or
// "" when it has none.
func (c *Cluster) ReplicaFile(i int, blockID uint64) string {
	return replicaFile(localcluster.NodeDir(c.dir, i), blockID)
}

// CorruptReplica flips one byte of DataNode i's replica of blockID on
// disk, at offset off, as a failing disk would.
func (c *Cluster) CorruptReplica(i int, blockID uint64, off int64) {
	c.t.Helper()
	p := c.ReplicaFile(i, blockID)
	if p == "" {
		c.t.Fatalf("testcluster: datanode %d has no replica of blk_%d", i, blockID)
	}
	corruptFile(c.t, p, off)
}

// FailVolume replaces DataNode i's volume v by a file and has the running
// DataNode check its volumes at once: the volume is taken out of service
// and its replicas reported lost. More failures than the DataNode
// tolerates stop it (it is then nil here, as stopped).
func (c *Cluster) FailVolume(i, v int) {
	c.t.Helper()
	breakVolume(c.t, c.VolumeDir(i, v))
	if d := c.lc.DataNodes[i]; d != nil {
		if err := d.CheckVolumes(); err != nil {
			c.lc.StopDataNode(i)
		}
	}
}

// DataNodeIndex returns the index of the DataNode with the given UUID, or -1.
func (c *Cluster) DataNodeIndex(uuid string) int {
	for i, d := range c.lc.DataNodes {
		if d != nil && d.UUID() == uuid {
			return i
		}
	}
	return -1
}

// BlockReplicasDetail lists, for each block of p, the UUIDs of the
// DataNodes with a good replica, in the NameNode's order.
func (c *Cluster) BlockReplicasDetail(p string) [][]string {
	c.t.Helper()
	cl := c.Client(c.Superuser())
	locs, err := cl.BlockLocations(context.Background(), p)
	if err != nil {
		c.t.Fatalf("testcluster: block locations of %s: %v", p, err)
	}
	var out [][]string
	for _, b := range locs {
		out = append(out, b.DatanodeIDs)
	}
	return out
}

// WaitSafeModeOff waits until the NameNode has left safe mode.
func (c *Cluster) WaitSafeModeOff() { c.t.Helper(); waitSafeModeOff(c.t, c) }
