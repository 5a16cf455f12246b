package namespace

import (
	"sort"
	"time"
)

// LeaseManager tracks which client writes which files. A client renews all
// its leases at once; past the soft limit another client may take a file
// over, past the hard limit the NameNode closes the files itself. Guarded
// by the Namesystem's lock.
type LeaseManager struct {
	leases map[string]*lease
}

type lease struct {
	holder  string
	renewed time.Time
	paths   map[string]struct{}
}

// NewLeaseManager returns an empty lease table.
func NewLeaseManager() *LeaseManager { return &LeaseManager{leases: map[string]*lease{}} }

// Add gives holder the lease on p and renews its lease at now.
func (m *LeaseManager) Add(holder, p string, now time.Time) {
	l := m.leases[holder]
	if l == nil {
		l = &lease{holder: holder, paths: map[string]struct{}{}}
		m.leases[holder] = l
	}
	l.renewed = now
	l.paths[p] = struct{}{}
}

// Remove drops p from holder's lease, and the lease once it holds no path.
func (m *LeaseManager) Remove(holder, p string) {
	if l := m.leases[holder]; l != nil {
		delete(l.paths, p)
		if len(l.paths) == 0 {
			delete(m.leases, holder)
		}
	}
}

// Drop forgets holder's lease and every path in it.
func (m *LeaseManager) Drop(holder string) { delete(m.leases, holder) }

// Renamed records that an open file moved from oldPath to newPath.
func (m *LeaseManager) Renamed(holder, oldPath, newPath string) {
	if l := m.leases[holder]; l != nil {
		delete(l.paths, oldPath)
		l.paths[newPath] = struct{}{}
	}
}

// Renew renews holder's lease at now (a no-op for an unknown holder).
func (m *LeaseManager) Renew(holder string, now time.Time) {
	if l := m.leases[holder]; l != nil {
		l.renewed = now
	}
}

// Count is the number of files holder has open.
func (m *LeaseManager) Count(holder string) int {
	if l := m.leases[holder]; l != nil {
		return len(l.paths)
	}
	return 0
}

// SoftExpired reports whether holder's lease is past the soft limit (or
// unknown, e.g. after a NameNode restart with no renewal since).
func (m *LeaseManager) SoftExpired(holder string, now time.Time, limit time.Duration) bool {
	l := m.leases[holder]
	return l == nil || now.Sub(l.renewed) > limit
}

// ExpiredLease is a lease past its limit with the paths it holds, sorted.
type ExpiredLease struct {
	Holder string
	Paths  []string
}

// Expired returns the leases not renewed within limit before now.
func (m *LeaseManager) Expired(now time.Time, limit time.Duration) []ExpiredLease {
	var out []ExpiredLease
	for _, l := range m.leases {
		if now.Sub(l.renewed) > limit {
			e := ExpiredLease{Holder: l.holder}
			for p := range l.paths {
				e.Paths = append(e.Paths, p)
			}
			sort.Strings(e.Paths)
			out = append(out, e)
		}
	}
	return out
}

// RemovePath drops p from whichever lease holds it.
func (m *LeaseManager) RemovePath(p string) {
	for holder, l := range m.leases {
		if _, ok := l.paths[p]; ok {
			m.Remove(holder, p)
		}
	}
}
