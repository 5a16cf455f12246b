package namenode

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/namespace"
)

func TestDelegationOpAllowed(t *testing.T) {
	for _, c := range []struct {
		security bool
		auth     ipc.AuthMethod
		want     bool
	}{
		{false, ipc.AuthMethodSimple, true},
		{false, ipc.AuthMethodToken, true},
		{true, ipc.AuthMethodSimple, false},
		{true, ipc.AuthMethodToken, false},
		{true, ipc.AuthMethodKerberos, true},
		{true, AuthMethodWeb, true},
		{true, "", false},
	} {
		if got := delegationOpAllowed(c.security, c.auth); got != c.want {
			t.Errorf("delegationOpAllowed(%v, %q) = %v", c.security, c.auth, got)
		}
	}
}

func asAuth(user string, auth ipc.AuthMethod) context.Context {
	return ipc.WithCaller(context.Background(), &ipc.Caller{User: user, Auth: auth})
}

// tokenNS is a namesystem issuing tokens, on a clock the test moves.
func tokenNS(t *testing.T, dc DelegationConfig) (*Namesystem, *memJournal, *time.Time) {
	ns, j := testNS(t)
	ns.cfg.delegation = dc
	now := time.UnixMilli(1_700_000_000_000)
	ns.now = func() time.Time { return now }
	return ns, j, &now
}

func TestDelegationTokenLifecycle(t *testing.T) {
	timing := delegation.Config{KeyUpdateInterval: 60_000, MaxLifetime: 300_000, RenewInterval: 100_000}
	ns, j, now := tokenNS(t, DelegationConfig{AlwaysUse: true, Timing: timing})
	ctx := as("alice")

	tok, err := ns.GetDelegationToken(ctx, "yarn")
	if err != nil || tok == nil || tok.Kind != delegation.Kind {
		t.Fatalf("get: %+v %v", tok, err)
	}
	id, err := ns.VerifyDelegationToken(*tok)
	if err != nil || id.Owner != "alice" || id.Renewer != "yarn" || id.SequenceNumber != 1 || id.MasterKeyID != 1 {
		t.Fatalf("verify: %+v %v", id, err)
	}
	if pw, user, err := ns.RetrieveDelegationPassword(tok.Identifier); err != nil || user != "alice" || string(pw) != string(tok.Password) {
		t.Fatalf("retrieve: %v %v", user, err)
	}
	if len(j.recs) != 2 { // master key, token
		t.Fatalf("%d edits, want 2", len(j.recs))
	}

	// alice is not the renewer.
	_, err = ns.RenewDelegationToken(ctx, *tok)
	wantClass(t, err, delegation.ClassAccessControl)
	if !strings.Contains(err.Error(), "alice tries to renew a token (HDFS_DELEGATION_TOKEN token 1 for alice with renewer yarn) with non-matching renewer yarn") {
		t.Errorf("renew message: %v", err)
	}
	*now = now.Add(50 * time.Second)
	exp, err := ns.RenewDelegationToken(as("yarn"), *tok)
	if err != nil || exp != now.UnixMilli()+100_000 {
		t.Fatalf("renew: %d %v", exp, err)
	}
	// Valid past the first renew date thanks to the renewal.
	*now = now.Add(90 * time.Second)
	if _, err := ns.VerifyDelegationToken(*tok); err != nil {
		t.Fatalf("renewed token: %v", err)
	}
	// A second token after the key update interval rolls the key.
	tok2, err := ns.GetDelegationToken(as("bob"), "bob")
	if err != nil {
		t.Fatal(err)
	}
	id2, _ := delegation.DecodeIdentifier(tok2.Identifier)
	if id2.MasterKeyID != 2 || id2.SequenceNumber != 2 {
		t.Fatalf("second token %+v", id2)
	}

	// A replica replaying the journal has both tokens.
	replay := func() *namespace.Tree {
		tr := namespace.New("hdfs", "supergroup", ns.tree.Blocks)
		for _, rec := range j.recs {
			if err := tr.ApplyRecord(rec); err != nil {
				t.Fatal(err)
			}
		}
		return tr
	}
	r := replay()
	for _, tk := range []*delegation.Token{tok, tok2} {
		if _, err := r.Tokens().Verify(*tk, now.UnixMilli()); err != nil {
			t.Fatalf("replica: %v", err)
		}
	}

	// Cancel: not by mallory; by the owner; then refused everywhere.
	wantClass(t, ns.CancelDelegationToken(as("mallory"), *tok), delegation.ClassAccessControl)
	mustOK(t, ns.CancelDelegationToken(ctx, *tok))
	_, err = ns.VerifyDelegationToken(*tok)
	wantClass(t, err, delegation.ClassInvalidToken)
	if !strings.Contains(err.Error(), "can't be found in cache") {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := replay().Tokens().Verify(*tok, now.UnixMilli()); err == nil {
		t.Fatal("replica accepts the cancelled token")
	}
	// Expiry: bob's token, never renewed, lapses after the renew interval.
	*now = now.Add(101 * time.Second)
	_, err = ns.VerifyDelegationToken(*tok2)
	wantClass(t, err, delegation.ClassInvalidToken)
	if !strings.Contains(err.Error(), "is expired") {
		t.Errorf("expired: %v", err)
	}
}

func TestDelegationTokenModes(t *testing.T) {
	// Simple authentication without always-use: no token, as Hadoop.
	ns, j, _ := tokenNS(t, DelegationConfig{Timing: delegation.DefaultConfig()})
	if tok, err := ns.GetDelegationToken(as("alice"), "alice"); tok != nil || err != nil {
		t.Fatalf("simple mode: %+v %v", tok, err)
	}
	if len(j.recs) != 0 {
		t.Fatal("simple mode logged edits")
	}
	// Security on: a SIMPLE or TOKEN caller is refused, Kerberos is not.
	ns, _, _ = tokenNS(t, DelegationConfig{Security: true, Timing: delegation.DefaultConfig()})
	for _, auth := range []ipc.AuthMethod{ipc.AuthMethodSimple, ipc.AuthMethodToken} {
		_, err := ns.GetDelegationToken(asAuth("alice", auth), "alice")
		if err == nil || !strings.HasSuffix(err.Error(), "Delegation Token can be issued only with kerberos or web authentication") {
			t.Errorf("%s caller: %v", auth, err)
		}
	}
	tok, err := ns.GetDelegationToken(asAuth("alice", ipc.AuthMethodKerberos), "alice")
	if err != nil || tok == nil {
		t.Fatalf("kerberos caller: %v", err)
	}
	if _, err := ns.RenewDelegationToken(asAuth("alice", ipc.AuthMethodToken), *tok); err == nil ||
		!strings.HasSuffix(err.Error(), "Delegation Token can be renewed only with kerberos or web authentication") {
		t.Errorf("token caller renews: %v", err)
	}
	if _, err := ns.RenewDelegationToken(asAuth("alice", ipc.AuthMethodKerberos), *tok); err != nil {
		t.Errorf("kerberos renew: %v", err)
	}
}

// A renewer (or owner) too long to serialize is refused before anything
// is logged, and the namesystem keeps working.
func TestDelegationTokenLongNamesRefused(t *testing.T) {
	timing := delegation.Config{KeyUpdateInterval: 60_000, MaxLifetime: 300_000, RenewInterval: 100_000}
	ns, j, _ := tokenNS(t, DelegationConfig{AlwaysUse: true, Timing: timing})
	for _, renewer := range []string{strings.Repeat("y", delegation.MaxUserName+1), strings.Repeat("y", 2<<20)} {
		tok, err := ns.GetDelegationToken(as("alice"), renewer)
		wantClass(t, err, ipc.ClassIOException)
		if tok != nil || !strings.Contains(err.Error(), "renewer is too long to be serialized") {
			t.Fatalf("renewer of %d bytes: %v %v", len(renewer), tok, err)
		}
	}
	if _, err := ns.GetDelegationToken(as(strings.Repeat("o", delegation.MaxUserName+1)), "yarn"); err == nil {
		t.Fatal("long owner accepted")
	}
	if len(j.recs) != 0 {
		t.Fatalf("%d edits logged for refused tokens", len(j.recs))
	}
	if err := ns.Mkdirs(as("hdfs"), "/after", 0o755, false); err != nil {
		t.Fatalf("namesystem stopped after a refused token: %v", err)
	}
	if tok, err := ns.GetDelegationToken(as("alice"), "yarn"); err != nil || tok == nil {
		t.Fatalf("token after refusals: %v", err)
	}
}

// A token with a tampered password or a forged identifier authenticates
// nobody and cannot be renewed or cancelled.
func TestDelegationTokenForgeries(t *testing.T) {
	timing := delegation.Config{KeyUpdateInterval: 60_000, MaxLifetime: 300_000, RenewInterval: 100_000}
	ns, _, _ := tokenNS(t, DelegationConfig{AlwaysUse: true, Timing: timing})
	tok, err := ns.GetDelegationToken(as("alice"), "alice")
	if err != nil || tok == nil {
		t.Fatal(err)
	}
	tampered := *tok
	tampered.Password = append([]byte(nil), tok.Password...)
	tampered.Password[len(tampered.Password)-1] ^= 0x80
	id, _ := delegation.DecodeIdentifier(tok.Identifier)
	id.Owner = "hdfs"
	forged := *tok
	forged.Identifier = id.Bytes()
	for name, f := range map[string]delegation.Token{"tampered": tampered, "forged": forged} {
		if _, err := ns.VerifyDelegationToken(f); err == nil {
			t.Errorf("%s token verified", name)
		}
		if _, _, err := ns.RetrieveDelegationPassword(f.Identifier); name == "forged" && err == nil {
			t.Errorf("forged identifier has a password")
		}
		if _, err := ns.RenewDelegationToken(as("alice"), f); err == nil {
			t.Errorf("%s token renewed", name)
		}
	}
	_, err = ns.RenewDelegationToken(as("alice"), tampered)
	wantClass(t, err, delegation.ClassAccessControl)
	if err := ns.CancelDelegationToken(as("hdfs"), forged); err == nil {
		t.Error("forged token cancelled")
	}
	if _, err := ns.VerifyDelegationToken(*tok); err != nil {
		t.Fatalf("the real token: %v", err)
	}
}
