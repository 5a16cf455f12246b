package fsdataset

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// ReplicaReader reads a replica as of the moment it was opened: its
// length is fixed then (a replica being written: its visible length, the
// bytes flushed so far). Safe for concurrent use; the files stay readable
// if the replica is later finalized, appended to, or deleted.
type ReplicaReader struct {
	info    ReplicaInfo
	bpc     int
	data    File
	meta    File
	lastCRC uint32 // checksum of the partial last chunk, if any
}

// OpenForRead opens a replica for reading: finalized, RWR, or RBW up to its
// visible length. The replica's generation stamp must be ≥ b.GenStamp (a
// reader may read a replica whose generation stamp was bumped since it
// learnt the block; an older replica is ErrGenStamp).
func (d *Dataset) OpenForRead(b Block) (*ReplicaReader, error) {
	r, err := d.acquire(b, false, func(r *replica) error {
		if r.gs < b.GenStamp {
			return errorf(ErrGenStamp, "cannot read %v: the replica is %s", b, r.describe())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	defer r.fileMu.Unlock()
	d.mu.Lock()
	rr := &ReplicaReader{info: r.info(), bpc: r.bpc, lastCRC: r.lastCRC}
	d.mu.Unlock()
	fail := func(err error) (*ReplicaReader, error) {
		rr.Close()
		return nil, fmt.Errorf("fsdataset: open %v on %s for reading: %w", rr.info.Block, r.vol, err)
	}
	if rr.data, err = d.fs.OpenFile(r.dataPath(), os.O_RDONLY, 0); err != nil {
		return fail(err)
	}
	if rr.meta, err = d.fs.OpenFile(r.metaPath(), os.O_RDONLY, 0); err != nil {
		return fail(err)
	}
	// The checksum of a partial last chunk changes when the replica
	// grows: take it now. A writer keeps it in memory; otherwise
	// (finalized, RWR, no writer) the meta file holds it and cannot
	// change while fileMu is held.
	n := rr.info.NumBytes
	if n%int64(rr.bpc) != 0 && rr.info.State != RBW {
		var slot [crcLen]byte
		if k, err := rr.meta.ReadAt(slot[:], crcOffset(n/int64(rr.bpc))); k < crcLen {
			if err == nil || err == io.EOF {
				rr.Close()
				return nil, &CorruptReplicaError{Block: rr.info.Block, StorageID: rr.info.StorageID, Reason: "meta file is shorter than its checksums"}
			}
			return fail(err)
		}
		rr.lastCRC = binary.BigEndian.Uint32(slot[:])
	}
	return rr, nil
}

// Length is the number of bytes readable.
func (rr *ReplicaReader) Length() int64 { return rr.info.NumBytes }

// BytesPerChecksum is the replica's chunk size.
func (rr *ReplicaReader) BytesPerChecksum() int { return rr.bpc }

// Info describes the replica as it was when opened.
func (rr *ReplicaReader) Info() ReplicaInfo { return rr.info }

// ReadAt reads data of the replica (io.ReaderAt); reading at or beyond
// Length returns io.EOF.
func (rr *ReplicaReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("fsdataset: negative offset %d", off)
	}
	n := rr.info.NumBytes
	if off >= n {
		return 0, io.EOF
	}
	short := false
	if int64(len(p)) > n-off {
		p, short = p[:n-off], true
	}
	k, err := rr.data.ReadAt(p, off)
	if err == nil && short {
		err = io.EOF
	}
	return k, err
}

// DataFile returns the data file, for sendfile; nil when the Dataset's FS
// does not give *os.File. Only the first Length bytes belong to the
// replica as opened; the caller must not close it.
func (rr *ReplicaReader) DataFile() *os.File {
	f, _ := rr.data.(*os.File)
	return f
}

// Checksums returns the stored CRC32C of chunks [firstChunk,
// firstChunk+n), 4 big-endian bytes each. The chunks must lie within
// Length.
func (rr *ReplicaReader) Checksums(firstChunk, n int) ([]byte, error) {
	total := numChunks(rr.info.NumBytes, rr.bpc)
	if firstChunk < 0 || n < 0 || int64(firstChunk)+int64(n) > total {
		return nil, fmt.Errorf("fsdataset: checksums [%d, %d) out of range for %v (%d chunks)", firstChunk, firstChunk+n, rr.info.Block, total)
	}
	out := make([]byte, n*crcLen)
	if n == 0 {
		return out, nil
	}
	k, err := rr.meta.ReadAt(out, crcOffset(int64(firstChunk)))
	if k < len(out) {
		if err == nil || err == io.EOF {
			return nil, &CorruptReplicaError{Block: rr.info.Block, StorageID: rr.info.StorageID, Reason: "meta file is shorter than its checksums"}
		}
		return nil, err
	}
	if rr.info.NumBytes%int64(rr.bpc) != 0 && int64(firstChunk+n) == total {
		binary.BigEndian.PutUint32(out[len(out)-crcLen:], rr.lastCRC)
	}
	return out, nil
}

// Close closes the files.
func (rr *ReplicaReader) Close() error {
	var err error
	for _, f := range []*File{&rr.data, &rr.meta} {
		if *f != nil {
			if cerr := (*f).Close(); err == nil {
				err = cerr
			}
			*f = nil
		}
	}
	return err
}

// Verify reads a replica (as OpenForRead would) end to end and checks every
// chunk against its stored checksum, and a finalized replica's meta file
// length. It returns a *CorruptReplicaError at the first bad chunk, nil if
// all verify. Used by the block scanner.
func (d *Dataset) Verify(b Block) error {
	rr, err := d.OpenForRead(b)
	if err != nil {
		return err
	}
	defer rr.Close()
	n, bpc := rr.info.NumBytes, rr.bpc
	corrupt := func(off int64, why string) error {
		return &CorruptReplicaError{Block: rr.info.Block, StorageID: rr.info.StorageID, Offset: off, Reason: why}
	}
	if fi, err := rr.data.Stat(); err != nil {
		return err
	} else if fi.Size() < n {
		return corrupt(0, fmt.Sprintf("data file is %d bytes, shorter than the replica's %d", fi.Size(), n))
	}
	if rr.info.State == Finalized {
		if fi, err := rr.meta.Stat(); err != nil {
			return err
		} else if fi.Size() != metaLen(n, bpc) {
			return corrupt(0, fmt.Sprintf("meta file is %d bytes, want %d for %d data bytes", fi.Size(), metaLen(n, bpc), n))
		}
	}
	const batch = 256 // chunks per read
	buf := make([]byte, batch*bpc)
	total := numChunks(n, bpc)
	for c := int64(0); c < total; c += batch {
		nc := min(batch, total-c)
		off := c * int64(bpc)
		want := min(nc*int64(bpc), n-off)
		if k, err := rr.ReadAt(buf[:want], off); int64(k) < want {
			return fmt.Errorf("fsdataset: verify %v: %w", rr.info.Block, err)
		}
		sums, err := rr.Checksums(int(c), int(nc))
		if err != nil {
			return err
		}
		for i := int64(0); i < nc; i++ {
			s := i * int64(bpc)
			e := min(s+int64(bpc), want)
			if crc32c(buf[s:e]) != binary.BigEndian.Uint32(sums[i*crcLen:]) {
				return corrupt(off+s, "")
			}
		}
	}
	return nil
}

// MetaFile returns the open checksum (meta) file, for handing to a local
// client with the data file (short-circuit reads); nil when the FS is not
// the real OS one.
func (rr *ReplicaReader) MetaFile() *os.File {
	if f, ok := rr.meta.(*os.File); ok {
		return f
	}
	return nil
}
