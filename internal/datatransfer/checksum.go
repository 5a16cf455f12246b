package datatransfer

import (
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// castagnoli is the CRC32C table; crc32 uses the CPU's CRC instruction
// for it where there is one.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C returns the CRC32C (Castagnoli) of b, the checksum HDFS stores
// per chunk.
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// UpdateCRC32C continues crc (of some bytes a) over b, giving the CRC32C of
// a followed by b. A DataNode uses it to extend the stored checksum of a
// partial last chunk when an append or a packet after hflush adds bytes to
// that chunk, without reading the chunk back.
func UpdateCRC32C(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }

// ErrChecksum is matched (errors.Is) by every *ChecksumError.
var ErrChecksum = errors.New("datatransfer: checksum mismatch")

// ChecksumError reports data that does not match its checksum.
type ChecksumError struct {
	// Offset is the block offset of the first byte covered by the failing
	// checksum.
	Offset int64
	// Want is the checksum sent with the data, Got the one computed.
	Want, Got uint32
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("datatransfer: checksum mismatch for chunk at block offset %d (sent %08x, computed %08x)",
		e.Offset, e.Want, e.Got)
}

// Is makes errors.Is(err, ErrChecksum) true.
func (e *ChecksumError) Is(target error) bool { return target == ErrChecksum }

// ChunkCount returns how many checksums cover n data bytes at block
// offset off, with bpc bytes per checksum. Checksums are cut on the block's
// chunk boundaries: when off is mid-chunk, the first checksum covers off up
// to the next boundary (or to the end of the data, if sooner), the others
// whole chunks, the last whatever is left. For example off=1000, n=100,
// bpc=512 gives 2 (bytes 1000–1023 and 1024–1099); off=1024, n=100 gives 1.
func ChunkCount(off int64, n, bpc int) int {
	if n <= 0 {
		return 0
	}
	first := bpc - int(off%int64(bpc))
	if n <= first {
		return 1
	}
	return 1 + (n-first+bpc-1)/bpc
}

// chunkSpans calls fn for each checksummed piece of n bytes at block
// offset off: its index and its [start, end) within the data.
func chunkSpans(off int64, n, bpc int, fn func(i, start, end int) bool) {
	start := 0
	end := bpc - int(off%int64(bpc))
	for i := 0; start < n; i++ {
		if end > n {
			end = n
		}
		if !fn(i, start, end) {
			return
		}
		start, end = end, end+bpc
	}
}

// ComputeChunks appends to dst the big-endian CRC32C of each chunk of data,
// which starts at block offset offsetInBlock, cutting chunks on bpc
// boundaries of the block (see ChunkCount).
func ComputeChunks(dst []byte, offsetInBlock int64, data []byte, bpc int) []byte {
	chunkSpans(offsetInBlock, len(data), bpc, func(_, s, e int) bool {
		dst = binary.BigEndian.AppendUint32(dst, CRC32C(data[s:e]))
		return true
	})
	return dst
}

// VerifyChunks checks data, which starts at block offset offsetInBlock,
// against big-endian CRC32C checksums cut as ComputeChunks cuts them. A
// mismatch returns a *ChecksumError naming the failing chunk; a checksum
// count that does not fit the data is an error wrapping ErrBadPacket.
func VerifyChunks(offsetInBlock int64, data, checksums []byte, bpc int) error {
	return verifyChunks(castagnoli, offsetInBlock, data, checksums, bpc)
}

func verifyChunks(tab *crc32.Table, off int64, data, sums []byte, bpc int) error {
	if bpc <= 0 {
		return fmt.Errorf("%w: bytes per checksum %d", ErrBadPacket, bpc)
	}
	if want := ChunkCount(off, len(data), bpc) * ChecksumSize; len(sums) != want {
		return fmt.Errorf("%w: %d checksum bytes for %d data bytes at offset %d (want %d)",
			ErrBadPacket, len(sums), len(data), off, want)
	}
	var err error
	chunkSpans(off, len(data), bpc, func(i, s, e int) bool {
		want := binary.BigEndian.Uint32(sums[i*ChecksumSize:])
		if got := crc32.Checksum(data[s:e], tab); got != want {
			err = &ChecksumError{Offset: off + int64(s), Want: want, Got: got}
			return false
		}
		return true
	})
	return err
}

// BlockChecksumMD5 returns the MD5 of a block's checksums (the
// concatenated big-endian CRC32C values of all its chunks, the last one
// over the partial chunk): the blockChecksum of a BLOCK_CHECKSUM reply.
func BlockChecksumMD5(checksums []byte) []byte {
	sum := md5.Sum(checksums)
	return sum[:]
}

// FileChecksumMD5 returns HDFS's MD5-of-MD5-of-CRC file checksum from the
// files's block MD5s in block order. Like Hadoop (and colinmarc/hdfs), it is
// the MD5 of the concatenated block MD5s followed by zeros up to the
// capacity of the Java DataOutputBuffer they were collected in: 32 bytes,
// doubled as needed. An empty file (no blocks) gives the MD5 of 32 zeros.
func FileChecksumMD5(blockMD5s [][]byte) []byte {
	var n int
	for _, b := range blockMD5s {
		n += len(b)
	}
	size := 32
	for size < n {
		size *= 2
	}
	buf := make([]byte, 0, size)
	for _, b := range blockMD5s {
		buf = append(buf, b...)
	}
	sum := md5.Sum(buf[:size])
	return sum[:]
}

// FileChecksumAlgorithm returns the algorithm name Hadoop prints for an
// MD5-of-MD5 file checksum, e.g. "MD5-of-0MD5-of-512CRC32C". crcPerBlock
// is the first block's crcPerBlock when the file has more than one block,
// else 0 — as Hadoop reports it.
func FileChecksumAlgorithm(crcPerBlock int64, bytesPerCRC int, crcType hdfspb.ChecksumTypeProto) string {
	t := "CRC32C"
	if crcType == hdfspb.ChecksumTypeProto_CHECKSUM_CRC32 {
		t = "CRC32"
	}
	return fmt.Sprintf("MD5-of-%dMD5-of-%d%s", crcPerBlock, bytesPerCRC, t)
}
