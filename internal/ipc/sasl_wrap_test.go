package ipc

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"testing"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/stratafs/strata/internal/proto/ipcpb"
)

func testKey() types.EncryptionKey {
	k := make([]byte, 32)
	rand.Read(k)
	return types.EncryptionKey{KeyType: etypeID.AES256_CTS_HMAC_SHA1_96, KeyValue: k}
}

// TestWrapRoundTrip: each side opens the other's integrity and privacy
// tokens, including a sealed token rotated as MIT rotates them (RRC), and
// refuses tampered ones, tokens in the wrong direction and other keys'.
func TestWrapRoundTrip(t *testing.T) {
	key := testKey()
	srv, cli := &gssWrapper{key: key, acceptor: true}, &gssWrapper{key: key}
	msg := bytes.Repeat([]byte("frame "), 100)
	for _, seal := range []bool{false, true} {
		tok, err := cli.wrap(msg, seal)
		if err != nil {
			t.Fatal(err)
		}
		if seal == bytes.Contains(tok, msg[:60]) {
			t.Fatalf("seal=%v: plaintext visible = %v", seal, !seal)
		}
		got, err := srv.unwrap(tok)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("seal=%v: unwrap = %v", seal, err)
		}
		if _, err := cli.unwrap(tok); err == nil {
			t.Fatalf("seal=%v: the initiator accepted its own token", seal)
		}
		bad := append([]byte(nil), tok...)
		bad[len(bad)/2] ^= 1
		if _, err := srv.unwrap(bad); err == nil {
			t.Fatalf("seal=%v: a tampered token was accepted", seal)
		}
		other := &gssWrapper{key: testKey(), acceptor: true}
		if _, err := other.unwrap(tok); err == nil {
			t.Fatalf("seal=%v: another key opened the token", seal)
		}
		back, err := srv.wrap(msg, seal)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := cli.unwrap(back); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("seal=%v: client unwrap = %v", seal, err)
		}
	}
	// Rotate a sealed token's body right by 28, as MIT does, and say so.
	tok, _ := cli.wrap(msg, true)
	body := tok[16:]
	const rrc = 28
	rot := append(append([]byte{}, body[len(body)-rrc:]...), body[:len(body)-rrc]...)
	rt := append(append([]byte{}, tok[:16]...), rot...)
	binary.BigEndian.PutUint16(rt[6:8], rrc)
	if got, err := srv.unwrap(rt); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("rotated token: %v", err)
	}
	for _, junk := range [][]byte{nil, {5, 4}, bytes.Repeat([]byte{0xff}, 40), append([]byte{5, 4, 0, 0xff, 0xff, 0xff}, make([]byte, 12)...)} {
		if _, err := srv.unwrap(junk); err == nil {
			t.Fatalf("junk %x accepted", junk)
		}
	}
}

// TestUnwrapFramesBounds: a wrapped reply's inner lengths are checked
// before use.
func TestUnwrapFramesBounds(t *testing.T) {
	key := testKey()
	srv, cli := &gssWrapper{key: key, acceptor: true}, &clientSASL{w: &gssWrapper{key: key}, qop: 2}
	for _, inner := range [][]byte{{0, 0, 0, 9, 1, 2}, {0, 0}, {0xff, 0xff, 0xff, 0xff, 1}} {
		tok, _ := srv.wrap(inner, false)
		frame, err := appendFrame(nil, &ipcpb.RpcSaslProto{State: ipcpb.RpcSaslProto_WRAP.Enum(), Token: tok})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cli.unwrapFrames(frame[4:], 1<<20); err == nil {
			t.Fatalf("inner %x accepted", inner)
		}
	}
}
