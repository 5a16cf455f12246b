package spill

import "testing"

// FuzzDecodeIndex feeds arbitrary bytes as a map-output index file.
func FuzzDecodeIndex(f *testing.F) {
	f.Add(make([]byte, 24+8))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		idx, err := decodeIndex(data)
		if err == nil && len(idx)*24 > len(data) {
			t.Fatalf("%d entries from %d bytes", len(idx), len(data))
		}
	})
}
