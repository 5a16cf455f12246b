package fsdataset

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
)

// Meta file format (Hadoop's BlockMetadataHeader followed by the checksums):
//
//	version <uint16> = 1 | checksum type <uint8> = 2 (CRC32C) | bytesPerChecksum <uint32>
//	CRC32C of chunk 0 <uint32> | CRC32C of chunk 1 <uint32> | ...
//
// All big-endian. docs/format/datanode-storage.md has the details.
const (
	metaVersion    = 1
	checksumCRC32C = 2
	metaHeaderLen  = 7
	crcLen         = 4
	// maxBytesPerChecksum bounds the chunk size read from a header, so a
	// damaged header cannot make a reader allocate gigabytes.
	maxBytesPerChecksum = 16 << 20
	// DefaultBytesPerChecksum is dfs.bytes-per-checksum's default.
	DefaultBytesPerChecksum = 512
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc32c(p []byte) uint32 { return crc32.Checksum(p, castagnoli) }

func metaHeader(bpc int) []byte {
	h := make([]byte, metaHeaderLen)
	binary.BigEndian.PutUint16(h[0:2], metaVersion)
	h[2] = checksumCRC32C
	binary.BigEndian.PutUint32(h[3:7], uint32(bpc))
	return h
}

// parseMetaHeader returns the bytes per checksum of a valid header.
func parseMetaHeader(h []byte) (int, error) {
	if len(h) < metaHeaderLen {
		return 0, &formatError{fmt.Sprintf("meta header is %d bytes, want %d", len(h), metaHeaderLen)}
	}
	if v := binary.BigEndian.Uint16(h[0:2]); v != metaVersion {
		return 0, &formatError{fmt.Sprintf("meta version %d, want %d", v, metaVersion)}
	}
	if h[2] != checksumCRC32C {
		return 0, &formatError{fmt.Sprintf("checksum type %d, want %d (CRC32C)", h[2], checksumCRC32C)}
	}
	bpc := binary.BigEndian.Uint32(h[3:7])
	if bpc == 0 || bpc > maxBytesPerChecksum {
		return 0, &formatError{fmt.Sprintf("bytesPerChecksum %d out of range", bpc)}
	}
	return int(bpc), nil
}

// readMetaHeader reads and checks the header of an open meta file.
func readMetaHeader(f File) (int, error) {
	h := make([]byte, metaHeaderLen)
	n, err := f.ReadAt(h, 0)
	if n < metaHeaderLen {
		if err == nil || err == io.EOF {
			return 0, &formatError{fmt.Sprintf("meta file is %d bytes, shorter than its %d-byte header", n, metaHeaderLen)}
		}
		return 0, err
	}
	return parseMetaHeader(h)
}

// numChunks is the number of checksums for n data bytes.
func numChunks(n int64, bpc int) int64 { return (n + int64(bpc) - 1) / int64(bpc) }

// metaLen is the length of the meta file of a replica of n bytes.
func metaLen(n int64, bpc int) int64 { return metaHeaderLen + crcLen*numChunks(n, bpc) }

// crcOffset is the meta file offset of chunk i's checksum.
func crcOffset(i int64) int64 { return metaHeaderLen + crcLen*i }

// verifiedLength returns the largest length L ≤ dataLen such that every
// chunk in [0, L) matches a stored checksum: whole chunks their checksum,
// and a final partial chunk the checksum stored for it. It reads the data
// and meta files once (a crash can leave a torn tail: data written beyond
// the checksums, or a checksum slot for bytes that never reached the data
// file). The header must have been checked already.
func verifiedLength(data, meta File, dataLen, metaSize int64, bpc int) (int64, error) {
	stored := (metaSize - metaHeaderLen) / crcLen
	if stored <= 0 || dataLen <= 0 {
		return 0, nil
	}
	const batch = 128 // chunks per read
	dbuf := make([]byte, batch*bpc)
	cbuf := make([]byte, batch*crcLen)
	var off int64
	for chunk := int64(0); chunk < stored && off < dataLen; chunk += batch {
		nc := min(batch, stored-chunk)
		want := min(nc*int64(bpc), dataLen-off)
		n, err := data.ReadAt(dbuf[:want], off)
		if int64(n) < want && err != nil && err != io.EOF {
			return 0, err
		}
		m, err := meta.ReadAt(cbuf[:nc*crcLen], crcOffset(chunk))
		if int64(m) < nc*crcLen && err != nil && err != io.EOF {
			return 0, err
		}
		nc = min(nc, int64(m)/crcLen)
		got := dbuf[:n]
		for i := int64(0); i < nc; i++ {
			start := i * int64(bpc)
			if start >= int64(len(got)) {
				return off, nil
			}
			end := min(start+int64(bpc), int64(len(got)))
			sum := binary.BigEndian.Uint32(cbuf[i*crcLen:])
			if crc32c(got[start:end]) == sum {
				off += end - start
				if end-start < int64(bpc) {
					return off, nil // a verified partial last chunk
				}
				continue
			}
			// The chunk does not verify as a whole: the stored checksum
			// may be that of a shorter prefix (a partial chunk flushed
			// before more data was written). Take the longest such one.
			var crc uint32
			best := int64(0)
			for j := start; j < end; j++ {
				crc = crc32.Update(crc, castagnoli, got[j:j+1])
				if crc == sum {
					best = j + 1 - start
				}
			}
			return off + best, nil
		}
	}
	return off, nil
}
