package nfsgw

import (
	"os/user"
	"strconv"
	"sync"
)

// nobody is the user (and the numeric id) for credentials and names the
// system does not know, as Hadoop's gateway maps them.
const (
	nobody   = "nobody"
	nobodyID = 65534
)

// IDMapper maps NFS's numeric user and group ids to HDFS's names and back.
// The default uses the gateway host's user database (os/user).
type IDMapper interface {
	// UserName returns the name of uid, "" if unknown.
	UserName(uid uint32) string
	// GroupName returns the name of gid, "" if unknown.
	GroupName(gid uint32) string
	// UID and GID return the id of a name; ok is false if unknown.
	UID(name string) (uint32, bool)
	GID(name string) (uint32, bool)
}

// SystemIDs is the IDMapper over the host's user database.
type SystemIDs struct{}

func (SystemIDs) UserName(uid uint32) string {
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		return u.Username
	}
	return ""
}

func (SystemIDs) GroupName(gid uint32) string {
	if g, err := user.LookupGroupId(strconv.FormatUint(uint64(gid), 10)); err == nil {
		return g.Name
	}
	return ""
}

func (SystemIDs) UID(name string) (uint32, bool) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, false
	}
	id, err := strconv.ParseUint(u.Uid, 10, 32)
	return uint32(id), err == nil
}

func (SystemIDs) GID(name string) (uint32, bool) {
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, false
	}
	id, err := strconv.ParseUint(g.Gid, 10, 32)
	return uint32(id), err == nil
}

// idCache memoises an IDMapper; the user database changes rarely and
// every attribute reply needs two lookups. Bounded by maxCachedIDs per map.
type idCache struct {
	m IDMapper

	mu                sync.Mutex
	users, groups     map[uint32]string
	userIDs, groupIDs map[string]uint32
}

const maxCachedIDs = 4096

func newIDCache(m IDMapper) *idCache {
	return &idCache{m: m, users: map[uint32]string{}, groups: map[uint32]string{},
		userIDs: map[string]uint32{}, groupIDs: map[string]uint32{}}
}

func cached[K comparable, V any](c *idCache, m map[K]V, k K, look func(K) V) V {
	c.mu.Lock()
	v, ok := m[k]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = look(k)
	c.mu.Lock()
	if len(m) >= maxCachedIDs {
		clear(m)
	}
	m[k] = v
	c.mu.Unlock()
	return v
}

// actingUser is the HDFS user a request's uid acts as: its name, or
// nobody when the gateway host does not know it.
func (c *idCache) actingUser(uid uint32) string {
	if n := c.userName(uid); n != "" {
		return n
	}
	return nobody
}

func (c *idCache) userName(uid uint32) string  { return cached(c, c.users, uid, c.m.UserName) }
func (c *idCache) groupName(gid uint32) string { return cached(c, c.groups, gid, c.m.GroupName) }

func (c *idCache) uidOf(name string) uint32 {
	return cached(c, c.userIDs, name, func(n string) uint32 {
		if id, ok := c.m.UID(n); ok {
			return id
		}
		return nobodyID
	})
}

func (c *idCache) gidOf(name string) uint32 {
	return cached(c, c.groupIDs, name, func(n string) uint32 {
		if id, ok := c.m.GID(n); ok {
			return id
		}
		return nobodyID
	})
}
