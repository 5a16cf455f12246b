package jobtoken

import (
	"bytes"
	"testing"
)

func TestIdentifier(t *testing.T) {
	b := Identifier("job_1796146921644_0001")
	// Text: a one-byte vint length, then the bytes (JobTokenIdentifier.write).
	if want := append([]byte{22}, "job_1796146921644_0001"...); !bytes.Equal(b, want) {
		t.Fatalf("identifier %q", b)
	}
	if id, err := ParseIdentifier(b); err != nil || id != "job_1796146921644_0001" {
		t.Fatalf("parse: %q, %v", id, err)
	}
	for _, bad := range [][]byte{nil, {3, 'a'}, {1, 'a', 'b'}, {0x8f, 1, 2}, {1, 0xff}} {
		if _, err := ParseIdentifier(bad); err == nil {
			t.Errorf("%x parsed", bad)
		}
	}
}
