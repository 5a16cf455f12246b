package namenode

import (
	"fmt"
	"os/user"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/ipc"
)

// Access bits, as Hadoop's FsAction.
type access uint16

const (
	accessExecute access = 1
	accessWrite   access = 2
	accessRead    access = 4
	accessAll            = accessRead | accessWrite | accessExecute
	accessRX             = accessRead | accessExecute
	accessWX             = accessWrite | accessExecute
)

func (a access) String() string {
	switch a {
	case accessRead:
		return "READ"
	case accessWrite:
		return "WRITE"
	case accessExecute:
		return "EXECUTE"
	case accessRX:
		return "READ_EXECUTE"
	case accessWX:
		return "WRITE_EXECUTE"
	case accessAll:
		return "ALL"
	case accessRead | accessWrite:
		return "READ_WRITE"
	}
	return "NONE"
}

// modeString renders mode as ls does: drwxr-xr-x, with t/T for sticky.
func modeString(dir bool, mode uint16) string {
	b := []byte("----------")
	if dir {
		b[0] = 'd'
	}
	const rwx = "rwxrwxrwx"
	for i := 0; i < 9; i++ {
		if mode&(1<<uint(8-i)) != 0 {
			b[i+1] = rwx[i]
		}
	}
	if mode&0o1000 != 0 {
		if b[9] == 'x' {
			b[9] = 't'
		} else {
			b[9] = 'T'
		}
	}
	return string(b)
}

// groupCache maps user names to their groups from the NameNode host's user
// database, as Hadoop's shell-based group mapping does, caching for a while.
type groupCache struct {
	ttl    time.Duration
	lookup func(user string) []string
	mu     sync.Mutex
	m      map[string]groupEntry
}

type groupEntry struct {
	groups []string
	at     time.Time
}

func newGroupCache(ttl time.Duration) *groupCache {
	return &groupCache{ttl: ttl, lookup: osGroups, m: map[string]groupEntry{}}
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

func (g *groupCache) groups(name string) []string {
	g.mu.Lock()
	e, ok := g.m[name]
	g.mu.Unlock()
	if ok && time.Since(e.at) < g.ttl {
		return e.groups
	}
	groups := g.lookup(name)
	g.mu.Lock()
	g.m[name] = groupEntry{groups: groups, at: time.Now()}
	g.mu.Unlock()
	return groups
}

// principal is the caller of an operation, with its groups resolved.
type principal struct {
	user      string
	groups    []string
	superuser bool
}

func (p *principal) inGroup(g string) bool {
	for _, x := range p.groups {
		if x == g {
			return true
		}
	}
	return false
}

// permCheck is FSPermissionChecker: what a principal may do to inodes.
// With permissions disabled, everything but the superuser-only operations
// is allowed (as in HDFS).
type permCheck struct {
	p       *principal
	enabled bool
}

func (c permCheck) denied(n *inode, a access) error {
	return ipc.Errorf(ipc.ClassAccessControl, "Permission denied: user=%s, access=%s, inode=%q:%s:%s:%s",
		c.p.user, a, n.path(), n.owner, n.group, modeString(n.isDir, n.mode))
}

// has reports whether the principal has access a on n by mode bits.
func (c permCheck) has(n *inode, a access) bool {
	if !c.enabled || c.p.superuser {
		return true
	}
	var bits uint16
	switch {
	case n.owner == c.p.user:
		bits = n.mode >> 6
	case c.p.inGroup(n.group):
		bits = n.mode >> 3
	default:
		bits = n.mode
	}
	return access(bits&7)&a == a
}

func (c permCheck) check(n *inode, a access) error {
	if c.has(n, a) {
		return nil
	}
	return c.denied(n, a)
}

// traverse checks EXECUTE on every existing ancestor directory of the
// path's target (not on the target itself).
func (c permCheck) traverse(r *resolved) error {
	last := len(r.inodes) - 1
	if r.exists() {
		last-- // the target
	}
	for i := 0; i <= last; i++ {
		if n := r.inodes[i]; n.isDir {
			if err := c.check(n, accessExecute); err != nil {
				return err
			}
		}
	}
	return nil
}

// subtree checks a on every directory at or below n (Hadoop's subAccess),
// skipping empty directories when ignoreEmpty.
func (c permCheck) subtree(n *inode, a access, ignoreEmpty bool) error {
	if !c.enabled || c.p.superuser || !n.isDir {
		return nil
	}
	if !(ignoreEmpty && len(n.children) == 0) {
		if err := c.check(n, a); err != nil {
			return err
		}
	}
	for _, ch := range n.children {
		if err := c.subtree(ch, a, ignoreEmpty); err != nil {
			return err
		}
	}
	return nil
}

// sticky checks the sticky bit of parent: with it set, only the owner of
// the child or of the parent (or the superuser) may remove or rename it.
func (c permCheck) sticky(parent, child *inode) error {
	if !c.enabled || c.p.superuser || parent.mode&0o1000 == 0 {
		return nil
	}
	if parent.owner == c.p.user || child.owner == c.p.user {
		return nil
	}
	return ipc.Errorf(ipc.ClassAccessControl, "Permission denied by sticky bit: user=%s, path=%q:%s:%s:%s, parent=%q:%s:%s:%s",
		c.p.user, child.path(), child.owner, child.group, modeString(child.isDir, child.mode),
		parent.path(), parent.owner, parent.group, modeString(true, parent.mode))
}

// owner checks that the principal owns n (or is the superuser).
func (c permCheck) owner(n *inode) error {
	if !c.enabled || c.p.superuser || n.owner == c.p.user {
		return nil
	}
	return ipc.Errorf(ipc.ClassAccessControl, "Permission denied. user=%s is not the owner of inode=%s", c.p.user, n.path())
}

func (c permCheck) superuser(op string) error {
	if c.p.superuser {
		return nil
	}
	return ipc.Errorf(ipc.ClassAccessControl, "Access denied for user %s. Superuser privilege is required%s", c.p.user, opSuffix(op))
}

func opSuffix(op string) string {
	if op == "" {
		return ""
	}
	return fmt.Sprintf(" (%s)", op)
}
