package localcluster

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
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
