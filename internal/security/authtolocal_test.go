package security

import (
	"strings"
	"testing"
)

// The rules and principals of Hadoop's TestKerberosName and its secure-mode
// documentation.
func TestAuthToLocal(t *testing.T) {
	const rules = `
RULE:[1:$1@$0](.*@YAHOO\.COM)s/@.*//
RULE:[2:$1](johndoe)s/^.*$/guest/
RULE:[2:$1;$2](^.*;admin$)s/;admin$//
RULE:[2:$2](root)
RULE:[2:$1@$0](jhs@.*EXAMPLE.COM)s/.*/mapred/
RULE:[2:$1@$0]([nr]m@.*EXAMPLE.COM)s/.*/yarn/
RULE:[1:$1](Upper.*)s/x/y/g/L
DEFAULT`
	a, err := ParseAuthToLocal(rules, "")
	if err != nil {
		t.Fatal(err)
	}
	a.DefaultRealm = "APACHE.ORG"
	for _, c := range []struct{ in, want string }{
		{"omalley@APACHE.ORG", "omalley"},
		{"hdfs/10.0.0.1@APACHE.ORG", "hdfs"},
		{"nn/localhost@APACHE.ORG", "nn"},
		{"omalley@YAHOO.COM", "omalley"},
		{"johndoe/zoo@FOO.COM", "guest"},
		{"joe/admin@FOO.COM", "joe"},
		{"joe/root@FOO.COM", "root"},
		{"jhs/host.example.com@EXAMPLE.COM", "mapred"},
		{"rm/host.example.com@EXAMPLE.COM", "yarn"},
		{"Upperxax@OTHER.ORG", "upperyay"},
		{"alice", "alice"},
	} {
		got, err := a.ShortName(c.in)
		if err != nil || got != c.want {
			t.Errorf("ShortName(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"bob@OTHER.ORG", "bob/host@OTHER.ORG"} {
		if got, err := a.ShortName(in); err == nil || !strings.Contains(err.Error(), "No rules applied to "+in) {
			t.Errorf("ShortName(%q) = %q, %v; want No rules applied", in, got, err)
		}
	}
}

func TestAuthToLocalMechanisms(t *testing.T) {
	// A rule leaving an @ in the name: refused by the hadoop mechanism,
	// allowed by mit, which also passes unmatched principals through.
	const rules = `RULE:[1:$1@$0](.*@FOO\.COM)`
	h, err := ParseAuthToLocal(rules, "hadoop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.ShortName("a@FOO.COM"); err == nil || !strings.Contains(err.Error(), "Non-simple name a@FOO.COM") {
		t.Errorf("hadoop: %v", err)
	}
	m, err := ParseAuthToLocal(rules, "mit")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := m.ShortName("a@FOO.COM"); got != "a@FOO.COM" || err != nil {
		t.Errorf("mit: %q %v", got, err)
	}
	if got, err := m.ShortName("b/x@BAR.COM"); got != "b/x@BAR.COM" || err != nil {
		t.Errorf("mit unmatched: %q %v", got, err)
	}
	for _, bad := range []string{"RULE:[x:$1]", "NOPE", "RULE:[1:$1](("} {
		if _, err := ParseAuthToLocal(bad, ""); err == nil {
			t.Errorf("ParseAuthToLocal(%q) accepted", bad)
		}
	}
	if _, err := ParseAuthToLocal("", "posix"); err == nil {
		t.Error("mechanism posix accepted")
	}
	if r, _ := ParseAuthToLocal("RULE:[1:$3]", ""); r != nil {
		if _, err := r.ShortName("a@B"); err == nil {
			t.Error("$3 of a one-component name accepted")
		}
	}
}

func TestServerPrincipalAndProtection(t *testing.T) {
	for _, c := range []struct{ p, host, want string }{
		{"nn/_HOST@R", "NN1.Example.COM:8020", "nn/nn1.example.com@R"},
		{"nn/_HOST@R", "localhost", "nn/localhost@R"},
		{"nn/fixed@R", "other", "nn/fixed@R"},
		{"nn@R", "other", "nn@R"},
	} {
		if got, err := ServerPrincipal(c.p, c.host); got != c.want || err != nil {
			t.Errorf("ServerPrincipal(%q, %q) = %q, %v", c.p, c.host, got, err)
		}
	}
	for _, c := range []struct {
		in   string
		want byte
	}{{"", 1}, {"authentication", 1}, {"integrity", 2}, {"privacy", 4}, {"authentication, privacy", 5}} {
		if got, err := ParseProtection(c.in); got != c.want || err != nil {
			t.Errorf("ParseProtection(%q) = %d, %v", c.in, got, err)
		}
	}
	if _, err := ParseProtection("secret"); err == nil {
		t.Error("ParseProtection(secret) accepted")
	}
	if Strongest(5) != QOPPrivacy || Strongest(3) != QOPIntegrity || Strongest(0) != 0 {
		t.Error("Strongest")
	}
}
