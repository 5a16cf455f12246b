package datanode

import (
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
)

// FuzzTransferConn feeds arbitrary bytes to a DataNode's transfer server
// as a client connection: it must answer or close, never panic or hang,
// and stay able to serve.
func FuzzTransferConn(f *testing.F) {
	// Seeds: the version and each op code, a valid READ_BLOCK and
	// WRITE_BLOCK request, truncated ones.
	for op := 80; op <= 89; op++ {
		f.Add([]byte{0, 28, byte(op), 0})
	}
	hdr := &hdfspb.ClientOperationHeaderProto{
		BaseHeader: &hdfspb.BaseHeaderProto{Block: &hdfspb.ExtendedBlockProto{PoolId: proto.String("p"), BlockId: proto.Uint64(1), GenerationStamp: proto.Uint64(1)}},
		ClientName: proto.String("fuzz"),
	}
	for _, m := range []struct {
		op  datatransfer.Op
		msg proto.Message
	}{
		{datatransfer.OpReadBlock, &hdfspb.OpReadBlockProto{Header: hdr, Offset: proto.Uint64(0), Len: proto.Uint64(10)}},
		{datatransfer.OpWriteBlock, &hdfspb.OpWriteBlockProto{Header: hdr, Stage: hdfspb.OpWriteBlockProto_PIPELINE_SETUP_CREATE.Enum(),
			PipelineSize: proto.Uint32(1), MinBytesRcvd: proto.Uint64(0), MaxBytesRcvd: proto.Uint64(0), LatestGenerationStamp: proto.Uint64(1),
			RequestedChecksum: &hdfspb.ChecksumProto{Type: hdfspb.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(), BytesPerChecksum: proto.Uint32(512)}}},
	} {
		b, _ := proto.Marshal(m.msg)
		req := append([]byte{0, 28, byte(m.op)}, binary.AppendUvarint(nil, uint64(len(b)))...)
		req = append(req, b...)
		f.Add(req)
		f.Add(req[:len(req)-3])
		// A write followed by a garbage packet.
		f.Add(append(append([]byte{}, req...), 0, 0, 0, 40, 0, 25, 9, 9, 9))
	}
	dir := f.TempDir()
	dn, err := New(Config{
		Volumes:      []fsdataset.VolumeConfig{{Path: filepath.Join(dir, "v"), Type: storage.Disk}},
		NameNodeAddr: "127.0.0.1:1", XferAddr: "127.0.0.1:0", SocketKeepalive: 100 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		f.Fatal(err)
	}
	defer dn.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() { dn.serveConn(newPeerConn(server, 2*time.Second, 2*time.Second)); server.Close(); close(done) }()
		go io.Copy(io.Discard, client)
		client.SetWriteDeadline(time.Now().Add(2 * time.Second))
		client.Write(data)
		client.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("transfer connection did not finish")
		}
	})
}
