package datanode_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/vfs"
)

// panicFS panics when a block's data file is opened for reading while
// armed: a stand-in for any bug on a connection's path.
type panicFS struct {
	vfs.FS
	armed atomic.Bool
}

func (p *panicFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	if p.armed.Load() && flag&(os.O_WRONLY|os.O_RDWR) == 0 && strings.Contains(name, "blk_") && !strings.HasSuffix(name, ".meta") {
		panic("injected fault opening " + name)
	}
	return p.FS.OpenFile(name, flag, perm)
}

// TestPanicOnConnectionIsRecovered makes serving a READ_BLOCK panic: the
// connection is closed, the panic counted, the transfer slot given back,
// and the DataNode goes on serving (the file reads back, a second panic
// is recovered as well).
func TestPanicOnConnectionIsRecovered(t *testing.T) {
	pfs := &panicFS{FS: vfs.Or(nil)}
	c := testcluster.New(t, testcluster.Config{DataNodes: 1, DataNode: func(i int, dc *datanode.Config) {
		dc.FS = pfs
		dc.MaxTransferThreads = 2
	}})
	cl := c.Client(c.Superuser())
	ctx := context.Background()
	data := bytes.Repeat([]byte("panic? "), 5000)
	w, err := cl.CreateFile(ctx, "/p", fs.CreateOptions{Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	locs, err := cl.BlockLocations(ctx, "/p")
	if err != nil || len(locs) != 1 {
		t.Fatal(locs, err)
	}
	dn := c.DataNode(0)
	blk := &hdfspb.ExtendedBlockProto{PoolId: proto.String(dn.Status().Pool), BlockId: proto.Uint64(locs[0].BlockID), GenerationStamp: proto.Uint64(locs[0].GenStamp), NumBytes: proto.Uint64(uint64(len(data)))}
	pfs.armed.Store(true)
	for i := 0; i < 3; i++ { // more than the transfer slots: each must come back
		conn, err := net.DialTimeout("tcp", c.DataNodeAddr(0), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(30 * time.Second))
		op := &hdfspb.OpReadBlockProto{Header: &hdfspb.ClientOperationHeaderProto{BaseHeader: &hdfspb.BaseHeaderProto{Block: blk, Token: datanode.MintToken(dn, "x", locs[0].BlockID, blocktoken.Read)}, ClientName: proto.String("x")},
			Offset: proto.Uint64(0), Len: proto.Uint64(uint64(len(data)))}
		if err := datatransfer.WriteRequest(conn, datatransfer.OpReadBlock, op); err != nil {
			t.Fatal(err)
		}
		_, err = datatransfer.ReadResponse(bufio.NewReader(conn))
		conn.Close()
		var ne net.Error
		if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
			t.Fatalf("READ_BLOCK that panics: reply error %v, want the connection closed", err)
		}
	}
	pfs.armed.Store(false)
	if st := dn.Status(); st.Panics != 3 || st.Xceivers != 0 {
		t.Errorf("after 3 panics: %d counted, %d xceivers busy", st.Panics, st.Xceivers)
	}
	f, err := cl.OpenFile(ctx, "/p")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read after recovered panics: %d bytes, %v", len(got), err)
	}
}
