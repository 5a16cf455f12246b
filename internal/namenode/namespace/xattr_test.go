package namespace

import (
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/ipc"
)

func remote(t *testing.T, err error) (class, msg string) {
	t.Helper()
	if err == nil {
		return "", ""
	}
	re, ok := err.(*ipc.RemoteError)
	if !ok {
		t.Fatalf("%v is not a RemoteError", err)
	}
	return re.Class, re.Message
}

// TestXAttrNamespaceRules is XAttrPermissionFilter's table.
func TestXAttrNamespaceRules(t *testing.T) {
	user := Checker{P: &Principal{User: "bob"}, Enabled: true}
	su := Checker{P: &Principal{User: "hdfs", Superuser: true}, Enabled: true}
	x := func(s string, v []byte) XAttr {
		a, err := ParseXAttrName(s)
		if err != nil {
			t.Fatal(err)
		}
		a.Value = v
		return a
	}
	tests := []struct {
		c    Checker
		x    XAttr
		raw  bool
		want string // "" for allowed, else the message
	}{
		{user, x("user.a", []byte("v")), false, ""},
		{user, x("USER.a", nil), false, ""},
		{user, x("trusted.a", nil), false, "User doesn't have permission for xattr: trusted.a"},
		{su, x("trusted.a", nil), false, ""},
		{su, x("system.a", nil), false, "User doesn't have permission for xattr: system.a"},
		{su, x("security.a", nil), false, "User doesn't have permission for xattr: security.a"},
		{su, x("raw.a", nil), false, "User doesn't have permission for xattr: raw.a"},
		{su, x("raw.a", nil), true, ""},
		{user, x(UnreadableBySuperuser, nil), false, ""},
		{user, x(UnreadableBySuperuser, []byte{}), false, "Attempt to set a value for 'security.hdfs.unreadable.by.superuser'. Values are not allowed for this xattr."},
	}
	for _, tc := range tests {
		class, msg := remote(t, tc.c.XAttrAPI(tc.x, tc.raw))
		if msg != tc.want || (msg != "" && class != ipc.ClassAccessControl) {
			t.Errorf("%s by %s (raw %v): %s %q, want %q", tc.x.PrefixedName(), tc.c.P.User, tc.raw, class, msg, tc.want)
		}
	}
	all := []XAttr{x("user.a", nil), x("trusted.b", nil), x("system.c", nil), x("raw.d", nil), x(UnreadableBySuperuser, nil), x("security.e", nil)}
	names := func(xs []XAttr) string {
		var s []string
		for _, a := range xs {
			s = append(s, a.PrefixedName())
		}
		return strings.Join(s, " ")
	}
	if got := names(user.FilterXAttrs(all, false)); got != "user.a security.hdfs.unreadable.by.superuser" {
		t.Errorf("user sees %s", got)
	}
	if got := names(su.FilterXAttrs(all, true)); got != "user.a trusted.b raw.d security.hdfs.unreadable.by.superuser" {
		t.Errorf("superuser on a raw path sees %s", got)
	}
	for _, bad := range []string{"foo.a", "us.a", "user.", "user"} {
		if _, err := ParseXAttrName(bad); err == nil {
			t.Errorf("ParseXAttrName(%q) accepted", bad)
		}
	}
}

func TestSetXAttrFlagsAndLimits(t *testing.T) {
	tr := newTree()
	apply(t, tr, []Edit{
		Mkdir(16386, "/d", Perm{"bob", "staff", 0o1777}, 1),
		AddFile(NewFile{ID: 16387, Path: "/f", Perm: Perm{"bob", "staff", 0o644}, Mtime: 1, Replication: 1, BlockSize: 1 << 20, ClientName: "c"}),
	})
	f := tr.Lookup("/f")
	a := XAttr{NS: XAttrUser, Name: "a", Value: []byte("1")}
	if _, msg := remote(t, CheckSetXAttr(f, a, XAttrReplace, 32)); msg != "XAttr: a does not exist. The CREATE flag must be specified." {
		t.Errorf("REPLACE of a missing xattr: %q", msg)
	}
	if err := CheckSetXAttr(f, a, XAttrCreate, 32); err != nil {
		t.Fatal(err)
	}
	apply(t, tr, []Edit{SetXAttr("/f", a)})
	if _, msg := remote(t, CheckSetXAttr(f, a, XAttrCreate, 32)); msg != "XAttr: a already exists. The REPLACE flag must be specified." {
		t.Errorf("CREATE of an existing xattr: %q", msg)
	}
	if err := CheckSetXAttr(f, a, XAttrCreate|XAttrReplace, 1); err != nil {
		t.Errorf("replacing within the limit: %v", err)
	}
	if _, msg := remote(t, CheckSetXAttr(f, XAttr{NS: XAttrTrusted, Name: "b"}, XAttrCreate, 1)); msg != "Cannot add additional XAttr to inode, would exceed limit of 1" {
		t.Errorf("over the limit: %q", msg)
	}
	// Only user and trusted attributes count.
	if err := CheckSetXAttr(f, XAttr{NS: XAttrRaw, Name: "b"}, XAttrCreate, 1); err != nil {
		t.Errorf("raw xattr counted against the limit: %v", err)
	}
	if _, msg := remote(t, CheckXAttrSize(XAttr{NS: XAttrUser, Name: "abc", Value: make([]byte, 14)}, 16)); msg != "The XAttr is too big. The maximum combined size of the name and value is 16, but the total size is 17" {
		t.Errorf("size: %q", msg)
	}
	if _, msg := remote(t, CheckSetXAttr(tr.Lookup("/d"), XAttr{NS: XAttrSecurity, Name: "hdfs.unreadable.by.superuser"}, XAttrCreate, 32)); msg != "Can only set 'security.hdfs.unreadable.by.superuser' on a file." {
		t.Errorf("unreadable on a directory: %q", msg)
	}
	if _, msg := remote(t, CheckRemoveXAttr(f, XAttr{NS: XAttrUser, Name: "zz"})); msg != "No matching attributes found for remove operation" {
		t.Errorf("remove missing: %q", msg)
	}
	// user.* needs write access; on a sticky directory, ownership.
	alice := Checker{P: &Principal{User: "alice"}, Enabled: true}
	if err := alice.XAttrChange(f, a); err == nil {
		t.Error("alice may change bob's file's xattr without write access")
	}
	if _, msg := remote(t, alice.XAttrChange(tr.Lookup("/d"), a)); !strings.Contains(msg, "is not the owner") {
		t.Errorf("sticky directory: %q", msg)
	}
	if err := alice.XAttrChange(f, XAttr{NS: XAttrTrusted, Name: "x"}); err != nil {
		t.Errorf("non-user namespaces are not checked by mode: %v", err)
	}
}
