package delegation

import (
	"bytes"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to every decoder of peer input: they
// must return an error or a value that re-encodes to what was read.
func FuzzDecode(f *testing.F) {
	id := Identifier{Owner: "alice", Renewer: "yarn", IssueDate: 1 << 40, MaxDate: -5, SequenceNumber: 300, MasterKeyID: -1}
	tok := Token{Identifier: id.Bytes(), Password: []byte("pw"), Kind: Kind, Service: "s:1"}
	f.Add(id.Bytes())
	f.Add(tok.Writable())
	f.Add(WriteCredentials([]AliasToken{{"s:1", tok}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if id, err := DecodeIdentifier(b); err == nil {
			back, err := DecodeIdentifier(id.Bytes())
			if err != nil || back != id {
				t.Fatalf("identifier %+v does not round trip: %v", id, err)
			}
		}
		if ts, err := ReadCredentials(b); err == nil {
			for _, at := range ts {
				if len(at.Token.Identifier) > MaxIdentifier {
					t.Fatal("unbounded identifier")
				}
			}
		}
		// Lengths may be encoded non-minimally (Hadoop reads those too),
		// so compare values, not bytes.
		r := &reader{b: b}
		tk := readToken(r)
		if r.err == nil {
			r2 := &reader{b: tk.Writable()}
			back := readToken(r2)
			if r2.err != nil || !bytes.Equal(back.Identifier, tk.Identifier) || !bytes.Equal(back.Password, tk.Password) ||
				back.Kind != tk.Kind || back.Service != tk.Service || len(r2.b) != 0 {
				t.Fatalf("token %+v does not round trip: %v", tk, r2.err)
			}
		}
	})
}
