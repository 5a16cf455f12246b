package fsdataset

import "testing"

// FuzzParseMetaHeader feeds arbitrary bytes as a replica meta file header.
func FuzzParseMetaHeader(f *testing.F) {
	f.Add(metaHeader(512))
	f.Add([]byte{0, 1, 2, 0, 0, 2, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		bpc, err := parseMetaHeader(data)
		if err == nil && bpc <= 0 {
			t.Fatalf("accepted header with bytes per checksum %d", bpc)
		}
	})
}
