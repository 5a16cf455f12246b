package namespace

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
)

// Token edits replay through ApplyRecord and survive an image, so a
// token issued before a restart (or on another HA member) validates.
func TestDelegationEditsAndImage(t *testing.T) {
	cfg := delegation.DefaultConfig()
	tr := New("hdfs", "supergroup", blockmgmt.NewBlockMap())
	replica := New("hdfs", "supergroup", blockmgmt.NewBlockMap())
	apply := func(e Edit) {
		t.Helper()
		if err := tr.Apply(e); err != nil {
			t.Fatal(err)
		}
		rec, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if err := replica.ApplyRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	now := int64(1_700_000_000_000)
	k, err := tr.Tokens().NewKey(cfg, now, bytes.NewReader(bytes.Repeat([]byte{7}, 64)))
	if err != nil {
		t.Fatal(err)
	}
	apply(UpdateMasterKey(k, 0))
	id1, r1, _ := tr.Tokens().NewIdentifier(cfg, "alice", "alice", "", now)
	apply(GetDelegationToken(id1, r1))
	id2, r2, _ := tr.Tokens().NewIdentifier(cfg, "bob", "bob", "", now+1)
	apply(GetDelegationToken(id2, r2))
	apply(RenewDelegationToken(id1, r1+5000))
	apply(CancelDelegationToken(id2))

	pw, _, err := tr.Tokens().Retrieve(id1.Bytes(), r1+4000)
	if err != nil {
		t.Fatalf("leader: %v", err)
	}
	for name, s := range map[string]*Tree{"replica": replica} {
		got, _, err := s.Tokens().Retrieve(id1.Bytes(), r1+4000)
		if err != nil || !bytes.Equal(got, pw) {
			t.Fatalf("%s: %x %v", name, got, err)
		}
		if _, _, err := s.Tokens().Retrieve(id2.Bytes(), now); err == nil {
			t.Fatalf("%s: cancelled token valid", name)
		}
	}
	var img bytes.Buffer
	if err := tr.WriteImage(&img); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadImage(bytes.NewReader(img.Bytes()), blockmgmt.NewBlockMap())
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := loaded.Tokens().Retrieve(id1.Bytes(), r1+4000); err != nil || !bytes.Equal(got, pw) {
		t.Fatalf("image: %x %v", got, err)
	}
	if loaded.Tokens().Len() != 1 {
		t.Fatalf("image has %d tokens", loaded.Tokens().Len())
	}
	if id, _, _ := loaded.Tokens().NewIdentifier(cfg, "c", "c", "", now); id.SequenceNumber != 3 || id.MasterKeyID != k.ID {
		t.Fatalf("image counters: %+v", id)
	}
	var img2 bytes.Buffer
	if err := loaded.WriteImage(&img2); err != nil || !bytes.Equal(img.Bytes(), img2.Bytes()) {
		t.Fatalf("image not stable across a load: %v", err)
	}
}

// Live tokens are image records of their own: the header does not grow
// with them, and many tokens with the longest names load back.
func TestImageTokensAreRecords(t *testing.T) {
	cfg := delegation.DefaultConfig()
	tr := New("hdfs", "supergroup", blockmgmt.NewBlockMap())
	headerLen := func() uint64 {
		var img bytes.Buffer
		if err := tr.WriteImage(&img); err != nil {
			t.Fatal(err)
		}
		n, _ := protowire.ConsumeVarint(img.Bytes())
		return n
	}
	now := int64(1_700_000_000_000)
	k, err := tr.Tokens().NewKey(cfg, now, bytes.NewReader(bytes.Repeat([]byte{7}, 64)))
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Apply(UpdateMasterKey(k, 0)); err != nil {
		t.Fatal(err)
	}
	before := headerLen()
	name := strings.Repeat("n", delegation.MaxUserName)
	const count = 200
	for i := 0; i < count; i++ {
		id, r, err := tr.Tokens().NewIdentifier(cfg, name, name, name, now+int64(i))
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Apply(GetDelegationToken(id, r)); err != nil {
			t.Fatal(err)
		}
	}
	if after := headerLen(); after > before+2 { // the token count and sequence varints grow by a byte each
		t.Fatalf("header grew from %d to %d bytes with %d tokens", before, after, count)
	}
	var img bytes.Buffer
	if err := tr.WriteImage(&img); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadImage(bytes.NewReader(img.Bytes()), blockmgmt.NewBlockMap())
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Tokens().Len() != count {
		t.Fatalf("loaded %d tokens, want %d", loaded.Tokens().Len(), count)
	}
	// A truncated token section is an error, not a silent loss.
	if _, err := ReadImage(bytes.NewReader(img.Bytes()[:img.Len()-10]), blockmgmt.NewBlockMap()); err == nil {
		t.Fatal("truncated image loaded")
	}
}

// A key roll's retired expiry travels in the record: a replica applying
// the records ends with the same keys, and an image of it loads the
// token whose key was retired.
func TestRetiredKeyReplicates(t *testing.T) {
	short := delegation.Config{KeyUpdateInterval: 1000, MaxLifetime: 3000, RenewInterval: 1000}
	long := delegation.Config{KeyUpdateInterval: 1000, MaxLifetime: 100000, RenewInterval: 1000}
	tr := New("hdfs", "supergroup", blockmgmt.NewBlockMap())
	replica := New("hdfs", "supergroup", blockmgmt.NewBlockMap())
	apply := func(e Edit) {
		t.Helper()
		if err := tr.Apply(e); err != nil {
			t.Fatal(err)
		}
		rec, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if err := replica.ApplyRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	rnd := bytes.NewReader(bytes.Repeat([]byte{9}, 64*4))
	k1, _ := tr.Tokens().NewKey(short, 0, rnd)
	apply(UpdateMasterKey(k1, 0))
	id, renew, err := tr.Tokens().NewIdentifier(long, "alice", "alice", "", 500)
	if err != nil {
		t.Fatal(err)
	}
	apply(GetDelegationToken(id, renew))
	k2, _ := tr.Tokens().NewKey(long, 1000, rnd)
	apply(UpdateMasterKey(k2, delegation.RetiredExpiry(long, 1000)))
	apply(RenewDelegationToken(id, 50000))
	k3, _ := tr.Tokens().NewKey(long, 20000, rnd) // after key 1's first expiry (4000)
	apply(UpdateMasterKey(k3, delegation.RetiredExpiry(long, 20000)))
	if a, b := tr.Tokens().Keys(), replica.Tokens().Keys(); len(a) != 3 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("keys: leader %v, replica %v", a, b)
	}
	var img bytes.Buffer
	if err := replica.WriteImage(&img); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadImage(bytes.NewReader(img.Bytes()), blockmgmt.NewBlockMap())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := loaded.Tokens().Retrieve(id.Bytes(), 30000); err != nil {
		t.Fatalf("token signed by the retired key: %v", err)
	}
}
