package nfsclient

import (
	"encoding/binary"
	"errors"
	"testing"
)

func be(vs ...uint32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

// TestReplyDecoding checks the WRITE reply decoding writeConn does by
// hand: the RPC header, WRITE3res with and without attributes, a refused
// WRITE, and truncated replies.
func TestReplyDecoding(t *testing.T) {
	hdr := be(7, 1, 0, 1, 4, 0xdeadbeef, 0) // xid, REPLY, accepted, AUTH_UNIX verifier of 4 bytes, SUCCESS
	body, err := acceptedBody(append(hdr, 9, 9))
	if err != nil || len(body) != 2 {
		t.Fatalf("accepted reply: body %v, %v", body, err)
	}
	if _, err := acceptedBody(be(7, 1, 1)); err == nil {
		t.Fatal("a denied reply was accepted")
	}
	if _, err := acceptedBody(be(7, 1, 0, 0, 0, 1)); err == nil {
		t.Fatal("PROG_UNAVAIL was accepted")
	}
	if _, err := acceptedBody(be(7, 1, 0, 0, 8)); err == nil {
		t.Fatal("a truncated reply was accepted")
	}

	ok := append(append(append(be(0, 1), make([]byte, 24)...), append(be(1), make([]byte, 84)...)...), be(4096, 2, 1, 2)...)
	if n, c, err := parseWriteRes("w", ok); err != nil || n != 4096 || c != 2 {
		t.Fatalf("WRITE3resok with attributes: %d, %d, %v", n, c, err)
	}
	bare := be(0, 0, 0, 10, 0, 1, 2)
	if n, c, err := parseWriteRes("w", bare); err != nil || n != 10 || c != 0 {
		t.Fatalf("WRITE3resok without attributes: %d, %d, %v", n, c, err)
	}
	var se *StatusError
	if _, _, err := parseWriteRes("w", be(1, 0, 0)); !errors.As(err, &se) || se.Status != 1 {
		t.Fatalf("NFS3ERR_PERM: %v", err)
	}
	if _, _, err := parseWriteRes("w", bare[:len(bare)-4]); err == nil {
		t.Fatal("a truncated WRITE3resok was accepted")
	}
}
