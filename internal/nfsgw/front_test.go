package nfsgw

import (
	"testing"
)

// FuzzParseCall feeds arbitrary bytes to the decoders that read a
// client's RPC records before anything else does.
func FuzzParseCall(f *testing.F) {
	f.Add([]byte{0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0x86, 0xa3, 0, 0, 0, 3, 0, 0, 0, 3,
		0, 0, 0, 1, 0, 0, 0, 20, 0, 0, 0, 1, 0, 0, 0, 1, 'h', 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 'S', 'G', 1, 0, 0, 0, 0, 0, 0, 0, 0x40, 1, 0, 0, 0, 1, 'x', 0, 0, 0})
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0x86, 0xa5, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, '/', 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseCall(b)
		if err != nil {
			return
		}
		if len(h.args) > len(b) {
			t.Fatalf("arguments (%d bytes) longer than the call (%d)", len(h.args), len(b))
		}
		checkArgs(h.prog, h.vers, h.proc, h.args)
		isUnstableWrite(h.args)
	})
}

func TestHandleRoundTrip(t *testing.T) {
	for _, id := range []uint64{rootID, 16386, 1 << 40} {
		got, err := decodeHandle(encodeHandle(id))
		if err != nil || got != id {
			t.Fatalf("handle of %d decodes to %d, %v", id, got, err)
		}
	}
	for _, bad := range [][]byte{nil, []byte("SG"), make([]byte, handleLen), append([]byte("SG\x02\x00"), make([]byte, 8)...)} {
		if _, err := decodeHandle(bad); err == nil {
			t.Fatalf("decodeHandle(%x) accepted", bad)
		}
	}
}
