// Package localcluster starts a whole strata cluster in this process: a
// NameNode, N DataNodes and, optionally, a JobTracker with one TaskTracker
// per DataNode. It is what `strata local` runs and what `strata experiment`
// builds once per storage profile.
//
// Every daemon is the real one (the same packages the standalone commands
// start); only the process is shared. The caller decides each node's
// layout — its DataNode volumes (directory and storage type) and its
// TaskTracker's mapreduce.cluster.local.dir — so one cluster can keep HDFS
// on one directory and intermediate data on another. TaskTrackers are named
// like their DataNodes (localhost-dn<i>) so that maps on a node's blocks
// count as data-local, and each runs its attempts as child processes of
// Config.Executable (default this program) with the argument "task".
//
// Storage is under Config.Dir: the NameNode's name directory is
// <dir>/name (unless dfs.namenode.name.dir is set), formatted on first
// use; the nodes' directories are wherever Config.Layout puts them
// (default <dir>/dn<i>/ssd and <dir>/dn<i>/disk, intermediate data in
// <dir>/dn<i>/ssd/mapred-local).
package localcluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/jobtracker"
	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/tasktracker"
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
	// Layout returns node i's layout; nil means DefaultLayout.
	Layout func(i int) Node
	// MapReduce starts a JobTracker and the TaskTrackers.
	MapReduce bool
	// DefaultJobTracker is the JobTracker address used when
	// mapreduce.jobtracker.address is unset or "local".
	DefaultJobTracker string
	// MapSlots and ReduceSlots, if positive, replace
	// mapred.tasktracker.{map,reduce}.tasks.maximum.
	MapSlots, ReduceSlots int
	// Executable runs the TaskTrackers' attempts; default this program.
	Executable string
	Logger     *slog.Logger
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
	NameNode     *namenode.NameNode
	DataNodes    []*datanode.DataNode
	JobTracker   *jobtracker.JobTracker // nil without MapReduce
	TaskTrackers []*tasktracker.TaskTracker
	// Nodes are the layouts the nodes were started with.
	Nodes []Node
	// NameDir is the NameNode's name directory; Formatted is the cluster
	// ID if Start formatted it.
	NameDir, Formatted string
}

// DefaultFS is the cluster's fs.defaultFS.
func (c *Cluster) DefaultFS() string { return "hdfs://" + c.NameNode.RPCAddr() }

// ClientConf returns base with fs.defaultFS set to the cluster and, with
// MapReduce, jobs sent to its JobTracker.
func (c *Cluster) ClientConf(base *conf.Configuration) *conf.Configuration {
	out := base.Clone()
	out.Set("fs.defaultFS", c.DefaultFS())
	if c.JobTracker != nil {
		out.Set("mapreduce.framework.name", "classic")
		out.Set("mapreduce.jobtracker.address", c.JobTracker.Addr())
	}
	return out
}

// Start formats the name directory if it is new and starts the daemons.
// On error, whatever started is stopped.
func Start(cfg Config) (cl *Cluster, err error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.Layout == nil {
		cfg.Layout = DefaultLayout(cfg.Dir)
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
	nc, err := namenode.ConfigFrom(c)
	if err != nil {
		return nil, err
	}
	nc.Logger = log
	cl = &Cluster{NameDir: nc.NameDir}
	if _, err := os.Stat(filepath.Join(nc.NameDir, "current", "VERSION")); os.IsNotExist(err) {
		v, err := namenode.Format(nc, false)
		if err != nil {
			return nil, fmt.Errorf("format %s: %w", nc.NameDir, err)
		}
		cl.Formatted = v.ClusterID
	}
	nn, err := namenode.New(nc)
	if err != nil {
		return nil, err
	}
	if err := nn.Start(); err != nil {
		nn.Close()
		return nil, &StartError{Err: err, Hint: "another strata or Hadoop may be using the port: choose others with -D dfs.namenode.rpc-address=127.0.0.1:0 -D dfs.namenode.http-address=127.0.0.1:0"}
	}
	cl.NameNode = nn
	started := cl // a failing return sets cl to nil before this runs
	defer func() {
		if err != nil {
			started.Close()
		}
	}()

	for i := 0; i < cfg.DataNodes; i++ {
		dc, err := datanode.ConfigFrom(c, nn.RPCAddr())
		if err != nil && !c.IsSet("dfs.datanode.data.dir") {
			err = nil // the per-node directories below replace the default
		}
		if err != nil {
			return nil, err
		}
		node := cfg.Layout(i)
		dc.Volumes = node.Volumes
		dc.XferAddr, dc.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
		if i == 0 && c.IsSet("dfs.datanode.address") {
			dc.XferAddr = c.Get("dfs.datanode.address")
		}
		dc.Hostname = hostName(i)
		dc.Logger = log.With("dn", i)
		d, err := datanode.New(dc)
		if err == nil {
			if err = d.Start(); err != nil {
				d.Close() // its volumes are open
			}
		}
		if err != nil {
			return nil, fmt.Errorf("datanode %d: %w", i, err)
		}
		cl.DataNodes = append(cl.DataNodes, d)
		cl.Nodes = append(cl.Nodes, node)
	}
	if !cfg.MapReduce {
		return cl, nil
	}
	mc := c.Clone()
	if a := mc.Get("mapreduce.jobtracker.address"); a == "" || a == "local" {
		mc.Set("mapreduce.jobtracker.address", cfg.DefaultJobTracker)
	}
	jc, err := jobtracker.ConfigFrom(mc)
	if err != nil {
		return nil, err
	}
	jc.Logger = log.With("daemon", "jobtracker")
	jt := jobtracker.New(jc)
	if err := jt.Start(); err != nil {
		return nil, &StartError{Err: err, Hint: "choose another port with -D mapreduce.jobtracker.address=127.0.0.1:0, or -nomapreduce"}
	}
	cl.JobTracker = jt
	mc.Set("mapreduce.jobtracker.address", jt.Addr())
	if cfg.MapSlots > 0 {
		mc.Set("mapred.tasktracker.map.tasks.maximum", strconv.Itoa(cfg.MapSlots))
	}
	if cfg.ReduceSlots > 0 {
		mc.Set("mapred.tasktracker.reduce.tasks.maximum", strconv.Itoa(cfg.ReduceSlots))
	}
	for i := range cl.DataNodes {
		tc, err := tasktracker.ConfigFrom(mc)
		if err != nil {
			return nil, err
		}
		if !c.IsSet("mapreduce.cluster.local.dir") {
			tc.LocalDirs = cl.Nodes[i].LocalDirs
		}
		if len(tc.LocalDirs) == 0 {
			return nil, fmt.Errorf("tasktracker %d: no mapreduce.cluster.local.dir", i)
		}
		tc.HTTPAddr, tc.Host = "127.0.0.1:0", hostName(i)
		tc.Executable = cfg.Executable
		tc.Logger = log.With("tt", i)
		t, err := tasktracker.New(tc)
		if err == nil {
			if err = t.Start(); err != nil {
				t.Close()
			}
		}
		if err != nil {
			return nil, fmt.Errorf("tasktracker %d: %w", i, err)
		}
		cl.TaskTrackers = append(cl.TaskTrackers, t)
	}
	return cl, nil
}

func hostName(i int) string { return fmt.Sprintf("localhost-dn%d", i) }

// Close stops the TaskTrackers, the JobTracker, the DataNodes and the
// NameNode, in that order; it returns the NameNode's error (a failed
// checkpoint is the one that loses something).
func (c *Cluster) Close() error {
	for _, t := range c.TaskTrackers {
		t.Close()
	}
	c.TaskTrackers = nil
	if c.JobTracker != nil {
		c.JobTracker.Close()
	}
	for _, d := range c.DataNodes {
		d.Close()
	}
	c.DataNodes = nil
	var err error
	if c.NameNode != nil {
		err = c.NameNode.Close()
	}
	return err
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

// WaitReady waits until every DataNode has registered and the NameNode
// has left safe mode, or ctx ends.
func (c *Cluster) WaitReady(ctx context.Context) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		st := c.NameNode.Status()
		if st.LiveDataNodes >= len(c.DataNodes) && !st.SafeMode {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d DataNodes (%d live, safe mode %v): %w", len(c.DataNodes), st.LiveDataNodes, st.SafeMode, ctx.Err())
		case <-t.C:
		}
	}
}
