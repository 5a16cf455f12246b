package dfstest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/testcluster"
)

func TestTruncate(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 3})
	cl := c.Client(c.Superuser())
	ctx := context.Background()
	data := randBytes(3*smallBlock+777, 11)
	writeFile(t, cl, "/t", data, 3)

	// At a block boundary: done at once.
	done, err := cl.Truncate(ctx, "/t", 2*smallBlock)
	if err != nil || !done {
		t.Fatalf("truncate at a boundary: done=%v err=%v", done, err)
	}
	if got := readFile(t, cl, "/t"); !bytes.Equal(got, data[:2*smallBlock]) {
		t.Fatalf("after boundary truncate: %d bytes", len(got))
	}
	// Inside a block: the DataNodes cut it, then the file closes.
	cut := int64(smallBlock + 12345)
	done, err = cl.Truncate(ctx, "/t", cut)
	if err != nil || done {
		t.Fatalf("truncate mid-block: done=%v err=%v", done, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := cl.WaitTruncated(wctx, "/t"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, cl, "/t"); !bytes.Equal(got, data[:cut]) {
		t.Fatalf("after mid-block truncate: %d bytes, want %d", len(got), cut)
	}
	st, err := cl.Stat(ctx, "/t")
	if err != nil || st.Length != cut {
		t.Fatalf("stat after truncate: %+v %v", st, err)
	}
	c.WaitReplicated("/t", 3, 30*time.Second)
	// The file can be appended to afterwards.
	w, err := cl.Append(ctx, "/t")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("tail"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := append(append([]byte{}, data[:cut]...), "tail"...)
	if got := readFile(t, cl, "/t"); !bytes.Equal(got, want) {
		t.Fatal("append after truncate")
	}
	// Growing is refused.
	if _, err := cl.Truncate(ctx, "/t", 1<<40); err == nil {
		t.Fatal("truncate to a larger size accepted")
	}
}

// TestLeaseRecoveryKeepsFlushedData: a writer flushes data and vanishes
// without closing; recoverLease (as another client would call it) closes
// the file with every flushed byte.
func TestLeaseRecoveryKeepsFlushedData(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 3})
	writer := c.Client(c.Superuser())
	ctx := context.Background()
	data := randBytes(smallBlock+5000, 12)
	w, err := writer.CreateFile(ctx, "/open", fs.CreateOptions{BlockSize: smallBlock, Replication: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	// The writer disappears: its connections close without a complete.
	writer.Close()

	other := c.Client(c.Superuser()) // another client (its own client name)
	var closed bool
	c.WaitFor("lease recovery to close the file", 30*time.Second, func() bool {
		var resp hdfspb.RecoverLeaseResponseProto
		err := other.Call(ctx, "recoverLease", &hdfspb.RecoverLeaseRequestProto{Src: proto.String("/open"), ClientName: proto.String("recoverer")}, &resp)
		if err != nil {
			t.Fatal(err)
		}
		closed = resp.GetResult()
		return closed
	})
	reader := c.Client(c.Superuser())
	if got := readFile(t, reader, "/open"); !bytes.Equal(got, data) {
		t.Fatalf("after lease recovery: %d bytes, want the %d flushed", len(got), len(data))
	}
}
