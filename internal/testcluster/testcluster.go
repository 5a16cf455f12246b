// Package testcluster runs a strata cluster inside a test process: a
// NameNode on loopback with its storage in the test's temporary directory,
// with helpers to restart it and to get clients. Later components add
// themselves here so every test builds clusters the same way.
package testcluster

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/storage"
)

// Config shapes a Cluster.
type Config struct {
	// DataNodes is the number of DataNodes (0: none).
	DataNodes int
	// Volumes are the storage types of each DataNode's volumes (default:
	// one SSD and one DISK volume).
	Volumes []storage.Type
	// NameNode, if set, adjusts the NameNode's configuration.
	NameNode func(*namenode.Config)
	// DataNode, if set, adjusts DataNode i's configuration.
	DataNode func(i int, c *datanode.Config)
	// Verbose sends daemon logs to stderr (STRATA_TEST_LOG=1 does too).
	Verbose bool
}

// Cluster is an in-process cluster. Close is registered with t.Cleanup.
type Cluster struct {
	dns     []*datanode.DataNode
	dnCfgs  []datanode.Config
	t       testing.TB
	cfg     Config
	dir     string
	nnCfg   namenode.Config
	nn      *namenode.NameNode
	rpcAddr string
}

// New formats storage and starts a NameNode; it fails the test on error.
func New(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	c := &Cluster{t: t, cfg: cfg, dir: t.TempDir()}
	nc := namenode.DefaultConfig()
	nc.NameDir = filepath.Join(c.dir, "name")
	nc.RPCAddr = "127.0.0.1:0"
	nc.HTTPAddr = "127.0.0.1:0"
	nc.Logger = c.logger()
	// Fast failure detection and replication for tests.
	nc.HeartbeatInterval = 100 * time.Millisecond
	nc.HeartbeatExpiry = 2 * time.Second
	nc.ReplicationInterval = 200 * time.Millisecond
	nc.ReplicationTimeout = 10 * time.Second
	nc.SafeModeExtension = 0
	nc.MinBlockSize = 1024
	if cfg.NameNode != nil {
		cfg.NameNode(&nc)
	}
	if _, err := namenode.Format(nc, false); err != nil {
		t.Fatalf("testcluster: format: %v", err)
	}
	c.nnCfg = nc
	c.startNameNode()
	t.Cleanup(c.Close)
	for i := 0; i < cfg.DataNodes; i++ {
		c.AddDataNode()
	}
	if cfg.DataNodes > 0 {
		c.WaitDataNodes(cfg.DataNodes)
	}
	return c
}

// AddDataNode starts one more DataNode and returns its index.
func (c *Cluster) AddDataNode() int {
	c.t.Helper()
	i := len(c.dns)
	types := c.cfg.Volumes
	if len(types) == 0 {
		types = []storage.Type{storage.SSD, storage.Disk}
	}
	var vols []fsdataset.VolumeConfig
	for j, ty := range types {
		vols = append(vols, fsdataset.VolumeConfig{Path: filepath.Join(c.dir, fmt.Sprintf("dn%d", i), fmt.Sprintf("%s%d", ty, j)), Type: ty})
	}
	dc := datanode.Config{
		Volumes: vols, NameNodeAddr: c.rpcAddr, XferAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0",
		Hostname: fmt.Sprintf("dn%d", i), User: c.nnCfg.Superuser,
		HeartbeatInterval: 100 * time.Millisecond, Logger: c.logger().With("dn", i),
	}
	if c.cfg.DataNode != nil {
		c.cfg.DataNode(i, &dc)
	}
	c.dnCfgs = append(c.dnCfgs, dc)
	c.dns = append(c.dns, nil)
	c.startDataNode(i)
	return i
}

func (c *Cluster) startDataNode(i int) {
	c.t.Helper()
	dn, err := datanode.New(c.dnCfgs[i])
	if err != nil {
		c.t.Fatalf("testcluster: datanode %d: %v", i, err)
	}
	if err := dn.Start(); err != nil {
		dn.Close()
		c.t.Fatalf("testcluster: datanode %d start: %v", i, err)
	}
	// Restarts keep the transfer address, as a real host does.
	c.dnCfgs[i].XferAddr = dn.XferAddr()
	c.dns[i] = dn
}

// DataNode returns DataNode i (nil while it is stopped).
func (c *Cluster) DataNode(i int) *datanode.DataNode { return c.dns[i] }

// NumDataNodes is the number of DataNodes ever added.
func (c *Cluster) NumDataNodes() int { return len(c.dns) }

// StopDataNode closes DataNode i, as a crash of its process would look to
// the others (its connections drop; its storage stays).
func (c *Cluster) StopDataNode(i int) {
	if c.dns[i] != nil {
		c.dns[i].Close()
		c.dns[i] = nil
	}
}

// RestartDataNode starts a stopped DataNode on the same storage.
func (c *Cluster) RestartDataNode(i int) {
	c.t.Helper()
	c.StopDataNode(i)
	c.startDataNode(i)
}

// WaitDataNodes waits until n DataNodes are live at the NameNode.
func (c *Cluster) WaitDataNodes(n int) {
	c.t.Helper()
	c.WaitFor(fmt.Sprintf("%d live datanodes", n), 30*time.Second, func() bool {
		return c.nn.Status().LiveDataNodes >= n
	})
}

// WaitFor polls cond until it holds or the timeout passes (then the test
// fails, naming what).
func (c *Cluster) WaitFor(what string, timeout time.Duration, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("testcluster: timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// BlockReplicas lists, for each block of p, the storage types of its good
// replicas as the NameNode reports them.
func (c *Cluster) BlockReplicas(p string) [][]storage.Type {
	c.t.Helper()
	cl := c.Client(c.Superuser())
	locs, err := cl.BlockLocations(context.Background(), p)
	if err != nil {
		c.t.Fatalf("testcluster: block locations of %s: %v", p, err)
	}
	var out [][]storage.Type
	for _, b := range locs {
		out = append(out, b.StorageTypes)
	}
	return out
}

// WaitReplicated waits until every block of p has n good replicas.
func (c *Cluster) WaitReplicated(p string, n int, timeout time.Duration) {
	c.t.Helper()
	c.WaitFor(fmt.Sprintf("%s to have %d replicas per block", p, n), timeout, func() bool {
		for _, b := range c.BlockReplicas(p) {
			if len(b) != n {
				return false
			}
		}
		return true
	})
}

func (c *Cluster) logger() *slog.Logger {
	if c.cfg.Verbose || os.Getenv("STRATA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func (c *Cluster) startNameNode() {
	c.t.Helper()
	nn, err := namenode.New(c.nnCfg)
	if err != nil {
		c.t.Fatalf("testcluster: namenode: %v", err)
	}
	if err := nn.Start(); err != nil {
		nn.Close()
		c.t.Fatalf("testcluster: namenode start: %v", err)
	}
	c.nn = nn
	c.rpcAddr = nn.RPCAddr()
	// A restart must come back on the same address: clients keep it.
	c.nnCfg.RPCAddr = c.rpcAddr
}

// NameNode returns the running NameNode.
func (c *Cluster) NameNode() *namenode.NameNode { return c.nn }

// Addr is the NameNode's RPC address.
func (c *Cluster) Addr() string { return c.rpcAddr }

// URI is hdfs://<addr>.
func (c *Cluster) URI() string { return "hdfs://" + c.rpcAddr }

// Dir is the cluster's root directory.
func (c *Cluster) Dir() string { return c.dir }

// Superuser is the user the NameNode treats as superuser.
func (c *Cluster) Superuser() string { return c.nnCfg.Superuser }

// RestartNameNode closes the NameNode (saving a checkpoint) and starts a
// new one on the same storage and address.
func (c *Cluster) RestartNameNode() {
	c.t.Helper()
	if err := c.nn.Close(); err != nil {
		c.t.Fatalf("testcluster: namenode close: %v", err)
	}
	c.startNameNode()
}

// Client returns a strata HDFS client acting as user, closed at cleanup.
func (c *Cluster) Client(user string) *hdfs.Client {
	c.t.Helper()
	cl, err := hdfs.New(hdfs.Options{Addr: c.rpcAddr, User: user})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { cl.Close() })
	return cl
}

// Close stops every daemon. Safe to call twice.
func (c *Cluster) Close() {
	for i := range c.dns {
		c.StopDataNode(i)
	}
	if c.nn != nil {
		c.nn.Close()
	}
}

// ReplicaFile returns the path of DataNode i's data file for blockID, or
// "" when it has none.
func (c *Cluster) ReplicaFile(i int, blockID uint64) string {
	want := fmt.Sprintf("blk_%d", blockID)
	found := ""
	filepath.WalkDir(filepath.Join(c.dir, fmt.Sprintf("dn%d", i)), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == want {
			found = p
		}
		return nil
	})
	return found
}

// CorruptReplica flips one byte of DataNode i's replica of blockID on
// disk, at offset off, as a failing disk would.
func (c *Cluster) CorruptReplica(i int, blockID uint64, off int64) {
	c.t.Helper()
	p := c.ReplicaFile(i, blockID)
	if p == "" {
		c.t.Fatalf("testcluster: datanode %d has no replica of blk_%d", i, blockID)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		c.t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		c.t.Fatal(err)
	}
}

// DataNodeIndex returns the index of the DataNode with the given UUID, or -1.
func (c *Cluster) DataNodeIndex(uuid string) int {
	for i, d := range c.dns {
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
