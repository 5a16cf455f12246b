package datanode

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"

	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/proto/dnpb"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	// copyBufBytes bounds the buffer of a copy-on-truncate (at least one
	// chunk, whatever the replica's bytes per checksum).
	copyBufBytes = 1 << 20
	// copyTimeout bounds one copy: a stuck disk does not hold the block
	// (and a goroutine) forever; the NameNode sends the copy again.
	copyTimeout = 10 * time.Minute
)

// errCopyRunning is returned for a copy command repeated while the first
// is still copying: the repeat leaves it alone.
var errCopyRunning = errors.New("a copy to this block is already running")

// copyOnTruncate carries out a RecoverCommand with a new block id
// (Hadoop's copy-on-truncate, for a block a snapshot holds): the first
// new_length bytes of the replica become a new finalized replica of the
// new block, on the same storage, and the old replica stays as it is.
// Every chunk the copy reads is checked against the old replica's stored
// checksum, the chunk holding a partial tail included (read whole,
// written in part), so a corrupt replica is never copied as a good one.
// The copy is reported to the NameNode like any received replica. A
// repeated command after a finished copy does nothing, one during a copy
// returns errCopyRunning, and an unfinished copy left by an earlier
// attempt is removed and done again.
func (d *DataNode) copyOnTruncate(rc *dnpb.RecoverCommand) error {
	src := fsdataset.Block{ID: rc.GetBlock().GetBlockId(), GenStamp: rc.GetBlock().GetGenStamp()}
	dst := fsdataset.Block{ID: rc.GetNewBlockId(), GenStamp: rc.GetNewGenStamp()}
	d.copyingMu.Lock()
	if d.copying[dst.ID] {
		d.copyingMu.Unlock()
		return fmt.Errorf("copy of %s to %s: %w", src, dst, errCopyRunning)
	}
	if d.copying == nil {
		d.copying = map[uint64]bool{}
	}
	d.copying[dst.ID] = true
	d.copyingMu.Unlock()
	defer func() {
		d.copyingMu.Lock()
		delete(d.copying, dst.ID)
		d.copyingMu.Unlock()
	}()
	parent := d.ctx
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, copyTimeout)
	defer cancel()
	return d.copyReplica(ctx, src, dst, rc.GetNewLength())
}

func (d *DataNode) copyReplica(ctx context.Context, src, dst fsdataset.Block, n int64) error {
	if info, ok := d.data.Get(dst.ID); ok {
		if info.State == fsdataset.Finalized && info.GenStamp == dst.GenStamp && info.NumBytes == n {
			return nil
		}
		if info.State == fsdataset.Finalized {
			return fmt.Errorf("copy of %s to %s: %w: %s", src, dst, fsdataset.ErrReplicaExists, info.Block)
		}
		if err := d.data.Delete(info.Block); err != nil && !errors.Is(err, fsdataset.ErrReplicaNotFound) {
			return err
		}
	}
	rr, err := d.data.OpenForRead(src)
	if err != nil {
		return err
	}
	defer rr.Close()
	srcLen := rr.Length()
	if n < 0 || n > srcLen {
		return fmt.Errorf("%s has %d bytes, cannot copy %d of them", src, srcLen, n)
	}
	info := rr.Info()
	w, err := d.data.CreateRBW(dst, info.StorageType, info.StorageID)
	if err != nil {
		return err
	}
	bpc := int64(rr.BytesPerChecksum())
	chunks := max(1, copyBufBytes/bpc)
	buf := make([]byte, chunks*bpc)
	for off := int64(0); off < n; {
		if err := ctx.Err(); err != nil {
			w.Abort()
			return fmt.Errorf("copy of %s to %s: %w", src, dst, err)
		}
		// Read whole chunks of the source (its last may be short), to
		// check each against its checksum; write only what the copy keeps.
		k := min(int64(len(buf)), srcLen-off)
		if rem := n - off; k > rem {
			k = min(srcLen-off, (rem+bpc-1)/bpc*bpc)
		}
		if got, err := rr.ReadAt(buf[:k], off); int64(got) < k {
			w.Abort()
			if err == nil || errors.Is(err, io.EOF) {
				err = &fsdataset.CorruptReplicaError{Block: info.Block, StorageID: info.StorageID, Offset: off + int64(got), Reason: "data file shorter than the replica"}
			}
			return err
		}
		nc := (k + bpc - 1) / bpc
		sums, err := rr.Checksums(int(off/bpc), int(nc))
		if err != nil {
			w.Abort()
			return err
		}
		for i := int64(0); i < nc; i++ {
			chunk := buf[i*bpc : min((i+1)*bpc, k)]
			if !bytes.Equal(binary.BigEndian.AppendUint32(nil, crc32.Checksum(chunk, castagnoli)), sums[i*4:i*4+4]) {
				w.Abort()
				return &fsdataset.CorruptReplicaError{Block: info.Block, StorageID: info.StorageID, Offset: off + i*bpc,
					Reason: fmt.Sprintf("checksum mismatch in chunk %d while copying for truncate", off/bpc+i)}
			}
		}
		keep := min(k, n-off)
		if _, err := w.Write(buf[:keep]); err != nil {
			w.Abort()
			return err
		}
		off += keep
	}
	_, err = w.Finalize()
	return err
}
