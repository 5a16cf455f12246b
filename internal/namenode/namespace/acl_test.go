package namespace

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
)

func acc(t ACLType, name string, p Access) ACLEntry {
	return ACLEntry{Scope: ScopeAccess, Type: t, Name: name, Perm: p}
}

func def(t ACLType, name string, p Access) ACLEntry {
	return ACLEntry{Scope: ScopeDefault, Type: t, Name: name, Perm: p}
}

func aclString(es []ACLEntry) string {
	var s []string
	for _, e := range es {
		s = append(s, e.String())
	}
	return strings.Join(s, ",")
}

// setACL runs a transformation on n's logical ACL and applies the edit, as
// the NameNode does.
func setACL(t *testing.T, tr *Tree, p string, f func([]ACLEntry) ([]ACLEntry, error)) {
	t.Helper()
	n := tr.Lookup(p)
	acl, err := f(n.LogicalACL())
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckACLUpdate(n, acl); err != nil {
		t.Fatal(err)
	}
	if err := tr.Apply(SetACL(p, acl)); err != nil {
		t.Fatal(err)
	}
}

func replace(spec ...ACLEntry) func([]ACLEntry) ([]ACLEntry, error) {
	return func(old []ACLEntry) ([]ACLEntry, error) { return ReplaceACL(old, spec) }
}

// The cases of Hadoop's FSAclBaseTest: default ACLs are copied to new
// children, filtered by the child's mode.
func TestDefaultACLInheritance(t *testing.T) {
	tr := newTree()
	apply(t, tr, []Edit{Mkdir(16386, "/d", Perm{"bruce", "execs", 0o750}, 1)})
	setACL(t, tr, "/d", replace(def(ACLUser, "foo", AccessAll)))
	d := tr.Lookup("/d")
	if got, want := aclString(d.ACL()), "default:user::rwx,default:user:foo:rwx,default:group::r-x,default:mask::rwx,default:other::---"; got != want {
		t.Fatalf("dir ACL %s, want %s", got, want)
	}
	if d.Mode != 0o750 {
		t.Fatalf("dir mode %o changed by a default ACL", d.Mode)
	}

	apply(t, tr, []Edit{
		AddFile(NewFile{ID: 16387, Path: "/d/f", Perm: Perm{"bruce", "execs", 0o644}, Mtime: 2, Replication: 1, BlockSize: 1 << 20, ClientName: "c"}),
		Mkdir(16388, "/d/sub", Perm{"bruce", "execs", 0o755}, 3),
	})
	f := tr.Lookup("/d/f")
	if got, want := aclString(f.ACL()), "user:foo:rwx,group::r-x"; got != want || f.Mode != 0o640 {
		t.Errorf("file ACL %s mode %o, want %s mode 640", got, f.Mode, want)
	}
	if got, want := aclString(f.LogicalACL()), "user::rw-,user:foo:rwx,group::r-x,mask::r--,other::---"; got != want {
		t.Errorf("file logical ACL %s, want %s", got, want)
	}
	sub := tr.Lookup("/d/sub")
	if got, want := aclString(sub.ACL()), "user:foo:rwx,group::r-x,"+aclString(d.ACL()); got != want || sub.Mode != 0o750 {
		t.Errorf("subdir ACL %s mode %o, want %s mode 750", got, sub.Mode, want)
	}

	// A minimal default ACL filters group:: by the mode instead of a mask.
	apply(t, tr, []Edit{Mkdir(16389, "/m", Perm{"bruce", "execs", 0o777}, 4)})
	setACL(t, tr, "/m", replace(def(ACLUser, "", AccessAll), def(ACLGroup, "", AccessAll), def(ACLOther, "", AccessRX)))
	apply(t, tr, []Edit{AddFile(NewFile{ID: 16390, Path: "/m/f", Perm: Perm{"bruce", "execs", 0o640}, Mtime: 5, Replication: 1, BlockSize: 1 << 20, ClientName: "c"})})
	if mf := tr.Lookup("/m/f"); mf.ACL() != nil || mf.Mode != 0o640 {
		t.Errorf("file under a minimal default ACL: ACL %s mode %o, want none and 640", aclString(mf.ACL()), mf.Mode)
	}

	// foo may read the file but not write it: the mask (r--) cuts rwx.
	foo := Checker{P: &Principal{User: "foo"}, Enabled: true}
	if !foo.Has(f, AccessRead) || foo.Has(f, AccessWrite) {
		t.Errorf("foo on /d/f: read %v write %v, want true false", foo.Has(f, AccessRead), foo.Has(f, AccessWrite))
	}
}

// TestACLTransformations follows Hadoop's TestAclTransformation.
func TestACLTransformations(t *testing.T) {
	base := minimalACL(0o750)
	tests := []struct {
		name string
		run  func() ([]ACLEntry, error)
		want string // or the error
	}{
		{"merge named user computes the mask", func() ([]ACLEntry, error) {
			return MergeACL(base, []ACLEntry{acc(ACLUser, "bruce", AccessRead|AccessWrite)})
		}, "user::rwx,user:bruce:rw-,group::r-x,mask::rwx,other::---"},
		{"merge keeps a provided mask", func() ([]ACLEntry, error) {
			return MergeACL(base, []ACLEntry{acc(ACLUser, "bruce", AccessAll), acc(ACLMask, "", AccessRead)})
		}, "user::rwx,user:bruce:rwx,group::r-x,mask::r--,other::---"},
		{"merge default entries copies the base ones", func() ([]ACLEntry, error) {
			return MergeACL(base, []ACLEntry{def(ACLUser, "bruce", AccessAll)})
		}, "user::rwx,group::r-x,other::---,default:user::rwx,default:user:bruce:rwx,default:group::r-x,default:mask::rwx,default:other::---"},
		{"filter recomputes the mask", func() ([]ACLEntry, error) {
			acl, _ := MergeACL(base, []ACLEntry{acc(ACLUser, "bruce", AccessAll), acc(ACLUser, "diana", AccessRead)})
			return FilterACL(acl, []ACLEntry{acc(ACLUser, "bruce", 0)})
		}, "user::rwx,user:diana:r--,group::r-x,mask::r-x,other::---"},
		{"filter of the mask while named entries remain", func() ([]ACLEntry, error) {
			acl, _ := MergeACL(base, []ACLEntry{acc(ACLUser, "bruce", AccessAll)})
			return FilterACL(acl, []ACLEntry{acc(ACLMask, "", 0)})
		}, "Invalid ACL: mask is required, but it was deleted."},
		{"replace access keeps default", func() ([]ACLEntry, error) {
			acl, _ := MergeACL(base, []ACLEntry{def(ACLUser, "bruce", AccessAll)})
			return ReplaceACL(acl, []ACLEntry{acc(ACLUser, "", AccessAll), acc(ACLGroup, "", AccessRead), acc(ACLOther, "", 0), acc(ACLGroup, "sales", AccessAll)})
		}, "user::rwx,group::r--,group:sales:rwx,mask::rwx,other::---,default:user::rwx,default:user:bruce:rwx,default:group::r-x,default:mask::rwx,default:other::---"},
		{"replace without base entries", func() ([]ACLEntry, error) {
			return ReplaceACL(base, []ACLEntry{acc(ACLUser, "bruce", AccessAll)})
		}, "Invalid ACL: the user, group and other entries are required."},
		{"duplicate entries", func() ([]ACLEntry, error) {
			return MergeACL(base, []ACLEntry{acc(ACLUser, "bruce", AccessAll), acc(ACLUser, "bruce", AccessRead)})
		}, "Invalid ACL: multiple entries with same scope, type and name."},
		{"named other", func() ([]ACLEntry, error) {
			return MergeACL(base, []ACLEntry{acc(ACLOther, "bruce", AccessAll)})
		}, "Invalid ACL: this entry type must not have a name: other:bruce:rwx."},
		{"strip default", func() ([]ACLEntry, error) {
			acl, _ := MergeACL(base, []ACLEntry{def(ACLUser, "bruce", AccessAll), acc(ACLUser, "x", AccessRead)})
			return StripDefaultACL(acl)
		}, "user::rwx,user:x:r--,group::r-x,mask::r-x,other::---"},
	}
	for _, tc := range tests {
		got, err := tc.run()
		s := aclString(got)
		if err != nil {
			s = err.(*ipc.RemoteError).Message
			if c := err.(*ipc.RemoteError).Class; c != ClassAclException {
				t.Errorf("%s: class %s", tc.name, c)
			}
		}
		if s != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, s, tc.want)
		}
	}
	var spec []ACLEntry
	for i := 0; i < 33; i++ {
		spec = append(spec, acc(ACLUser, fmt.Sprint("u", i), AccessRead))
	}
	if _, err := MergeACL(base, spec); err == nil || !strings.Contains(err.Error(), "Invalid ACL: ACL has 33 access entries, which exceeds maximum of 32.") {
		t.Errorf("33-entry spec: %v", err)
	}
}

// TestACLLimitsPerScope: as Hadoop since HDFS-7582, access and default
// entries are counted apart, 32 each, so a directory whose default ACL is
// full passes it to children that can still be changed.
func TestACLLimitsPerScope(t *testing.T) {
	named := func(scope ACLScope, n int) []ACLEntry {
		var es []ACLEntry
		for i := 0; i < n; i++ {
			es = append(es, ACLEntry{Scope: scope, Type: ACLUser, Name: fmt.Sprint("u", i), Perm: AccessRead})
		}
		return es
	}
	// 28 named users + user::, group::, mask::, other:: = 32 in each scope.
	full := append(named(ScopeAccess, 28), named(ScopeDefault, 28)...)
	acl, err := MergeACL(minimalACL(0o750), full)
	if err != nil {
		t.Fatalf("32 access and 32 default entries: %v", err)
	}
	if len(acl) != 64 {
		t.Fatalf("ACL of %d entries, want 64: %s", len(acl), aclString(acl))
	}
	for _, tc := range []struct {
		spec []ACLEntry
		want string
	}{
		{named(ScopeAccess, 29), "Invalid ACL: ACL has 33 access entries, which exceeds maximum of 32."},
		{named(ScopeDefault, 29), "Invalid ACL: ACL has 33 default entries, which exceeds maximum of 32."},
		{named(ScopeDefault, 33), "Invalid ACL: ACL has 33 default entries, which exceeds maximum of 32."}, // the spec's own bound
	} {
		_, err := MergeACL(minimalACL(0o750), tc.spec)
		var re *ipc.RemoteError
		if !errors.As(err, &re) || re.Class != ClassAclException || re.Message != tc.want {
			t.Errorf("%d entries: %v, want %q", len(tc.spec), err, tc.want)
		}
	}

	// A child of a directory with a full default ACL inherits 32 access
	// and 32 default entries, and stays changeable.
	tr := newTree()
	apply(t, tr, []Edit{Mkdir(16386, "/d", Perm{"bruce", "execs", 0o750}, 1)})
	setACL(t, tr, "/d", replace(named(ScopeDefault, 28)...))
	apply(t, tr, []Edit{Mkdir(16387, "/d/c", Perm{"bruce", "execs", 0o750}, 2)})
	c := tr.Lookup("/d/c")
	if access, def := splitScopes(c.LogicalACL()); len(access) != 32 || len(def) != 32 {
		t.Fatalf("child has %d access and %d default entries, want 32 and 32", len(access), len(def))
	}
	setACL(t, tr, "/d/c", func(old []ACLEntry) ([]ACLEntry, error) {
		return MergeACL(old, []ACLEntry{acc(ACLUser, "u0", AccessAll), def(ACLUser, "u1", AccessAll)})
	})
	setACL(t, tr, "/d/c", func(old []ACLEntry) ([]ACLEntry, error) {
		return FilterACL(old, []ACLEntry{acc(ACLUser, "u2", 0)})
	})
	if got := len(tr.Lookup("/d/c").LogicalACL()); got != 63 {
		t.Errorf("child ACL has %d entries after the changes, want 63", got)
	}
}

func TestACLNameLength(t *testing.T) {
	long := strings.Repeat("n", 256)
	for _, spec := range [][]ACLEntry{{acc(ACLUser, long, AccessRead)}, {def(ACLGroup, long, AccessRead)}} {
		_, err := MergeACL(minimalACL(0o750), spec)
		var re *ipc.RemoteError
		if !errors.As(err, &re) || re.Class != ClassAclException || !strings.Contains(re.Message, "has 256 bytes, which exceeds maximum of 255.") || strings.Contains(re.Message, long) {
			t.Errorf("scope %d: name of 256 bytes: %v", spec[0].Scope, err)
		}
	}
	if _, err := MergeACL(minimalACL(0o750), []ACLEntry{acc(ACLUser, long[1:], AccessRead)}); err != nil {
		t.Errorf("name of 255 bytes: %v", err)
	}
}

// TestACLPermissionTable is FSPermissionChecker's checkAccessAcl against
// the cases of Hadoop's TestFSPermissionChecker.
func TestACLPermissionTable(t *testing.T) {
	tr := newTree()
	apply(t, tr, []Edit{AddFile(NewFile{ID: 16386, Path: "/f", Perm: Perm{"bruce", "execs", 0o640}, Mtime: 1, Replication: 1, BlockSize: 1 << 20, ClientName: "c"})})
	set := func(spec ...ACLEntry) *Inode {
		t.Helper()
		all := append([]ACLEntry(nil), spec...)
		for _, b := range []ACLEntry{acc(ACLUser, "", AccessRead|AccessWrite), acc(ACLGroup, "", AccessRead), acc(ACLOther, "", 0)} {
			if _, ok := findKey(spec, b); !ok {
				all = append(all, b)
			}
		}
		setACL(t, tr, "/f", replace(all...))
		return tr.Lookup("/f")
	}
	type probe struct {
		user   string
		groups []string
		a      Access
		ok     bool
	}
	tests := []struct {
		name   string
		spec   []ACLEntry
		probes []probe
	}{
		{"named user", []ACLEntry{acc(ACLUser, "diana", AccessRead), acc(ACLMask, "", AccessRead)}, []probe{
			{"diana", nil, AccessRead, true}, {"diana", nil, AccessWrite, false}, {"bruce", nil, AccessWrite, true}, {"clark", nil, AccessRead, false},
		}},
		{"named user denied although other allows", []ACLEntry{acc(ACLUser, "diana", 0), acc(ACLOther, "", AccessRead)}, []probe{
			{"diana", nil, AccessRead, false}, {"clark", nil, AccessRead, true},
		}},
		{"mask limits a named user", []ACLEntry{acc(ACLUser, "diana", AccessRead|AccessWrite), acc(ACLMask, "", AccessRead)}, []probe{
			{"diana", nil, AccessWrite, false}, {"diana", nil, AccessRead, true},
		}},
		{"mask limits the owning group", []ACLEntry{acc(ACLUser, "diana", AccessRead), acc(ACLMask, "", 0)}, []probe{
			{"clark", []string{"execs"}, AccessRead, false},
		}},
		{"named group", []ACLEntry{acc(ACLGroup, "sales", AccessRead|AccessWrite)}, []probe{
			{"clark", []string{"sales"}, AccessWrite, true}, {"clark", []string{"other"}, AccessRead, false},
		}},
		{"any matching group grants", []ACLEntry{acc(ACLGroup, "sales", 0), acc(ACLGroup, "admins", AccessRead)}, []probe{
			{"clark", []string{"sales", "admins"}, AccessRead, true}, {"clark", []string{"sales"}, AccessRead, false},
		}},
		{"a matched group that denies hides other", []ACLEntry{acc(ACLGroup, "sales", 0), acc(ACLOther, "", AccessRead)}, []probe{
			{"clark", []string{"sales"}, AccessRead, false}, {"clark", nil, AccessRead, true},
		}},
		{"owner by owner bits only", []ACLEntry{acc(ACLUser, "bruce", AccessAll)}, []probe{
			{"bruce", nil, AccessExecute, false},
		}},
	}
	for _, tc := range tests {
		n := set(tc.spec...)
		for _, p := range tc.probes {
			c := Checker{P: &Principal{User: p.user, Groups: p.groups}, Enabled: true}
			if got := c.Has(n, p.a); got != p.ok {
				t.Errorf("%s: %s %v %s = %v, want %v (ACL %s)", tc.name, p.user, p.groups, p.a, got, p.ok, aclString(n.LogicalACL()))
			}
		}
		su := Checker{P: &Principal{User: "hdfs", Superuser: true}, Enabled: true}
		if !su.Has(n, AccessAll) {
			t.Errorf("%s: superuser refused", tc.name)
		}
	}

	// chmod changes the mask; removing the ACL gives group:: back.
	n := set(acc(ACLUser, "diana", AccessRead|AccessWrite), acc(ACLMask, "", AccessRead))
	apply(t, tr, []Edit{SetPermission("/f", 0o660)})
	if got := aclString(n.LogicalACL()); got != "user::rw-,user:diana:rw-,group::r--,mask::rw-,other::---" {
		t.Errorf("after chmod 660: %s", got)
	}
	apply(t, tr, []Edit{SetACL("/f", nil)})
	if n.ACL() != nil || n.Mode != 0o640 {
		t.Errorf("after removeAcl: ACL %s mode %o, want none and 640", aclString(n.ACL()), n.Mode)
	}
}

func TestACLOnlyDirectoriesTakeDefaults(t *testing.T) {
	tr := newTree()
	apply(t, tr, []Edit{AddFile(NewFile{ID: 16386, Path: "/f", Perm: Perm{"bruce", "execs", 0o640}, Mtime: 1, Replication: 1, BlockSize: 1 << 20, ClientName: "c"})})
	n := tr.Lookup("/f")
	acl, err := MergeACL(n.LogicalACL(), []ACLEntry{def(ACLUser, "x", AccessRead)})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckACLUpdate(n, acl); err == nil || !strings.Contains(err.Error(), "only directories may have a default ACL") {
		t.Errorf("default ACL on a file: %v", err)
	}
	if err := tr.Apply(SetACL("/f", acl)); !errors.Is(err, ErrReplay) {
		t.Errorf("replayed default ACL on a file: %v", err)
	}
}

// TestXAttrACLReplay: xattrs and ACLs, inherited ones included, come back
// identically from the log's records and from an image.
func TestXAttrACLReplay(t *testing.T) {
	live := newTree()
	acl, err := MergeACL(minimalACL(0o755), []ACLEntry{def(ACLGroup, "sales", AccessRX), acc(ACLUser, "diana", AccessAll)})
	if err != nil {
		t.Fatal(err)
	}
	edits := []Edit{
		Mkdir(16386, "/d", Perm{"bruce", "execs", 0o755}, 1),
		SetXAttr("/d", XAttr{NS: XAttrUser, Name: "a", Value: []byte("1")}),
		SetXAttr("/d", XAttr{NS: XAttrTrusted, Name: "t", Value: nil}),
		SetXAttr("/d", XAttr{NS: XAttrUser, Name: "b", Value: []byte{}}),
		SetXAttr("/d", XAttr{NS: XAttrUser, Name: "a", Value: []byte("2")}),
		RemoveXAttr("/d", XAttrUser, "b"),
		SetACL("/d", acl),
		Mkdir(16387, "/d/e", Perm{"bruce", "execs", 0o700}, 2),
		AddFile(NewFile{ID: 16388, Path: "/d/e/f", Perm: Perm{"bruce", "execs", 0o644}, Mtime: 3, Replication: 1, BlockSize: 1 << 20, ClientName: "c"}),
		SetXAttr("/d/e/f", XAttr{NS: XAttrSecurity, Name: "hdfs.unreadable.by.superuser"}),
	}
	apply(t, live, edits)
	full := func(tr *Tree) string {
		var b strings.Builder
		b.WriteString(dump(tr))
		for _, p := range []string{"/d", "/d/e", "/d/e/f"} {
			n := tr.Lookup(p)
			fmt.Fprintf(&b, "%s %o acl=%s xattrs=", p, n.Mode, aclString(n.ACL()))
			for _, x := range n.XAttrs() {
				fmt.Fprintf(&b, "%s=%q(nil=%v) ", x.PrefixedName(), x.Value, x.Value == nil)
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	want := full(live)
	for _, s := range []string{"/d 775 acl=user:diana:rwx,group::r-x,default:user::rwx,default:group::r-x,default:group:sales:r-x,default:mask::r-x,default:other::r-x xattrs=user.a=\"2\"(nil=false) trusted.t=\"\"(nil=true)",
		"/d/e 700 acl=group::r-x,group:sales:r-x,default:", "/d/e/f 644 acl=group::r-x,group:sales:r-x xattrs=security.hdfs.unreadable.by.superuser"} {
		if !strings.Contains(want, s) {
			t.Fatalf("live tree lacks %q:\n%s", s, want)
		}
	}
	replayed := newTree()
	for i, e := range edits {
		rec, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if err := replayed.ApplyRecord(rec); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if got := full(replayed); got != want {
		t.Fatalf("replayed:\n%s\nwant:\n%s", got, want)
	}
	var img bytes.Buffer
	if err := live.WriteImage(&img); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadImage(&img, blockmgmt.NewBlockMap())
	if err != nil {
		t.Fatal(err)
	}
	if got := full(loaded); got != want {
		t.Fatalf("from the image:\n%s\nwant:\n%s", got, want)
	}
	if err := live.Apply(RemoveXAttr("/d", XAttrUser, "nope")); !errors.Is(err, ErrReplay) {
		t.Errorf("removing a missing xattr on replay: %v", err)
	}
}
