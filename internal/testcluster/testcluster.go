// Package testcluster runs a strata cluster inside a test process: a
// NameNode on loopback with its storage in the test's temporary directory,
// with helpers to restart it and to get clients. Later components add
// themselves here so every test builds clusters the same way.
package testcluster

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/namenode"
)

// Config shapes a Cluster.
type Config struct {
	// NameNode, if set, adjusts the NameNode's configuration.
	NameNode func(*namenode.Config)
	// Verbose sends daemon logs to stderr (STRATA_TEST_LOG=1 does too).
	Verbose bool
}

// Cluster is an in-process cluster. Close is registered with t.Cleanup.
type Cluster struct {
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
	if cfg.NameNode != nil {
		cfg.NameNode(&nc)
	}
	if _, err := namenode.Format(nc, false); err != nil {
		t.Fatalf("testcluster: format: %v", err)
	}
	c.nnCfg = nc
	c.startNameNode()
	t.Cleanup(c.Close)
	return c
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
	if c.nn != nil {
		c.nn.Close()
	}
}
