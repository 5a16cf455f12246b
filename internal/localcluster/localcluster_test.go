package localcluster

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/hdfs"
)

func testConf() *conf.Configuration {
	c := conf.New()
	c.Set("dfs.namenode.rpc-address", "127.0.0.1:0")
	c.Set("dfs.namenode.http-address", "127.0.0.1:0")
	return c
}

// A DataNode that fails to start releases its volumes: the same
// directory starts again in the same process.
func TestFailedStartReleasesVolumes(t *testing.T) {
	dir := t.TempDir()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	c := testConf()
	c.Set("dfs.datanode.address", busy.Addr().String())
	if cl, err := Start(Config{Conf: c, Dir: dir, DataNodes: 1}); err == nil {
		cl.Close()
		t.Fatal("a DataNode started on a busy port")
	}
	cl, err := Start(Config{Conf: testConf(), Dir: dir, DataNodes: 1})
	if err != nil {
		t.Fatalf("second start on the same directory: %v", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
}

// Stopping and starting each daemon keeps its storage and addresses: the
// NameNode comes back on its RPC address with the namespace, a DataNode
// on its transfer address with its identity, and a stopped DataNode is
// nil until it starts.
func TestRestartKeepsAddresses(t *testing.T) {
	c := testConf()
	c.Set("dfs.heartbeat.interval", "100ms") // DataNodes find the restarted NameNode at once
	cl, err := Start(Config{Conf: c, Dir: t.TempDir(), DataNodes: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	hc, err := hdfs.New(hdfs.Options{Addr: cl.NameNodeAddr(), User: cl.nnCfgs[0].Superuser})
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	if err := hc.Mkdirs(ctx, "/kept", 0o755); err != nil {
		t.Fatal(err)
	}
	rpc, xfer, uuid := cl.NameNodeAddr(), cl.DataNodes[1].XferAddr(), cl.DataNodes[1].UUID()
	if err := cl.StopDataNode(1); err != nil {
		t.Fatal(err)
	}
	if cl.DataNodes[1] != nil {
		t.Fatal("a stopped DataNode is still listed")
	}
	if err := cl.StopNameNode(); err != nil {
		t.Fatal(err)
	}
	if err := cl.StartNameNode(); err != nil {
		t.Fatal(err)
	}
	if err := cl.StartDataNode(1); err != nil {
		t.Fatal(err)
	}
	if cl.NameNodeAddr() != rpc || cl.DataNodes[1].XferAddr() != xfer || cl.DataNodes[1].UUID() != uuid {
		t.Fatalf("after restarts: namenode %s (was %s), datanode %s %s (was %s %s)",
			cl.NameNodeAddr(), rpc, cl.DataNodes[1].XferAddr(), cl.DataNodes[1].UUID(), xfer, uuid)
	}
	if err := cl.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := hc.Stat(ctx, "/kept"); err != nil || !st.IsDir {
		t.Fatalf("/kept after the NameNode restart: %v", err)
	}
}
