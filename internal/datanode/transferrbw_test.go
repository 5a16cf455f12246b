package datanode

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/vfs/errorfs"
)

// TestTransferRBWWriteErrorFailsLastAck copies an RBW replica
// (TRANSFER_RBW, which ends with Close, not Finalize) to a DataNode whose
// data file writes fail with ENOSPC. With full packets only, nothing is
// written before the last packet: Close writes the buffers out (those of
// write-behind too, in the larger case), and its failure must fail the
// copy, not be acknowledged as SUCCESS. The failed copy is removed.
func TestTransferRBWWriteErrorFailsLastAck(t *testing.T) {
	for _, size := range []int{2 * datatransfer.PacketDataSize, 8 * datatransfer.PacketDataSize} {
		efs := errorfs.Wrap(nil)
		dir := t.TempDir()
		dn, err := New(Config{
			Volumes:      []fsdataset.VolumeConfig{{Path: filepath.Join(dir, "v"), Type: storage.Disk}},
			NameNodeAddr: "127.0.0.1:1", XferAddr: "127.0.0.1:0", FS: efs,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		rbw := string(filepath.Separator) + "rbw" + string(filepath.Separator)
		rule := efs.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Err: syscall.ENOSPC, Path: func(p string) bool {
			return strings.Contains(p, rbw) && filepath.Base(p) == "blk_7"
		}})

		client, server := net.Pipe()
		done := make(chan struct{})
		go func() { dn.serveConn(newPeerConn(server, 5*time.Second, 5*time.Second)); server.Close(); close(done) }()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		bw, err := datatransfer.NewBlockWriter(ctx, client, datatransfer.WriteBlockConfig{
			ClientName:   "",
			Block:        &hdfspb.ExtendedBlockProto{PoolId: proto.String("p"), BlockId: proto.Uint64(7), GenerationStamp: proto.Uint64(1)},
			Stage:        hdfspb.OpWriteBlockProto_TRANSFER_RBW.Enum(),
			MaxBytesRcvd: int64(size), LatestGenerationStamp: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		_, werr := bw.Write(make([]byte, size))
		cerr := bw.Close()
		cancel()
		if werr == nil && cerr == nil {
			t.Errorf("%d bytes: the copy succeeded though every data write failed with ENOSPC", size)
		} else {
			t.Logf("%d bytes: the copy failed: %v", size, errors.Join(werr, cerr))
		}
		if rule.Hits() == 0 {
			t.Errorf("%d bytes: no data write was attempted", size)
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the transfer connection did not finish")
		}
		if info, ok := dn.data.Get(7); ok {
			t.Errorf("%d bytes: the failed copy was kept: %+v", size, info)
		}
		dn.Close()
	}
}
