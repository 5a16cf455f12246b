// Package localcluster starts a whole strata cluster in this process: a
// NameNode (or, with Config.NameNodes above 1, an HA nameservice of that
// many, ha.go), N DataNodes and, optionally (Config.MapReduce, package
// localcluster/trackers), a JobTracker with one TaskTracker per DataNode.
// It is what `strata local` runs, what `strata experiment`
// builds once per storage profile, and the in-process implementation
// under the test harness (package testcluster): the one code path that
// starts daemons inside a process.
//
// Every daemon is the real one (the same packages the standalone commands
// start); only the process is shared. The caller decides each node's
// layout — its DataNode volumes (directory and storage type) and its
// TaskTracker's mapreduce.cluster.local.dir — so one cluster can keep HDFS
// on one directory and intermediate data on another. TaskTrackers are named
// like their DataNodes (Config.HostName, default localhost-dn<i>) so that
// maps on a node's blocks count as data-local, and each runs its attempts
// as child processes of Config.Executable (default this program) with the
// argument "task".
//
// Storage is under Config.Dir: the NameNode's name directory is
// <dir>/name (unless dfs.namenode.name.dir is set), formatted on first
// use (in HA, member i's is <dir>/name, <dir>/name1, ...); the nodes' directories are wherever Config.Layout puts them
// (default <dir>/dn<i>/ssd and <dir>/dn<i>/disk, intermediate data in
// <dir>/dn<i>/ssd/mapred-local).
//
// Lifecycle: Start starts everything (and on error stops whatever it
// started, releasing volume locks, so the same directory can start again);
// each daemon can then be stopped and started again on the same storage
// and the same addresses (StopNameNode/StartNameNode, which act on every
// NameNode, StopNameNodeAt/StartNameNodeAt on one, StopDataNode/
// StartDataNode, and the MapReduce interface for the trackers); Close
// stops whatever runs. Stopping is each daemon's Close: the NameNode saves
// a checkpoint; a DataNode or TaskTracker drops its connections and
// attempts as a crash would, but in process there is no abrupt NameNode
// stop (kill -9 is the process harness's). The methods are not safe for
// concurrent use with each other.
//
// The MapReduce daemons are started by package localcluster/trackers,
// passed in as Config.MapReduce: this package imports no MapReduce code,
// so that the MapReduce engine's own tests can build HDFS clusters through
// package testcluster, which stands on this one.
package localcluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/nameservice"
	"github.com/stratafs/strata/internal/storage"
)

// Node is one node's storage layout.
type Node struct {
	// Volumes are the DataNode's volumes.
	Volumes []fsdataset.VolumeConfig
	// LocalDirs are the TaskTracker's mapreduce.cluster.local.dir; a
	// mapreduce.cluster.local.dir set in Config.Conf wins over them.
	LocalDirs []string
}

// Config says what to start.
type Config struct {
	// Conf is the base configuration; it is cloned, not changed.
	Conf *conf.Configuration
	// Dir holds the cluster's storage (an absolute path).
	Dir string
	// DataNodes is the number of DataNodes (and TaskTrackers).
	DataNodes int
	// NameNodes above 1 makes the cluster an HA nameservice of that many
	// NameNodes in one Raft group (ha.go); 0 or 1 is one NameNode. A Conf
	// that already configures a nameservice (dfs.nameservices) is used
	// as it is, whatever NameNodes says. A Dir that holds a nameservice
	// does not start with one NameNode.
	NameNodes int
	// Layout returns node i's layout; nil means DefaultLayout.
	Layout func(i int) Node
	// MapReduce, if set, starts a JobTracker and the TaskTrackers once the
	// DataNodes run: package localcluster/trackers' Start. It is a
	// function, not a flag, because this package does not import the
	// MapReduce engine, whose own tests build clusters through it.
	MapReduce StartMapReduce
	// DefaultJobTracker is the JobTracker address used when
	// mapreduce.jobtracker.address is unset or "local".
	DefaultJobTracker string
	// MapSlots and ReduceSlots, if positive, replace
	// mapred.tasktracker.{map,reduce}.tasks.maximum.
	MapSlots, ReduceSlots int
	// Executable runs the TaskTrackers' attempts; default this program.
	Executable string
	Logger     *slog.Logger
	// HostName names node i: its DataNode's Hostname and its
	// TaskTracker's Host. Default localhost-dn<i>.
	HostName func(i int) string
	// NameNodeConfig and DataNodeConfig, if set, adjust a daemon's
	// configuration after it is read from Conf and laid out, before the
	// daemon is created (tests set there what no key sets). DataNodeConfig
	// runs for every DataNode added, not for a restart, which reuses the
	// configuration.
	NameNodeConfig func(*namenode.Config)
	DataNodeConfig func(i int, c *datanode.Config)
}

// StartMapReduce starts the MapReduce daemons of a cluster whose
// NameNode and DataNodes run. On error it stops whatever it started.
type StartMapReduce func(c *Cluster) (MapReduce, error)

// MapReduce is a cluster's JobTracker and TaskTrackers (one per node), as
// package localcluster/trackers runs them. Stop and Start keep the
// JobTracker's address; a restarted TaskTracker is a new tracker to the
// JobTracker (its name has its new shuffle port), as in Hadoop.
type MapReduce interface {
	// JobTrackerAddr is the JobTracker's RPC address.
	JobTrackerAddr() string
	StartJobTracker() error
	StopJobTracker() error
	// NumTaskTrackers is the number of TaskTrackers, running or not.
	NumTaskTrackers() int
	StartTaskTracker(i int) error
	StopTaskTracker(i int) error
	// Close stops the TaskTrackers, then the JobTracker. Safe to call
	// twice.
	Close() error
}

// DefaultLayout is `strata local`'s node layout: an SSD and a DISK volume
// under <dir>/dn<i>, intermediate data on the SSD directory.
func DefaultLayout(dir string) func(i int) Node {
	return func(i int) Node {
		base := NodeDir(dir, i)
		return Node{
			Volumes: []fsdataset.VolumeConfig{
				{Path: filepath.Join(base, "ssd"), Type: storage.SSD},
				{Path: filepath.Join(base, "disk"), Type: storage.Disk},
			},
			LocalDirs: []string{filepath.Join(base, "ssd", "mapred-local")},
		}
	}
}

// NodeDir is node i's directory under dir.
func NodeDir(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("dn%d", i)) }

// StartError is a daemon that did not start; Hint, if set, says what the
// user can do about it.
type StartError struct {
	Err  error
	Hint string
}

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// Cluster is a running cluster. Close stops it.
type Cluster struct {
	// NameNode is the running NameNode (nil while stopped): NameNodes[0],
	// which in HA is the first member, not necessarily the active one
	// (ActiveNameNode).
	NameNode *namenode.NameNode
	// NameNodes are the NameNodes by member index (one without HA); a
	// stopped one is nil.
	NameNodes []*namenode.NameNode
	// Nameservice is the HA nameservice's id, "" without HA.
	Nameservice string
	// DataNodes are the DataNodes by index; a stopped one is nil.
	DataNodes []*datanode.DataNode
	// MapReduce is the JobTracker and TaskTrackers, nil without.
	MapReduce MapReduce
	// Nodes are the layouts the nodes were started with.
	Nodes []Node
	// NameDir is the (first) NameNode's name directory; Formatted is the
	// cluster ID if Start formatted it.
	NameDir, Formatted string

	cfg    Config
	log    *slog.Logger
	conf   *conf.Configuration // Conf with the cluster's own settings
	nnCfgs []namenode.Config   // by member index
	ha     map[string]string   // the nameservice's keys, nil without HA
	dnCfgs []datanode.Config
}

// Config is the configuration the cluster was started with, with its
// defaults filled in (Layout, HostName, Logger).
func (c *Cluster) Config() Config { return c.cfg }

// Conf is a copy of the configuration the daemons were started from:
// Config.Conf with the cluster's own settings (name directory, safe-mode
// extension).
func (c *Cluster) Conf() *conf.Configuration { return c.conf.Clone() }

// DefaultFS is the cluster's fs.defaultFS: hdfs://<nameservice> in HA.
func (c *Cluster) DefaultFS() string {
	if c.Nameservice != "" {
		return "hdfs://" + c.Nameservice
	}
	return "hdfs://" + c.NameNodeAddr()
}

// NameNodeAddr is the (first) NameNode's RPC address; it stays the same
// across StopNameNode and StartNameNode.
func (c *Cluster) NameNodeAddr() string { return c.nnCfgs[0].RPCAddr }

// NameNodeConfig is the configuration NameNode i runs with.
func (c *Cluster) NameNodeConfig(i int) namenode.Config { return c.nnCfgs[i] }

// JobTrackerAddr is the JobTracker's address ("" without MapReduce); it
// stays the same across restarts.
func (c *Cluster) JobTrackerAddr() string {
	if c.MapReduce == nil {
		return ""
	}
	return c.MapReduce.JobTrackerAddr()
}

// ClientConf returns base with fs.defaultFS set to the cluster (in HA,
// with the nameservice's keys) and, with MapReduce, jobs sent to its
// JobTracker.
func (c *Cluster) ClientConf(base *conf.Configuration) *conf.Configuration {
	out := base.Clone()
	for k, v := range c.ha {
		out.Set(k, v)
	}
	out.Set("fs.defaultFS", c.DefaultFS())
	if a := c.JobTrackerAddr(); a != "" {
		out.Set("mapreduce.framework.name", "classic")
		out.Set("mapreduce.jobtracker.address", a)
	}
	return out
}

// KeyBlockTokens is dfs.block.access.token.enable, which Start sets to
// true unless the configuration sets it.
const KeyBlockTokens = "dfs.block.access.token.enable"

// Start formats the name directory if it is new and starts the NameNode,
// the DataNodes and, with Config.MapReduce, the trackers. On error,
// whatever started is stopped.
func Start(cfg Config) (cl *Cluster, err error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	cfg.Logger = log
	if cfg.Layout == nil {
		cfg.Layout = DefaultLayout(cfg.Dir)
	}
	if cfg.HostName == nil {
		cfg.HostName = hostName
	}
	c := cfg.Conf.Clone()
	if !c.IsSet("dfs.namenode.safemode.extension") {
		// One process holds the whole cluster: once its DataNodes have
		// reported, there is nothing more to wait for.
		c.Set("dfs.namenode.safemode.extension", "0")
	}
	if !c.IsSet("dfs.namenode.name.dir") {
		c.Set("dfs.namenode.name.dir", filepath.Join(cfg.Dir, "name"))
	}
	if !c.IsSet(KeyBlockTokens) {
		// Block access tokens on, as a cluster should run: its DataNodes
		// serve no op without the NameNode's token. A configuration may
		// still turn them off.
		c.Set(KeyBlockTokens, "true")
	}
	cl = &Cluster{cfg: cfg, log: log, conf: c}
	if cfg.NameNodes > 1 || c.IsSet(nameservice.KeyNameservices) {
		if err := cl.startHA(); err != nil {
			return nil, err
		}
	} else if _, err := os.Stat(filepath.Join(cfg.Dir, NameserviceFile)); err == nil {
		return nil, fmt.Errorf("localcluster: %s holds an HA nameservice (%s): start it with its NameNodes (strata local -ha)", cfg.Dir, NameserviceFile)
	} else if err := cl.startSingle(); err != nil {
		return nil, err
	}
	started := cl // a failing return sets cl to nil before this runs
	defer func() {
		if err != nil {
			started.Close()
		}
	}()

	for i := 0; i < cfg.DataNodes; i++ {
		if _, err := cl.AddDataNode(); err != nil {
			return nil, err
		}
	}
	if cfg.MapReduce == nil {
		return cl, nil
	}
	mr, err := cfg.MapReduce(cl)
	if err != nil {
		return nil, err
	}
	cl.MapReduce = mr
	return cl, nil
}

func hostName(i int) string { return fmt.Sprintf("localhost-dn%d", i) }

// DefaultHostName is node i's name when Config.HostName is nil.
func DefaultHostName(i int) string { return hostName(i) }

// startSingle formats the name directory if it is new and starts the one
// NameNode.
func (c *Cluster) startSingle() error {
	nc, err := namenode.ConfigFrom(c.conf)
	if err != nil {
		return err
	}
	nc.Logger = c.log
	if c.cfg.NameNodeConfig != nil {
		c.cfg.NameNodeConfig(&nc)
	}
	c.NameDir, c.nnCfgs, c.NameNodes = nc.NameDir, []namenode.Config{nc}, make([]*namenode.NameNode, 1)
	if !formatted(nc.NameDir) {
		v, err := namenode.Format(nc, false)
		if err != nil {
			return fmt.Errorf("format %s: %w", nc.NameDir, err)
		}
		c.Formatted = v.ClusterID
	}
	return c.StartNameNodeAt(0)
}

// formatted reports whether a name directory holds a formatted storage.
func formatted(nameDir string) bool {
	_, err := os.Stat(filepath.Join(nameDir, "current", "VERSION"))
	return !os.IsNotExist(err)
}

// NumNameNodes is the number of NameNodes, running or not.
func (c *Cluster) NumNameNodes() int { return len(c.NameNodes) }

// StartNameNode starts every stopped NameNode (without HA, the
// NameNode).
func (c *Cluster) StartNameNode() error {
	for i := range c.NameNodes {
		if err := c.StartNameNodeAt(i); err != nil {
			return err
		}
	}
	return nil
}

// StartNameNodeAt starts stopped NameNode i on its storage. After the
// first start it binds the RPC and HTTP addresses it had, so clients and
// DataNodes find it again (an HA member's addresses are fixed by the
// nameservice).
func (c *Cluster) StartNameNodeAt(i int) error {
	if c.NameNodes[i] != nil {
		return nil
	}
	nn, err := namenode.New(c.nnCfgs[i])
	if err != nil {
		return err
	}
	if err := nn.Start(); err != nil {
		nn.Close()
		hint := "another strata or Hadoop may be using the port: choose others with -D dfs.namenode.rpc-address=127.0.0.1:0 -D dfs.namenode.http-address=127.0.0.1:0"
		if c.ha != nil {
			hint = "another process may be using the port; the nameservice's addresses are kept in " + filepath.Join(c.cfg.Dir, NameserviceFile)
		}
		return &StartError{Err: fmt.Errorf("namenode %d: %w", i, err), Hint: hint}
	}
	c.NameNodes[i] = nn
	if i == 0 {
		c.NameNode = nn
	}
	c.nnCfgs[i].RPCAddr = nn.RPCAddr()
	if a := nn.HTTPAddr(); a != "" {
		c.nnCfgs[i].HTTPAddr = a
	}
	return nil
}

// StopNameNode closes every NameNode, each saving a checkpoint; their
// storage and addresses are kept for StartNameNode. It returns the first
// error.
func (c *Cluster) StopNameNode() error {
	var first error
	for i := range c.NameNodes {
		if err := c.StopNameNodeAt(i); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// StopNameNodeAt closes NameNode i, which saves a checkpoint; its storage
// and addresses are kept for StartNameNodeAt.
func (c *Cluster) StopNameNodeAt(i int) error {
	nn := c.NameNodes[i]
	if nn == nil {
		return nil
	}
	c.NameNodes[i] = nil
	if i == 0 {
		c.NameNode = nil
	}
	return nn.Close()
}

// AddDataNode lays out, configures and starts one more DataNode (node
// len(DataNodes)) and returns its index. The DataNode and TaskTracker
// hooks of Config apply to it; with MapReduce running, it gets no
// TaskTracker.
func (c *Cluster) AddDataNode() (int, error) {
	i := len(c.DataNodes)
	nn := c.NameNodeAddr()
	if c.Nameservice != "" {
		nn = c.Nameservice // every member (datanode.ConfigFrom)
	}
	dc, err := datanode.ConfigFrom(c.conf, nn)
	if err != nil && !c.conf.IsSet("dfs.datanode.data.dir") {
		err = nil // the per-node directories below replace the default
	}
	if err != nil {
		return -1, err
	}
	node := c.cfg.Layout(i)
	dc.Volumes = node.Volumes
	dc.XferAddr, dc.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
	if i == 0 && c.conf.IsSet("dfs.datanode.address") {
		dc.XferAddr = c.conf.Get("dfs.datanode.address")
	}
	dc.Hostname = c.cfg.HostName(i)
	dc.Logger = c.log.With("dn", i)
	// The NameNodes' bound web addresses (port 0 picks one), whose pages
	// may upload to the DataNode (CORS).
	dc.NameNodeHTTPAddrs = nil
	for _, nc := range c.nnCfgs {
		if nc.HTTPAddr != "" {
			dc.NameNodeHTTPAddrs = append(dc.NameNodeHTTPAddrs, nc.HTTPAddr)
		}
	}
	if c.cfg.DataNodeConfig != nil {
		c.cfg.DataNodeConfig(i, &dc)
	}
	c.dnCfgs = append(c.dnCfgs, dc)
	c.DataNodes = append(c.DataNodes, nil)
	if err := c.StartDataNode(i); err != nil {
		c.dnCfgs, c.DataNodes = c.dnCfgs[:i], c.DataNodes[:i]
		return -1, err
	}
	c.Nodes = append(c.Nodes, node)
	return i, nil
}

// StartDataNode starts stopped DataNode i on its storage. After its first
// start it binds the transfer and HTTP addresses it had, as a host's
// DataNode does.
func (c *Cluster) StartDataNode(i int) error {
	if c.DataNodes[i] != nil {
		return nil
	}
	d, err := datanode.New(c.dnCfgs[i])
	if err == nil {
		if err = d.Start(); err != nil {
			d.Close() // its volumes are open
		}
	}
	if err != nil {
		return fmt.Errorf("datanode %d: %w", i, err)
	}
	c.dnCfgs[i].XferAddr = d.XferAddr()
	if a := d.HTTPAddr(); a != "" {
		c.dnCfgs[i].HTTPAddr = a
	}
	c.DataNodes[i] = d
	return nil
}

// StopDataNode closes DataNode i: its connections drop as in a crash, its
// volumes are released and its storage stays.
func (c *Cluster) StopDataNode(i int) error {
	d := c.DataNodes[i]
	if d == nil {
		return nil
	}
	c.DataNodes[i] = nil
	return d.Close()
}

// DataNodeConfig is the configuration DataNode i runs with.
func (c *Cluster) DataNodeConfig(i int) datanode.Config { return c.dnCfgs[i] }

// Close stops the TaskTrackers, the JobTracker, the DataNodes and the
// NameNode, in that order; it returns the NameNode's error (a failed
// checkpoint is the one that loses something). Safe to call twice.
func (c *Cluster) Close() error {
	if c.MapReduce != nil {
		c.MapReduce.Close()
	}
	for i := range c.DataNodes {
		c.StopDataNode(i)
	}
	c.DataNodes = nil
	return c.StopNameNode()
}

// VolumeList formats volumes as "[SSD] /a, [DISK] /b".
func VolumeList(vs []fsdataset.VolumeConfig) string {
	s := ""
	for i, v := range vs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("[%s] %s", v.Type, v.Path)
	}
	return s
}

// WaitReady waits until every running DataNode has registered and the
// (active) NameNode has left safe mode, or ctx ends.
func (c *Cluster) WaitReady(ctx context.Context) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		want := 0
		for _, d := range c.DataNodes {
			if d != nil {
				want++
			}
		}
		var st namenode.Status
		a := c.ActiveNameNode()
		if a >= 0 {
			st = c.NameNodes[a].Status()
			if st.LiveDataNodes >= want && !st.SafeMode {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if a < 0 {
				return fmt.Errorf("waiting for an active NameNode: %w", ctx.Err())
			}
			return fmt.Errorf("waiting for %d DataNodes (%d live, safe mode %v): %w", want, st.LiveDataNodes, st.SafeMode, ctx.Err())
		case <-t.C:
		}
	}
}

// ActiveNameNode is the index of the one running NameNode that is
// active, or -1 when none is (or, for a moment in a failover, more than
// one believes it is). Without HA it is 0 while the NameNode runs.
func (c *Cluster) ActiveNameNode() int {
	found, n := -1, 0
	for i, nn := range c.NameNodes {
		if nn != nil && nn.ServiceState() == namenode.HAActive {
			found, n = i, n+1
		}
	}
	if n != 1 {
		return -1
	}
	return found
}

// WaitActive waits until exactly one NameNode is active and returns its
// index, or ctx ends.
func (c *Cluster) WaitActive(ctx context.Context) (int, error) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if a := c.ActiveNameNode(); a >= 0 {
			return a, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("waiting for an active NameNode: %w", ctx.Err())
		case <-t.C:
		}
	}
}
