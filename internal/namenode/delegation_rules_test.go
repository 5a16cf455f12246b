package namenode

import (
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/security"
)

// TestRenewerAuthToLocal: a renewer is shortened by
// hadoop.security.auth_to_local, not by stripping: a principal of a realm
// no rule maps is refused, as Hadoop's HadoopKerberosName.
func TestRenewerAuthToLocal(t *testing.T) {
	rules, err := security.ParseAuthToLocal(`RULE:[2:$1@$0](yarn@PARTNER\.TEST)s/.*/partner-yarn/ DEFAULT`, "")
	if err != nil {
		t.Fatal(err)
	}
	rules.DefaultRealm = "R.TEST"
	dc := DelegationConfig{Security: true, AuthToLocal: rules}
	for in, want := range map[string]string{"alice": "alice", "yarn/rm.example@R.TEST": "yarn", "yarn/rm@PARTNER.TEST": "partner-yarn"} {
		if got, err := dc.renewerName(in); err != nil || got != want {
			t.Errorf("renewerName(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	if got, err := dc.renewerName("alice@OTHER.TEST"); err == nil || !strings.Contains(err.Error(), "No rules applied to alice@OTHER.TEST") {
		t.Errorf("a foreign principal became renewer %q (%v)", got, err)
	}
	// Simple mode: the old stripping.
	if got, _ := (DelegationConfig{}).renewerName("alice@OTHER.TEST"); got != "alice" {
		t.Errorf("simple: %q", got)
	}
}
