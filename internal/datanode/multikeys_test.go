package datanode

import (
	"path/filepath"
	"testing"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/storage"
)

// TestTokensOfEveryNameNode: each NameNode of a nameservice has its own
// block keys; a token minted by any of them verifies, one of a stranger
// does not, and a NameNode's key roll replaces only its own keys.
func TestTokensOfEveryNameNode(t *testing.T) {
	dn, err := New(Config{Volumes: []fsdataset.VolumeConfig{{Path: filepath.Join(t.TempDir(), "v"), Type: storage.Disk}},
		NameNodeAddrs: []string{"127.0.0.1:1", "127.0.0.1:2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer dn.Close()
	master := func() *blocktoken.Manager {
		m, err := blocktoken.NewMaster(blocktoken.Config{BlockPoolID: "BP-1", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	nn1, nn2, stranger := master(), master(), master()
	for i, m := range []*blocktoken.Manager{nn1, nn2} {
		if err := dn.importKeys(i, "BP-1", blocktoken.KeysProto(m.ExportKeys())); err != nil {
			t.Fatal(err)
		}
	}
	if !dn.BlockTokensEnabled() {
		t.Fatal("tokens not enabled")
	}
	mint := func(m *blocktoken.Manager) blocktoken.Token {
		tok, err := m.Mint("alice", 7, []blocktoken.AccessMode{blocktoken.Read}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	pt := dn.tokens.Load()
	for _, tc := range []struct {
		name string
		tok  blocktoken.Token
		ok   bool
	}{
		{"first NameNode's", mint(nn1), true},
		{"second NameNode's", mint(nn2), true},
		{"a stranger's", mint(stranger), false},
	} {
		for _, prefer := range []int{-1, 0, 1} {
			if err := pt.check(prefer, tc.tok, 7, blocktoken.Read); (err == nil) != tc.ok {
				t.Errorf("%s token, preferring NameNode %d: %v", tc.name, prefer, err)
			}
		}
	}
	// The second NameNode's keys are replaced by the stranger's (as after
	// a roll): the first's still verify, the second's old ones no longer.
	if err := dn.importKeys(1, "BP-1", blocktoken.KeysProto(stranger.ExportKeys())); err != nil {
		t.Fatal(err)
	}
	pt = dn.tokens.Load()
	if err := pt.check(-1, mint(nn1), 7, blocktoken.Read); err != nil {
		t.Errorf("first NameNode's token after the second's roll: %v", err)
	}
	if err := pt.check(-1, mint(stranger), 7, blocktoken.Read); err != nil {
		t.Errorf("the second NameNode's new key: %v", err)
	}
	if err := pt.check(-1, mint(nn2), 7, blocktoken.Read); err == nil {
		t.Error("a token of the second NameNode's replaced keys verifies")
	}
}
