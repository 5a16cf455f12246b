package datatransfer

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// fakeDN is a DataNode in miniature, speaking the server side with this
// package's own helpers and keeping blocks in memory. Its fault knobs are
// set before the test starts using it.
type fakeDN struct {
	t     testing.TB
	ln    net.Listener
	wg    sync.WaitGroup
	dir   string
	files atomic.Int64

	// Faults and modes.
	corruptAt      int64         // flip a byte at this block offset when serving reads; -1 none
	useFile        bool          // serve reads from a file (FileSource, sendfile)
	connectStatus  hdfspb.Status // non-SUCCESS: refuse WRITE_BLOCK with it
	connectBadLink string
	replies        int // replies per ack; 0: pipelineSize from the op
	ackErrorAt     int // ordinal of the data packet whose ack fails; -1 none
	ackErrorIndex  int
	noAcks         bool // never ack (to test cancellation)
	discard        bool // do not keep written data (benchmarks)
	wantToken      string

	mu         sync.Mutex
	blocks     map[uint64][]byte
	packets    []PacketHeader // data packets received, in order
	heartbeats int
	readAtUsed atomic.Int64
	// closeRecoveries are the PIPELINE_CLOSE_RECOVERY ops received.
	closeRecoveries []*hdfspb.OpWriteBlockProto
}

func newFakeDN(t testing.TB) *fakeDN {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dn := &fakeDN{t: t, ln: ln, dir: t.TempDir(), corruptAt: -1, ackErrorAt: -1, blocks: map[uint64][]byte{}}
	t.Cleanup(func() {
		ln.Close()
		dn.wg.Wait()
	})
	return dn
}

// start begins accepting connections; call it after setting the knobs.
func (dn *fakeDN) start() *fakeDN {
	dn.wg.Add(1)
	go func() {
		defer dn.wg.Done()
		for {
			c, err := dn.ln.Accept()
			if err != nil {
				return
			}
			dn.wg.Add(1)
			go func() {
				defer dn.wg.Done()
				defer c.Close()
				dn.serve(c)
			}()
		}
	}()
	return dn
}

func (dn *fakeDN) addr() string { return dn.ln.Addr().String() }

func (dn *fakeDN) dial(t testing.TB) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", dn.addr())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (dn *fakeDN) block(id uint64) []byte {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	return append([]byte(nil), dn.blocks[id]...)
}

func (dn *fakeDN) setBlock(id uint64, b []byte) {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	dn.blocks[id] = append([]byte(nil), b...)
}

func (dn *fakeDN) serve(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		op, msg, err := ReadRequest(r)
		if err != nil {
			return
		}
		m := op.NewMessage()
		if err := proto.Unmarshal(msg, m); err != nil {
			dn.t.Errorf("fake DN: decode %v: %v", op, err)
			return
		}
		switch op {
		case OpWriteBlock:
			dn.write(c, r, m.(*hdfspb.OpWriteBlockProto))
			return
		case OpReadBlock:
			if !dn.read(c, r, m.(*hdfspb.OpReadBlockProto)) {
				return
			}
		case OpBlockChecksum:
			o := m.(*hdfspb.OpBlockChecksumProto)
			data := dn.block(o.GetHeader().GetBlock().GetBlockId())
			WriteResponse(c, NewBlockChecksumResponse(ComputeChunks(nil, 0, data, BytesPerChecksum)))
		default:
			WriteResponse(c, &hdfspb.BlockOpResponseProto{Status: hdfspb.Status_ERROR_UNSUPPORTED.Enum()})
			return
		}
	}
}

func (dn *fakeDN) write(c net.Conn, r *bufio.Reader, o *hdfspb.OpWriteBlockProto) {
	if o.GetStage() == hdfspb.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY && dn.connectStatus == hdfspb.Status_SUCCESS {
		// Recorded before the reply, which the client may read first.
		dn.mu.Lock()
		dn.closeRecoveries = append(dn.closeRecoveries, o)
		dn.mu.Unlock()
	}
	if dn.connectStatus != hdfspb.Status_SUCCESS {
		WriteResponse(c, &hdfspb.BlockOpResponseProto{
			Status:       dn.connectStatus.Enum(),
			FirstBadLink: proto.String(dn.connectBadLink),
			Message:      proto.String("refused by test"),
		})
		return
	}
	if err := WriteResponse(c, &hdfspb.BlockOpResponseProto{
		Status: hdfspb.Status_SUCCESS.Enum(), FirstBadLink: proto.String(""),
	}); err != nil {
		return
	}
	id := o.GetHeader().GetBaseHeader().GetBlock().GetBlockId()
	if o.GetStage() == hdfspb.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY {
		return // no packets follow
	}
	nodes := dn.replies
	if nodes == 0 {
		nodes = int(o.GetPipelineSize())
	}
	var data []byte
	if o.GetStage() != hdfspb.OpWriteBlockProto_PIPELINE_SETUP_CREATE {
		data = dn.block(id)
	}
	pr := NewPacketReader(r, 0)
	ack := func(seqno int64, bad int, st hdfspb.Status) error {
		a := &Ack{Seqno: seqno, Replies: make([]hdfspb.Status, nodes)}
		if bad >= 0 {
			a.Replies[bad] = st
		}
		return WriteAck(c, a)
	}
	for ordinal := 0; ; {
		pkt, err := pr.Next()
		if err != nil {
			return
		}
		if pkt.IsHeartbeat() {
			dn.mu.Lock()
			dn.heartbeats++
			dn.mu.Unlock()
			if ack(pkt.Seqno, -1, 0) != nil {
				return
			}
			continue
		}
		if err := VerifyChunks(pkt.OffsetInBlock, pkt.Data, pkt.Checksums, BytesPerChecksum); err != nil {
			dn.t.Errorf("fake DN: packet %d: %v", pkt.Seqno, err)
			ack(pkt.Seqno, 0, hdfspb.Status_ERROR_CHECKSUM)
			return
		}
		if !dn.discard {
			if pkt.OffsetInBlock > int64(len(data)) {
				dn.t.Errorf("fake DN: packet at %d beyond block length %d", pkt.OffsetInBlock, len(data))
				return
			}
			data = append(data[:pkt.OffsetInBlock], pkt.Data...)
			dn.setBlock(id, data)
		}
		if !dn.discard {
			dn.mu.Lock()
			dn.packets = append(dn.packets, pkt.PacketHeader)
			dn.mu.Unlock()
		}
		if dn.noAcks {
			continue
		}
		if ordinal == dn.ackErrorAt {
			ack(pkt.Seqno, dn.ackErrorIndex, hdfspb.Status_ERROR)
			io.Copy(io.Discard, r) // like Hadoop: wait for the client to tear down
			return
		}
		if ack(pkt.Seqno, -1, 0) != nil || pkt.LastPacketInBlock {
			return
		}
		ordinal++
	}
}

func (dn *fakeDN) read(c net.Conn, r *bufio.Reader, o *hdfspb.OpReadBlockProto) bool {
	b := o.GetHeader().GetBaseHeader()
	if dn.wantToken != "" && string(b.GetToken().GetIdentifier()) != dn.wantToken {
		WriteResponse(c, &hdfspb.BlockOpResponseProto{
			Status:  hdfspb.Status_ERROR_ACCESS_TOKEN.Enum(),
			Message: proto.String("bad token"),
		})
		return false
	}
	dn.mu.Lock()
	data, ok := dn.blocks[b.GetBlock().GetBlockId()]
	dn.mu.Unlock()
	if !ok {
		WriteResponse(c, &hdfspb.BlockOpResponseProto{
			Status:  hdfspb.Status_ERROR.Enum(),
			Message: proto.String(fmt.Sprintf("replica %d not found", b.GetBlock().GetBlockId())),
		})
		return false
	}
	var src BlockSource = &memSource{data: data, corruptAt: dn.corruptAt, readAts: &dn.readAtUsed}
	if dn.useFile {
		fs, err := dn.fileSource(b.GetBlock().GetBlockId(), data)
		if err != nil {
			dn.t.Error(err)
			return false
		}
		defer fs.f.Close()
		fs.memSource.readAts = &dn.readAtUsed
		src = fs
	}
	return ServeReadBlock(c, r, o, src, int64(len(data))) == nil
}

// fileSource opens a file holding data (written on first use, a 3-byte
// header before the block's bytes) with a handle of its own.
func (dn *fakeDN) fileSource(id uint64, data []byte) (*fileSource, error) {
	name := filepath.Join(dn.dir, fmt.Sprintf("blk_%d_%d", id, len(data)))
	if _, err := os.Stat(name); err != nil {
		onDisk := append([]byte("HDR"), data...)
		if dn.corruptAt >= 0 && dn.corruptAt < int64(len(data)) {
			onDisk[3+dn.corruptAt] ^= 0x40
		}
		tmp := fmt.Sprintf("%s.%d", name, dn.files.Add(1))
		if err := os.WriteFile(tmp, onDisk, 0o600); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, name); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return &fileSource{memSource: memSource{data: data, corruptAt: dn.corruptAt}, f: f}, nil
}

// memSource is a replica in memory; corruptAt flips a byte of what ReadAt
// returns while the checksums stay those of the good data.
type memSource struct {
	data      []byte
	corruptAt int64
	readAts   *atomic.Int64
}

func (m *memSource) ReadAt(p []byte, off int64) (int, error) {
	if m.readAts != nil {
		m.readAts.Add(1)
	}
	if off >= int64(len(m.data)) {
		return 0, io.EOF
	}
	n := copy(p, m.data[off:])
	if m.corruptAt >= off && m.corruptAt < off+int64(n) {
		p[m.corruptAt-off] ^= 0x40
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *memSource) ReadChecksumsAt(p []byte, first int64) error {
	for i := 0; i+ChecksumSize <= len(p); i += ChecksumSize {
		start := (first + int64(i/ChecksumSize)) * BytesPerChecksum
		if start >= int64(len(m.data)) {
			return fmt.Errorf("chunk at %d beyond replica length %d", start, len(m.data))
		}
		end := min(start+BytesPerChecksum, int64(len(m.data)))
		binary.BigEndian.PutUint32(p[i:], CRC32C(m.data[start:end]))
	}
	return nil
}

// fileSource keeps the (possibly corrupted) data in a file.
type fileSource struct {
	memSource
	f *os.File
}

func (fs *fileSource) DataFile() (*os.File, int64) { return fs.f, 3 }

// testBlock returns an ExtendedBlockProto for block id.
func testBlock(id uint64, numBytes uint64) *hdfspb.ExtendedBlockProto {
	return &hdfspb.ExtendedBlockProto{
		PoolId:          proto.String("BP-test"),
		BlockId:         proto.Uint64(id),
		GenerationStamp: proto.Uint64(1001),
		NumBytes:        proto.Uint64(numBytes),
	}
}

func testTarget(ip string, port uint32) *hdfspb.DatanodeInfoProto {
	return &hdfspb.DatanodeInfoProto{Id: &hdfspb.DatanodeIDProto{
		IpAddr: proto.String(ip), HostName: proto.String("host-" + ip), DatanodeUuid: proto.String("uuid-" + ip),
		XferPort: proto.Uint32(port), InfoPort: proto.Uint32(9864), IpcPort: proto.Uint32(9867),
	}}
}

// writeBlock writes data as block id through dn with chunks of the given
// write sizes (cycled), and closes the writer.
func writeBlock(t testing.TB, dn *fakeDN, cfg WriteBlockConfig, data []byte, sizes ...int) *BlockWriter {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cfg.ClientName == "" {
		cfg.ClientName = "DFSClient_test"
	}
	w, err := NewBlockWriter(ctx, dn.dial(t), cfg)
	if err != nil {
		t.Fatalf("NewBlockWriter: %v", err)
	}
	if len(sizes) == 0 {
		sizes = []int{len(data)}
	}
	for i := 0; len(data) > 0; i++ {
		n := min(max(sizes[i%len(sizes)], 1), len(data))
		if _, err := w.Write(data[:n]); err != nil {
			t.Fatalf("Write: %v", err)
		}
		data = data[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return w
}

// readBlock reads [offset, offset+length) of block id from dn using reads
// of bufSize bytes.
func readBlock(t testing.TB, dn *fakeDN, id uint64, offset, length int64, bufSize int) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := NewBlockReader(ctx, dn.dial(t), "DFSClient_test", testBlock(id, 0), nil, offset, length)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []byte
	buf := make([]byte, bufSize)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}
