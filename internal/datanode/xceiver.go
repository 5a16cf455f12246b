package datanode

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
)

// acceptLoop accepts DataTransferProtocol connections on ln (the TCP
// transfer port or the Unix domain socket).
func (d *DataNode) acceptLoop(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if d.ctx.Err() != nil {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			d.log.Error("datanode: accept", "err", err)
			return
		}
		d.connsMu.Lock()
		d.conns[c] = struct{}{}
		d.connsMu.Unlock()
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer func() {
				d.connsMu.Lock()
				delete(d.conns, c)
				d.connsMu.Unlock()
				c.Close()
			}()
			defer d.recoverPanic("DataTransferProtocol connection", c)
			d.serveConn(newPeerConn(c, d.cfg.SocketTimeout, d.cfg.SocketWriteTimeout))
		}()
	}
}

// recoverPanic, deferred by a goroutine serving a peer or a NameNode
// command, turns a panic into a logged error: the goroutine ends (its
// connection is closed by the caller's deferred cleanup) and the DataNode
// goes on serving everyone else.
func (d *DataNode) recoverPanic(what string, c net.Conn) {
	if r := recover(); r != nil {
		d.stats.Panics.Add(1)
		d.log.Error("datanode: panic recovered; the DataNode continues", "in", what, "remote", remoteOf(c), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	}
}

// serveConn runs ops on one connection until the peer closes it or it
// stays idle past the keepalive. The first op must come within
// SocketTimeout, later ones within SocketKeepalive; while an op runs, every
// read from the peer waits at most SocketTimeout and every write blocks at
// most SocketWriteTimeout, so a silent peer cannot keep its transfer slot.
func (d *DataNode) serveConn(c *peerConn) {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		if d.cfg.SASL.Enabled() {
			// Data transfer protection: the handshake first (sasl.go).
			sc := d.acceptSASL(tc)
			if sc == nil {
				return
			}
			c = newPeerConn(sc, c.rt, c.wt)
			// auth (no integrity) hands back the socket itself.
			c.layered = sc != net.Conn(tc)
		}
	}
	br := bufio.NewReaderSize(c, 64<<10)
	first := true
	for {
		wait := d.cfg.SocketKeepalive
		if first {
			wait = d.cfg.SocketTimeout
		}
		c.setReadTimeout(wait)
		op, body, err := datatransfer.ReadRequest(br)
		if err != nil {
			if !first || errors.Is(err, io.EOF) {
				return
			}
			d.log.Debug("datanode: bad request", "remote", c.RemoteAddr(), "err", err)
			datatransfer.WriteResponse(c, errResponse(hdfspb.Status_ERROR_INVALID, err.Error()))
			return
		}
		first = false
		c.setReadTimeout(d.cfg.SocketTimeout)
		select {
		case d.slots <- struct{}{}:
		default:
			datatransfer.WriteResponse(c, errResponse(hdfspb.Status_ERROR, fmt.Sprintf("Xceiver count %d exceeds the limit of concurrent xceivers: %d", d.xceivers.Load()+1, d.cfg.MaxTransferThreads)))
			return
		}
		keep, err := d.runOpInSlot(c, br, op, body)
		if err != nil {
			level := slog.LevelDebug // the peer's doing: a disconnect, a stale or bad request
			if ownFault(err) {
				level = slog.LevelInfo
			}
			d.log.Log(context.Background(), level, "datanode: op failed", "op", op, "remote", c.RemoteAddr(), "err", err)
		}
		if !keep || err != nil {
			return
		}
	}
}

// ownFault reports whether an op failed for this DataNode's own state —
// its writer of the replica stopped (a delete, a recovery), a volume
// failed or full, a stored replica corrupt — rather than for anything the
// peer did, so that it is logged where an operator looks.
func ownFault(err error) bool {
	for _, e := range []error{fsdataset.ErrWriterClosed, fsdataset.ErrVolumeFailed, fsdataset.ErrNoVolume, fsdataset.ErrCorrupt} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// runOpInSlot runs one op holding the transfer slot serveConn took; the
// slot is given back however the op ends, a panic included.
func (d *DataNode) runOpInSlot(c *peerConn, br *bufio.Reader, op datatransfer.Op, body []byte) (bool, error) {
	d.xceivers.Add(1)
	defer func() {
		d.xceivers.Add(-1)
		<-d.slots
	}()
	return d.runOp(c, br, op, body)
}

func errResponse(st hdfspb.Status, msg string) *hdfspb.BlockOpResponseProto {
	return &hdfspb.BlockOpResponseProto{Status: st.Enum(), Message: proto.String(msg)}
}

// runOp dispatches one op; keep reports whether the connection may carry
// another.
func (d *DataNode) runOp(c *peerConn, br *bufio.Reader, op datatransfer.Op, body []byte) (keep bool, err error) {
	msg := op.NewMessage()
	if msg == nil {
		datatransfer.WriteResponse(c, errResponse(hdfspb.Status_ERROR_UNSUPPORTED, fmt.Sprintf("unsupported operation %v", op)))
		return false, fmt.Errorf("unsupported op %v", op)
	}
	if err := proto.Unmarshal(body, msg); err != nil {
		datatransfer.WriteResponse(c, errResponse(hdfspb.Status_ERROR_INVALID, "malformed "+op.String()+" request: "+err.Error()))
		return false, err
	}
	switch m := msg.(type) {
	case *hdfspb.OpReadBlockProto:
		return d.readBlock(c, br, m)
	case *hdfspb.OpWriteBlockProto:
		return false, d.writeBlock(c, br, m)
	case *hdfspb.OpBlockChecksumProto:
		return true, d.blockChecksum(c, m)
	case *hdfspb.OpTransferBlockProto:
		return false, d.transferBlockOp(c, m)
	case *hdfspb.OpCopyBlockProto:
		return false, d.copyBlock(c, m)
	case *hdfspb.OpRequestShortCircuitAccessProto:
		return true, d.requestShortCircuitFds(c, m)
	case *hdfspb.OpReplaceBlockProto:
		return false, d.replaceBlock(c, m)
	}
	datatransfer.WriteResponse(c, errResponse(hdfspb.Status_ERROR_UNSUPPORTED, fmt.Sprintf("unsupported operation %v", op)))
	return false, fmt.Errorf("unsupported op %v", op)
}

func blockOf(eb *hdfspb.ExtendedBlockProto) fsdataset.Block {
	return fsdataset.Block{ID: eb.GetBlockId(), GenStamp: eb.GetGenerationStamp(), NumBytes: int64(eb.GetNumBytes())}
}

// writeBlock receives a block from a client (or another DataNode) and,
// if more targets follow, forwards it down the pipeline.
func (d *DataNode) writeBlock(up *peerConn, br *bufio.Reader, m *hdfspb.OpWriteBlockProto) error {
	base := m.GetHeader().GetBaseHeader()
	// Every stage needs WRITE, recovery and close-recovery included: before
	// a replica is touched and before any target is dialled.
	if err := d.checkAccess(up, up, datatransfer.OpWriteBlock, base.GetBlock(), base.GetToken(), blocktoken.Write); err != nil {
		return err
	}
	b := blockOf(base.GetBlock())
	stage := m.GetStage()
	newGS := m.GetLatestGenerationStamp()
	if newGS == 0 {
		newGS = b.GenStamp
	}
	reply := func(st hdfspb.Status, msg, badLink string) error {
		return datatransfer.WriteResponse(up, &hdfspb.BlockOpResponseProto{Status: st.Enum(), Message: proto.String(msg), FirstBadLink: proto.String(badLink)})
	}

	// Open the replica for this stage.
	var w *fsdataset.ReplicaWriter
	var err error
	switch stage {
	case hdfspb.OpWriteBlockProto_PIPELINE_SETUP_CREATE, hdfspb.OpWriteBlockProto_TRANSFER_RBW, hdfspb.OpWriteBlockProto_TRANSFER_FINALIZED:
		// The volume is the DataNode's choice among those of the storage
		// type (dfs.datanode.fsdataset.volume.choosing.policy): the
		// NameNode's storage ID is a hint Hadoop's policies ignore, and
		// following it would spread a JBOD node's blocks by the NameNode's
		// random pick rather than in turn over its disks.
		w, err = d.data.CreateRBW(fsdataset.Block{ID: b.ID, GenStamp: newGS}, storage.Type(m.GetStorageType()), "")
	case hdfspb.OpWriteBlockProto_PIPELINE_SETUP_APPEND:
		w, err = d.data.Append(b, newGS)
	case hdfspb.OpWriteBlockProto_PIPELINE_SETUP_STREAMING_RECOVERY, hdfspb.OpWriteBlockProto_PIPELINE_SETUP_APPEND_RECOVERY:
		w, err = d.data.RecoverRBW(b, newGS, int64(m.GetMinBytesRcvd()))
		if err != nil && stage == hdfspb.OpWriteBlockProto_PIPELINE_SETUP_APPEND_RECOVERY {
			w, err = d.data.Append(b, newGS)
		}
	case hdfspb.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY:
		return d.recoverClose(m, b, newGS, reply)
	default:
		err = fmt.Errorf("unsupported pipeline stage %v", stage)
	}
	if err != nil {
		d.log.Warn("datanode: cannot open replica for writing", "block", b.String(), "stage", stage, "err", err)
		return reply(hdfspb.Status_ERROR, err.Error(), "")
	}
	ok := false
	defer func() {
		if !ok {
			w.Close()
		}
	}()

	// Connect the rest of the pipeline.
	var mirror *peerConn
	var mirrorR *bufio.Reader
	if len(m.GetTargets()) > 0 {
		mc, mr, st, msg, bad := d.connectMirror(m, b)
		if st != hdfspb.Status_SUCCESS {
			w.Abort()
			ok = true
			return reply(st, msg, bad)
		}
		mirror, mirrorR = mc, mr
		defer mc.Close()
	}
	if err := reply(hdfspb.Status_SUCCESS, "", ""); err != nil {
		return err
	}
	ok = true
	packets, err := d.receivePackets(up, br, w, b, mirror, mirrorR, stage != hdfspb.OpWriteBlockProto_TRANSFER_RBW)
	if err != nil {
		d.dropUnfinished(w, stage, packets, err)
	}
	return err
}

// connectMirror dials the next DataNode of m's pipeline and forwards the
// op (the client's token goes along), then reads its connect reply. On
// success it returns the connection and a reader on it, with status
// SUCCESS; otherwise the connection is closed and the status, message and
// firstBadLink (the mirror's own, else the mirror) are for the upstream
// reply.
func (d *DataNode) connectMirror(m *hdfspb.OpWriteBlockProto, b fsdataset.Block) (*peerConn, *bufio.Reader, hdfspb.Status, string, string) {
	targets := m.GetTargets()
	next := targets[0].GetId()
	addr := d.peerAddr(next)
	fwd := datatransfer.MirrorWriteOp(m)
	raw, err := d.dialer().Dial(d.ctx, addr, fwd.GetHeader().GetBaseHeader().GetToken())
	if err == nil {
		// Hadoop's DataXceiver gives the mirror 5 s more per downstream
		// node, to read and to write.
		ext := time.Duration(len(targets)) * 5 * time.Second
		mc := newPeerConn(raw, d.cfg.SocketTimeout+ext, d.cfg.SocketWriteTimeout+ext)
		mr := bufio.NewReaderSize(mc, 16<<10)
		err = datatransfer.WriteRequest(mc, datatransfer.OpWriteBlock, fwd)
		if err == nil {
			var resp *hdfspb.BlockOpResponseProto
			resp, err = datatransfer.ReadResponse(mr)
			if err == nil && resp.GetStatus() == hdfspb.Status_SUCCESS {
				return mc, mr, hdfspb.Status_SUCCESS, "", ""
			}
			if err == nil {
				mc.Close()
				bad := resp.GetFirstBadLink()
				if bad == "" {
					bad = addr
				}
				return nil, nil, resp.GetStatus(), resp.GetMessage(), bad
			}
		}
		mc.Close()
	}
	d.log.Warn("datanode: connecting pipeline mirror", "mirror", addr, "block", b.String(), "stage", m.GetStage(), "err", err)
	return nil, nil, hdfspb.Status_ERROR, fmt.Sprintf("connecting to %s: %v", addr, err), addr
}

// recoverClose serves PIPELINE_CLOSE_RECOVERY, as Hadoop's DataXceiver
// with recoverClose: after a failure in the close stage the client asks
// the remaining nodes to finish the block it had entirely acknowledged.
// The local replica (FINALIZED, or RBW with the minBytesRcvd bytes the
// client expects; its writer, if still running, is stopped) gets the new
// generation stamp and is finalized; the NameNode is told it was received
// (an incremental block report, as after a finalized write); then the op
// goes on to the rest of the pipeline, and the reply upstream is the
// mirror's status (firstBadLink naming the failed node). No packets
// follow. A replica that cannot be recovered is refused with ERROR and an
// empty firstBadLink: this node is the bad one.
func (d *DataNode) recoverClose(m *hdfspb.OpWriteBlockProto, b fsdataset.Block, newGS uint64, reply func(hdfspb.Status, string, string) error) error {
	want := b
	want.NumBytes = int64(m.GetMinBytesRcvd())
	if err := d.data.UpdateFinalizedGenStamp(want, newGS); err != nil {
		d.log.Warn("datanode: close recovery refused", "block", b.String(), "newGS", newGS, "minBytesRcvd", want.NumBytes, "err", err)
		return reply(hdfspb.Status_ERROR, err.Error(), "")
	}
	d.stats.BlocksWritten.Add(1)
	d.log.Info("datanode: close recovery", "block", b.String(), "newGS", newGS, "bytes", want.NumBytes)
	ctx, cancel := context.WithTimeout(d.ctx, 5*time.Second)
	if err := d.flushIncremental(ctx); err != nil {
		d.log.Debug("datanode: incremental report after close recovery", "err", err)
	}
	cancel()
	if len(m.GetTargets()) > 0 {
		mc, _, st, msg, bad := d.connectMirror(m, b)
		if st != hdfspb.Status_SUCCESS {
			return reply(st, msg, bad)
		}
		mc.Close()
	}
	return reply(hdfspb.Status_SUCCESS, "", "")
}

// dropUnfinished disposes of the replica of a write that failed before
// its end, after packets packets (heartbeats included) arrived. A copy
// one DataNode was sending another (TRANSFER_*) is temporary and goes, as
// Hadoop's BlockReceiver.cleanupBlock does; so does a new replica whose
// writer went silent past the socket timeout without sending a single
// packet (a live client sends at least heartbeats; a peer that sends a
// header and nothing is not writing). Any other replica of a client's
// write, empty or not, stays RBW for pipeline or lease recovery: a client
// whose pipeline broke right after setup recovers the empty replicas. A
// finalized replica is left alone.
func (d *DataNode) dropUnfinished(w *fsdataset.ReplicaWriter, stage hdfspb.OpWriteBlockProto_BlockConstructionStage, packets int, cause error) {
	var ne net.Error
	silent := packets == 0 && w.BytesWritten() == 0 && errors.As(cause, &ne) && ne.Timeout()
	switch {
	case stage == hdfspb.OpWriteBlockProto_TRANSFER_RBW, stage == hdfspb.OpWriteBlockProto_TRANSFER_FINALIZED,
		stage == hdfspb.OpWriteBlockProto_PIPELINE_SETUP_CREATE && silent:
		if err := w.Abort(); err != nil {
			d.log.Warn("datanode: removing the replica of a failed write", "block", w.Info().Block.String(), "err", err)
		}
	default:
		// What was received stays for recovery; a failure to write it
		// out leaves a shorter replica, which recovery measures.
		if err := w.Close(); err != nil {
			d.log.Warn("datanode: writing out the replica of a failed write", "block", w.Info().Block.String(), "err", err)
		}
	}
}

// ackItem is a packet waiting to be acknowledged upstream.
type ackItem struct {
	seqno  int64
	last   bool
	status hdfspb.Status
	err    error
}

// receivePackets runs the receive side of a pipeline: each packet is
// forwarded raw to the mirror, verified, written; a packet's data is read
// straight into the replica writer's buffer when it fits (and is then
// forwarded with one writev after the packet's header and checksums;
// through a SASL layer, which would frame the two apart, it is not),
// sparing a copy; a responder goroutine
// acknowledges packets in order once the mirror has acknowledged them.
// The replica is finalized before the last packet is acknowledged, so an
// acknowledged block is durable on every node of the pipeline.
func (d *DataNode) receivePackets(up *peerConn, br *bufio.Reader, w *fsdataset.ReplicaWriter, b fsdataset.Block, mirror *peerConn, mirrorR *bufio.Reader, finalize bool) (packets int, err error) {
	acks := make(chan ackItem, 256)
	respDone := make(chan error, 1)
	go func() {
		// A panic here must not take the daemon down: it fails the write.
		defer func() {
			if r := recover(); r != nil {
				d.stats.Panics.Add(1)
				d.log.Error("datanode: panic in the pipeline responder; failing the write", "block", b.String(), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				up.Close()
				for range acks {
				}
				respDone <- fmt.Errorf("pipeline responder for %s: panic: %v", b, r)
			}
		}()
		respDone <- d.respond(up, w, acks, mirrorR, finalize)
	}()

	pr := datatransfer.NewPacketReader(br, 0)
	mirrorOK := mirror != nil
	direct := mirror == nil || !mirror.layered
	var recvErr error
	for {
		var room []byte
		if direct {
			room = w.Room()
		}
		pkt, err := pr.NextInto(room)
		if err != nil {
			recvErr = fmt.Errorf("receiving %s: %w", b, err)
			break
		}
		packets++
		inRoom := len(pkt.Data) > 0 && len(room) > 0 && &pkt.Data[0] == &room[0]
		if mirrorOK {
			if err := forward(mirror, pkt, inRoom); err != nil {
				d.log.Warn("datanode: mirror write failed", "block", b.String(), "err", err)
				mirrorOK = false
				mirror.Close()
			}
		}
		if pkt.IsHeartbeat() {
			acks <- ackItem{seqno: pkt.Seqno, status: hdfspb.Status_SUCCESS}
			continue
		}
		item := ackItem{seqno: pkt.Seqno, last: pkt.LastPacketInBlock, status: hdfspb.Status_SUCCESS}
		if len(pkt.Data) > 0 {
			if err := datatransfer.VerifyChunks(pkt.OffsetInBlock, pkt.Data, pkt.Checksums, datatransfer.BytesPerChecksum); err != nil {
				d.stats.ChecksumErrors.Add(1)
				d.log.Warn("datanode: checksum error in received packet; failing the write", "block", b.String(), "err", err)
				item.status = hdfspb.Status_ERROR_CHECKSUM
				item.err = err
				acks <- item
				recvErr = err
				break
			}
			if err := d.writePacket(w, pkt, inRoom); err != nil {
				item.status = hdfspb.Status_ERROR
				item.err = err
				acks <- item
				recvErr = err
				break
			}
		}
		if pkt.SyncBlock {
			if err := w.Sync(); err != nil {
				item.status, item.err = hdfspb.Status_ERROR, err
				acks <- item
				recvErr = err
				break
			}
		}
		acks <- item
		if pkt.LastPacketInBlock {
			break
		}
	}
	close(acks)
	respErr := <-respDone
	if recvErr != nil {
		return packets, recvErr
	}
	return packets, respErr
}

// forward writes a packet to the mirror: Raw, then the data when it was
// read apart from Raw (inRoom).
func forward(mirror *peerConn, pkt datatransfer.Packet, inRoom bool) error {
	if !inRoom {
		_, err := mirror.Write(pkt.Raw)
		return err
	}
	_, err := mirror.WriteBuffers(net.Buffers{pkt.Raw, pkt.Data})
	return err
}

// writePacket stores a packet's data at its offset. Bytes the replica
// already has (a resend after pipeline recovery) are skipped. inRoom says
// the data was read into the writer's Room.
func (d *DataNode) writePacket(w *fsdataset.ReplicaWriter, pkt datatransfer.Packet, inRoom bool) error {
	have := w.BytesWritten()
	off := pkt.OffsetInBlock
	data := pkt.Data
	if off > have {
		return fmt.Errorf("packet at offset %d leaves a hole after %d bytes", off, have)
	}
	if end := off + int64(len(data)); end <= have {
		return nil
	}
	// The checksums were verified against these bytes: the replica takes
	// them as they are.
	switch {
	case off == have && inRoom:
		if _, err := w.CommitVerified(len(data), pkt.Checksums, datatransfer.BytesPerChecksum); err != nil {
			return err
		}
	case off == have:
		if _, err := w.WriteVerified(data, pkt.Checksums, datatransfer.BytesPerChecksum); err != nil {
			return err
		}
	case inRoom:
		// The data sits in the writer's own buffer, past the bytes to
		// keep: copy it out before the writer moves it.
		if _, err := w.Write(append([]byte(nil), data[have-off:]...)); err != nil {
			return err
		}
	default:
		if _, err := w.Write(data[have-off:]); err != nil {
			return err
		}
	}
	data = data[have-off:]
	d.stats.BytesWritten.Add(int64(len(data)))
	// Make the data visible to readers when the writer may be waiting on
	// it: a short packet is what an hflush (or the end of the data) sends.
	// Full packets of a streaming write stay in the replica writer's
	// buffer, which matters with O_DIRECT, where each flush is a
	// synchronous write.
	if len(pkt.Data) < datatransfer.PacketDataSize {
		return w.Flush()
	}
	return nil
}

// respond acknowledges packets upstream in order, each after the mirror's
// ack for it; the last packet's ack follows the replica's finalization.
// On the last node of the pipeline, acks of packets already waiting
// behind each other go up in one write (the same bytes; fewer syscalls
// and wake-ups of the reader): an ack is held back only while the next
// item is already queued, and never across a wait for a mirror's ack,
// which could hide this node's progress from the client until the mirror
// timed out.
func (d *DataNode) respond(up *peerConn, w *fsdataset.ReplicaWriter, acks <-chan ackItem, mirrorR *bufio.Reader, finalize bool) error {
	mirrorOK := mirrorR != nil
	var firstErr error
	var out bytes.Buffer
	send := func() {
		if out.Len() == 0 {
			return
		}
		if _, err := up.Write(out.Bytes()); err != nil && firstErr == nil {
			firstErr = err
		}
		out.Reset()
	}
	for item := range acks {
		replies := []hdfspb.Status{item.status}
		if mirrorR != nil {
			switch {
			case !mirrorOK:
				replies = append(replies, hdfspb.Status_ERROR)
			case item.status != hdfspb.Status_SUCCESS:
				// This node failed; the mirror's state does not matter.
			default:
				a, err := datatransfer.ReadAck(mirrorR)
				if err != nil || a.Seqno != item.seqno {
					if err == nil {
						err = fmt.Errorf("mirror acked seqno %d, want %d", a.Seqno, item.seqno)
					}
					d.log.Warn("datanode: mirror ack failed", "err", err)
					mirrorOK = false
					replies = append(replies, hdfspb.Status_ERROR)
				} else {
					replies = append(replies, a.Replies...)
				}
			}
		}
		if item.last {
			send() // earlier acks do not wait for the fsync
		}
		if item.last && item.status == hdfspb.Status_SUCCESS && !finalize {
			// A copy of a replica still being written stays so. Close
			// writes out the last buffers (write-behind's included): its
			// error fails the copy.
			if err := w.Close(); err != nil {
				replies[0] = hdfspb.Status_ERROR
				firstErr = err
			}
		} else if item.last && item.status == hdfspb.Status_SUCCESS {
			info, err := w.Finalize()
			if err != nil {
				d.log.Warn("datanode: finalize failed", "block", w.Info().Block.String(), "err", err)
				replies[0] = hdfspb.Status_ERROR
				firstErr = err
			} else {
				d.stats.BlocksWritten.Add(1)
				d.log.Debug("datanode: received block", "block", info.Block.String(), "bytes", info.NumBytes, "storage", info.StorageType)
				// Tell the NameNode before acknowledging, so the client's
				// complete() finds the replica already reported.
				ctx, cancel := context.WithTimeout(d.ctx, 5*time.Second)
				if err := d.flushIncremental(ctx); err != nil {
					d.log.Debug("datanode: incremental report at finalize", "err", err)
				}
				cancel()
			}
		}
		datatransfer.WriteAck(&out, &datatransfer.Ack{Seqno: item.seqno, Replies: replies})
		// An ack reporting a failure (this node's or a mirror's) goes up
		// at once, not behind queued items.
		if mirrorOK || len(acks) == 0 || item.last || !allSuccess(replies) || out.Len() >= 4096 {
			send()
		}
		if item.err != nil && firstErr == nil {
			firstErr = item.err
		}
	}
	send()
	return firstErr
}

func allSuccess(replies []hdfspb.Status) bool {
	for _, st := range replies {
		if st != hdfspb.Status_SUCCESS {
			return false
		}
	}
	return true
}

// blockChecksum answers BLOCK_CHECKSUM: MD5 of the replica's CRCs over
// the requested length.
func (d *DataNode) blockChecksum(c *peerConn, m *hdfspb.OpBlockChecksumProto) error {
	if err := d.checkAccess(c, c, datatransfer.OpBlockChecksum, m.GetHeader().GetBlock(), m.GetHeader().GetToken(), blocktoken.Read); err != nil {
		return err
	}
	b := blockOf(m.GetHeader().GetBlock())
	r, err := d.data.OpenForRead(b)
	if err != nil {
		return datatransfer.WriteResponse(c, errResponse(hdfspb.Status_ERROR, err.Error()))
	}
	defer r.Close()
	length := r.Length()
	if b.NumBytes > 0 && b.NumBytes < length {
		length = b.NumBytes
	}
	bpc := int64(r.BytesPerChecksum())
	n := int((length + bpc - 1) / bpc)
	sums, err := r.Checksums(0, n)
	if err == nil && length%bpc != 0 && length < r.Length() {
		// The length ends inside a chunk the replica has more of: that
		// chunk's CRC must cover only the requested bytes.
		last := make([]byte, length%bpc)
		if _, err = r.ReadAt(last, length-int64(len(last))); err == nil {
			sums = datatransfer.ComputeChunks(sums[:len(sums)-4], length-int64(len(last)), last, int(bpc))
		}
	}
	if err != nil {
		return datatransfer.WriteResponse(c, errResponse(hdfspb.Status_ERROR, err.Error()))
	}
	return datatransfer.WriteResponse(c, datatransfer.NewBlockChecksumResponse(sums))
}

// replicaSource adapts a replica reader to datatransfer's
// ReadaheadSource.
type replicaSource struct {
	r     *fsdataset.ReplicaReader
	ahead int64
}

func (s replicaSource) Readahead() int64 { return max(s.ahead, 0) }

func (s replicaSource) ReadAt(p []byte, off int64) (int, error) { return s.r.ReadAt(p, off) }
func (s replicaSource) ReadChecksumsAt(p []byte, first int64) error {
	sums, err := s.r.Checksums(int(first), len(p)/4)
	if err != nil {
		return err
	}
	if copy(p, sums) != len(p) {
		return io.ErrUnexpectedEOF
	}
	return nil
}
func (s replicaSource) DataFile() (*os.File, int64) { return s.r.DataFile(), 0 }

// readBlock serves READ_BLOCK. A bad replica found on disk while sending
// is reported to the NameNode.
func (d *DataNode) readBlock(c *peerConn, br *bufio.Reader, m *hdfspb.OpReadBlockProto) (bool, error) {
	base := m.GetHeader().GetBaseHeader()
	if err := d.checkAccess(c, c, datatransfer.OpReadBlock, base.GetBlock(), base.GetToken(), blocktoken.Read); err != nil {
		return false, err
	}
	b := blockOf(base.GetBlock())
	r, err := d.data.OpenForRead(b)
	if err != nil {
		datatransfer.WriteResponse(c, errResponse(hdfspb.Status_ERROR, fmt.Sprintf("Replica not found for %s: %v", b, err)))
		return false, err
	}
	defer r.Close()
	err = datatransfer.ServeReadBlock(c, br, m, replicaSource{r, d.cfg.Readahead}, r.Length())
	if err != nil {
		return false, err
	}
	d.stats.BlocksRead.Add(1)
	d.stats.BytesRead.Add(int64(m.GetLen()))
	return true, nil
}
