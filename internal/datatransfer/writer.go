package datatransfer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// Defaults of WriteBlockConfig.
const (
	// DefaultMaxInFlight is Hadoop's dfs.client.write.max-packets: 80
	// packets, 5 MiB of data at 64 KiB each.
	DefaultMaxInFlight = 80
	// DefaultHeartbeatInterval is half of Hadoop's default socket timeout
	// (60 s), after which an idle writer sends a heartbeat packet.
	DefaultHeartbeatInterval = 30 * time.Second
	// DefaultSocketTimeout is Hadoop's dfs.client.socket-timeout default
	// (60 s), the base of a writer's ack read timeout.
	DefaultSocketTimeout = 60 * time.Second
	// DefaultSocketWriteTimeout is Hadoop's
	// dfs.datanode.socket.write.timeout default (480 s), the base of a
	// writer's packet write timeout.
	DefaultSocketWriteTimeout = 480 * time.Second
	// TimeoutExtension is added to both timeouts per pipeline node, as
	// Hadoop's HdfsConstants.READ_TIMEOUT_EXTENSION and
	// WRITE_TIMEOUT_EXTENSION (5 s each): a node further down reports a
	// silent mirror before the client gives up on the first node.
	TimeoutExtension = 5 * time.Second
	// ackGrace bounds the wait for the DataNode's explanation (an error
	// ack) after a write to it failed.
	ackGrace = 5 * time.Second
)

// WriteBlockConfig describes a write pipeline for NewBlockWriter. Fields
// map onto OpWriteBlockProto; the zero value of an optional field is
// Hadoop's default.
type WriteBlockConfig struct {
	// ClientName is the lease holder's client name (required).
	ClientName string
	// Block is the block as the NameNode returned it (required). For an
	// append or a recovery, its generation stamp is the new one.
	Block *hdfspb.ExtendedBlockProto
	// Token is the block access token; nil sends Hadoop's empty token.
	Token *hdfspb.TokenProto
	// StorageType and StorageID are the first DataNode's target storage
	// (storageType, storageId); StorageType 0 means DISK.
	StorageType hdfspb.StorageTypeProto
	StorageID   string
	// Targets are the DataNodes after the first, in pipeline order, with
	// their storage types and IDs (same length as Targets, or empty).
	Targets            []*hdfspb.DatanodeInfoProto
	TargetStorageTypes []hdfspb.StorageTypeProto
	TargetStorageIDs   []string
	// Stage is the construction stage; nil means PIPELINE_SETUP_CREATE.
	Stage *hdfspb.OpWriteBlockProto_BlockConstructionStage
	// PipelineSize is sent as pipelineSize; 0 means 1+len(Targets).
	PipelineSize int
	// MinBytesRcvd, MaxBytesRcvd and LatestGenerationStamp are sent as
	// they are (appends and recoveries: the replica's expected length
	// range and the new generation stamp).
	MinBytesRcvd, MaxBytesRcvd int64
	LatestGenerationStamp      uint64
	// Offset is the block offset of the first byte to write: 0 for a new
	// block, the block's current length to append to it or to resume after
	// a recovery. When it is mid-chunk the first packet only completes that
	// chunk.
	Offset int64
	// PacketSize is the data carried by a full packet, rounded down to a
	// multiple of 512; 0 means PacketDataSize (64 KiB).
	PacketSize int
	// MaxInFlight bounds the packets sent but not yet acknowledged; Write
	// blocks when it is reached. 0 means DefaultMaxInFlight.
	MaxInFlight int
	// HeartbeatInterval is how long the connection may be idle before the
	// writer sends a heartbeat packet; 0 means half of SocketTimeout
	// (DefaultHeartbeatInterval when that is the default), negative
	// disables heartbeats.
	HeartbeatInterval time.Duration
	// SocketTimeout is dfs.client.socket-timeout: the connect reply and
	// each ack must arrive within SocketTimeout plus TimeoutExtension per
	// pipeline node (a rolling deadline, renewed for every ack; an idle
	// writer's heartbeats are acknowledged too), as in Hadoop's
	// DataStreamer. Past it the pipeline has failed at node 0 (Hadoop
	// blames the first node when no ack says otherwise; a DataNode whose
	// mirror went silent reports the mirror first, its own timeout being
	// shorter by 5 s a node). 0 means DefaultSocketTimeout; negative
	// disables the timeout (the context still bounds the writer).
	SocketTimeout time.Duration
	// SocketWriteTimeout is dfs.datanode.socket.write.timeout as the
	// client uses it: one write to the first DataNode may block at most
	// SocketWriteTimeout plus TimeoutExtension per pipeline node. 0 means
	// DefaultSocketWriteTimeout; negative disables it.
	SocketWriteTimeout time.Duration
	// SyncOnClose sets syncBlock on the last packet (CreateFlag.SYNC_BLOCK).
	SyncOnClose bool
}

// PipelineError reports a failed write pipeline and which node failed.
type PipelineError struct {
	// BadIndex is the failed node's position in the pipeline: 0 is the
	// DataNode the client is connected to, i is Targets[i-1]; -1 when the
	// reply named a node that is not in the pipeline.
	BadIndex int
	// Status is the failed node's status (ERROR for a broken connection).
	Status hdfspb.Status
	// Message is the DataNode's text from a refused WRITE_BLOCK.
	Message string
	// FirstBadLink is the address a refused WRITE_BLOCK named.
	FirstBadLink string
	// Seqno is the packet whose ack reported the failure, -1 if none.
	Seqno int64
	// Err is the underlying I/O or protocol error, if any.
	Err error
}

func (e *PipelineError) Error() string {
	s := fmt.Sprintf("datatransfer: write pipeline failed at node %d: %v", e.BadIndex, e.Status)
	if e.FirstBadLink != "" {
		s += " (firstBadLink " + e.FirstBadLink + ")"
	}
	if e.Seqno >= 0 {
		s += fmt.Sprintf(" acking packet %d", e.Seqno)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *PipelineError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrAccessToken) true for ERROR_ACCESS_TOKEN.
func (e *PipelineError) Is(target error) bool {
	return target == ErrAccessToken && e.Status == hdfspb.Status_ERROR_ACCESS_TOKEN
}

// BlockWriter writes a block through a DataNode pipeline (WRITE_BLOCK).
// Write cuts data into packets on chunk boundaries and sends them as they
// fill; a goroutine reads the acks. Sent packets stay queued until the
// whole pipeline has acknowledged them, so after a failure Acked and
// Unacked say exactly which bytes are safe and which must be resent.
//
// Write, Flush, Close and Unacked must not be called concurrently; Acked
// and Abort may be called from any goroutine.
type BlockWriter struct {
	conn net.Conn
	r    *bufio.Reader
	ctx  context.Context
	stop func() bool
	dl   *deadlines

	bpc         int
	packetSize  int
	prefixRoom  int // bytes in front of a packet's data: lengths, header, checksums
	maxInFlight int
	syncOnClose bool

	// Owned by the writing goroutine.
	cur      *outPacket  // packet being filled, nil if none
	unsent   net.Buffers // encoded packets queued but not yet written, in order
	unsentN  int         // bytes in unsent
	offset   int64       // block offset after the last byte accepted by Write
	seqno    int64       // next seqno
	closed   bool
	closeErr error

	wmu      sync.Mutex // serializes writes to conn
	lastSend time.Time  // under wmu

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*outPacket // sent, not yet acknowledged, in seqno order
	acked   int64        // block offset acknowledged by every node
	err     error        // first failure, sticky
	ackDone chan struct{}
	quit    chan struct{} // closed to stop the heartbeat goroutine
	once    sync.Once
}

type outPacket struct {
	seqno  int64
	offset int64
	buf    []byte // prefixRoom bytes, then data
	n      int    // data bytes
	limit  int    // data capacity of this packet
	last   bool
	sync   bool
}

// NewBlockWriter sends WRITE_BLOCK over conn (to the first DataNode of the
// pipeline) and reads the connect reply. A refusal is a *PipelineError
// whose BadIndex comes from the reply's firstBadLink (0 when it is empty).
// It takes ownership of conn: Close or Abort closes it, as does
// NewBlockWriter on error. ctx bounds the writer's whole life: its
// deadline applies to conn and cancelling it fails pending calls.
func NewBlockWriter(ctx context.Context, conn net.Conn, cfg WriteBlockConfig) (*BlockWriter, error) {
	if cfg.Block == nil || cfg.Offset < 0 {
		conn.Close()
		return nil, fmt.Errorf("datatransfer: bad write config (block %v, offset %d)", cfg.Block, cfg.Offset)
	}
	w := &BlockWriter{
		conn:        conn,
		ctx:         ctx,
		bpc:         BytesPerChecksum,
		packetSize:  cfg.PacketSize / BytesPerChecksum * BytesPerChecksum,
		maxInFlight: cfg.MaxInFlight,
		syncOnClose: cfg.SyncOnClose,
		offset:      cfg.Offset,
		acked:       cfg.Offset,
		ackDone:     make(chan struct{}),
		quit:        make(chan struct{}),
	}
	if w.packetSize <= 0 {
		w.packetSize = PacketDataSize
	}
	if w.maxInFlight <= 0 {
		w.maxInFlight = DefaultMaxInFlight
	}
	w.prefixRoom = packetLengthsLen + maxEncodedHeaderLen + (w.packetSize/w.bpc+1)*ChecksumSize
	w.cond = sync.NewCond(&w.mu)
	w.stop = bindContext(ctx, conn)
	w.dl = newDeadlines(ctx, conn, cfg)

	r, err := writeBlockOp(conn, w.dl, cfg)
	if err != nil {
		w.stop()
		conn.Close()
		return nil, ctxError(ctx, err)
	}
	w.r = r
	w.lastSend = time.Now()
	go w.readAcks()
	interval := cfg.HeartbeatInterval
	if interval == 0 {
		interval = DefaultHeartbeatInterval
		if cfg.SocketTimeout > 0 {
			interval = cfg.SocketTimeout / 2
		}
	}
	if interval > 0 {
		go w.heartbeats(interval)
	}
	return w, nil
}

// CloseRecovery sends WRITE_BLOCK with stage PIPELINE_CLOSE_RECOVERY over
// conn and reads the reply: the pipeline's DataNodes give their complete
// replica of cfg.Block (cfg.MinBytesRcvd bytes, every one acknowledged)
// the generation stamp cfg.LatestGenerationStamp and finalize it, and no
// data follows (Hadoop's DataStreamer after a failure in the close stage,
// once every packet was acknowledged). A refusal is a *PipelineError
// whose BadIndex comes from the reply's firstBadLink. cfg.Stage is
// ignored. It closes conn.
func CloseRecovery(ctx context.Context, conn net.Conn, cfg WriteBlockConfig) error {
	defer conn.Close()
	if cfg.Block == nil {
		return fmt.Errorf("datatransfer: bad close recovery config (no block)")
	}
	stop := bindContext(ctx, conn)
	defer stop()
	cfg.Stage = hdfspb.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY.Enum()
	_, err := writeBlockOp(conn, newDeadlines(ctx, conn, cfg), cfg)
	return ctxError(ctx, err)
}

// writeBlockOp sends WRITE_BLOCK for cfg and reads the connect reply; a
// broken connection or a refusal is a *PipelineError.
func writeBlockOp(conn net.Conn, dl *deadlines, cfg WriteBlockConfig) (*bufio.Reader, error) {
	token := cfg.Token
	if token == nil {
		token = emptyToken()
	}
	stage := hdfspb.OpWriteBlockProto_PIPELINE_SETUP_CREATE
	if cfg.Stage != nil {
		stage = *cfg.Stage
	}
	pipelineSize := cfg.PipelineSize
	if pipelineSize <= 0 {
		pipelineSize = 1 + len(cfg.Targets)
	}
	storageType := cfg.StorageType
	if storageType == 0 {
		storageType = hdfspb.StorageTypeProto_DISK
	}
	op := &hdfspb.OpWriteBlockProto{
		Header: &hdfspb.ClientOperationHeaderProto{
			BaseHeader: &hdfspb.BaseHeaderProto{Block: cfg.Block, Token: token},
			ClientName: proto.String(cfg.ClientName),
		},
		Targets:               cfg.Targets,
		Stage:                 stage.Enum(),
		PipelineSize:          proto.Uint32(uint32(pipelineSize)),
		MinBytesRcvd:          proto.Uint64(uint64(cfg.MinBytesRcvd)),
		MaxBytesRcvd:          proto.Uint64(uint64(cfg.MaxBytesRcvd)),
		LatestGenerationStamp: proto.Uint64(cfg.LatestGenerationStamp),
		RequestedChecksum: &hdfspb.ChecksumProto{
			Type:             hdfspb.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(),
			BytesPerChecksum: proto.Uint32(BytesPerChecksum),
		},
		StorageType:        storageType.Enum(),
		TargetStorageTypes: cfg.TargetStorageTypes,
		TargetStorageIds:   cfg.TargetStorageIDs,
	}
	if cfg.StorageID != "" {
		op.StorageId = proto.String(cfg.StorageID)
	}
	nodeErr := func(err error) error {
		return &PipelineError{BadIndex: 0, Status: hdfspb.Status_ERROR, Seqno: -1, Err: err}
	}
	dl.write()
	if err := WriteRequest(conn, OpWriteBlock, op); err != nil {
		return nil, nodeErr(dl.explain(err, false))
	}
	r := bufio.NewReaderSize(conn, 4096)
	dl.read()
	resp, err := ReadResponse(r)
	if err != nil {
		return nil, nodeErr(dl.explain(err, true))
	}
	if resp.GetStatus() != hdfspb.Status_SUCCESS {
		return nil, &PipelineError{
			BadIndex:     badIndex(resp.GetFirstBadLink(), cfg.Targets),
			Status:       resp.GetStatus(),
			Message:      resp.GetMessage(),
			FirstBadLink: resp.GetFirstBadLink(),
			Seqno:        -1,
		}
	}
	return r, nil
}

// timeoutExtension is TimeoutExtension; tests shorten it.
var timeoutExtension = TimeoutExtension

// deadlines keeps a writer's connection within its timeouts: read and
// write set a deadline before each ack read and each packet write, never
// later than the context's deadline or a cap set by limitRead, and never
// undoing a cancellation.
type deadlines struct {
	conn    net.Conn
	ctx     context.Context
	rt, wt  time.Duration // 0: none
	readCap atomic.Int64  // unix nanoseconds; 0: none
	broken  atomic.Bool   // writes are interrupted for good
}

func newDeadlines(ctx context.Context, conn net.Conn, cfg WriteBlockConfig) *deadlines {
	nodes := 1 + len(cfg.Targets)
	ext := time.Duration(nodes) * timeoutExtension
	d := &deadlines{conn: conn, ctx: ctx}
	switch {
	case cfg.SocketTimeout == 0:
		d.rt = DefaultSocketTimeout + ext
	case cfg.SocketTimeout > 0:
		d.rt = cfg.SocketTimeout + ext
	}
	switch {
	case cfg.SocketWriteTimeout == 0:
		d.wt = DefaultSocketWriteTimeout + ext
	case cfg.SocketWriteTimeout > 0:
		d.wt = cfg.SocketWriteTimeout + ext
	}
	return d
}

func (d *deadlines) at(timeout time.Duration, capNanos int64) time.Time {
	var t time.Time
	if timeout > 0 {
		t = time.Now().Add(timeout)
	}
	if cd, ok := d.ctx.Deadline(); ok && (t.IsZero() || cd.Before(t)) {
		t = cd
	}
	if capNanos != 0 {
		if c := time.Unix(0, capNanos); t.IsZero() || c.Before(t) {
			t = c
		}
	}
	return t
}

// read renews the read deadline before waiting for a reply or an ack.
func (d *deadlines) read() {
	if d.rt == 0 && d.readCap.Load() == 0 {
		return // the context's deadline (set by bindContext) stays
	}
	d.conn.SetReadDeadline(d.at(d.rt, d.readCap.Load()))
	if d.ctx.Err() != nil {
		d.conn.SetReadDeadline(pastDeadline)
	}
}

// write renews the write deadline before a write to the connection.
func (d *deadlines) write() {
	if d.wt != 0 {
		d.conn.SetWriteDeadline(d.at(d.wt, 0))
	}
	if d.ctx.Err() != nil || d.broken.Load() {
		d.conn.SetWriteDeadline(pastDeadline)
	}
}

// interruptWrites fails pending and later writes at once.
func (d *deadlines) interruptWrites() {
	d.broken.Store(true)
	d.conn.SetWriteDeadline(pastDeadline)
}

// limitRead caps every later read deadline at t and applies it now.
func (d *deadlines) limitRead(t time.Time) {
	d.readCap.Store(t.UnixNano())
	d.read()
}

// explain names the timeout in err if err is one of ours, in Hadoop's
// SocketTimeoutException wording.
func (d *deadlines) explain(err error, reading bool) error {
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || d.ctx.Err() != nil {
		return err
	}
	if reading && d.rt > 0 {
		return fmt.Errorf("%d millis timeout while waiting for channel to be ready for read: %w", d.rt.Milliseconds(), err)
	}
	if !reading && d.wt > 0 {
		return fmt.Errorf("%d millis timeout while waiting for channel to be ready for write: %w", d.wt.Milliseconds(), err)
	}
	return err
}

// badIndex maps a reply's firstBadLink (a transfer address, ip:port) to a
// pipeline index, as Hadoop's DataStreamer does: empty means the first
// node.
func badIndex(link string, targets []*hdfspb.DatanodeInfoProto) int {
	if link == "" {
		return 0
	}
	for i, t := range targets {
		id := t.GetId()
		port := strconv.Itoa(int(id.GetXferPort()))
		for _, host := range []string{id.GetIpAddr(), id.GetHostName()} {
			if host != "" && (link == host+":"+port || link == net.JoinHostPort(host, port)) {
				return i + 1
			}
		}
	}
	return -1
}

// connError is the error for a broken connection to the first DataNode:
// the caller's cancellation, or a failure of node 0.
func (w *BlockWriter) connError(err error) error {
	if cerr := context.Cause(w.ctx); cerr != nil {
		return ctxError(w.ctx, err)
	}
	return &PipelineError{BadIndex: 0, Status: hdfspb.Status_ERROR, Seqno: -1, Err: err}
}

// fail records err as the writer's failure unless one is recorded already.
func (w *BlockWriter) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.cond.Broadcast()
	w.mu.Unlock()
}

func (w *BlockWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// readAcks runs until the last packet is acknowledged or the pipeline
// fails.
func (w *BlockWriter) readAcks() {
	defer close(w.ackDone)
	for {
		w.dl.read()
		ack, err := ReadAck(w.r)
		if err != nil {
			w.failAcks(w.connError(fmt.Errorf("read ack: %w", w.dl.explain(noEOF(err), true))))
			return
		}
		if bad := ack.FirstBad(); bad >= 0 {
			w.failAcks(&PipelineError{BadIndex: bad, Status: ack.Replies[bad], Seqno: ack.Seqno})
			return
		}
		if ack.Seqno == HeartbeatSeqno {
			continue
		}
		w.mu.Lock()
		if len(w.queue) == 0 || w.queue[0].seqno != ack.Seqno {
			want := int64(-1)
			if len(w.queue) > 0 {
				want = w.queue[0].seqno
			}
			w.mu.Unlock()
			w.failAcks(&PipelineError{BadIndex: 0, Status: hdfspb.Status_ERROR, Seqno: ack.Seqno,
				Err: fmt.Errorf("%w: ack for seqno %d, expected %d", ErrProtocol, ack.Seqno, want)})
			return
		}
		p := w.queue[0]
		w.queue[0] = nil
		w.queue = w.queue[1:]
		w.acked = p.offset + int64(p.n)
		w.cond.Broadcast()
		w.mu.Unlock()
		last := p.last
		// The ack proves the DataNode has the bytes, but not (to the race
		// detector, or to a writer descheduled inside Write) that send's
		// conn.Write has returned: wait for the write lock, which send
		// holds across the write, before the buffer goes back to the pool.
		w.wmu.Lock()
		w.wmu.Unlock()
		w.release(p)
		if last {
			return
		}
	}
}

// failAcks records the ack reader's failure and interrupts a packet write
// blocked on the failed pipeline (a silent first node stops reading, and
// the write would otherwise wait out its own timeout).
func (w *BlockWriter) failAcks(err error) {
	w.fail(err)
	w.dl.interruptWrites()
}

// heartbeats sends a heartbeat packet whenever the connection has been
// idle for interval.
func (w *BlockWriter) heartbeats(interval time.Duration) {
	hb := appendPacketPrefix(nil, PacketHeader{Seqno: HeartbeatSeqno}, 0)
	t := time.NewTicker(min(interval/2, time.Second))
	defer t.Stop()
	for {
		select {
		case <-w.quit:
			return
		case <-t.C:
		}
		if w.failed() != nil {
			return
		}
		w.wmu.Lock()
		if time.Since(w.lastSend) >= interval {
			w.dl.write()
			if _, err := w.conn.Write(hb); err != nil {
				w.wmu.Unlock()
				return // the ack reader or the next send reports it
			}
			w.lastSend = time.Now()
		}
		w.wmu.Unlock()
	}
}

var packetBufs = sync.Pool{}

func (w *BlockWriter) newPacket() *outPacket {
	limit := w.packetSize
	if r := int(w.offset % int64(w.bpc)); r != 0 {
		limit = w.bpc - r
	}
	size := w.prefixRoom + w.packetSize
	var buf []byte
	if w.packetSize == PacketDataSize {
		if bp, ok := packetBufs.Get().(*[]byte); ok {
			buf = *bp
		}
	}
	if buf == nil {
		buf = make([]byte, size)
	}
	return &outPacket{offset: w.offset, buf: buf, limit: limit}
}

func (w *BlockWriter) release(p *outPacket) {
	if w.packetSize == PacketDataSize && len(p.buf) == w.prefixRoom+PacketDataSize {
		b := p.buf
		p.buf = nil
		packetBufs.Put(&b)
	}
}

func (p *outPacket) data(prefixRoom int) []byte { return p.buf[prefixRoom : prefixRoom+p.n] }

// Write queues b for the pipeline, sending each packet as it fills. It
// blocks while MaxInFlight packets await acks. After a failure it returns
// the failure (a *PipelineError, or the context's error); bytes it
// accepted are then either acknowledged or in Unacked.
func (w *BlockWriter) Write(b []byte) (int, error) {
	if w.closed {
		return 0, ErrClosed
	}
	if err := w.failed(); err != nil {
		return 0, err
	}
	written := 0
	for len(b) > 0 {
		if w.cur == nil {
			w.cur = w.newPacket()
		}
		p := w.cur
		n := copy(p.buf[w.prefixRoom+p.n:w.prefixRoom+p.limit], b)
		p.n += n
		w.offset += int64(n)
		b = b[n:]
		written += n
		if p.n == p.limit {
			if err := w.queuePacket(p); err != nil {
				return written, err
			}
		}
	}
	if err := w.writeQueued(); err != nil {
		return written, err
	}
	return written, nil
}

// maxBatch and maxBatchBytes bound the packets Write gathers before
// writing them to the connection together (one writev on a TCP
// connection): 16 packets, or fewer once 256 KiB are gathered (4 of
// 64 KiB). The bytes on the wire are the same; the syscalls, and the
// receiver's wake-ups, fewer. One write deadline (SocketWriteTimeout)
// covers one writev, so the byte bound keeps what must move within it to
// a few packets' worth, close to a write per packet.
const (
	maxBatch      = 16
	maxBatchBytes = 256 << 10
)

// send queues p and writes it, with the packets queued before it, to the
// connection.
func (w *BlockWriter) send(p *outPacket) error {
	if err := w.queuePacket(p); err != nil {
		return err
	}
	return w.writeQueued()
}

// queuePacket gives p its seqno, queues it for acknowledgement and adds
// its encoding to the packets to write, writing them once maxBatch are
// waiting or before waiting for acks. On failure p stays either in the
// queue or in w.cur, so Unacked still covers its bytes.
func (w *BlockWriter) queuePacket(p *outPacket) error {
	w.mu.Lock()
	if w.err == nil && len(w.queue) >= w.maxInFlight && len(w.unsent) > 0 {
		// The packets awaited must be on their way first.
		w.mu.Unlock()
		if err := w.writeQueued(); err != nil {
			if p.n > 0 {
				w.cur = p
			}
			return err
		}
		w.mu.Lock()
	}
	for w.err == nil && len(w.queue) >= w.maxInFlight {
		w.cond.Wait()
	}
	if err := w.err; err != nil {
		w.mu.Unlock()
		if p.n > 0 {
			w.cur = p
		}
		return err
	}
	if w.cur == p {
		w.cur = nil
	}
	p.seqno = w.seqno
	w.seqno++
	w.queue = append(w.queue, p)
	w.mu.Unlock()

	enc := w.encode(p)
	w.unsent = append(w.unsent, enc)
	w.unsentN += len(enc)
	if len(w.unsent) >= maxBatch || w.unsentN >= maxBatchBytes {
		return w.writeQueued()
	}
	return nil
}

// writeQueued writes the encoded packets not yet written, in one writev
// where the connection allows it.
func (w *BlockWriter) writeQueued() error {
	if len(w.unsent) == 0 {
		return nil
	}
	bufs := w.unsent // WriteTo consumes its copy of the slice
	w.wmu.Lock()
	w.dl.write()
	_, err := bufs.WriteTo(w.conn)
	w.lastSend = time.Now()
	w.wmu.Unlock()
	clear(w.unsent)
	w.unsent = w.unsent[:0]
	w.unsentN = 0
	if err != nil {
		return w.writeFailed(w.dl.explain(err, false))
	}
	return nil
}

// encode fills in the lengths, header and checksums in front of p's data
// and returns the packet's bytes.
func (w *BlockWriter) encode(p *outPacket) []byte {
	sumLen := ChunkCount(p.offset, p.n, w.bpc) * ChecksumSize
	s := w.prefixRoom - sumLen
	ComputeChunks(p.buf[s:s], p.offset, p.data(w.prefixRoom), w.bpc)
	h := PacketHeader{OffsetInBlock: p.offset, Seqno: p.seqno, LastPacketInBlock: p.last,
		DataLen: int32(p.n), SyncBlock: p.sync}
	start := s - packetLengthsLen - headerLen(h)
	appendPacketPrefix(p.buf[start:start], h, sumLen)
	return p.buf[start : w.prefixRoom+p.n]
}

// writeFailed handles a failed write to the first DataNode. A DataNode
// that refuses a packet usually says why in an ack before closing, so
// wait (briefly) for the ack reader, whose error is the better one.
func (w *BlockWriter) writeFailed(err error) error {
	if context.Cause(w.ctx) == nil {
		d := time.Now().Add(ackGrace)
		if cd, ok := w.ctx.Deadline(); ok && cd.Before(d) {
			d = cd
		}
		w.dl.limitRead(d)
		<-w.ackDone
	}
	w.fail(w.connError(fmt.Errorf("write packet: %w", err)))
	return w.failed()
}

// emptyPacket returns a packet without data at the current offset.
func (w *BlockWriter) emptyPacket() *outPacket {
	return &outPacket{offset: w.offset, buf: make([]byte, w.prefixRoom)}
}

// waitAcked waits until every sent packet is acknowledged or the pipeline
// fails.
func (w *BlockWriter) waitAcked() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.err == nil && len(w.queue) > 0 {
		w.cond.Wait()
	}
	return w.err
}

// Flush sends the buffered bytes as a packet, with syncBlock when sync is
// true, and waits until the whole pipeline has acknowledged everything
// written so far: hflush (sync false; the data is then visible to new
// readers) or hsync (sync true; the DataNodes also fsync). A hsync with
// nothing buffered still sends an empty packet with syncBlock.
func (w *BlockWriter) Flush(sync bool) error {
	if w.closed {
		return ErrClosed
	}
	if err := w.failed(); err != nil {
		return err
	}
	if w.cur != nil && w.cur.n > 0 {
		w.cur.sync = sync
		if err := w.send(w.cur); err != nil {
			return err
		}
	} else if sync && w.offset > 0 {
		p := w.emptyPacket()
		p.sync = true
		if err := w.send(p); err != nil {
			return err
		}
	}
	return w.waitAcked()
}

// Close sends the buffered bytes, waits until the whole pipeline has
// acknowledged every data packet, then sends the empty last packet, waits
// for its ack and closes the connection (Hadoop's DataStreamer waits for
// all acks before PIPELINE_CLOSE the same way). A failure in the close
// stage therefore leaves nothing in Unacked: every remaining node has the
// whole block, and a PIPELINE_CLOSE_RECOVERY (CloseRecovery) finishes it.
// It returns the pipeline's failure, if any; calling it again returns the
// same result.
func (w *BlockWriter) Close() error {
	if w.closed {
		return w.closeErr
	}
	w.closed = true
	w.closeErr = w.finish()
	w.shutdown()
	return w.closeErr
}

func (w *BlockWriter) finish() error {
	if err := w.failed(); err != nil {
		return err
	}
	if w.cur != nil && w.cur.n > 0 {
		if err := w.send(w.cur); err != nil {
			return err
		}
	}
	if err := w.waitAcked(); err != nil {
		return err
	}
	last := w.emptyPacket()
	last.last, last.sync = true, w.syncOnClose
	if err := w.send(last); err != nil {
		return err
	}
	return w.waitAcked()
}

// Abort closes the connection at once, without the last packet: use it to
// abandon a failed pipeline. Pending calls fail. Acked and Unacked stay
// valid.
func (w *BlockWriter) Abort() {
	w.fail(ErrClosed)
	w.shutdown()
}

func (w *BlockWriter) shutdown() {
	w.once.Do(func() {
		close(w.quit)
		w.stop()
		w.conn.Close()
	})
}

// Acked returns the block offset up to which every node of the pipeline
// has acknowledged the data: Offset from the config plus the bytes
// acknowledged since.
func (w *BlockWriter) Acked() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.acked
}

// Unacked returns the bytes accepted by Write but not acknowledged by the
// whole pipeline — sent packets awaiting acks, then the partial packet not
// yet sent — and the block offset where they start (Acked). After a
// failure, a new pipeline (a recovery stage, Offset = that offset) must
// receive them again.
func (w *BlockWriter) Unacked() (offset int64, data []byte) {
	w.mu.Lock()
	offset = w.acked
	for _, p := range w.queue {
		data = append(data, p.data(w.prefixRoom)...)
	}
	w.mu.Unlock()
	if w.cur != nil {
		data = append(data, w.cur.data(w.prefixRoom)...)
	}
	return offset, data
}
