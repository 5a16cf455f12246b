package namespace

import (
	"fmt"
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/namenodepb"
)

// ACLs, as Hadoop's AclStorage, AclTransformation and FSPermissionChecker.
//
// An inode's logical ACL is its mode bits plus Inode.ACL. As in Hadoop,
// user:: and other:: live in the mode's owner and other bits; when the
// inode has access entries, the mode's group bits are the access mask
// and Inode.ACL holds the remaining access entries (named users, group::,
// named groups), then every default entry, in ACL order. Inode.ACL is nil
// for an inode without an ACL. chmod therefore changes the mask, as POSIX
// wants.
//
// The operations (setAcl, modifyAclEntries, ...) compute the new logical
// ACL with the transformations below and log it whole in a SetAcl edit;
// Tree.Apply stores it (updateINodeAcl), so replay needs no ACL logic but
// the storage rule.

// ACLScope is an entry's scope.
type ACLScope uint8

const (
	ScopeAccess ACLScope = iota
	ScopeDefault
)

// ACLType is an entry's type.
type ACLType uint8

const (
	ACLUser ACLType = iota
	ACLGroup
	ACLMask
	ACLOther
)

var aclTypeNames = [...]string{"user", "group", "mask", "other"}

// ACLEntry is one ACL entry; Name is empty for the unnamed entries.
type ACLEntry struct {
	Scope ACLScope
	Type  ACLType
	Perm  Access
	Name  string
}

// String renders e as getfacl does ("default:user:bob:r-x").
func (e ACLEntry) String() string {
	s := ""
	if e.Scope == ScopeDefault {
		s = "default:"
	}
	t := "unknown"
	if int(e.Type) < len(aclTypeNames) {
		t = aclTypeNames[e.Type]
	}
	return s + t + ":" + e.Name + ":" + e.Perm.Symbol()
}

// Symbol is the rwx form of a ("r-x").
func (a Access) Symbol() string {
	b := []byte("---")
	if a&AccessRead != 0 {
		b[0] = 'r'
	}
	if a&AccessWrite != 0 {
		b[1] = 'w'
	}
	if a&AccessExecute != 0 {
		b[2] = 'x'
	}
	return string(b)
}

// MaxACLEntries is the most entries an ACL may have in each scope, access
// and default counted apart (AclTransformation.MAX_ENTRIES, per scope since
// HDFS-7582). Inheritance gives a child as many access entries as its
// parent's default entries, so a child's ACL is within the limit whenever
// its parent's is.
const MaxACLEntries = 32

// CheckMaxEntries refuses more than MaxACLEntries access or default entries
// (AclTransformation.checkMaxEntries).
func CheckMaxEntries(access, def int) error {
	if access > MaxACLEntries {
		return aclErr("Invalid ACL: ACL has %d access entries, which exceeds maximum of %d.", access, MaxACLEntries)
	}
	if def > MaxACLEntries {
		return aclErr("Invalid ACL: ACL has %d default entries, which exceeds maximum of %d.", def, MaxACLEntries)
	}
	return nil
}

// MaxACLNameLength bounds an entry's user or group name in bytes. Hadoop
// has no bound; strata refuses longer names at the RPC and WebHDFS
// boundary because inheritance copies every name into each new child's
// inode (and so the image), letting one long name multiply. 255 is the
// default dfs.namenode.fs-limits.max-component-length and far above any
// real user or group name.
const MaxACLNameLength = 255

// CheckACLName refuses an entry name longer than MaxACLNameLength. The
// message reports the length, not the (hostile) name.
func CheckACLName(t ACLType, name string) error {
	if len(name) > MaxACLNameLength {
		tn := "unknown"
		if int(t) < len(aclTypeNames) {
			tn = aclTypeNames[t]
		}
		return aclErr("Invalid ACL: the name of a %s entry has %d bytes, which exceeds maximum of %d.", tn, len(name), MaxACLNameLength)
	}
	return nil
}

func checkScopes(es []ACLEntry) error {
	access, def := splitScopes(es)
	return CheckMaxEntries(len(access), len(def))
}

// aclLess is Hadoop's ACL_ENTRY_COMPARATOR: access before default; user,
// group, mask, other; the unnamed entry before named ones, names in order.
func aclLess(a, b ACLEntry) bool {
	if a.Scope != b.Scope {
		return a.Scope < b.Scope
	}
	if a.Type != b.Type {
		return a.Type < b.Type
	}
	return a.Name < b.Name
}

func sameACLKey(a, b ACLEntry) bool {
	return a.Scope == b.Scope && a.Type == b.Type && a.Name == b.Name
}

func sortACL(es []ACLEntry) {
	sort.SliceStable(es, func(i, j int) bool { return aclLess(es[i], es[j]) })
}

func aclErr(format string, args ...any) error {
	return ipc.Errorf(ClassAclException, format, args...)
}

// ClassAclException is Hadoop's AclException.
const ClassAclException = "org.apache.hadoop.hdfs.protocol.AclException"

// HasACL reports whether n has an extended ACL (the '+' of ls).
func (n *Inode) HasACL() bool { return len(n.ACL()) > 0 }

// hasAccessACL reports whether n's ACL has access entries (then the mode's
// group bits are the mask).
func (n *Inode) hasAccessACL() bool { return len(n.ACL()) > 0 && n.ACL()[0].Scope == ScopeAccess }

// DefaultACL returns n's default entries (nil when it has none).
func (n *Inode) DefaultACL() []ACLEntry {
	for i, e := range n.ACL() {
		if e.Scope == ScopeDefault {
			return n.ACL()[i:]
		}
	}
	return nil
}

func minimalACL(mode uint16) []ACLEntry {
	return []ACLEntry{
		{Type: ACLUser, Perm: Access(mode >> 6 & 7)},
		{Type: ACLGroup, Perm: Access(mode >> 3 & 7)},
		{Type: ACLOther, Perm: Access(mode & 7)},
	}
}

// LogicalACL is n's whole ACL (AclStorage.readINodeLogicalAcl): the
// minimal one of its mode bits when it has none.
func (n *Inode) LogicalACL() []ACLEntry {
	var out []ACLEntry
	def := n.DefaultACL()
	if n.hasAccessACL() {
		out = append(out, ACLEntry{Type: ACLUser, Perm: Access(n.Mode >> 6 & 7)})
		out = append(out, n.ACL()[:len(n.ACL())-len(def)]...)
		out = append(out, ACLEntry{Type: ACLMask, Perm: Access(n.Mode >> 3 & 7)}, ACLEntry{Type: ACLOther, Perm: Access(n.Mode & 7)})
	} else {
		out = minimalACL(n.Mode)
	}
	return append(out, def...)
}

// isMinimal reports whether es (one scope, sorted) is exactly user::,
// group::, other::.
func isMinimal(es []ACLEntry) bool { return len(es) == 3 }

func splitScopes(es []ACLEntry) (access, def []ACLEntry) {
	for i, e := range es {
		if e.Scope == ScopeDefault {
			return es[:i], es[i:]
		}
	}
	return es, nil
}

// storeACL gives n the logical ACL acl (sorted, validated): Hadoop's
// AclStorage.updateINodeAcl, and removeINodeAcl for an empty acl.
func storeACL(n *Inode, acl []ACLEntry) error {
	if len(acl) == 0 {
		if n.hasAccessACL() {
			// Restore group:: to the group bits, replacing the mask.
			for _, e := range n.ACL() {
				if e.Scope == ScopeAccess && e.Type == ACLGroup && e.Name == "" {
					n.Mode = n.Mode&^0o070 | uint16(e.Perm)<<3
				}
			}
		}
		n.setACL(nil)
		return nil
	}
	if len(acl) < 3 {
		return fmt.Errorf("ACL of %d entries", len(acl))
	}
	sticky := n.Mode & 0o7000
	if isMinimal(acl) {
		n.setACL(nil)
		n.Mode = sticky | uint16(acl[0].Perm)<<6 | uint16(acl[1].Perm)<<3 | uint16(acl[2].Perm)
		return nil
	}
	access, def := splitScopes(acl)
	if len(def) > 0 && !n.IsDir {
		return aclErr("Invalid ACL: only directories may have a default ACL.")
	}
	if len(access) < 3 {
		return fmt.Errorf("access ACL of %d entries", len(access))
	}
	var feature []ACLEntry
	if !isMinimal(access) {
		feature = append(feature, access[1:len(access)-2]...)
		// The mask is the group class's bits.
		n.Mode = sticky | uint16(access[0].Perm)<<6 | uint16(access[len(access)-2].Perm)<<3 | uint16(access[len(access)-1].Perm)
	} else {
		n.Mode = sticky | uint16(access[0].Perm)<<6 | uint16(access[1].Perm)<<3 | uint16(access[2].Perm)
	}
	n.setACL(append(feature, def...))
	return nil
}

// validatedSpec sorts and bounds an ACL spec, scope by scope
// (AclTransformation's ValidatedAclSpec): the spec is untrusted input.
func validatedSpec(spec []ACLEntry) ([]ACLEntry, error) {
	for _, e := range spec {
		if err := CheckACLName(e.Type, e.Name); err != nil {
			return nil, err
		}
	}
	out := append([]ACLEntry(nil), spec...)
	sortACL(out)
	if err := checkScopes(out); err != nil {
		return nil, err
	}
	return out, nil
}

func findKey(es []ACLEntry, k ACLEntry) (ACLEntry, bool) {
	for _, e := range es {
		if sameACLKey(e, k) {
			return e, true
		}
	}
	return ACLEntry{}, false
}

// maskState is the per-scope bookkeeping of AclTransformation.
type maskState struct {
	provided   [2]*ACLEntry
	maskDirty  [2]bool
	scopeDirty [2]bool
}

// MergeACL is modifyAclEntries' transformation (mergeAclEntries).
func MergeACL(existing, spec []ACLEntry) ([]ACLEntry, error) {
	spec, err := validatedSpec(spec)
	if err != nil {
		return nil, err
	}
	var b []ACLEntry
	var m maskState
	var found []ACLEntry
	for _, e := range existing {
		if s, ok := findKey(spec, e); ok {
			found = append(found, s)
			m.scopeDirty[s.Scope] = true
			if s.Type == ACLMask {
				m.provided[s.Scope], m.maskDirty[s.Scope] = &s, true
			} else {
				b = append(b, s)
			}
		} else if e.Type == ACLMask {
			m.provided[e.Scope] = &e
		} else {
			b = append(b, e)
		}
	}
	for _, s := range spec {
		if _, ok := findKey(found, s); ok {
			continue
		}
		m.scopeDirty[s.Scope] = true
		if s.Type == ACLMask {
			m.provided[s.Scope], m.maskDirty[s.Scope] = &s, true
		} else {
			b = append(b, s)
		}
	}
	return finishACL(b, &m)
}

// FilterACL is removeAclEntries' transformation (filterAclEntriesByAclSpec):
// spec entries are keys, their permissions ignored.
func FilterACL(existing, spec []ACLEntry) ([]ACLEntry, error) {
	spec, err := validatedSpec(spec)
	if err != nil {
		return nil, err
	}
	var b []ACLEntry
	var m maskState
	for _, e := range existing {
		if _, ok := findKey(spec, e); ok {
			m.scopeDirty[e.Scope] = true
			if e.Type == ACLMask {
				m.maskDirty[e.Scope] = true
			}
		} else if e.Type == ACLMask {
			m.provided[e.Scope] = &e
		} else {
			b = append(b, e)
		}
	}
	return finishACL(b, &m)
}

// ReplaceACL is setAcl's transformation (replaceAclEntries): each scope
// the spec names is replaced, the other kept.
func ReplaceACL(existing, spec []ACLEntry) ([]ACLEntry, error) {
	spec, err := validatedSpec(spec)
	if err != nil {
		return nil, err
	}
	var b []ACLEntry
	var m maskState
	for _, s := range spec {
		m.scopeDirty[s.Scope] = true
		if s.Type == ACLMask {
			m.provided[s.Scope], m.maskDirty[s.Scope] = &s, true
		} else {
			b = append(b, s)
		}
	}
	for _, e := range existing {
		if m.scopeDirty[e.Scope] {
			continue
		}
		if e.Type == ACLMask {
			m.provided[e.Scope] = &e
		} else {
			b = append(b, e)
		}
	}
	return finishACL(b, &m)
}

// StripDefaultACL is removeDefaultAcl's transformation.
func StripDefaultACL(existing []ACLEntry) ([]ACLEntry, error) {
	access, _ := splitScopes(existing)
	return buildACL(append([]ACLEntry(nil), access...))
}

func finishACL(b []ACLEntry, m *maskState) ([]ACLEntry, error) {
	b = copyDefaultsIfNeeded(b)
	b, err := calculateMasks(b, m)
	if err != nil {
		return nil, err
	}
	return buildACL(b)
}

// copyDefaultsIfNeeded fills in default user::, group:: and other:: from
// the access entries when a default ACL lacks them.
func copyDefaultsIfNeeded(b []ACLEntry) []ACLEntry {
	sortACL(b)
	access, def := splitScopes(b)
	if len(def) == 0 {
		return b
	}
	var copied []ACLEntry
	for _, t := range []ACLType{ACLUser, ACLGroup, ACLOther} {
		if _, ok := findKey(def, ACLEntry{Scope: ScopeDefault, Type: t}); ok {
			continue
		}
		if a, ok := findKey(access, ACLEntry{Scope: ScopeAccess, Type: t}); ok {
			copied = append(copied, ACLEntry{Scope: ScopeDefault, Type: t, Perm: a.Perm})
		}
	}
	return append(b, copied...)
}

func calculateMasks(b []ACLEntry, m *maskState) ([]ACLEntry, error) {
	var found, needed [2]bool
	var union [2]Access
	for _, e := range b {
		found[e.Scope] = true
		if e.Type == ACLGroup || e.Name != "" {
			union[e.Scope] |= e.Perm
		}
		if e.Name != "" {
			needed[e.Scope] = true
		}
	}
	for scope := ScopeAccess; scope <= ScopeDefault; scope++ {
		if !found[scope] {
			continue
		}
		switch p := m.provided[scope]; {
		case p == nil && needed[scope] && m.maskDirty[scope]:
			return nil, aclErr("Invalid ACL: mask is required, but it was deleted.")
		case p != nil && (!m.scopeDirty[scope] || m.maskDirty[scope]):
			b = append(b, *p)
		case needed[scope]:
			b = append(b, ACLEntry{Scope: scope, Type: ACLMask, Perm: union[scope]})
		}
	}
	return b, nil
}

// buildACL sorts and validates an ACL (buildAndValidateAcl).
func buildACL(b []ACLEntry) ([]ACLEntry, error) {
	sortACL(b)
	for i, e := range b {
		if i > 0 && sameACLKey(b[i-1], e) {
			return nil, aclErr("Invalid ACL: multiple entries with same scope, type and name.")
		}
		if e.Name != "" && (e.Type == ACLMask || e.Type == ACLOther) {
			return nil, aclErr("Invalid ACL: this entry type must not have a name: %s.", e)
		}
	}
	access, def := splitScopes(b)
	if err := CheckMaxEntries(len(access), len(def)); err != nil {
		return nil, err
	}
	for _, t := range []ACLType{ACLUser, ACLGroup, ACLOther} {
		if _, ok := findKey(access, ACLEntry{Scope: ScopeAccess, Type: t}); !ok {
			return nil, aclErr("Invalid ACL: the user, group and other entries are required.")
		}
		if len(def) > 0 {
			if _, ok := findKey(def, ACLEntry{Scope: ScopeDefault, Type: t}); !ok {
				return nil, aclErr("Invalid default ACL: the user, group and other entries are required.")
			}
		}
	}
	return b, nil
}

// CheckACLUpdate checks that acl may be stored on n before the edit is
// built (storeACL's refusals, so that Apply never fails on them).
func CheckACLUpdate(n *Inode, acl []ACLEntry) error {
	if isMinimal(acl) || n.IsDir {
		return nil
	}
	if _, def := splitScopes(acl); len(def) > 0 {
		return aclErr("Invalid ACL: only directories may have a default ACL.")
	}
	return nil
}

// inheritDefaultACL gives a new child the default ACL of its parent as
// Hadoop's AclStorage.copyINodeDefaultAcl does: the parent's default
// entries become the child's access entries, with the child's mode (the
// client's masked permission) filtering user::, mask:: (or group:: of a
// minimal default ACL) and other::; a directory also gets them as its own
// default ACL.
func inheritDefaultACL(child *Inode) {
	def := child.Parent.DefaultACL()
	if len(def) == 0 {
		return
	}
	mode := child.Mode
	minimal := isMinimal(def)
	access := make([]ACLEntry, 0, len(def))
	for _, e := range def {
		p := e.Perm
		switch {
		case e.Type == ACLUser && e.Name == "":
			p &= Access(mode >> 6 & 7)
		case e.Type == ACLGroup && minimal, e.Type == ACLMask:
			p &= Access(mode >> 3 & 7)
		case e.Type == ACLOther:
			p &= Access(mode & 7)
		}
		access = append(access, ACLEntry{Scope: ScopeAccess, Type: e.Type, Name: e.Name, Perm: p})
	}
	acl := access
	if child.IsDir {
		acl = append(acl, def...)
	}
	// Cannot fail: the parent's default ACL was validated, and only a
	// directory receives default entries.
	_ = storeACL(child, acl)
}

func aclProto(es []ACLEntry) []*namenodepb.AclEntry {
	out := make([]*namenodepb.AclEntry, len(es))
	for i, e := range es {
		out[i] = &namenodepb.AclEntry{Scope: proto.Uint32(uint32(e.Scope)), Type: proto.Uint32(uint32(e.Type)), Perm: proto.Uint32(uint32(e.Perm))}
		if e.Name != "" {
			out[i].Name = proto.String(e.Name)
		}
	}
	return out
}

func aclFrom(ps []*namenodepb.AclEntry) ([]ACLEntry, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	out := make([]ACLEntry, len(ps))
	for i, p := range ps {
		if p.GetScope() > 1 || p.GetType() > 3 || p.GetPerm() > 7 {
			return nil, fmt.Errorf("bad ACL entry %v", p)
		}
		out[i] = ACLEntry{Scope: ACLScope(p.GetScope()), Type: ACLType(p.GetType()), Perm: Access(p.GetPerm()), Name: p.GetName()}
	}
	return out, nil
}

// SetACL gives path the logical ACL acl (from one of the transformations
// above); an empty acl removes path's ACL.
func SetACL(path string, acl []ACLEntry) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_SetAcl{SetAcl: &namenodepb.OpSetAcl{
		Path: proto.String(path), Entries: aclProto(acl),
	}}}}
}

func (ns *Tree) applySetACL(o *namenodepb.OpSetAcl) error {
	n := ns.Lookup(o.GetPath())
	if n == nil {
		return replayErr("setAcl on missing %s", o.GetPath())
	}
	acl, err := aclFrom(o.GetEntries())
	if err != nil {
		return replayErr("setAcl on %s: %v", o.GetPath(), err)
	}
	if err := storeACL(n, acl); err != nil {
		return replayErr("setAcl on %s: %v", o.GetPath(), err)
	}
	return nil
}

// checkACLAccess is FSPermissionChecker.hasAclPermission: the owner by the
// owner bits; else a matching named user, else every group entry
// (group:: and named groups) the caller belongs to, through the mask; a
// caller matched by an entry that does not grant a is refused, and only a
// caller no entry matched falls back to other::.
func (c Checker) checkACLAccess(n *Inode, a Access) bool {
	if n.Owner == c.P.User {
		return Access(n.Mode>>6&7)&a == a
	}
	mask := Access(n.Mode >> 3 & 7)
	matched := false
	for _, e := range n.ACL() {
		if e.Scope == ScopeDefault {
			break
		}
		switch e.Type {
		case ACLUser:
			if e.Name == c.P.User {
				return e.Perm&mask&a == a
			}
		case ACLGroup:
			g := e.Name
			if g == "" {
				g = n.Group
			}
			if c.P.InGroup(g) {
				if e.Perm&mask&a == a {
					return true
				}
				matched = true
			}
		}
	}
	return !matched && Access(n.Mode&7)&a == a
}
