package datanode_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/testcluster"
)

// TestClientRetriesRefusedToken: the strata client, when a DataNode
// refuses its block token (as after a token expired), asks the NameNode
// again rather than giving up on the DataNode — a write abandons the block
// and gets a new one, FileChecksum and short-circuit reads fetch new
// locations. The DataNode here refuses one op's token, as if it had
// expired in flight.
func TestClientRetriesRefusedToken(t *testing.T) {
	sockDir, err := os.MkdirTemp("", "tok")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	pattern := filepath.Join(sockDir, "dn_PORT.sock")
	c := testcluster.New(t, testcluster.Config{DataNodes: 1, DataNode: func(i int, dc *datanode.Config) { dc.DomainSocketPath = pattern }})
	dn := c.DataNode(0)
	refuseOnce := func() { datanode.RefuseNextToken(dn) }
	ctx := context.Background()
	cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: c.Superuser(), ShortCircuitSocket: pattern})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	data := bytes.Repeat([]byte("retry "), 10000)

	refuseOnce()
	w, err := cl.CreateFile(ctx, "/w", fs.CreateOptions{Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatalf("write whose first pipeline refused the token: %v", err)
	}
	refusals := dn.Status().TokenRefusals
	if refusals != 1 {
		t.Fatalf("%d refusals, want the one the write met", refusals)
	}

	refuseOnce()
	if _, err := cl.FileChecksum(ctx, "/w"); err != nil {
		t.Fatalf("FileChecksum whose first BLOCK_CHECKSUM refused the token: %v", err)
	}
	if n := dn.Status().TokenRefusals; n != refusals+1 {
		t.Fatalf("FileChecksum met %d refusals, want 1", n-refusals)
	}
	refusals++

	refuseOnce()
	f, err := cl.OpenFile(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read whose short-circuit request refused the token: %d bytes, %v", len(got), err)
	}
	// The DataNode counts a short-circuit read once it has sent the file
	// descriptors, which the client may already be reading from.
	st := dn.Status()
	for deadline := time.Now().Add(5 * time.Second); st.ShortCircuit == 0 && time.Now().Before(deadline); st = dn.Status() {
		time.Sleep(10 * time.Millisecond)
	}
	if st.TokenRefusals != refusals+1 || st.ShortCircuit != 1 {
		t.Errorf("read: %d refusals, %d short-circuit reads; want 1 and 1 (retried locally with new locations)", st.TokenRefusals-refusals, st.ShortCircuit)
	}
}
