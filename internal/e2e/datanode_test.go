package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
)

// fastNN are NameNode settings for tests: DataNodes declared dead after
// about 2 s without a heartbeat, replication monitor every 200 ms.
var fastNN = []string{
	"-D", "dfs.heartbeat.interval=100ms",
	"-D", "dfs.namenode.heartbeat.recheck-interval=500",
	"-D", "dfs.namenode.redundancy.interval.seconds=200ms",
	"-D", "dfs.namenode.safemode.extension=0",
	"-D", "dfs.namenode.fs-limits.min-block-size=1024",
}

// dataNodeProc is a DataNode process and the transfer address it serves.
type dataNodeProc struct {
	cmd  *exec.Cmd
	log  *syncBuffer
	addr string
}

var xferRE = regexp.MustCompile(`datanode: serving.*xfer=(\S+)`)

// startDataNode runs a DataNode process for nn with an SSD and a DISK
// directory under dir, and waits for its transfer address.
func startDataNode(t *testing.T, nn *nameNode, dir string) *dataNodeProc {
	t.Helper()
	args := append([]string{
		"-D", "dfs.namenode.rpc-address=" + nn.rpc,
		"-D", fmt.Sprintf("dfs.datanode.data.dir=[SSD]%s,[DISK]%s", filepath.Join(dir, "ssd"), filepath.Join(dir, "disk")),
		"-D", "dfs.datanode.address=127.0.0.1:0",
		"-D", "dfs.datanode.http.address=127.0.0.1:0",
	}, fastNN...)
	p := &dataNodeProc{cmd: exec.Command(strataBin, append(args, "datanode")...), log: &syncBuffer{}}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		p.cmd.Wait()
		if t.Failed() {
			t.Logf("datanode %s log:\n%s", dir, p.log.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for p.addr == "" {
		if m := xferRE.FindStringSubmatch(p.log.String()); m != nil {
			p.addr = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("datanode did not start; log:\n%s", p.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p
}

func waitLive(t *testing.T, c *hdfs.Client, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if live, err := c.LiveDataNodes(context.Background()); err == nil && live == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("never %d live DataNodes", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestKill9DataNodeDuringWrite runs NameNode and DataNodes as processes,
// kills (SIGKILL) a DataNode in the middle of a replication-3 write, and
// checks that the write completes, the file reads back, and the NameNode
// restores 3 replicas on the remaining nodes.
func TestKill9DataNodeDuringWrite(t *testing.T) {
	nn := newNameNode(t)
	nn.extra = fastNN
	nn.start()
	var dns []*dataNodeProc
	for i := 0; i < 4; i++ {
		dns = append(dns, startDataNode(t, nn, filepath.Join(nn.dir, fmt.Sprintf("dn%d", i))))
	}
	ctx := ctxT(t)
	cl, err := hdfs.New(hdfs.Options{Addr: nn.rpc, User: "root", BlockSize: 1 << 20, Replication: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	waitLive(t, cl, 4)

	data := make([]byte, 12<<20)
	for i := range data {
		data[i] = byte(i*7 + i>>11)
	}
	w, err := cl.CreateFile(ctx, "/killed", fs.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	half := len(data) / 2
	if _, err := w.Write(data[:half]); err != nil {
		t.Fatal(err)
	}
	// Kill (SIGKILL) the first DataNode of the block being written.
	locs, err := cl.BlockLocations(ctx, "/killed")
	if err != nil || len(locs) == 0 {
		t.Fatalf("no blocks after writing half: %v", err)
	}
	victim := -1
	for i, d := range dns {
		if d.addr == locs[len(locs)-1].Hosts[0] {
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("pipeline node %s is none of the DataNodes", locs[len(locs)-1].Hosts[0])
	}
	dns[victim].cmd.Process.Signal(os.Kill)
	dns[victim].cmd.Wait()
	if _, err := w.Write(data[half:]); err != nil {
		t.Fatalf("write after kill -9 of a DataNode: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close after kill -9 of a DataNode: %v", err)
	}
	f, err := cl.OpenFile(ctx, "/killed")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (err %v), want the %d written", len(got), err, len(data))
	}
	// Once the dead node is detected, every block has 3 replicas again.
	deadline := time.Now().Add(60 * time.Second)
	for {
		locs, err := cl.BlockLocations(ctx, "/killed")
		ok := err == nil
		for _, b := range locs {
			ok = ok && len(b.Hosts) == 3
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("blocks not back to 3 replicas: %+v", locs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	out, _, code := nn.strata("root", "-D", "dfs.namenode.http-address="+nn.http, "fsck", "/killed")
	if code != 0 || !bytes.Contains([]byte(out), []byte("is HEALTHY")) {
		t.Errorf("fsck after recovery (exit %d):\n%s", code, out)
	}
	nn.stop()
}
