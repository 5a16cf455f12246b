package blocktoken

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Bytes of WritableUtils.writeVLong for values at each encoding boundary.
func TestVLongMatchesHadoop(t *testing.T) {
	for _, tc := range []struct {
		v    int64
		want string
	}{
		{0, "00"}, {127, "7f"}, {-112, "90"}, {128, "8f80"}, {-113, "8770"},
		{255, "8fff"}, {256, "8e0100"}, {-1 << 63, "807fffffffffffffff"},
		{1 << 62, "884000000000000000"}, {1733000000000, "8a01937ed97200"},
	} {
		got := hex.EncodeToString(appendVLong(nil, tc.v))
		if got != tc.want {
			t.Errorf("vlong(%d) = %s, want %s", tc.v, got, tc.want)
		}
		d := decoder{b: appendVLong(nil, tc.v)}
		if back := d.vlong(); back != tc.v || d.err != nil || len(d.b) != 0 {
			t.Errorf("vlong(%d) decodes to %d (%v)", tc.v, back, d.err)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		v := int64(r.Uint64()) >> r.IntN(64)
		d := decoder{b: appendVLong(nil, v)}
		if back := d.vlong(); back != v {
			t.Fatalf("vlong round trip %d -> %d", v, back)
		}
	}
}

// The identifier's bytes, as Hadoop's writeLegacy writes them.
func TestIdentifierEncoding(t *testing.T) {
	id := &Identifier{ExpiryMillis: 1733000000000, KeyID: 5, User: "bob", BlockPoolID: "BP-1", BlockID: 1073741825,
		Modes: []AccessMode{Read, Write}, StorageTypes: []string{"SSD"}, StorageIDs: []string{"DS-1"}}
	want := "8a01937ed97200" + "05" + "00000003626f62" + "00000004" + "42502d31" + "8c40000001" +
		"02" + "0452454144" + "055752495445" + "01" + "03535344" + "01" + "00000004" + "44532d31"
	if got := hex.EncodeToString(id.Encode()); got != want {
		t.Fatalf("encoding:\n got %s\nwant %s", got, want)
	}
	back, err := Decode(id.Encode())
	if err != nil || !reflect.DeepEqual(back, id) {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	id.Handshake = []byte{1, 2, 3}
	back, err = Decode(id.Encode())
	if err != nil || !bytes.Equal(back.Handshake, id.Handshake) {
		t.Fatalf("handshake round trip: %+v, %v", back, err)
	}
}

func TestDecodeRefusesGarbage(t *testing.T) {
	good := (&Identifier{ExpiryMillis: 1e12, KeyID: 1, User: "u", BlockPoolID: "p", BlockID: 9, Modes: []AccessMode{Read}}).Encode()
	for name, b := range map[string][]byte{
		"empty":     {},
		"protobuf":  {0x08, 0x01},
		"truncated": good[:len(good)-3],
		"trailing":  append(append([]byte{}, good...), 0, 0, 0),
		"huge":      make([]byte, MaxIdentifierLen+1),
		"modes":     append(appendString(appendString(appendVLong(appendVLong(nil, -200), 1), "u"), "p"), 0x01, 0x7f),
		"bad mode":  append(appendString(appendString(appendVLong(appendVLong(nil, -200), 1), "u"), "p"), 0x01, 0x01, 0x03, 'B', 'A', 'D'),
		"str len":   append(appendVLong(appendVLong(nil, -200), 1), 0x7f, 0xff, 0xff, 0xff),
	} {
		if _, err := Decode(b); err == nil {
			t.Errorf("%s: Decode accepted %x", name, b)
		}
	}
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func seeded(seed uint64) *rand.ChaCha8   { var s [32]byte; s[0] = byte(seed); return rand.NewChaCha8(s) }
func isInvalid(err error, substr string) bool {
	var ie *InvalidTokenError
	return errors.As(err, &ie) && strings.Contains(ie.Msg, substr)
}

func newPair(t *testing.T, clk *fakeClock) (*Manager, *Manager) {
	t.Helper()
	cfg := Config{BlockPoolID: "BP-1", Enabled: true, KeyUpdateInterval: 10 * time.Minute, TokenLifetime: 10 * time.Minute, Now: clk.now, Rand: seeded(1)}
	nn, err := NewMaster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dn := NewWorker(Config{BlockPoolID: "BP-1", Now: clk.now})
	if err := dn.ImportKeys(nn.ExportKeys()); err != nil {
		t.Fatal(err)
	}
	return nn, dn
}

func TestMintAndCheck(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	nn, dn := newPair(t, clk)
	tok, err := nn.Mint("alice", 42, []AccessMode{Read}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := dn.Check(tok, 42, Read); err != nil || id.User != "alice" {
		t.Fatalf("a good token was refused: %v", err)
	}
	if _, err := dn.Check(tok, 42, Write); !isInvalid(err, "doesn't have WRITE permission") {
		t.Errorf("READ token used to write: %v", err)
	}
	if _, err := dn.Check(tok, 43, Read); !isInvalid(err, "doesn't apply to block") {
		t.Errorf("token for block 42 used on 43: %v", err)
	}
	bad := tok
	bad.Password = append([]byte{}, tok.Password...)
	bad.Password[0] ^= 1
	if _, err := dn.Check(bad, 42, Read); !isInvalid(err, "correct token password") {
		t.Errorf("forged password: %v", err)
	}
	// A changed identifier (say, a different block) with the old password.
	forged, _ := Decode(tok.Identifier)
	forged.BlockID = 43
	if _, err := dn.Check(Token{Identifier: forged.Encode(), Password: tok.Password}, 43, Read); !isInvalid(err, "correct token password") {
		t.Errorf("edited identifier: %v", err)
	}
	if _, err := dn.Check(Token{}, 42, Read); !isInvalid(err, "not valid") {
		t.Errorf("empty token: %v", err)
	}
	other := NewWorker(Config{BlockPoolID: "BP-2", Now: clk.now})
	other.ImportKeys(nn.ExportKeys())
	if _, err := other.Check(tok, 42, Read); !isInvalid(err, "doesn't apply") {
		t.Errorf("token of another pool: %v", err)
	}
	clk.add(10*time.Minute + time.Second)
	if _, err := dn.Check(tok, 42, Read); !isInvalid(err, "is expired") {
		t.Errorf("expired token: %v", err)
	}
}

// Keys roll every interval; a DataNode that got the keys before a roll
// already knows the key that signs after it, and old keys verify their
// tokens until those expire.
func TestKeyRolling(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	nn, dn := newPair(t, clk)
	before, _ := nn.Mint("u", 1, []AccessMode{Read}, nil, nil)
	if rolled, _ := nn.Tick(); rolled {
		t.Fatal("rolled before the interval")
	}
	clk.add(10 * time.Minute)
	if rolled, err := nn.Tick(); !rolled || err != nil {
		t.Fatalf("no roll after the interval: %v", err)
	}
	after, _ := nn.Mint("u", 1, []AccessMode{Read}, nil, nil)
	a, _ := Decode(after.Identifier)
	b, _ := Decode(before.Identifier)
	if a.KeyID == b.KeyID {
		t.Fatal("the key did not change")
	}
	// dn has not been told about the roll, yet knows the new key.
	if _, err := dn.Check(after, 1, Read); err != nil {
		t.Fatalf("token of the rolled key at a DataNode not yet updated: %v", err)
	}
	// Many rolls later, old keys are gone from the export.
	for range 10 {
		clk.add(10 * time.Minute)
		nn.Tick()
	}
	ks := nn.ExportKeys()
	if len(ks.All) > 5 { // current, next, and those of the last 2U+L
		t.Fatalf("%d keys kept; expired ones should go", len(ks.All))
	}
	dn.ImportKeys(ks)
	if _, err := dn.Check(before, 1, Read); !isInvalid(err, "doesn't exist") && !isInvalid(err, "expired") {
		t.Fatalf("a token of a long-gone key: %v", err)
	}
	fresh, _ := nn.Mint("u", 1, []AccessMode{Read}, nil, nil)
	if _, err := dn.Check(fresh, 1, Read); err != nil {
		t.Fatal(err)
	}
}

func TestWorkerWithoutKeys(t *testing.T) {
	dn := NewWorker(Config{BlockPoolID: "BP-1"})
	if _, err := dn.Mint("u", 1, []AccessMode{Copy}, nil, nil); err == nil {
		t.Error("a worker without keys minted a token")
	}
	if err := dn.ImportKeys(Keys{}); err == nil {
		t.Error("empty keys imported")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add((&Identifier{ExpiryMillis: 1e12, KeyID: 1, User: "u", BlockPoolID: "p", BlockID: 9, Modes: []AccessMode{Read, Write}, StorageTypes: []string{"DISK"}, StorageIDs: []string{"s"}}).Encode())
	f.Add([]byte{0x8f, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := Decode(b)
		if err != nil {
			return
		}
		if again, err := Decode(id.Encode()); err != nil || !reflect.DeepEqual(again, id) {
			t.Fatalf("re-encoding changed %+v to %+v (%v)", id, again, err)
		}
	})
}

func TestRedirect(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	nn, dn := newPair(t, clk)
	p, err := nn.MintRedirect("alice", "CREATE", "/user/alice/f", Write)
	if err != nil {
		t.Fatal(err)
	}
	if err := dn.CheckRedirect(p, "alice", "CREATE", "/user/alice/f", Write); err != nil {
		t.Fatalf("a good redirect was refused: %v", err)
	}
	for _, tc := range []struct{ user, op, path string }{
		{"root", "CREATE", "/user/alice/f"},
		{"alice", "APPEND", "/user/alice/f"},
		{"alice", "CREATE", "/user/alice/g"},
	} {
		if err := dn.CheckRedirect(p, tc.user, tc.op, tc.path, Write); err == nil {
			t.Errorf("redirect for alice CREATE /user/alice/f accepted for %v", tc)
		}
	}
	if err := dn.CheckRedirect(p, "alice", "CREATE", "/user/alice/f", Read); err == nil {
		t.Error("a WRITE redirect accepted for READ")
	}
	for _, bad := range []string{"", ".", "x.y", p + "x", strings.Repeat("A", 9000)} {
		if err := dn.CheckRedirect(bad, "alice", "CREATE", "/user/alice/f", Write); err == nil {
			t.Errorf("malformed redirect %q accepted", bad)
		}
	}
	clk.add(11 * time.Minute)
	if err := dn.CheckRedirect(p, "alice", "CREATE", "/user/alice/f", Write); err == nil {
		t.Error("an expired redirect accepted")
	}
}

func TestKeysProtoRoundTrip(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	nn, _ := newPair(t, clk)
	k := nn.ExportKeys()
	back := KeysFromProto(KeysProto(k))
	if !back.Current.Expiry.Equal(k.Current.Expiry) || back.Current.ID != k.Current.ID || !bytes.Equal(back.Current.Secret, k.Current.Secret) ||
		len(back.All) != len(k.All) || back.TokenLifetime != k.TokenLifetime || !back.Enabled {
		t.Fatalf("round trip: %+v vs %+v", back, k)
	}
	tok, _ := nn.Mint("u", 1, []AccessMode{Read}, nil, nil)
	if got := FromProto(TokenProto(tok)); !bytes.Equal(got.Identifier, tok.Identifier) || !bytes.Equal(got.Password, tok.Password) {
		t.Fatal("token round trip")
	}
}

func TestSASLPasswords(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	nn, dn := newPair(t, clk)
	tok, _ := nn.Mint("alice", 42, []AccessMode{Read}, nil, nil)
	if p, err := dn.Password(tok.Identifier); err != nil || !equalKeys(p, tok.Password) {
		t.Fatalf("password of a good token: %v", err)
	}
	if _, err := dn.Password(tok.Identifier[:5]); err == nil {
		t.Error("truncated identifier accepted")
	}
	id, _ := Decode(tok.Identifier)
	id.KeyID += 1000
	if _, err := dn.Password(id.Encode()); !isInvalid(err, "doesn't exist") {
		t.Errorf("unknown key: %v", err)
	}
	k, err := nn.MintEncryptionKey("")
	if err != nil || len(k.Nonce) != 16 {
		t.Fatal(err)
	}
	if got, err := dn.EncryptionKey(k.KeyID, k.BlockPoolID, k.Nonce); err != nil || !equalKeys(got, k.Key) {
		t.Fatalf("encryption key: %v", err)
	}
	var uk *UnknownKeyError
	if _, err := dn.EncryptionKey(k.KeyID+1000, k.BlockPoolID, k.Nonce); !errors.As(err, &uk) {
		t.Errorf("unknown encryption key id: %v", err)
	}
	if _, err := dn.EncryptionKey(k.KeyID, k.BlockPoolID, k.Nonce[:8]); !errors.As(err, &uk) {
		t.Errorf("nonce without an expiry: %v", err)
	}
	// A nonce with a later expiry makes a different key: the client
	// cannot extend its key.
	forged := bytes.Clone(k.Nonce)
	forged[8]++
	if got, err := dn.EncryptionKey(k.KeyID, k.BlockPoolID, forged); err == nil && equalKeys(got, k.Key) {
		t.Error("forged expiry gives the same key")
	}
	clk.add(11 * time.Minute) // the key's block key is still good (interval 10 min, lifetime 10 min)
	if _, err := dn.Password(tok.Identifier); !isInvalid(err, "is expired") {
		t.Errorf("expired token: %v", err)
	}
	if _, err := dn.EncryptionKey(k.KeyID, k.BlockPoolID, k.Nonce); !errors.As(err, &uk) || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired encryption key: %v", err)
	}
}
