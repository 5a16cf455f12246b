package namenode

import (
	"sort"
	"time"
)

// leaseManager tracks which client writes which files. A client renews all
// its leases at once; past the soft limit another client may take a file
// over, past the hard limit the NameNode closes the files itself. Guarded
// by the Namesystem's lock.
type leaseManager struct {
	leases map[string]*lease
}

type lease struct {
	holder  string
	renewed time.Time
	paths   map[string]struct{}
}

func newLeaseManager() *leaseManager { return &leaseManager{leases: map[string]*lease{}} }

func (m *leaseManager) add(holder, p string, now time.Time) {
	l := m.leases[holder]
	if l == nil {
		l = &lease{holder: holder, paths: map[string]struct{}{}}
		m.leases[holder] = l
	}
	l.renewed = now
	l.paths[p] = struct{}{}
}

func (m *leaseManager) remove(holder, p string) {
	if l := m.leases[holder]; l != nil {
		delete(l.paths, p)
		if len(l.paths) == 0 {
			delete(m.leases, holder)
		}
	}
}

func (m *leaseManager) drop(holder string) { delete(m.leases, holder) }

// renamed records that an open file moved from oldPath to newPath.
func (m *leaseManager) renamed(holder, oldPath, newPath string) {
	if l := m.leases[holder]; l != nil {
		delete(l.paths, oldPath)
		l.paths[newPath] = struct{}{}
	}
}

func (m *leaseManager) renew(holder string, now time.Time) {
	if l := m.leases[holder]; l != nil {
		l.renewed = now
	}
}

func (m *leaseManager) count(holder string) int {
	if l := m.leases[holder]; l != nil {
		return len(l.paths)
	}
	return 0
}

// softExpired reports whether holder's lease is past the soft limit (or
// unknown, e.g. after a NameNode restart with no renewal since).
func (m *leaseManager) softExpired(holder string, now time.Time, limit time.Duration) bool {
	l := m.leases[holder]
	return l == nil || now.Sub(l.renewed) > limit
}

type expiredLease struct {
	holder string
	paths  []string
}

func (m *leaseManager) expired(now time.Time, limit time.Duration) []expiredLease {
	var out []expiredLease
	for _, l := range m.leases {
		if now.Sub(l.renewed) > limit {
			e := expiredLease{holder: l.holder}
			for p := range l.paths {
				e.paths = append(e.paths, p)
			}
			sort.Strings(e.paths)
			out = append(out, e)
		}
	}
	return out
}
