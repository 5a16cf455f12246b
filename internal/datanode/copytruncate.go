package datanode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/proto/dnpb"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// copyOnTruncate carries out a RecoverCommand with a new block id
// (Hadoop's copy-on-truncate, for a block a snapshot holds): the first
// new_length bytes of the replica become a new finalized replica of the
// new block, on the same storage, and the old replica stays as it is.
// The copy is checked against the old replica's stored checksums (whole
// chunks) and reported to the NameNode like any received replica. A
// repeated command after a finished copy does nothing; an unfinished copy
// left by an earlier attempt is removed and done again.
func (d *DataNode) copyOnTruncate(rc *dnpb.RecoverCommand) error {
	src := fsdataset.Block{ID: rc.GetBlock().GetBlockId(), GenStamp: rc.GetBlock().GetGenStamp()}
	dst := fsdataset.Block{ID: rc.GetNewBlockId(), GenStamp: rc.GetNewGenStamp()}
	n := rc.GetNewLength()
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
	if n < 0 || n > rr.Length() {
		return fmt.Errorf("%s has %d bytes, cannot copy %d of them", src, rr.Length(), n)
	}
	info := rr.Info()
	w, err := d.data.CreateRBW(dst, info.StorageType, info.StorageID)
	if err != nil {
		return err
	}
	bpc := int64(rr.BytesPerChecksum())
	buf := make([]byte, 64*bpc)
	for off := int64(0); off < n; {
		k := min(int64(len(buf)), n-off)
		if _, err := rr.ReadAt(buf[:k], off); err != nil && !(errors.Is(err, io.EOF) && off+k == rr.Length()) {
			w.Abort()
			return err
		}
		// Whole chunks of the copy are whole chunks of the source: check
		// them, so a corrupt replica is not copied as a good one.
		if full := k / bpc; full > 0 {
			sums, err := rr.Checksums(int(off/bpc), int(full))
			if err != nil {
				w.Abort()
				return err
			}
			for i := int64(0); i < full; i++ {
				got := crc32.Checksum(buf[i*bpc:(i+1)*bpc], castagnoli)
				if !bytes.Equal(binary.BigEndian.AppendUint32(nil, got), sums[i*4:i*4+4]) {
					w.Abort()
					return &fsdataset.CorruptReplicaError{Block: info.Block, StorageID: info.StorageID, Reason: fmt.Sprintf("checksum mismatch in chunk %d while copying for truncate", off/bpc+i)}
				}
			}
		}
		if _, err := w.Write(buf[:k]); err != nil {
			w.Abort()
			return err
		}
		off += k
	}
	_, err = w.Finalize()
	return err
}
