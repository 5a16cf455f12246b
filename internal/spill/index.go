package spill

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/stratafs/strata/internal/vfs"
)

// IndexEntry locates one partition's segment in a map output file.
type IndexEntry struct {
	Offset     int64 // where the segment starts in the file
	RawLength  int64 // record bytes and end marker, uncompressed
	PartLength int64 // bytes on disk, checksum included
}

const (
	indexEntryLen   = 24
	indexTrailerLen = 8
	// maxIndexPartitions bounds what ReadIndex accepts.
	maxIndexPartitions = 1 << 24
)

// encodeIndex returns the bytes of an index file (see
// docs/format/map-output.md): 24 bytes per partition, then the CRC32C of
// those bytes as an 8-byte big-endian integer.
func encodeIndex(idx []IndexEntry) []byte {
	b := make([]byte, 0, len(idx)*indexEntryLen+indexTrailerLen)
	for _, e := range idx {
		b = binary.BigEndian.AppendUint64(b, uint64(e.Offset))
		b = binary.BigEndian.AppendUint64(b, uint64(e.RawLength))
		b = binary.BigEndian.AppendUint64(b, uint64(e.PartLength))
	}
	return binary.BigEndian.AppendUint64(b, uint64(crc32.Checksum(b, castagnoli)))
}

// decodeIndex parses and checks an index file's bytes.
func decodeIndex(b []byte) ([]IndexEntry, error) {
	if len(b) < indexTrailerLen || (len(b)-indexTrailerLen)%indexEntryLen != 0 {
		return nil, corrupt("index of %d bytes is not 8 + 24×partitions", len(b))
	}
	body := b[:len(b)-indexTrailerLen]
	if got, want := binary.BigEndian.Uint64(b[len(body):]), uint64(crc32.Checksum(body, castagnoli)); got != want {
		return nil, corrupt("index checksum mismatch: stored %016x, computed %08x", got, want)
	}
	idx := make([]IndexEntry, len(body)/indexEntryLen)
	end := int64(0)
	for i := range idx {
		p := body[i*indexEntryLen:]
		e := IndexEntry{
			Offset:     int64(binary.BigEndian.Uint64(p)),
			RawLength:  int64(binary.BigEndian.Uint64(p[8:])),
			PartLength: int64(binary.BigEndian.Uint64(p[16:])),
		}
		if e.Offset < end || e.RawLength < markerLen || e.PartLength < trailerLen+1 || e.Offset > 1<<62-e.PartLength {
			return nil, corrupt("index entry %d (%+v) is impossible", i, e)
		}
		end = e.Offset + e.PartLength
		idx[i] = e
	}
	return idx, nil
}

// ReadIndex reads a file.out.index file and verifies its checksum and its
// entries (partitions in file order, lengths possible); a bad file is
// reported with an error wrapping ErrCorrupt.
func ReadIndex(path string) ([]IndexEntry, error) { return ReadIndexFS(nil, path) }

// ReadIndexFS is ReadIndex on fsys (nil means media.Default()).
func ReadIndexFS(fsys vfs.FS, path string) ([]IndexEntry, error) {
	f, err := vfs.Open(orDefault(fsys), path)
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	if st.Size() > maxIndexPartitions*indexEntryLen+indexTrailerLen {
		return nil, corrupt("index %s is %d bytes, too large", path, st.Size())
	}
	b := make([]byte, st.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("spill: reading %s: %w", path, err)
	}
	idx, err := decodeIndex(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return idx, nil
}

// writeIndex writes an index file (not synced: map output is intermediate
// data that a lost node recomputes).
func writeIndex(fsys vfs.FS, path string, idx []IndexEntry) error {
	if err := vfs.WriteFile(fsys, path, encodeIndex(idx), 0o644); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	return nil
}
