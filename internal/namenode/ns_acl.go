package namenode

import (
	"context"
	"net/http"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/webhdfs"
)

// ACLs (Hadoop's FSDirAclOp): only the owner (or the superuser) changes
// an inode's ACL; each change logs the whole new ACL in one SetAcl edit.

func (s *Namesystem) checkACLsEnabled() error {
	if s.cfg.aclsDisabled {
		return ipc.Errorf(namespace.ClassAclException, "The ACL operation has been rejected.  Support for ACLs has been disabled by setting dfs.namenode.acls.enabled to false.")
	}
	return nil
}

// changeACL runs one ACL operation: transform computes the new logical
// ACL from the inode's current one (nil for removeAcl).
func (s *Namesystem) changeACL(ctx context.Context, p string, transform func(n *namespace.Inode) ([]namespace.ACLEntry, error)) error {
	if err := s.checkACLsEnabled(); err != nil {
		return err
	}
	var acl []namespace.ACLEntry
	check := func(pc namespace.Checker, n *namespace.Inode) error {
		if err := pc.Owner(n); err != nil {
			return err
		}
		var err error
		if acl, err = transform(n); err != nil {
			return err
		}
		return namespace.CheckACLUpdate(n, acl)
	}
	return s.setAttr(ctx, p, check, func(n *namespace.Inode) (namespace.Edit, bool) {
		return namespace.SetACL(p, acl), true
	})
}

// SetACL replaces p's ACL with spec, scope by scope (setAcl).
func (s *Namesystem) SetACL(ctx context.Context, p string, spec []namespace.ACLEntry) error {
	return s.changeACL(ctx, p, func(n *namespace.Inode) ([]namespace.ACLEntry, error) {
		if len(spec) == 0 {
			return nil, nil // Hadoop: an empty spec removes the ACL
		}
		return namespace.ReplaceACL(n.LogicalACL(), spec)
	})
}

// ModifyACLEntries merges spec into p's ACL (modifyAclEntries).
func (s *Namesystem) ModifyACLEntries(ctx context.Context, p string, spec []namespace.ACLEntry) error {
	return s.changeACL(ctx, p, func(n *namespace.Inode) ([]namespace.ACLEntry, error) {
		return namespace.MergeACL(n.LogicalACL(), spec)
	})
}

// RemoveACLEntries removes the entries spec names from p's ACL
// (removeAclEntries).
func (s *Namesystem) RemoveACLEntries(ctx context.Context, p string, spec []namespace.ACLEntry) error {
	return s.changeACL(ctx, p, func(n *namespace.Inode) ([]namespace.ACLEntry, error) {
		return namespace.FilterACL(n.LogicalACL(), spec)
	})
}

// RemoveDefaultACL removes p's default entries (removeDefaultAcl).
func (s *Namesystem) RemoveDefaultACL(ctx context.Context, p string) error {
	return s.changeACL(ctx, p, func(n *namespace.Inode) ([]namespace.ACLEntry, error) {
		return namespace.StripDefaultACL(n.LogicalACL())
	})
}

// RemoveACL removes p's ACL, its mode's group bits becoming group::'s
// permissions again (removeAcl).
func (s *Namesystem) RemoveACL(ctx context.Context, p string) error {
	return s.changeACL(ctx, p, func(n *namespace.Inode) ([]namespace.ACLEntry, error) {
		return nil, nil
	})
}

// ACLStatus is getAclStatus's answer: the entries beside the mode bits.
type ACLStatus struct {
	Owner, Group string
	Sticky       bool
	Mode         uint16
	Entries      []namespace.ACLEntry
}

// GetACLStatus returns p's ACL (getAclStatus); traverse permission on the
// path is all it needs.
func (s *Namesystem) GetACLStatus(ctx context.Context, p string) (*ACLStatus, error) {
	if err := s.checkACLsEnabled(); err != nil {
		return nil, err
	}
	if err := s.checkPath(p); err != nil {
		return nil, err
	}
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	n, err := s.resolveExisting(pc, p)
	if err != nil {
		return nil, err
	}
	return &ACLStatus{
		Owner: n.Owner, Group: n.Group, Sticky: n.Mode&0o1000 != 0, Mode: n.Mode,
		Entries: append([]namespace.ACLEntry(nil), n.ACL()...),
	}, nil
}

// aclFromProto converts an RPC's ACL spec, bounding its entries per scope
// and their names before it allocates or the namesystem lock is taken.
func aclFromProto(ps []*hdfspb.AclEntryProto) ([]namespace.ACLEntry, error) {
	var access, def int
	for _, p := range ps {
		if p.GetScope() > hdfspb.AclEntryProto_DEFAULT || p.GetType() > hdfspb.AclEntryProto_OTHER || p.GetPermissions() > hdfspb.AclEntryProto_PERM_ALL {
			return nil, ipc.Errorf(ipc.ClassIllegalArgument, "Invalid ACL entry: scope %d, type %d, permissions %d", p.GetScope(), p.GetType(), p.GetPermissions())
		}
		if err := namespace.CheckACLName(namespace.ACLType(p.GetType()), p.GetName()); err != nil {
			return nil, err
		}
		if p.GetScope() == hdfspb.AclEntryProto_DEFAULT {
			def++
		} else {
			access++
		}
	}
	if err := namespace.CheckMaxEntries(access, def); err != nil {
		return nil, err
	}
	out := make([]namespace.ACLEntry, len(ps))
	for i, p := range ps {
		out[i] = namespace.ACLEntry{
			Scope: namespace.ACLScope(p.GetScope()), Type: namespace.ACLType(p.GetType()),
			Perm: namespace.Access(p.GetPermissions()), Name: p.GetName(),
		}
	}
	return out, nil
}

func aclProtos(es []namespace.ACLEntry) []*hdfspb.AclEntryProto {
	out := make([]*hdfspb.AclEntryProto, len(es))
	for i, e := range es {
		out[i] = &hdfspb.AclEntryProto{
			Scope: hdfspb.AclEntryProto_AclEntryScopeProto(e.Scope).Enum(), Type: hdfspb.AclEntryProto_AclEntryTypeProto(e.Type).Enum(),
			Permissions: hdfspb.AclEntryProto_FsActionProto(e.Perm).Enum(),
		}
		if e.Name != "" {
			out[i].Name = proto.String(e.Name)
		}
	}
	return out
}

func (c *clientProtocol) setAcl(ctx context.Context, req *hdfspb.SetAclRequestProto) (*hdfspb.SetAclResponseProto, error) {
	spec, err := aclFromProto(req.GetAclSpec())
	if err != nil {
		return nil, err
	}
	return &hdfspb.SetAclResponseProto{}, c.ns.SetACL(ctx, req.GetSrc(), spec)
}

func (c *clientProtocol) modifyAclEntries(ctx context.Context, req *hdfspb.ModifyAclEntriesRequestProto) (*hdfspb.ModifyAclEntriesResponseProto, error) {
	spec, err := aclFromProto(req.GetAclSpec())
	if err != nil {
		return nil, err
	}
	return &hdfspb.ModifyAclEntriesResponseProto{}, c.ns.ModifyACLEntries(ctx, req.GetSrc(), spec)
}

func (c *clientProtocol) removeAclEntries(ctx context.Context, req *hdfspb.RemoveAclEntriesRequestProto) (*hdfspb.RemoveAclEntriesResponseProto, error) {
	spec, err := aclFromProto(req.GetAclSpec())
	if err != nil {
		return nil, err
	}
	return &hdfspb.RemoveAclEntriesResponseProto{}, c.ns.RemoveACLEntries(ctx, req.GetSrc(), spec)
}

func (c *clientProtocol) removeDefaultAcl(ctx context.Context, req *hdfspb.RemoveDefaultAclRequestProto) (*hdfspb.RemoveDefaultAclResponseProto, error) {
	return &hdfspb.RemoveDefaultAclResponseProto{}, c.ns.RemoveDefaultACL(ctx, req.GetSrc())
}

func (c *clientProtocol) removeAcl(ctx context.Context, req *hdfspb.RemoveAclRequestProto) (*hdfspb.RemoveAclResponseProto, error) {
	return &hdfspb.RemoveAclResponseProto{}, c.ns.RemoveACL(ctx, req.GetSrc())
}

func (c *clientProtocol) getAclStatus(ctx context.Context, req *hdfspb.GetAclStatusRequestProto) (*hdfspb.GetAclStatusResponseProto, error) {
	st, err := c.ns.GetACLStatus(ctx, req.GetSrc())
	if err != nil {
		return nil, err
	}
	return &hdfspb.GetAclStatusResponseProto{Result: &hdfspb.AclStatusProto{
		Owner: proto.String(st.Owner), Group: proto.String(st.Group), Sticky: proto.Bool(st.Sticky),
		Entries: aclProtos(st.Entries), Permission: &hdfspb.FsPermissionProto{Perm: proto.Uint32(uint32(st.Mode))},
	}}, nil
}

// WebHDFS: GETACLSTATUS ({"AclStatus":{"entries":["user:bob:r-x",...],
// ...}}) and the ACL changes, whose aclspec is the shell's syntax.

func webACLSpec(r *webhdfs.Request, withPerm bool) ([]namespace.ACLEntry, error) {
	spec, err := hdfs.ParseACLSpec(r.String("aclspec"), withPerm)
	if err != nil {
		return nil, ipc.Errorf(webhdfs.ClassJavaIllegalArgument, "Invalid value for webhdfs parameter \"aclspec\": %v", err)
	}
	var access, def int
	out := make([]namespace.ACLEntry, len(spec))
	for i, e := range spec {
		out[i] = namespace.ACLEntry{Type: namespace.ACLType(e.Type), Name: e.Name, Perm: namespace.Access(e.Perm)}
		if err := namespace.CheckACLName(out[i].Type, e.Name); err != nil {
			return nil, err
		}
		if e.Default {
			out[i].Scope = namespace.ScopeDefault
			def++
		} else {
			access++
		}
	}
	if err := namespace.CheckMaxEntries(access, def); err != nil {
		return nil, err
	}
	return out, nil
}

func (n *NameNode) webGetACLStatus(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	st, err := n.ns.GetACLStatus(ctx, r.Path)
	if err != nil {
		return err
	}
	entries := make([]string, len(st.Entries))
	for i, e := range st.Entries {
		entries[i] = e.String()
	}
	webhdfs.WriteJSON(w, http.StatusOK, map[string]any{"AclStatus": map[string]any{
		"entries": entries, "group": st.Group, "owner": st.Owner,
		"permission": strconv.FormatUint(uint64(st.Mode&0o1777), 8), "stickyBit": st.Sticky,
	}})
	return nil
}

func (n *NameNode) webSetACL(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	spec, err := webACLSpec(r, true)
	if err != nil {
		return err
	}
	return webDone(w, n.ns.SetACL(ctx, r.Path, spec))
}

func (n *NameNode) webModifyACLEntries(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	spec, err := webACLSpec(r, true)
	if err != nil {
		return err
	}
	return webDone(w, n.ns.ModifyACLEntries(ctx, r.Path, spec))
}

func (n *NameNode) webRemoveACLEntries(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	spec, err := webACLSpec(r, false)
	if err != nil {
		return err
	}
	return webDone(w, n.ns.RemoveACLEntries(ctx, r.Path, spec))
}

func (n *NameNode) webRemoveDefaultACL(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	return webDone(w, n.ns.RemoveDefaultACL(ctx, r.Path))
}

func (n *NameNode) webRemoveACL(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	return webDone(w, n.ns.RemoveACL(ctx, r.Path))
}
