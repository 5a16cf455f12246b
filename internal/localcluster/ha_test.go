package localcluster

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
)

// haConf is testConf with fast Raft timing, so that a failover takes
// about a second.
func haConf() *conf.Configuration {
	c := testConf()
	c.Set("dfs.heartbeat.interval", "100ms")
	c.Set("strata.ha.raft.heartbeat.timeout.ms", "500")
	c.Set("strata.ha.raft.election.timeout.ms", "500")
	c.Set("strata.ha.raft.leader-lease.timeout.ms", "250")
	return c
}

// Three NameNodes in one process form nameservice ns1: one is active, a
// client of hdfs://ns1 keeps working when it stops, and the whole cluster
// starts again on the same directory with the same addresses and
// namespace.
func TestHANameservice(t *testing.T) {
	dir := t.TempDir()
	cl, err := Start(Config{Conf: haConf(), Dir: dir, DataNodes: 1, NameNodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if cl.NumNameNodes() != 3 || cl.Nameservice != NameserviceID || cl.DefaultFS() != "hdfs://ns1" || cl.Formatted == "" {
		t.Fatalf("nameservice %q with %d NameNodes, defaultFS %s, formatted %q", cl.Nameservice, cl.NumNameNodes(), cl.DefaultFS(), cl.Formatted)
	}
	for i := 0; i < 3; i++ {
		if _, err := os.Stat(NameDirOf(dir, i) + "/current/VERSION"); err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	cc := cl.ClientConf(conf.New())
	if cc.Get("fs.defaultFS") != "hdfs://ns1" || cc.Get("dfs.ha.namenodes.ns1") != "nn1,nn2,nn3" {
		t.Fatalf("client conf: defaultFS %s, members %s", cc.Get("fs.defaultFS"), cc.Get("dfs.ha.namenodes.ns1"))
	}
	opts, err := hdfs.OptionsFrom(cc, NameserviceID)
	if err != nil {
		t.Fatal(err)
	}
	opts.User = cl.nnCfgs[0].Superuser
	hc, err := hdfs.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	data := bytes.Repeat([]byte("ha "), 5000)
	writeFile(t, hc, "/before", data)

	a := cl.ActiveNameNode()
	rpcs := make([]string, 3)
	for i := range rpcs {
		rpcs[i] = cl.NameNodeConfig(i).RPCAddr
	}
	if err := cl.StopNameNodeAt(a); err != nil {
		t.Fatal(err)
	}
	b, err := cl.WaitActive(ctx)
	if err != nil || b == a {
		t.Fatalf("new active %d (old %d): %v", b, a, err)
	}
	if got := readFile(t, hc, "/before"); !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes after failover, want %d", len(got), len(data))
	}
	if err := hc.Mkdirs(ctx, "/after", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := cl.StartNameNodeAt(a); err != nil {
		t.Fatal(err)
	}

	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	cl, err = Start(Config{Conf: haConf(), Dir: dir, DataNodes: 1, NameNodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if cl.Formatted != "" {
		t.Fatal("restart formatted again")
	}
	for i := range rpcs {
		if got := cl.NameNodeConfig(i).RPCAddr; got != rpcs[i] {
			t.Fatalf("member %d restarted on %s, was %s", i, got, rpcs[i])
		}
	}
	if err := cl.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := hc.Stat(ctx, "/after"); err != nil || !st.IsDir {
		t.Fatalf("/after after the restart: %v", err)
	}
}

// A nameservice of a different size than the one kept in the directory,
// or one NameNode, is refused, not half-started.
func TestHAKeptSizeMismatch(t *testing.T) {
	dir := t.TempDir()
	cl, err := Start(Config{Conf: haConf(), Dir: dir, NameNodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	cl.Close()
	if cl, err := Start(Config{Conf: haConf(), Dir: dir, NameNodes: 2}); err == nil {
		cl.Close()
		t.Fatal("a 2-member start on a 3-member directory succeeded")
	}
	if cl, err := Start(Config{Conf: haConf(), Dir: dir}); err == nil {
		cl.Close()
		t.Fatal("a single-NameNode start on a nameservice's directory succeeded")
	}
}

func writeFile(t *testing.T, hc *hdfs.Client, p string, data []byte) {
	t.Helper()
	w, err := hc.Create(context.Background(), p, fs.CreateOptions{Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, hc *hdfs.Client, p string) []byte {
	t.Helper()
	r, err := hc.Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
