package localcluster

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/hdfs"
)

// A block written before a failover, or before a restart of the whole
// nameservice, is readable from the new active: a standby must hold back
// replica reports of blocks it has not applied yet, not drop them (with
// default heartbeats, so a report can beat the edit).
func TestHAReadAfterFailoverAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("two 3-NameNode clusters with default heartbeats")
	}
	for _, restart := range []bool{false, true} {
		dir := t.TempDir()
		c := testConf() // default heartbeat 3 s, Raft defaults
		cl, err := Start(Config{Conf: c, Dir: dir, DataNodes: 3, NameNodes: 3})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		cl.WaitReady(ctx)
		opts, _ := hdfs.OptionsFrom(cl.ClientConf(conf.New()), "ns1")
		opts.User = cl.nnCfgs[0].Superuser
		hc, _ := hdfs.New(opts)
		data := bytes.Repeat([]byte("x"), 1000)
		writeFile(t, hc, "/f", data)
		time.Sleep(4 * time.Second)
		if restart {
			cl.Close()
			cl, err = Start(Config{Conf: c, Dir: dir, DataNodes: 3, NameNodes: 3})
			if err != nil {
				t.Fatal(err)
			}
			cl.WaitReady(ctx)
			time.Sleep(4 * time.Second)
		}
		a := cl.ActiveNameNode()
		cl.StopNameNodeAt(a)
		b, _ := cl.WaitActive(ctx)
		time.Sleep(4 * time.Second)
		r, err := hc.Open(ctx, "/f")
		if err == nil {
			buf := make([]byte, 10)
			_, err = r.Read(buf)
			r.Close()
		}
		if err != nil {
			t.Errorf("restart=%v: active %d -> %d, read: %v", restart, a, b, err)
		}
		hc.Close()
		cl.Close()
	}
}
