package datanode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// transfer carries out a NameNode TransferCommand: copy a local replica
// to the targets (re-replication, or a move for the storage policy).
func (d *DataNode) transfer(ctx context.Context, t *dnpb.TransferCommand) error {
	b := fsdataset.Block{ID: t.GetBlock().GetBlockId(), GenStamp: t.GetBlock().GetGenStamp(), NumBytes: int64(t.GetBlock().GetNumBytes())}
	types := make([]hdfspb.StorageTypeProto, len(t.GetTargetStorageTypes()))
	for i, ty := range t.GetTargetStorageTypes() {
		types[i] = hdfspb.StorageTypeProto(ty)
	}
	err := d.sendReplica(ctx, b, t.GetTargets(), types, t.GetTargetStorageIds(), hdfspb.OpWriteBlockProto_PIPELINE_SETUP_CREATE)
	if err == nil {
		d.stats.BlocksReplicated.Add(1)
		d.log.Info("datanode: replicated block", "block", b.String(), "targets", len(t.GetTargets()))
	}
	return err
}

// sendReplica streams a local replica through a write pipeline to
// targets, with its stored checksums. The receiver verifies them, so a
// replica that went bad on this disk is caught there: the copy fails and
// the replica is reported to the NameNode.
func (d *DataNode) sendReplica(ctx context.Context, b fsdataset.Block, targets []*hdfspb.DatanodeInfoProto, types []hdfspb.StorageTypeProto, ids []string, stage hdfspb.OpWriteBlockProto_BlockConstructionStage) error {
	if len(targets) == 0 {
		return errors.New("no targets")
	}
	r, err := d.data.OpenForRead(b)
	if err != nil {
		return err
	}
	defer r.Close()
	length := r.Length()
	if stage != hdfspb.OpWriteBlockProto_TRANSFER_RBW && b.NumBytes > 0 && b.NumBytes != length {
		return fmt.Errorf("%s: replica has %d bytes, the NameNode expects %d", b, length, b.NumBytes)
	}
	pool := d.pool()
	eb := &hdfspb.ExtendedBlockProto{PoolId: proto.String(pool), BlockId: proto.Uint64(b.ID), GenerationStamp: proto.Uint64(r.Info().GenStamp), NumBytes: proto.Uint64(uint64(length))}
	// The copy carries a WRITE token of the DataNode's own minting, for
	// the targets' storages, as Hadoop's DataTransfer does.
	typeNames := make([]string, len(types))
	for i, ty := range types {
		typeNames[i] = ty.String()
	}
	token, err := d.mintToken(b.ID, blocktoken.Write, typeNames, ids)
	if err != nil {
		return fmt.Errorf("%s: minting a block token for the copy: %w", b, err)
	}
	op := &hdfspb.OpWriteBlockProto{
		Header: &hdfspb.ClientOperationHeaderProto{
			BaseHeader: &hdfspb.BaseHeaderProto{Block: eb, Token: token},
			ClientName: proto.String(""),
		},
		Targets: targets[1:], Stage: stage.Enum(), PipelineSize: proto.Uint32(uint32(len(targets))),
		MinBytesRcvd: proto.Uint64(0), MaxBytesRcvd: proto.Uint64(uint64(length)), LatestGenerationStamp: proto.Uint64(r.Info().GenStamp),
		RequestedChecksum: &hdfspb.ChecksumProto{Type: hdfspb.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(), BytesPerChecksum: proto.Uint32(datatransfer.BytesPerChecksum)},
	}
	if len(types) > 0 {
		op.StorageType = types[0].Enum()
		op.TargetStorageTypes = types[1:]
	}
	if len(ids) > 0 {
		op.StorageId = proto.String(ids[0])
		op.TargetStorageIds = ids[1:]
	}
	id := targets[0].GetId()
	addr := d.peerAddr(id)
	raw, err := d.dialer().Dial(ctx, addr, token)
	if err != nil {
		return err
	}
	ext := time.Duration(len(targets)) * 5 * time.Second // Hadoop's per-target extension
	c := newPeerConn(raw, d.cfg.SocketTimeout+ext, d.cfg.SocketWriteTimeout+ext)
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	defer stop()
	br := bufio.NewReader(c)
	if err := datatransfer.WriteRequest(c, datatransfer.OpWriteBlock, op); err != nil {
		return err
	}
	resp, err := datatransfer.ReadResponse(br)
	if err != nil {
		return err
	}
	if resp.GetStatus() != hdfspb.Status_SUCCESS {
		return fmt.Errorf("%s refused %s: %s (first bad link %q)", addr, b, resp.GetMessage(), resp.GetFirstBadLink())
	}
	// Acks come back in order; read them while sending.
	var sent int64
	ackErr := make(chan error, 1)
	nPackets := (length + datatransfer.PacketDataSize - 1) / datatransfer.PacketDataSize
	go func() {
		defer func() {
			if r := recover(); r != nil {
				d.stats.Panics.Add(1)
				d.log.Error("datanode: panic reading a copy's acks", "block", b.String(), "panic", fmt.Sprint(r))
				ackErr <- fmt.Errorf("reading acks: panic: %v", r)
			}
		}()
		for i := int64(0); i <= nPackets; i++ {
			a, err := datatransfer.ReadAck(br)
			if err != nil {
				ackErr <- err
				return
			}
			if bad := a.FirstBad(); bad >= 0 {
				if a.Replies[bad] == hdfspb.Status_ERROR_CHECKSUM {
					ackErr <- fmt.Errorf("%w: target reports a checksum error", datatransfer.ErrChecksum)
					return
				}
				ackErr <- fmt.Errorf("pipeline node %d answered %v", bad, a.Replies[bad])
				return
			}
		}
		ackErr <- nil
	}()
	buf := make([]byte, datatransfer.PacketDataSize)
	bpc := int64(r.BytesPerChecksum())
	seq := int64(0)
	for sent < length {
		n := min(int64(len(buf)), length-sent)
		if _, err := r.ReadAt(buf[:n], sent); err != nil {
			return err
		}
		sums, err := r.Checksums(int(sent/bpc), int((n+bpc-1)/bpc))
		if err != nil {
			return err
		}
		h := datatransfer.PacketHeader{OffsetInBlock: sent, Seqno: seq, DataLen: int32(n)}
		if err := datatransfer.WritePacket(c, h, sums, buf[:n]); err != nil {
			return err
		}
		sent += n
		seq++
	}
	if err := datatransfer.WritePacket(c, datatransfer.PacketHeader{OffsetInBlock: sent, Seqno: seq, LastPacketInBlock: true}, nil, nil); err != nil {
		return err
	}
	err = <-ackErr
	if errors.Is(err, datatransfer.ErrChecksum) {
		// The receiver saw bad data: check our copy and report it.
		if verr := d.data.Verify(b); verr != nil {
			d.reportBad(b, verr)
		}
	}
	return err
}

// reportBad tells the NameNode that a local replica is corrupt.
func (d *DataNode) reportBad(b fsdataset.Block, why error) {
	info, ok := d.data.Get(b.ID)
	if !ok {
		return
	}
	d.stats.ChecksumErrors.Add(1)
	d.log.Warn("datanode: corrupt replica", "block", b.String(), "err", why)
	ctx, cancel := context.WithTimeout(d.ctx, 10*time.Second)
	defer cancel()
	req := &dnpb.ReportBadBlocksRequest{
		DatanodeUuid: proto.String(d.data.DatanodeUUID()), StorageId: proto.String(info.StorageID),
		Replicas: []*dnpb.Replica{replicaProto(info)}, Reason: proto.String(why.Error()),
	}
	// Every NameNode hears of it, as of every replica event.
	d.eachActor(func(a *nnActor) error {
		if err := a.nn.Call(ctx, "reportBadBlocks", req, &dnpb.ReportBadBlocksResponse{}); err != nil {
			d.log.Warn("datanode: reporting corrupt replica", "block", b.String(), "namenode", a.addr, "err", err)
		}
		return nil
	})
}

// transferBlockOp serves TRANSFER_BLOCK: a writing client asks this node
// to copy its replica to new pipeline nodes.
func (d *DataNode) transferBlockOp(c *peerConn, m *hdfspb.OpTransferBlockProto) error {
	base := m.GetHeader().GetBaseHeader()
	// COPY, as Hadoop's: without it no target is dialled.
	if err := d.checkAccess(c, c, datatransfer.OpTransferBlock, base.GetBlock(), base.GetToken(), blocktoken.Copy); err != nil {
		return err
	}
	b := blockOf(base.GetBlock())
	stage := hdfspb.OpWriteBlockProto_TRANSFER_FINALIZED
	if info, ok := d.data.Get(b.ID); ok && info.State != fsdataset.Finalized {
		stage = hdfspb.OpWriteBlockProto_TRANSFER_RBW
	}
	err := d.sendReplica(d.ctx, b, m.GetTargets(), m.GetTargetStorageTypes(), m.GetTargetStorageIds(), stage)
	if err != nil {
		return datatransfer.WriteResponse(c, errResponse(hdfspb.Status_ERROR, err.Error()))
	}
	return datatransfer.WriteResponse(c, &hdfspb.BlockOpResponseProto{Status: hdfspb.Status_SUCCESS.Enum()})
}

// copyBlock serves COPY_BLOCK: send the whole replica, as a read.
func (d *DataNode) copyBlock(c *peerConn, m *hdfspb.OpCopyBlockProto) error {
	if err := d.checkAccess(c, c, datatransfer.OpCopyBlock, m.GetHeader().GetBlock(), m.GetHeader().GetToken(), blocktoken.Copy); err != nil {
		return err
	}
	b := blockOf(m.GetHeader().GetBlock())
	// A balancer move's source: within the concurrent-move limit, at the
	// balancing bandwidth (balance.go).
	if !d.balance.acquire() {
		return datatransfer.WriteResponse(c, errResponse(hdfspb.Status_ERROR, fmt.Sprintf("Not able to copy block %d to %s because threshold has been reached", b.ID, c.RemoteAddr())))
	}
	defer d.balance.release()
	r, err := d.data.OpenForRead(b)
	if err != nil {
		return datatransfer.WriteResponse(c, errResponse(hdfspb.Status_ERROR, err.Error()))
	}
	defer r.Close()
	read := &hdfspb.OpReadBlockProto{
		Header: &hdfspb.ClientOperationHeaderProto{BaseHeader: m.GetHeader(), ClientName: proto.String("")},
		Offset: proto.Uint64(0), Len: proto.Uint64(uint64(r.Length())), SendChecksums: proto.Bool(true),
	}
	return datatransfer.ServeReadBlock(d.balance.writer(c), bufio.NewReader(c), read, replicaSource{r, d.cfg.Readahead}, r.Length())
}

// recoverReplica carries out a RecoverCommand: cut the replica to a new
// length (truncate) or finalize what it holds (lease recovery), with the
// new generation stamp. The finalization is reported to the NameNode like
// any received replica.
func (d *DataNode) recoverReplica(rc *dnpb.RecoverCommand) error {
	id, newGS, newLen := rc.GetBlock().GetBlockId(), rc.GetNewGenStamp(), rc.GetNewLength()
	if rc.GetNewBlockId() != 0 {
		return d.copyOnTruncate(rc)
	}
	info, ok := d.data.Get(id)
	if !ok {
		return fmt.Errorf("blk_%d: %w", id, fsdataset.ErrReplicaNotFound)
	}
	if info.GenStamp == newGS && info.State == fsdataset.Finalized && (newLen < 0 || info.NumBytes == newLen) {
		return nil // done before (a repeated command)
	}
	if newLen < 0 {
		return d.data.UpdateFinalizedGenStamp(info.Block, newGS)
	}
	if newLen > info.NumBytes {
		return fmt.Errorf("%s has %d bytes, cannot truncate to %d", info.Block, info.NumBytes, newLen)
	}
	if info.State == fsdataset.Finalized {
		w, err := d.data.Append(info.Block, newGS)
		if err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
	}
	w, err := d.data.RecoverRBW(fsdataset.Block{ID: id, GenStamp: min(info.GenStamp, newGS)}, newGS, newLen)
	if err != nil {
		return err
	}
	_, err = w.Finalize()
	return err
}
