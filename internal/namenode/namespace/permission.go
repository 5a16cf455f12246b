package namespace

import (
	"fmt"
	"os/user"
	"sync"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/ipc"
)

// Access bits, as Hadoop's FsAction.
type Access uint16

const (
	AccessExecute Access = 1
	AccessWrite   Access = 2
	AccessRead    Access = 4
	AccessAll            = AccessRead | AccessWrite | AccessExecute
	AccessRX             = AccessRead | AccessExecute
	AccessWX             = AccessWrite | AccessExecute
)

// String names a as Hadoop's FsAction does.
func (a Access) String() string {
	switch a {
	case AccessRead:
		return "READ"
	case AccessWrite:
		return "WRITE"
	case AccessExecute:
		return "EXECUTE"
	case AccessRX:
		return "READ_EXECUTE"
	case AccessWX:
		return "WRITE_EXECUTE"
	case AccessAll:
		return "ALL"
	case AccessRead | AccessWrite:
		return "READ_WRITE"
	}
	return "NONE"
}

// ModeString renders mode as ls does: drwxr-xr-x, with t/T for sticky.
func ModeString(dir bool, mode uint16) string { return fs.ModeString(dir, mode) }

// GroupCache maps user names to their groups from the NameNode host's user
// database, as Hadoop's shell-based group mapping does, caching for a while.
type GroupCache struct {
	ttl    time.Duration
	Lookup func(user string) []string
	mu     sync.Mutex
	m      map[string]groupEntry
}

type groupEntry struct {
	groups []string
	at     time.Time
}

// NewGroupCache returns a cache of the host's group database whose entries
// live for ttl.
func NewGroupCache(ttl time.Duration) *GroupCache {
	return &GroupCache{ttl: ttl, Lookup: osGroups, m: map[string]groupEntry{}}
}

// osGroups returns user's groups from the host's user database, primary
// group first; none for an unknown user.
func osGroups(name string) []string {
	var groups []string
	u, err := user.Lookup(name)
	if err != nil {
		return nil
	}
	if pg, err := user.LookupGroupId(u.Gid); err == nil {
		groups = append(groups, pg.Name)
	}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if id == u.Gid {
				continue
			}
			if gr, err := user.LookupGroupId(id); err == nil {
				groups = append(groups, gr.Name)
			}
		}
	}
	return groups
}

// Groups returns name's groups, primary first, from the cache or the
// host's user database. It is safe for concurrent use.
func (g *GroupCache) Groups(name string) []string {
	g.mu.Lock()
	e, ok := g.m[name]
	g.mu.Unlock()
	if ok && time.Since(e.at) < g.ttl {
		return e.groups
	}
	groups := g.Lookup(name)
	g.mu.Lock()
	g.m[name] = groupEntry{groups: groups, at: time.Now()}
	g.mu.Unlock()
	return groups
}

// Principal is the caller of an operation, with its groups resolved.
type Principal struct {
	User      string
	Groups    []string
	Superuser bool
}

// InGroup reports whether g is one of p's groups.
func (p *Principal) InGroup(g string) bool {
	for _, x := range p.Groups {
		if x == g {
			return true
		}
	}
	return false
}

// Checker is FSPermissionChecker: what a principal may do to inodes.
// With permissions disabled, everything but the superuser-only operations
// is allowed (as in HDFS).
type Checker struct {
	P       *Principal
	Enabled bool
}

func (c Checker) denied(n *Inode, a Access) error {
	// Hadoop marks a refusal by an ACL with a '+' after the mode.
	acl := ""
	if n.hasAccessACL() {
		acl = "+"
	}
	return ipc.Errorf(ipc.ClassAccessControl, "Permission denied: user=%s, access=%s, inode=%q:%s:%s:%s%s",
		c.P.User, a, n.Path(), n.Owner, n.Group, ModeString(n.IsDir, n.Mode), acl)
}

// Has reports whether the principal has access a on n: by its ACL when
// it has access entries, else by mode bits.
func (c Checker) Has(n *Inode, a Access) bool {
	if !c.Enabled || c.P.Superuser {
		return true
	}
	if n.hasAccessACL() {
		return c.checkACLAccess(n, a)
	}
	var bits uint16
	switch {
	case n.Owner == c.P.User:
		bits = n.Mode >> 6
	case c.P.InGroup(n.Group):
		bits = n.Mode >> 3
	default:
		bits = n.Mode
	}
	return Access(bits&7)&a == a
}

// Check returns an AccessControlException unless the principal has access
// a on n.
func (c Checker) Check(n *Inode, a Access) error {
	if c.Has(n, a) {
		return nil
	}
	return c.denied(n, a)
}

// Traverse checks EXECUTE on every existing ancestor directory of the
// path's target (not on the target itself).
func (c Checker) Traverse(r *Resolved) error {
	last := len(r.Inodes) - 1
	if r.Exists() {
		last-- // the target
	}
	for i := 0; i <= last; i++ {
		if n := r.Inodes[i]; n.IsDir {
			if err := c.Check(n, AccessExecute); err != nil {
				return err
			}
		}
	}
	return nil
}

// Subtree checks a on every directory at or below n (Hadoop's subAccess),
// skipping empty directories when ignoreEmpty.
func (c Checker) Subtree(n *Inode, a Access, ignoreEmpty bool) error {
	if !c.Enabled || c.P.Superuser || !n.IsDir {
		return nil
	}
	if !(ignoreEmpty && len(n.Children) == 0) {
		if err := c.Check(n, a); err != nil {
			return err
		}
	}
	for _, ch := range n.Children {
		if err := c.Subtree(ch, a, ignoreEmpty); err != nil {
			return err
		}
	}
	return nil
}

// Sticky checks the Sticky bit of parent: with it set, only the owner of
// the child or of the parent (or the superuser) may remove or rename it.
func (c Checker) Sticky(parent, child *Inode) error {
	if !c.Enabled || c.P.Superuser || parent.Mode&0o1000 == 0 {
		return nil
	}
	if parent.Owner == c.P.User || child.Owner == c.P.User {
		return nil
	}
	return ipc.Errorf(ipc.ClassAccessControl, "Permission denied by sticky bit: user=%s, path=%q:%s:%s:%s, parent=%q:%s:%s:%s",
		c.P.User, child.Path(), child.Owner, child.Group, ModeString(child.IsDir, child.Mode),
		parent.Path(), parent.Owner, parent.Group, ModeString(true, parent.Mode))
}

// Owner checks that the principal owns n (or is the superuser).
func (c Checker) Owner(n *Inode) error {
	if !c.Enabled || c.P.Superuser || n.Owner == c.P.User {
		return nil
	}
	return ipc.Errorf(ipc.ClassAccessControl, "Permission denied. user=%s is not the owner of inode=%s", c.P.User, n.Path())
}

// Superuser returns an AccessControlException unless the principal is a
// superuser; op names the operation in the message.
func (c Checker) Superuser(op string) error {
	if c.P.Superuser {
		return nil
	}
	return ipc.Errorf(ipc.ClassAccessControl, "Access denied for user %s. Superuser privilege is required%s", c.P.User, opSuffix(op))
}

func opSuffix(op string) string {
	if op == "" {
		return ""
	}
	return fmt.Sprintf(" (%s)", op)
}
