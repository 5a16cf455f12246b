package datatransfer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

func randomData(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func TestWriteReadBack(t *testing.T) {
	for _, useFile := range []bool{false, true} {
		dn := newFakeDN(t)
		dn.useFile = useFile
		dn.start()
		for i, size := range []int{0, 1, 511, 512, 513, 64<<10 + 1, 3<<20 + 7} {
			t.Run(fmt.Sprintf("file=%v/size=%d", useFile, size), func(t *testing.T) {
				id := uint64(100 + i)
				data := randomData(size, id)
				w := writeBlock(t, dn, WriteBlockConfig{Block: testBlock(id, 0)}, data, 1000, 70000, 1, 4096)
				if w.Acked() != int64(size) {
					t.Errorf("Acked = %d", w.Acked())
				}
				if off, rest := w.Unacked(); off != int64(size) || len(rest) != 0 {
					t.Errorf("Unacked = %d, %d bytes", off, len(rest))
				}
				if !bytes.Equal(dn.block(id), data) {
					t.Fatal("DataNode holds other bytes")
				}
				got, err := readBlock(t, dn, id, 0, int64(size), 64<<10)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, data) {
					t.Fatalf("read back %d bytes, differ", len(got))
				}
			})
		}
	}
}

func TestReadRanges(t *testing.T) {
	dn := newFakeDN(t)
	dn.start()
	size := 3<<20 + 7
	data := randomData(size, 1)
	dn.setBlock(1, data)
	for _, tc := range []struct{ off, n int64 }{
		{0, 0}, {1, 1}, {511, 2}, {513, 70000}, {100, int64(size) - 100}, {int64(size) - 1, 1},
		{int64(size), 0}, {65535, 2}, {65536 - 100, 65536 + 200}, {1 << 20, 1 << 20}, {777, 0},
	} {
		for _, bufSize := range []int{1, 100, 512, 1 << 20} {
			if bufSize == 1 && tc.n > 100000 {
				continue
			}
			got, err := readBlock(t, dn, 1, tc.off, tc.n, bufSize)
			if err != nil {
				t.Fatalf("read [%d,+%d) buf %d: %v", tc.off, tc.n, bufSize, err)
			}
			if !bytes.Equal(got, data[tc.off:tc.off+tc.n]) {
				t.Fatalf("read [%d,+%d) buf %d: wrong bytes (%d)", tc.off, tc.n, bufSize, len(got))
			}
		}
	}
}

func TestReadRangeRules(t *testing.T) {
	for _, tc := range []struct {
		blockLen, off, n, start, end int64
		ok                           bool
	}{
		{1000, 0, 1000, 0, 1000, true},
		{1000, 600, 10, 512, 1000, true},
		{5000, 600, 10, 512, 1024, true},
		{5000, 1024, 0, 1024, 1024, true},
		{5000, 1025, 0, 1024, 1536, true},
		{1000, 1000, 0, 512, 1000, true},
		{1000, 1001, 0, 0, 0, false},
		{1000, 500, 501, 0, 0, false},
		{1000, -1, 1, 0, 0, false},
	} {
		start, end, err := ReadRange(tc.blockLen, tc.off, tc.n)
		if (err == nil) != tc.ok || (tc.ok && (start != tc.start || end != tc.end)) {
			t.Errorf("ReadRange(%d, %d, %d) = %d, %d, %v", tc.blockLen, tc.off, tc.n, start, end, err)
		}
	}
}

func TestReadCorruptReplica(t *testing.T) {
	for _, useFile := range []bool{false, true} {
		dn := newFakeDN(t)
		dn.corruptAt = 70000
		dn.useFile = useFile
		dn.start()
		data := randomData(200000, 3)
		dn.setBlock(1, data)
		for _, tc := range []struct{ off, n int64 }{{0, 200000}, {69700, 10}, {69632, 1}, {70000, 1}} {
			// 4 KiB reads copy out of the packet buffer; 1 MiB reads
			// have whole packets' data read into them (NextInto).
			for _, bufSize := range []int{4096, 1 << 20} {
				got, err := readBlock(t, dn, 1, tc.off, tc.n, bufSize)
				var ce *ChecksumError
				if !errors.As(err, &ce) || ce.Offset != 69632 {
					t.Fatalf("file=%v buf %d read [%d,+%d): %v, want checksum error at 69632", useFile, bufSize, tc.off, tc.n, err)
				}
				if !bytes.Equal(got, data[tc.off:tc.off+int64(len(got))]) || tc.off+int64(len(got)) > max(tc.off, 65536) {
					t.Fatalf("buf %d: returned %d unverified or wrong bytes", bufSize, len(got))
				}
			}
		}
	}
}

func TestSendBlockZeroCopyPath(t *testing.T) {
	dn := newFakeDN(t)
	dn.useFile = true
	dn.start()
	data := randomData(1<<20+3, 5)
	dn.setBlock(1, data)
	got, err := readBlock(t, dn, 1, 5, int64(len(data))-5, 1<<16)
	if err != nil || !bytes.Equal(got, data[5:]) {
		t.Fatalf("read: %v", err)
	}
	// Over TCP the file is sent with ReadFrom (sendfile), never ReadAt.
	if n := dn.readAtUsed.Load(); n != 0 {
		t.Errorf("ReadAt used %d times", n)
	}
}

func TestReadRefused(t *testing.T) {
	dn := newFakeDN(t)
	dn.wantToken = "good"
	dn.start()
	dn.setBlock(1, []byte("hello"))
	ctx := context.Background()

	tok := &hdfspb.TokenProto{Identifier: []byte("good"), Password: []byte{}, Kind: ptr(""), Service: ptr("")}
	for _, tc := range []struct {
		id       uint64
		tok      *hdfspb.TokenProto
		off, n   int64
		status   hdfspb.Status
		isToken  bool
		contains string
	}{
		{1, nil, 0, 5, hdfspb.Status_ERROR_ACCESS_TOKEN, true, "bad token"},
		{2, tok, 0, 5, hdfspb.Status_ERROR, false, "replica 2 not found"},
		{1, tok, 3, 5, hdfspb.Status_ERROR, false, "don't match block"},
	} {
		_, err := NewBlockReader(ctx, dn.dial(t), "c", testBlock(tc.id, 0), tc.tok, tc.off, tc.n)
		var re *ResponseError
		if !errors.As(err, &re) || re.Status != tc.status || errors.Is(err, ErrAccessToken) != tc.isToken ||
			!bytes.Contains([]byte(err.Error()), []byte(tc.contains)) {
			t.Errorf("block %d [%d,+%d): %v", tc.id, tc.off, tc.n, err)
		}
	}
	r, err := NewBlockReader(ctx, dn.dial(t), "c", testBlock(1, 0), tok, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, err := io.ReadAll(r); err != nil || string(b) != "ell" || r.Offset() != 4 {
		t.Fatalf("read %q, %v", b, err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestPipelineAckError(t *testing.T) {
	dn := newFakeDN(t)
	dn.replies = 3
	dn.ackErrorAt = 2 // the third data packet
	dn.ackErrorIndex = 1
	dn.start()
	const ps = 4096
	data := randomData(40*ps+100, 9)
	w, err := NewBlockWriter(context.Background(), dn.dial(t), WriteBlockConfig{
		ClientName: "c", Block: testBlock(1, 0), PacketSize: ps,
		Targets: []*hdfspb.DatanodeInfoProto{testTarget("10.0.0.2", 1), testTarget("10.0.0.3", 1)},
	})
	if err != nil {
		t.Fatal(err)
	}
	accepted := 0
	for rest := data; len(rest) > 0; {
		n, err := w.Write(rest[:min(len(rest), 3000)])
		accepted += n
		rest = rest[n:]
		if err != nil {
			break
		}
	}
	err = w.Close()
	var pe *PipelineError
	if !errors.As(err, &pe) || pe.BadIndex != 1 || pe.Status != hdfspb.Status_ERROR || pe.Seqno != 2 {
		t.Fatalf("Close: %v, want pipeline error at node 1", err)
	}
	if w.Acked() != 2*ps {
		t.Errorf("Acked = %d, want %d", w.Acked(), 2*ps)
	}
	off, rest := w.Unacked()
	if off != 2*ps || !bytes.Equal(rest, data[2*ps:accepted]) {
		t.Errorf("Unacked = %d, %d bytes; accepted %d", off, len(rest), accepted)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Write after failure succeeded")
	}
	if err2 := w.Close(); err2 != err {
		t.Errorf("second Close = %v", err2)
	}
}

func TestConnectRefused(t *testing.T) {
	targets := []*hdfspb.DatanodeInfoProto{testTarget("10.0.0.2", 9866), testTarget("10.0.0.3", 9866)}
	for _, tc := range []struct {
		status  hdfspb.Status
		link    string
		bad     int
		isToken bool
	}{
		{hdfspb.Status_ERROR, "10.0.0.3:9866", 2, false},
		{hdfspb.Status_ERROR, "10.0.0.2:9866", 1, false},
		{hdfspb.Status_ERROR, "", 0, false},
		{hdfspb.Status_ERROR_ACCESS_TOKEN, "", 0, true},
	} {
		dn := newFakeDN(t)
		dn.connectStatus, dn.connectBadLink = tc.status, tc.link
		dn.start()
		_, err := NewBlockWriter(context.Background(), dn.dial(t), WriteBlockConfig{
			ClientName: "c", Block: testBlock(1, 0), Targets: targets,
		})
		var pe *PipelineError
		if !errors.As(err, &pe) || pe.BadIndex != tc.bad || pe.Status != tc.status ||
			pe.FirstBadLink != tc.link || pe.Message != "refused by test" || errors.Is(err, ErrAccessToken) != tc.isToken {
			t.Errorf("%v %q: %v", tc.status, tc.link, err)
		}
	}
}

func TestFlushVisibility(t *testing.T) {
	dn := newFakeDN(t)
	dn.start()
	data := randomData(1100, 11)
	w, err := NewBlockWriter(context.Background(), dn.dial(t), WriteBlockConfig{ClientName: "c", Block: testBlock(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data[:1000])
	if err := w.Flush(false); err != nil {
		t.Fatal(err)
	}
	if got := dn.block(1); !bytes.Equal(got, data[:1000]) || w.Acked() != 1000 {
		t.Fatalf("after hflush the DataNode has %d bytes, Acked %d", len(got), w.Acked())
	}
	w.Write(data[1000:])
	if err := w.Flush(true); err != nil {
		t.Fatal(err)
	}
	if got := dn.block(1); !bytes.Equal(got, data) {
		t.Fatalf("after hsync the DataNode has %d bytes", len(got))
	}
	if err := w.Flush(true); err != nil { // nothing new: an empty sync packet
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	dn.mu.Lock()
	pkts := append([]PacketHeader(nil), dn.packets...)
	dn.mu.Unlock()
	want := []PacketHeader{
		{OffsetInBlock: 0, Seqno: 0, DataLen: 1000},
		{OffsetInBlock: 1000, Seqno: 1, DataLen: 24}, // completes the partial chunk alone
		{OffsetInBlock: 1024, Seqno: 2, DataLen: 76, SyncBlock: true},
		{OffsetInBlock: 1100, Seqno: 3, SyncBlock: true},
		{OffsetInBlock: 1100, Seqno: 4, LastPacketInBlock: true},
	}
	if fmt.Sprint(pkts) != fmt.Sprint(want) {
		t.Fatalf("packets\n got %v\nwant %v", pkts, want)
	}
	got, err := readBlock(t, dn, 1, 0, 1100, 333)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %v", err)
	}
}

func TestAppendToPartialChunk(t *testing.T) {
	dn := newFakeDN(t)
	dn.start()
	old := randomData(700, 12)
	dn.setBlock(1, old)
	more := randomData(70000, 13)
	stage := hdfspb.OpWriteBlockProto_PIPELINE_SETUP_APPEND
	w := writeBlock(t, dn, WriteBlockConfig{
		Block: testBlock(1, 700), Stage: &stage, Offset: 700, MinBytesRcvd: 700, MaxBytesRcvd: 700,
	}, more)
	if w.Acked() != 70700 {
		t.Errorf("Acked = %d", w.Acked())
	}
	dn.mu.Lock()
	first := dn.packets[0]
	dn.mu.Unlock()
	if first.OffsetInBlock != 700 || first.DataLen != 324 {
		t.Errorf("first packet %+v, want the rest of the chunk", first)
	}
	all := append(bytes.Clone(old), more...)
	got, err := readBlock(t, dn, 1, 0, int64(len(all)), 1<<16)
	if err != nil || !bytes.Equal(got, all) {
		t.Fatalf("read back: %v", err)
	}
}

func TestHeartbeats(t *testing.T) {
	dn := newFakeDN(t)
	dn.start()
	w, err := NewBlockWriter(context.Background(), dn.dial(t), WriteBlockConfig{
		ClientName: "c", Block: testBlock(1, 0), HeartbeatInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("before"))
	w.Flush(false)
	deadline := time.Now().Add(10 * time.Second)
	for {
		dn.mu.Lock()
		n := dn.heartbeats
		dn.mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no heartbeats")
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.Write([]byte(" after"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := string(dn.block(1)); got != "before after" {
		t.Fatalf("block %q", got)
	}
}

func TestWriterContextCancel(t *testing.T) {
	dn := newFakeDN(t)
	dn.noAcks = true
	dn.start()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := NewBlockWriter(ctx, dn.dial(t), WriteBlockConfig{ClientName: "c", Block: testBlock(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("data"))
	done := make(chan error, 1)
	go func() { done <- w.Flush(false) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Flush: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Flush did not return after cancel")
	}
	if off, rest := w.Unacked(); off != 0 || string(rest) != "data" {
		t.Errorf("Unacked = %d %q", off, rest)
	}
	w.Abort()
}

func TestReaderContextCancel(t *testing.T) {
	// A DataNode that accepts and then says nothing.
	dn := newFakeDN(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	conn := dn.dial(t)
	go func() {
		_, err := NewBlockReader(ctx, conn, "c", testBlock(1, 0), nil, 0, 1)
		done <- err
	}()
	c, err := dn.ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("NewBlockReader: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("NewBlockReader did not return after cancel")
	}
}

func TestBlockChecksumBar(t *testing.T) {
	dn := newFakeDN(t)
	dn.start()
	writeBlock(t, dn, WriteBlockConfig{Block: testBlock(1, 0)}, []byte("bar\n"))
	resp, err := BlockChecksum(context.Background(), dn.dial(t), testBlock(1, 4), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetBytesPerCrc() != 512 || resp.GetCrcPerBlock() != 1 || resp.GetCrcType() != hdfspb.ChecksumTypeProto_CHECKSUM_CRC32C {
		t.Errorf("reply %v", resp)
	}
	if got := hex.EncodeToString(FileChecksumMD5([][]byte{resp.GetBlockChecksum()})); got != "27c076e4987344253650d3335a5d08ce" {
		t.Errorf("file checksum %s", got)
	}
}

// TestReaderOverPipe serves a read by hand over a synchronous pipe and
// checks what the client sends at the end.
func TestReaderOverPipe(t *testing.T) {
	client, server := net.Pipe()
	data := randomData(5000, 21)
	status := make(chan hdfspb.Status, 1)
	go func() {
		defer server.Close()
		r := bufio.NewReader(server)
		op, msg, err := ReadRequest(r)
		if err != nil || op != OpReadBlock {
			t.Errorf("server: %v %v", op, err)
			return
		}
		o := &hdfspb.OpReadBlockProto{}
		if err := proto.Unmarshal(msg, o); err != nil || !o.GetSendChecksums() || o.GetHeader().GetClientName() != "me" {
			t.Errorf("server: op %v, %v", o, err)
			return
		}
		start, end, _ := ReadRange(int64(len(data)), int64(o.GetOffset()), int64(o.GetLen()))
		WriteResponse(server, &hdfspb.BlockOpResponseProto{
			Status: hdfspb.Status_SUCCESS.Enum(),
			ReadOpChecksumInfo: &hdfspb.ReadOpChecksumInfoProto{
				Checksum:    &hdfspb.ChecksumProto{Type: hdfspb.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(), BytesPerChecksum: proto.Uint32(512)},
				ChunkOffset: proto.Uint64(uint64(start)),
			},
		})
		if err := SendBlock(server, &memSource{data: data, corruptAt: -1}, start, end, true); err != nil {
			t.Errorf("server: SendBlock: %v", err)
			return
		}
		var st hdfspb.ClientReadStatusProto
		if err := ReadDelimited(r, &st, MaxAckSize); err != nil {
			t.Errorf("server: status: %v", err)
			return
		}
		status <- st.GetStatus()
	}()
	r, err := NewBlockReader(context.Background(), client, "me", testBlock(1, 0), nil, 1000, 3000)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, data[1000:4000]) {
		t.Fatalf("read %d bytes: %v", len(got), err)
	}
	if st := <-status; st != hdfspb.Status_CHECKSUM_OK {
		t.Errorf("client sent %v", st)
	}
	r.Close()
}

func TestServeReadBlockWithoutChecksums(t *testing.T) {
	data := randomData(1500, 22)
	op := &hdfspb.OpReadBlockProto{Offset: proto.Uint64(600), Len: proto.Uint64(10), SendChecksums: proto.Bool(false)}
	var out bytes.Buffer
	if err := ServeReadBlock(&out, bufio.NewReader(bytes.NewReader(nil)), op, &memSource{data: data, corruptAt: -1}, 1500); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(&out)
	resp, err := ReadResponse(r)
	if err != nil || resp.GetReadOpChecksumInfo().GetChecksum().GetType() != hdfspb.ChecksumTypeProto_CHECKSUM_NULL ||
		resp.GetReadOpChecksumInfo().GetChunkOffset() != 512 {
		t.Fatalf("reply %v, %v", resp, err)
	}
	pr := NewPacketReader(r, 0)
	pr.ChecksumSize = 0
	pkt, err := pr.Next()
	if err != nil || pkt.OffsetInBlock != 512 || len(pkt.Checksums) != 0 || !bytes.Equal(pkt.Data, data[512:1024]) {
		t.Fatalf("packet %+v, %v", pkt.PacketHeader, err)
	}
	if pkt, err = pr.Next(); err != nil || !pkt.LastPacketInBlock || pkt.OffsetInBlock != 1024 || pkt.Seqno != 1 {
		t.Fatalf("last packet %+v, %v", pkt.PacketHeader, err)
	}
}
