package namespace

import (
	"bytes"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/namenodepb"
)

// Extended attributes, as Hadoop's XAttr, XAttrPermissionFilter and
// FSDirXAttrOp: each inode keeps a small slice of them (nil when it has
// none), changed only through SetXAttr and RemoveXAttr edits. The checks
// below are pure functions of the caller and the inode, so the NameNode
// runs them under its lock before it builds an edit.

// XAttrNS is an extended attribute's namespace (Hadoop's XAttr.NameSpace;
// the values are XAttrProto's).
type XAttrNS uint8

const (
	XAttrUser XAttrNS = iota
	XAttrTrusted
	XAttrSecurity
	XAttrSystem
	XAttrRaw
)

var xattrPrefixes = [...]string{"user", "trusted", "security", "system", "raw"}

// String is the namespace's prefix without the dot ("user").
func (ns XAttrNS) String() string {
	if int(ns) < len(xattrPrefixes) {
		return xattrPrefixes[ns]
	}
	return "unknown"
}

// XAttr is one extended attribute. A nil Value is no value at all (which
// Hadoop tells apart from an empty one).
type XAttr struct {
	NS    XAttrNS
	Name  string // without the namespace prefix
	Value []byte
}

// PrefixedName is the attribute's full name, "user.name".
func (x XAttr) PrefixedName() string { return x.NS.String() + "." + x.Name }

func (x XAttr) sameKey(y XAttr) bool { return x.NS == y.NS && x.Name == y.Name }

// UnreadableBySuperuser is the security xattr that, set on a file, keeps
// the superuser from reading its data (Hadoop's
// SECURITY_XATTR_UNREADABLE_BY_SUPERUSER).
const UnreadableBySuperuser = "security.hdfs.unreadable.by.superuser"

// ParseXAttrName splits a prefixed name ("user.foo") as Hadoop's
// XAttrHelper.buildXAttr does: the prefix is case-insensitive.
func ParseXAttrName(s string) (XAttr, error) {
	i := strings.IndexByte(s, '.')
	if i < 3 {
		return XAttr{}, ipc.Errorf(ipc.ClassIllegalArgument, "An XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.'")
	}
	if i == len(s)-1 {
		return XAttr{}, ipc.Errorf(ipc.ClassIllegalArgument, "XAttr name cannot be empty.")
	}
	for ns, p := range xattrPrefixes {
		if strings.EqualFold(s[:i], p) {
			return XAttr{NS: XAttrNS(ns), Name: s[i+1:]}, nil
		}
	}
	return XAttr{}, ipc.Errorf(ipc.ClassIllegalArgument, "An XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.'")
}

// XAttrFlag is setXAttr's flag set (XAttrSetFlagProto bits).
type XAttrFlag uint32

const (
	XAttrCreate  XAttrFlag = 1
	XAttrReplace XAttrFlag = 2
)

// XAttrLimits are dfs.namenode.fs-limits.max-xattrs-per-inode and
// max-xattr-size.
type XAttrLimits struct {
	PerInode int
	Size     int
}

// XAttr returns n's attribute with x's namespace and name.
func (n *Inode) XAttr(ns XAttrNS, name string) (XAttr, bool) {
	for _, a := range n.XAttrs() {
		if a.NS == ns && a.Name == name {
			return a, true
		}
	}
	return XAttr{}, false
}

// UnreadableBySuperuser reports whether file n carries
// security.hdfs.unreadable.by.superuser.
func (n *Inode) UnreadableBySuperuser() bool {
	_, ok := n.XAttr(XAttrSecurity, "hdfs.unreadable.by.superuser")
	return ok
}

// UnreadableBySuperuser refuses the superuser the data of a file marked
// security.hdfs.unreadable.by.superuser (FSDirectory's
// checkUnreadableBySuperuser, with permissions on).
func (c Checker) UnreadableBySuperuser(n *Inode) error {
	if c.Enabled && c.P.Superuser && n.UnreadableBySuperuser() {
		return ipc.Errorf(ipc.ClassAccessControl, "Access is denied for %s since the superuser is not allowed to perform this operation.", c.P.User)
	}
	return nil
}

// CheckXAttrSize refuses an attribute whose name and value together are
// larger than limit bytes (FSDirXAttrOp.checkXAttrSize).
func CheckXAttrSize(x XAttr, limit int) error {
	size := len(x.Name) + len(x.Value)
	if size > limit {
		return ipc.Errorf(ipc.ClassIllegalArgument, "The XAttr is too big. The maximum combined size of the name and value is %d, but the total size is %d", limit, size)
	}
	return nil
}

// XAttrAPI checks that the caller may name x at all through the client
// API (XAttrPermissionFilter.checkPermissionForApi): user.* always,
// trusted.* as the superuser, raw.* on /.reserved/raw paths, and
// security.hdfs.unreadable.by.superuser without a value.
func (c Checker) XAttrAPI(x XAttr, rawPath bool) error {
	switch {
	case x.NS == XAttrUser, x.NS == XAttrTrusted && c.P.Superuser:
		return nil
	case x.NS == XAttrRaw && rawPath:
		return nil
	case x.PrefixedName() == UnreadableBySuperuser:
		if x.Value != nil {
			return ipc.Errorf(ipc.ClassAccessControl, "Attempt to set a value for '%s'. Values are not allowed for this xattr.", UnreadableBySuperuser)
		}
		return nil
	}
	return ipc.Errorf(ipc.ClassAccessControl, "User doesn't have permission for xattr: %s", x.PrefixedName())
}

// FilterXAttrs returns the attributes of xs the caller may see
// (XAttrPermissionFilter.filterXAttrsForApi).
func (c Checker) FilterXAttrs(xs []XAttr, rawPath bool) []XAttr {
	var out []XAttr
	for _, x := range xs {
		if x.NS == XAttrUser || x.NS == XAttrTrusted && c.P.Superuser || x.NS == XAttrRaw && rawPath || x.PrefixedName() == UnreadableBySuperuser {
			out = append(out, x)
		}
	}
	return out
}

// XAttrChange checks that the caller may change x on n
// (FSDirXAttrOp.checkXAttrChangeAccess): for user.* attributes, write
// permission, or ownership on a sticky directory.
func (c Checker) XAttrChange(n *Inode, x XAttr) error {
	if !c.Enabled || x.NS != XAttrUser {
		return nil
	}
	if n.IsDir && n.Mode&0o1000 != 0 {
		return c.Owner(n)
	}
	return c.Check(n, AccessWrite)
}

// CheckSetXAttr validates setting x on n with flag against n's current
// attributes (XAttrSetFlag.validate and FSDirXAttrOp.setINodeXAttrs):
// CREATE for a new attribute, REPLACE for an existing one, at most
// limit user-visible (user and trusted) attributes, and
// security.hdfs.unreadable.by.superuser only on files.
func CheckSetXAttr(n *Inode, x XAttr, flag XAttrFlag, limit int) error {
	if flag&(XAttrCreate|XAttrReplace) == 0 {
		return ipc.Errorf(ipc.ClassIllegalArgument, "A flag must be specified.")
	}
	_, exists := n.XAttr(x.NS, x.Name)
	if exists && flag&XAttrReplace == 0 {
		return ipc.Errorf(ipc.ClassIOException, "XAttr: %s already exists. The REPLACE flag must be specified.", x.Name)
	}
	if !exists && flag&XAttrCreate == 0 {
		return ipc.Errorf(ipc.ClassIOException, "XAttr: %s does not exist. The CREATE flag must be specified.", x.Name)
	}
	visible := 0
	if userVisible(x) {
		visible++
	}
	for _, a := range n.XAttrs() {
		if !a.sameKey(x) && userVisible(a) {
			visible++
		}
	}
	if visible > limit {
		return ipc.Errorf(ipc.ClassIOException, "Cannot add additional XAttr to inode, would exceed limit of %d", limit)
	}
	if n.IsDir && x.PrefixedName() == UnreadableBySuperuser {
		return ipc.Errorf(ipc.ClassIOException, "Can only set '%s' on a file.", UnreadableBySuperuser)
	}
	return nil
}

func userVisible(x XAttr) bool { return x.NS == XAttrUser || x.NS == XAttrTrusted }

// CheckRemoveXAttr validates removing x from n
// (FSDirXAttrOp.filterINodeXAttrs and removeXAttr).
func CheckRemoveXAttr(n *Inode, x XAttr) error {
	if x.PrefixedName() == UnreadableBySuperuser {
		return ipc.Errorf(ipc.ClassAccessControl, "The xattr '%s' can not be deleted.", UnreadableBySuperuser)
	}
	if _, ok := n.XAttr(x.NS, x.Name); !ok {
		return ipc.Errorf(ipc.ClassIOException, "No matching attributes found for remove operation")
	}
	return nil
}

func xattrProto(x XAttr) *namenodepb.XAttr {
	return &namenodepb.XAttr{Namespace: proto.Uint32(uint32(x.NS)), Name: proto.String(x.Name), Value: x.Value}
}

func xattrFrom(p *namenodepb.XAttr) XAttr {
	x := XAttr{NS: XAttrNS(p.GetNamespace()), Name: p.GetName()}
	if p.Value != nil {
		x.Value = bytes.Clone(p.Value)
		if x.Value == nil {
			x.Value = []byte{}
		}
	}
	return x
}

// SetXAttr sets x on path: a new attribute is added, an existing one with
// its namespace and name gets x's value.
func SetXAttr(path string, x XAttr) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_SetXattr{SetXattr: &namenodepb.OpSetXAttr{
		Path: proto.String(path), Xattr: xattrProto(x),
	}}}}
}

// RemoveXAttr removes path's attribute with namespace ns and name.
func RemoveXAttr(path string, ns XAttrNS, name string) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_RemoveXattr{RemoveXattr: &namenodepb.OpRemoveXAttr{
		Path: proto.String(path), Namespace: proto.Uint32(uint32(ns)), Name: proto.String(name),
	}}}}
}

func (ns *Tree) applySetXAttr(o *namenodepb.OpSetXAttr) error {
	n := ns.Lookup(o.GetPath())
	if n == nil || o.GetXattr() == nil {
		return replayErr("setXAttr on missing %s", o.GetPath())
	}
	x := xattrFrom(o.GetXattr())
	// A new slice every time: a snapshot's copy of n shares the old one.
	for i := range n.XAttrs() {
		if n.XAttrs()[i].sameKey(x) {
			xs := append([]XAttr(nil), n.XAttrs()...)
			xs[i] = x
			n.setXAttrs(xs)
			return nil
		}
	}
	// Exactly sized: most inodes have none or a few.
	xs := make([]XAttr, len(n.XAttrs()), len(n.XAttrs())+1)
	copy(xs, n.XAttrs())
	n.setXAttrs(append(xs, x))
	return nil
}

func (ns *Tree) applyRemoveXAttr(o *namenodepb.OpRemoveXAttr) error {
	n := ns.Lookup(o.GetPath())
	if n == nil {
		return replayErr("removeXAttr on missing %s", o.GetPath())
	}
	key := XAttr{NS: XAttrNS(o.GetNamespace()), Name: o.GetName()}
	for i := range n.XAttrs() {
		if n.XAttrs()[i].sameKey(key) {
			if len(n.XAttrs()) == 1 {
				n.setXAttrs(nil)
			} else {
				n.setXAttrs(append(n.XAttrs()[:i:i], n.XAttrs()[i+1:]...))
			}
			return nil
		}
	}
	return replayErr("removeXAttr of %s, which %s does not have", key.PrefixedName(), o.GetPath())
}
