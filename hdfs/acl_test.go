package hdfs

import "testing"

// TestParseACLSpec follows Hadoop's AclEntry.parseAclSpec, Java's split
// included (trailing empty fields dropped).
func TestParseACLSpec(t *testing.T) {
	for _, tc := range []struct {
		spec     string
		withPerm bool
		want     string // entries joined by ",", or the error
	}{
		{"user::rwx,user:bob:r-x,group::r--,mask::r-x,other::---", true, "user::rwx,user:bob:r-x,group::r--,mask::r-x,other::---"},
		{"default:user:bob:rw-", true, "default:user:bob:rw-"},
		{"USER:bob:rwx", true, "user:bob:rwx"},
		{"user:bob", false, "user:bob:---"},
		{"user:bob:", false, "user:bob:---"},
		{"default:mask::", false, "default:mask::---"},
		{"user:bob", true, "Invalid <aclSpec> : user:bob"},
		{"user:bob:rwz", true, "Invalid permission in <aclSpec> : user:bob:rwz"},
		{"owner:bob:rwx", true, "Invalid type of acl in <aclSpec> :owner:bob:rwx"},
		{"default", true, "Invalid <aclSpec> : default"},
		{"user:bob:rwx:extra", true, "Invalid <aclSpec> : user:bob:rwx:extra"},
	} {
		es, err := ParseACLSpec(tc.spec, tc.withPerm)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			for i, e := range es {
				if i > 0 {
					got += ","
				}
				got += e.String()
			}
		}
		if got != tc.want {
			t.Errorf("ParseACLSpec(%q, %v) = %s, want %s", tc.spec, tc.withPerm, got, tc.want)
		}
	}
}

func TestEffectivePerm(t *testing.T) {
	st := &ACLStatus{Perm: 0o640, Entries: []ACLEntry{
		{Type: ACLUser, Name: "bob", Perm: 7}, {Type: ACLGroup, Perm: 5},
		{Default: true, Type: ACLUser, Perm: 7}, {Default: true, Type: ACLGroup, Name: "g", Perm: 7},
		{Default: true, Type: ACLMask, Perm: 1}, {Default: true, Type: ACLOther, Perm: 0},
	}}
	for i, want := range []uint16{4, 4, 7, 1, 1, 0} {
		if got := st.EffectivePerm(st.Entries[i]); got != want {
			t.Errorf("%s: effective %o, want %o", st.Entries[i], got, want)
		}
	}
}
