package spill

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// FuzzOpenSegment feeds arbitrary bytes to the segment readers, for every
// codec, both as they are (the checksum almost always fails) and with a
// correct checksum appended so that the framing and decompression code
// sees them. Nothing may panic or allocate more than the input justifies.
func FuzzOpenSegment(f *testing.F) {
	for _, codec := range allCodecs {
		data, _ := encodeSegment(f, codec, []rec{{key: []byte("key"), value: []byte("value")}, {key: nil, value: bytes.Repeat([]byte("x"), 300)}})
		f.Add(data, uint8(0))
		f.Add(data[:len(data)-4], uint8(1))
	}
	f.Add([]byte{0, 0}, uint8(1))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f, 1, 1}, uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, mode uint8) {
		codec := allCodecs[int(mode>>1)%len(allCodecs)]
		if mode&1 == 1 {
			b = binary.BigEndian.AppendUint32(bytes.Clone(b), crc32.Checksum(b, castagnoli))
		}
		const limit = 64 << 20 // stop reading absurd but valid decompression bombs
		read := func(it Iterator) {
			n := 0
			for it.Next() && n < limit {
				n += len(it.Key()) + len(it.Value()) + 2
			}
			it.Close()
		}
		if it, err := OpenSegment(bytes.NewReader(b), codec, int64(len(b)), int64(len(b))*64); err == nil {
			read(it)
		}
		if it, err := OpenSegment(bytes.NewReader(b), codec, int64(len(b)), -1); err == nil {
			read(it)
		}
		if it, err := NewMemorySegment(b, codec); err == nil {
			read(it)
		}
	})
}
