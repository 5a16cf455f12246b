package hdfs

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// ACLs, as Hadoop's FileSystem ACL API and its AclEntry.

// ACLEntry is one ACL entry. Name is empty for user::, group::, mask::
// and other::; Perm holds rwx bits (4, 2, 1).
type ACLEntry struct {
	Default bool // default scope (directories only), else access
	Type    ACLType
	Name    string
	Perm    uint16
}

// ACLType is an entry's type.
type ACLType int

const (
	ACLUser ACLType = iota
	ACLGroup
	ACLMask
	ACLOther
)

var aclTypeNames = []string{"user", "group", "mask", "other"}

func (t ACLType) String() string {
	if t >= 0 && int(t) < len(aclTypeNames) {
		return aclTypeNames[t]
	}
	return "unknown"
}

// PermSymbol renders rwx bits as "r-x".
func PermSymbol(perm uint16) string {
	b := []byte("---")
	for i, c := range "rwx" {
		if perm&(4>>i) != 0 {
			b[i] = byte(c)
		}
	}
	return string(b)
}

// String renders e as Hadoop's AclEntry.toStringStable ("default:user:bob:r-x").
func (e ACLEntry) String() string {
	s := ""
	if e.Default {
		s = "default:"
	}
	return s + e.Type.String() + ":" + e.Name + ":" + PermSymbol(e.Perm)
}

// ParseACLSpec parses a comma-separated ACL spec as Hadoop's
// AclEntry.parseAclSpec: "[default:]type:[name]:perm" entries, without
// the perm part when withPerm is false (removeAclEntries, setfacl -x).
func ParseACLSpec(spec string, withPerm bool) ([]ACLEntry, error) {
	var out []ACLEntry
	for _, s := range strings.Split(spec, ",") {
		if s == "" {
			continue // Hadoop's getStringCollection skips empty entries
		}
		e, err := parseACLEntry(s, withPerm)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func parseACLEntry(s string, withPerm bool) (ACLEntry, error) {
	// Java's split drops trailing empty strings: "user:bob:" is two parts.
	parts := strings.Split(s, ":")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	bad := fmt.Errorf("Invalid <aclSpec> : %s", s)
	if len(parts) == 0 {
		return ACLEntry{}, bad
	}
	var e ACLEntry
	i := 0
	if parts[0] == "default" {
		e.Default = true
		i++
	}
	if len(parts) <= i {
		return ACLEntry{}, bad
	}
	found := false
	for t, n := range aclTypeNames {
		if strings.EqualFold(parts[i], n) {
			e.Type, found = ACLType(t), true
		}
	}
	if !found {
		return ACLEntry{}, fmt.Errorf("Invalid type of acl in <aclSpec> :%s", s)
	}
	i++
	if len(parts) > i {
		e.Name = parts[i]
		i++
	}
	if withPerm {
		if len(parts) <= i {
			return ACLEntry{}, bad
		}
		perm, ok := parsePermSymbol(parts[i])
		if !ok {
			return ACLEntry{}, fmt.Errorf("Invalid permission in <aclSpec> : %s", s)
		}
		e.Perm = perm
		i++
	}
	if len(parts) > i {
		return ACLEntry{}, bad
	}
	return e, nil
}

// parsePermSymbol reads Hadoop's FsAction symbols: exactly "rwx", "r-x", ...
func parsePermSymbol(s string) (uint16, bool) {
	for p := uint16(0); p < 8; p++ {
		if PermSymbol(p) == s {
			return p, true
		}
	}
	return 0, false
}

// ACLStatus is getAclStatus's answer. Entries are the ones beside the
// permission bits: named users, group:: and named groups when there is
// an access ACL, then the default entries (user::, mask:: and other:: of
// the access ACL are in Perm, whose group bits are then the mask).
type ACLStatus struct {
	Owner, Group string
	Sticky       bool
	Perm         uint16
	Entries      []ACLEntry
}

// EffectivePerm is e's permission after the mask that applies to it
// (AclStatus.getEffectivePermission): named entries and group:: of the
// access ACL go through the mode's group bits, those of the default ACL
// through the default mask.
func (s *ACLStatus) EffectivePerm(e ACLEntry) uint16 {
	if e.Name == "" && e.Type != ACLGroup {
		return e.Perm
	}
	if !e.Default {
		return e.Perm & (s.Perm >> 3 & 7)
	}
	for _, m := range s.Entries {
		if m.Default && m.Type == ACLMask {
			return e.Perm & m.Perm
		}
	}
	return e.Perm
}

func aclSpecProto(spec []ACLEntry) []*hdfspb.AclEntryProto {
	out := make([]*hdfspb.AclEntryProto, len(spec))
	for i, e := range spec {
		scope := hdfspb.AclEntryProto_ACCESS
		if e.Default {
			scope = hdfspb.AclEntryProto_DEFAULT
		}
		out[i] = &hdfspb.AclEntryProto{
			Scope: scope.Enum(), Type: hdfspb.AclEntryProto_AclEntryTypeProto(e.Type).Enum(),
			Permissions: hdfspb.AclEntryProto_FsActionProto(e.Perm & 7).Enum(),
		}
		if e.Name != "" {
			out[i].Name = proto.String(e.Name)
		}
	}
	return out
}

// SetACL replaces p's ACL with spec (each scope spec names; an empty spec
// removes the ACL).
func (c *Client) SetACL(ctx context.Context, p string, spec []ACLEntry) error {
	req := &hdfspb.SetAclRequestProto{Src: proto.String(p), AclSpec: aclSpecProto(spec)}
	return pathErr("setacl", p, c.call(ctx, "setAcl", req, &hdfspb.SetAclResponseProto{}))
}

// ModifyACLEntries adds or replaces spec's entries in p's ACL.
func (c *Client) ModifyACLEntries(ctx context.Context, p string, spec []ACLEntry) error {
	req := &hdfspb.ModifyAclEntriesRequestProto{Src: proto.String(p), AclSpec: aclSpecProto(spec)}
	return pathErr("modifyacl", p, c.call(ctx, "modifyAclEntries", req, &hdfspb.ModifyAclEntriesResponseProto{}))
}

// RemoveACLEntries removes the entries spec names (permissions ignored).
func (c *Client) RemoveACLEntries(ctx context.Context, p string, spec []ACLEntry) error {
	req := &hdfspb.RemoveAclEntriesRequestProto{Src: proto.String(p), AclSpec: aclSpecProto(spec)}
	return pathErr("removeacl", p, c.call(ctx, "removeAclEntries", req, &hdfspb.RemoveAclEntriesResponseProto{}))
}

// RemoveDefaultACL removes p's default ACL.
func (c *Client) RemoveDefaultACL(ctx context.Context, p string) error {
	req := &hdfspb.RemoveDefaultAclRequestProto{Src: proto.String(p)}
	return pathErr("removeacl", p, c.call(ctx, "removeDefaultAcl", req, &hdfspb.RemoveDefaultAclResponseProto{}))
}

// RemoveACL removes p's whole ACL.
func (c *Client) RemoveACL(ctx context.Context, p string) error {
	req := &hdfspb.RemoveAclRequestProto{Src: proto.String(p)}
	return pathErr("removeacl", p, c.call(ctx, "removeAcl", req, &hdfspb.RemoveAclResponseProto{}))
}

// GetACLStatus returns p's ACL.
func (c *Client) GetACLStatus(ctx context.Context, p string) (*ACLStatus, error) {
	var resp hdfspb.GetAclStatusResponseProto
	if err := c.call(ctx, "getAclStatus", &hdfspb.GetAclStatusRequestProto{Src: proto.String(p)}, &resp); err != nil {
		return nil, pathErr("getacl", p, err)
	}
	r := resp.GetResult()
	st := &ACLStatus{Owner: r.GetOwner(), Group: r.GetGroup(), Sticky: r.GetSticky(), Perm: uint16(r.GetPermission().GetPerm() & 0o7777)}
	for _, e := range r.GetEntries() {
		st.Entries = append(st.Entries, ACLEntry{
			Default: e.GetScope() == hdfspb.AclEntryProto_DEFAULT, Type: ACLType(e.GetType()),
			Name: e.GetName(), Perm: uint16(e.GetPermissions()),
		})
	}
	return st, nil
}
