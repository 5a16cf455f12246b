package datanode

import (
	"bytes"
	"testing"

	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/ipc"
)

// TestNameNodeTokens: the caller's token, whatever its kind and service,
// becomes an HDFS delegation token for each NameNode address, its
// identifier and password untouched.
func TestNameNodeTokens(t *testing.T) {
	in := delegation.Token{Identifier: []byte{1, 2, 3}, Password: []byte("pw"), Kind: delegation.WebHDFSKind, Service: "nn.example:8020"}
	addrs := []string{"localhost:8020", "127.0.0.1:8021"}
	out := nameNodeTokens(in, addrs)
	if len(out) != len(addrs) {
		t.Fatalf("%d tokens for %d addresses", len(out), len(addrs))
	}
	for i, tok := range out {
		if tok.Kind != delegation.Kind || tok.Service != ipc.TokenService(addrs[i]) ||
			!bytes.Equal(tok.Identifier, in.Identifier) || !bytes.Equal(tok.Password, in.Password) {
			t.Errorf("token %d: %+v", i, tok)
		}
	}
	if out[0].Service != "127.0.0.1:8020" {
		t.Errorf("service of localhost:8020 is %q", out[0].Service)
	}
	if in.Kind != delegation.WebHDFSKind || in.Service != "nn.example:8020" {
		t.Errorf("the caller's token changed: %+v", in)
	}
}
