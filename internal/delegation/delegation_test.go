package delegation

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVLongEncoding(t *testing.T) {
	// Values and bytes from WritableUtils.writeVLong's documented rule.
	cases := []struct {
		v   int64
		hex string
	}{
		{0, "00"}, {127, "7f"}, {-112, "90"}, {-1, "ff"},
		{128, "8f80"}, {255, "8fff"}, {256, "8e0100"},
		{-113, "8770"}, {-256, "87ff"}, {-257, "860100"},
		{1<<63 - 1, "887fffffffffffffff"}, {-1 << 63, "807fffffffffffffff"},
	}
	for _, c := range cases {
		got := hex.EncodeToString(appendVLong(nil, c.v))
		if got != c.hex {
			t.Errorf("vlong %d = %s, want %s", c.v, got, c.hex)
		}
		b, _ := hex.DecodeString(c.hex)
		r := &reader{b: b}
		if v := r.vlong(); r.err != nil || v != c.v || len(r.b) != 0 {
			t.Errorf("decode %s = %d, %v", c.hex, v, r.err)
		}
	}
}

func TestIdentifierBytes(t *testing.T) {
	id := Identifier{Owner: "alice", Renewer: "yarn", IssueDate: 1700000000000, MaxDate: 1700604800000, SequenceNumber: 7, MasterKeyID: 3}
	// version 0; Text "alice", "yarn", ""; vlongs of the dates (6
	// magnitude bytes: length byte -118 = 0x8a); vints 7 and 3.
	want := "00" + "05616c696365" + "047961726e" + "00" + "8a018bcfe56800" + "8a018bf3f1ec00" + "07" + "03"
	if got := hex.EncodeToString(id.Bytes()); got != want {
		t.Fatalf("identifier bytes\n got %s\nwant %s", got, want)
	}
	back, err := DecodeIdentifier(id.Bytes())
	if err != nil || back != id {
		t.Fatalf("decode: %+v %v", back, err)
	}
	if s := id.String(); s != "HDFS_DELEGATION_TOKEN token 7 for alice with renewer yarn" {
		t.Errorf("String = %q", s)
	}
}

func TestDecodeIdentifierHostile(t *testing.T) {
	good := Identifier{Owner: "a", Renewer: "b"}.Bytes()
	bad := [][]byte{
		nil, {1}, good[:len(good)-1], append(append([]byte(nil), good...), 0),
		{0, 0x8c, 0x7f, 0xff, 0xff, 0xff}, // Text length 2^31-1
		{0, 0xff},                         // negative length
		{0, 0x80},                         // vlong of 8 bytes, none there
	}
	for _, b := range bad {
		if _, err := DecodeIdentifier(b); err == nil {
			t.Errorf("DecodeIdentifier(%x) succeeded", b)
		}
	}
}

func TestTokenURLString(t *testing.T) {
	tok := Token{Identifier: []byte{0, 1, 2, 0xfb, 0xff}, Password: []byte("pw"), Kind: WebHDFSKind, Service: "127.0.0.1:8020"}
	s := tok.EncodeToURLString()
	if strings.ContainsAny(s, "+/=") {
		t.Fatalf("not URL-safe unpadded: %s", s)
	}
	back, err := DecodeURLString(s)
	if err != nil || !bytes.Equal(back.Identifier, tok.Identifier) || back.Kind != tok.Kind || back.Service != tok.Service {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	if _, err := DecodeURLString(s + "AA"); err == nil {
		t.Error("trailing bytes accepted")
	}
}

// rnd is a deterministic randomness source.
type rnd byte

func (r *rnd) Read(p []byte) (int, error) {
	for i := range p {
		*r++
		p[i] = byte(*r)
	}
	return len(p), nil
}

func issue(t *testing.T, s *State, cfg Config, owner, renewer string, now int64) Token {
	t.Helper()
	var r rnd
	if s.NeedsKey(cfg, now) {
		k, err := s.NewKey(cfg, now, &r)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddKey(k, RetiredExpiry(cfg, now)); err != nil {
			t.Fatal(err)
		}
	}
	id, renew, err := s.NewIdentifier(cfg, owner, renewer, "", now)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddToken(id, renew); err != nil {
		t.Fatal(err)
	}
	pw, _, err := s.Retrieve(id.Bytes(), now)
	if err != nil {
		t.Fatal(err)
	}
	return Token{Identifier: id.Bytes(), Password: pw, Kind: Kind}
}

func class(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return ""
}

func TestLifecycle(t *testing.T) {
	cfg := Config{KeyUpdateInterval: 1000, MaxLifetime: 7000, RenewInterval: 1000}
	s := NewState()
	now := int64(1_000_000)
	tok := issue(t, s, cfg, "alice", "yarn/host@EXAMPLE.COM", now)
	id, err := s.Verify(tok, now+10)
	if err != nil || id.Renewer != "yarn" || id.User() != "alice" {
		t.Fatalf("verify: %+v %v", id, err)
	}
	// Wrong password.
	bad := tok
	bad.Password = append([]byte(nil), tok.Password...)
	bad.Password[0] ^= 1
	if _, err := s.Verify(bad, now); class(err) != ClassInvalidToken || !strings.Contains(err.Error(), "password doesn't match") {
		t.Errorf("bad password: %v", err)
	}
	// Expiry after the renew interval.
	if _, err := s.Verify(tok, now+1001); class(err) != ClassInvalidToken || !strings.Contains(err.Error(), "is expired") {
		t.Errorf("expired: %v", err)
	}
	// Only the renewer renews.
	if _, _, err := s.CheckRenew(cfg, tok, "bob", now+500); class(err) != ClassAccessControl ||
		!strings.Contains(err.Error(), "bob tries to renew a token (HDFS_DELEGATION_TOKEN token 1 for alice with renewer yarn) with non-matching renewer yarn") {
		t.Errorf("renew by bob: %v", err)
	}
	_, exp, err := s.CheckRenew(cfg, tok, "yarn", now+500)
	if err != nil || exp != now+1500 {
		t.Fatalf("renew: %d %v", exp, err)
	}
	if err := s.RenewToken(id, exp); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(tok, now+1200); err != nil {
		t.Errorf("renewed token refused: %v", err)
	}
	// Renewals stop at the max date.
	if _, exp, _ := s.CheckRenew(cfg, tok, "yarn", now+6500); exp != now+7000 {
		t.Errorf("renew near max date: %d", exp)
	}
	if _, _, err := s.CheckRenew(cfg, tok, "yarn", now+7001); class(err) != ClassInvalidToken {
		t.Errorf("renew after max date: %v", err)
	}
	// Cancel: not by a stranger; by the renewer; then unknown.
	if _, err := s.CheckCancel(tok, "mallory"); class(err) != ClassAccessControl {
		t.Errorf("cancel by mallory: %v", err)
	}
	if _, err := s.CheckCancel(tok, "yarn/other@EXAMPLE.COM"); err != nil {
		t.Errorf("cancel by renewer: %v", err)
	}
	if _, err := s.CheckCancel(tok, "alice"); err != nil {
		t.Errorf("cancel by owner: %v", err)
	}
	s.CancelToken(id)
	if _, err := s.Verify(tok, now+1200); class(err) != ClassInvalidToken || !strings.Contains(err.Error(), "can't be found in cache") {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := s.CheckCancel(tok, "alice"); class(err) != ClassInvalidToken {
		t.Errorf("second cancel: %v", err)
	}
}

func TestKeyRollAndExpiry(t *testing.T) {
	cfg := Config{KeyUpdateInterval: 1000, MaxLifetime: 3000, RenewInterval: 1000}
	s := NewState()
	t1 := issue(t, s, cfg, "alice", "alice", 0)
	if s.NeedsKey(cfg, 999) || !s.NeedsKey(cfg, 1000) {
		t.Fatal("key update interval not honoured")
	}
	t2 := issue(t, s, cfg, "bob", "bob", 1500) // rolls to key 2
	id1, _ := DecodeIdentifier(t1.Identifier)
	id2, _ := DecodeIdentifier(t2.Identifier)
	if id1.MasterKeyID != 1 || id2.MasterKeyID != 2 || id2.SequenceNumber != 2 {
		t.Fatalf("keys %d %d seq %d", id1.MasterKeyID, id2.MasterKeyID, id2.SequenceNumber)
	}
	// Key 1 (expiry 4000) and t1 (renew date 1000) are forgotten when a
	// key made after they expired is added.
	var r rnd
	k, _ := s.NewKey(cfg, 5000, &r)
	s.AddKey(k, RetiredExpiry(cfg, 5000))
	if len(s.Keys()) != 2 || s.Len() != 0 {
		t.Fatalf("after roll at 5000: %d keys, %d tokens", len(s.Keys()), s.Len())
	}
	// Image round trip keeps everything.
	tok := issue(t, s, cfg, "carol", "carol", 5100)
	seq, last, cur := s.Counters()
	s2, skipped, err := Restore(s.Keys(), s.Tokens(), seq, last, cur)
	if err != nil || len(skipped) != 0 {
		t.Fatal(err)
	}
	if _, err := s2.Verify(tok, 5200); err != nil {
		t.Fatalf("restored: %v", err)
	}
	if id, _, _ := s2.NewIdentifier(cfg, "x", "x", "", 5300); id.SequenceNumber != seq+1 || id.MasterKeyID != cur {
		t.Fatalf("restored counters: %+v", id)
	}
}

func TestCredentialsFile(t *testing.T) {
	tok := Token{Identifier: []byte{0, 1}, Password: []byte{2}, Kind: Kind, Service: "127.0.0.1:8020"}
	b := WriteCredentials([]AliasToken{{"127.0.0.1:8020", tok}})
	// HDTS, version 0, one token: alias, token, no secrets.
	want := "4844545300" + "01" + "0e" + hex.EncodeToString([]byte("127.0.0.1:8020")) +
		"020001" + "0102" + "15" + hex.EncodeToString([]byte(Kind)) + "0e" + hex.EncodeToString([]byte("127.0.0.1:8020")) + "00"
	if got := hex.EncodeToString(b); got != want {
		t.Fatalf("file\n got %s\nwant %s", got, want)
	}
	got, err := ReadCredentials(b)
	if err != nil || len(got) != 1 || got[0].Token.Service != tok.Service || !bytes.Equal(got[0].Token.Password, tok.Password) {
		t.Fatalf("read: %+v %v", got, err)
	}
	// Format 1: delimited CredentialsProto{tokens: {alias, TokenProto}}.
	tp := []byte{0x0a, 2, 0, 1, 0x12, 1, 2, 0x1a, byte(len(Kind))}
	tp = append(tp, Kind...)
	tp = append(tp, 0x22, 1, 's')
	kv := append([]byte{0x0a, 1, 'a', 0x12, byte(len(tp))}, tp...)
	msg := append([]byte{0x0a, byte(len(kv))}, kv...)
	pb := append([]byte("HDTS\x01"), byte(len(msg)))
	pb = append(pb, msg...)
	got, err = ReadCredentials(pb)
	if err != nil || len(got) != 1 || got[0].Alias != "a" || got[0].Token.Kind != Kind || got[0].Token.Service != "s" {
		t.Fatalf("read protobuf: %+v %v", got, err)
	}
	for _, bad := range [][]byte{nil, []byte("HDTX\x00"), []byte("HDTS\x05"), b[:len(b)-3], []byte("HDTS\x00\x8c\x7f\xff\xff\xff")} {
		if _, err := ReadCredentials(bad); err == nil {
			t.Errorf("ReadCredentials(%q) succeeded", bad)
		}
	}
}

func TestIssuedNamesBounded(t *testing.T) {
	cfg := DefaultConfig()
	s := NewState()
	long := strings.Repeat("r", MaxUserName+1)
	huge := strings.Repeat("r", 2<<20) // over Hadoop's Text limit: would not decode
	for _, c := range []struct{ owner, renewer, real string }{
		{long, "yarn", ""}, {"alice", long, ""}, {"alice", "yarn", long}, {"alice", huge, ""},
	} {
		_, _, err := s.NewIdentifier(cfg, c.owner, c.renewer, c.real, 1000)
		if class(err) != ClassIOException || !strings.Contains(err.Error(), "too long to be serialized") {
			t.Errorf("names %d/%d/%d bytes: %v", len(c.owner), len(c.renewer), len(c.real), err)
		}
	}
	ok := strings.Repeat("a", MaxUserName)
	id, _, err := s.NewIdentifier(cfg, ok, ok, ok, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := DecodeIdentifier(id.Bytes()); err != nil || back != id {
		t.Fatalf("longest names do not round-trip: %v", err)
	}
}

// A key retired with its tokens still live (max lifetime raised after
// they were issued, or no retired expiry recorded) is kept until they
// are gone; an image missing a token's key still loads, without it.
func TestRetiredKeyOutlivesItsTokens(t *testing.T) {
	short := Config{KeyUpdateInterval: 1000, MaxLifetime: 3000, RenewInterval: 1000}
	long := Config{KeyUpdateInterval: 1000, MaxLifetime: 100000, RenewInterval: 1000}
	s := NewState()
	var r rnd
	k1, _ := s.NewKey(short, 0, &r) // expiry 4000
	if err := s.AddKey(k1, 0); err != nil {
		t.Fatal(err)
	}
	tok := issue(t, s, long, "alice", "alice", 500) // max date 100500, key 1
	id, _ := DecodeIdentifier(tok.Identifier)
	// Keep it alive by renewing, rolling keys on the way; the roll at
	// 1000 records no retired expiry, so only the live token keeps key 1.
	for now := int64(900); now < 9000; now += 900 {
		if s.NeedsKey(long, now) {
			k, _ := s.NewKey(long, now, &r)
			if err := s.AddKey(k, 0); err != nil {
				t.Fatal(err)
			}
		}
		_, exp, err := s.CheckRenew(long, tok, "alice", now)
		if err != nil {
			t.Fatalf("renew at %d: %v", now, err)
		}
		s.RenewToken(id, exp)
	}
	if _, err := s.Verify(tok, 9000); err != nil {
		t.Fatalf("token lost its key: %v", err)
	}
	seq, last, cur := s.Counters()
	s2, skipped, err := Restore(s.Keys(), s.Tokens(), seq, last, cur)
	if err != nil || len(skipped) != 0 {
		t.Fatalf("restore: %v %v", skipped, err)
	}
	if _, err := s2.Verify(tok, 9000); err != nil {
		t.Fatalf("restored: %v", err)
	}
	// Once the token is gone, the expired key goes at the next roll.
	s.CancelToken(id)
	k, _ := s.NewKey(long, 9100, &r)
	s.AddKey(k, 0)
	for _, k := range s.Keys() {
		if k.ID == k1.ID {
			t.Fatal("expired key 1 kept with no token")
		}
	}

	// The retired expiry a roll records extends the replaced key.
	s = NewState()
	k1, _ = s.NewKey(short, 0, &r)
	s.AddKey(k1, 0)
	k2, _ := s.NewKey(short, 1000, &r)
	s.AddKey(k2, RetiredExpiry(long, 1000))
	if got := s.Keys()[0]; got.ID != k1.ID || got.Expiry != 101000 {
		t.Fatalf("retired key %+v", got)
	}

	// An image holding a token without its key loads, without the token.
	keys := []Key{k2}
	s3, skipped, err := Restore(keys, []TokenInfo{{ID: id, RenewDate: 9000}}, seq, last, cur)
	if err != nil || len(skipped) != 1 || skipped[0] != id || s3.Len() != 0 {
		t.Fatalf("restore without the key: %v %v", skipped, err)
	}
	if _, _, _ = s3.NewIdentifier(long, "x", "x", "", 9000); s3.seq < id.SequenceNumber {
		t.Fatalf("sequence went back to %d", s3.seq)
	}
}

func TestCredentialsFileModeAndSize(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tok")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	tok := Token{Identifier: []byte{0, 1}, Password: []byte{2}, Kind: Kind, Service: "nn:8020"}
	if err := WriteCredentialsFile(path, []AliasToken{{"nn:8020", tok}}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("an existing token file kept mode %v (%v)", st.Mode().Perm(), err)
	}
	got, err := ReadCredentialsFile(path)
	if err != nil || len(got) != 1 || got[0].Token.Service != "nn:8020" {
		t.Fatalf("read back: %+v %v", got, err)
	}
	// A (sparse) file over the bound is refused.
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("HDTS\x00"))
	f.Truncate(1 << 30)
	f.Close()
	if _, err := ReadCredentialsFile(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("huge file: %v", err)
	}
}
