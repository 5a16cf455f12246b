package localcluster

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
)

// A cluster Start builds (strata local, strata experiment) runs with
// block access tokens on unless its configuration says otherwise, and
// files still write and read.
func TestStartTurnsBlockTokensOn(t *testing.T) {
	off := testConf()
	off.Set(KeyBlockTokens, "false")
	cl, err := Start(Config{Conf: off, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got := cl.Conf().Get(KeyBlockTokens); got != "false" {
		t.Errorf("an explicit %s=false became %q", KeyBlockTokens, got)
	}
	cl.Close()

	cl, err = Start(Config{Conf: testConf(), Dir: t.TempDir(), DataNodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if got := cl.Conf().Get(KeyBlockTokens); got != "true" {
		t.Fatalf("%s = %q in the cluster's configuration, want true", KeyBlockTokens, got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if st := cl.DataNodes[0].Status(); st.BlockKeys && !st.BlockTokens {
		t.Error("the NameNode handed keys over with tokens off")
	}
	hc, err := hdfs.New(hdfs.Options{Addr: cl.NameNodeAddr(), User: cl.nnCfgs[0].Superuser})
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	data := bytes.Repeat([]byte("tokens on "), 1000)
	w, err := hc.CreateFile(ctx, "/t", fs.CreateOptions{Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := hc.OpenFile(ctx, "/t")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v)", len(got), err)
	}
}
