package nfsgw

import (
	"crypto/sha256"
	"encoding/binary"
	"io/fs"
	"sync"
	"time"
)

// Directory listings. A client reads a large directory in many READDIR
// or READDIRPLUS calls, each resuming at a cookie; go-nfs lists the whole
// directory for every call unless the handler keeps the listing under its
// cookie verifier. The gateway keeps recent listings per user for
// listingTTL, so reading a directory of n entries costs one listing, not
// one per page.

const (
	listingTTL  = 10 * time.Second
	maxListings = 64
)

type listingKey struct {
	user     string
	verifier uint64
}

type listing struct {
	path    string
	entries []fs.FileInfo
	at      time.Time
}

type listings struct {
	mu sync.Mutex
	m  map[listingKey]listing
}

func newListings() *listings { return &listings{m: map[listingKey]listing{}} }

// VerifierFor implements nfs.CachingHandler: a hash of the path and the
// names, remembered with the listing.
func (h *connHandler) VerifierFor(path string, contents []fs.FileInfo) uint64 {
	sum := sha256.New()
	sum.Write([]byte(path))
	for _, c := range contents {
		sum.Write([]byte{0})
		sum.Write([]byte(c.Name()))
	}
	v := binary.BigEndian.Uint64(sum.Sum(nil))
	if v == 0 {
		v = 1 // 0 means "no verifier"
	}
	ls := h.g.listings
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if len(ls.m) >= maxListings {
		for k, l := range ls.m {
			if time.Since(l.at) > listingTTL || len(ls.m) >= maxListings {
				delete(ls.m, k)
			}
		}
	}
	ls.m[listingKey{h.f.user(), v}] = listing{path: path, entries: contents, at: time.Now()}
	return v
}

// DataForVerifier implements nfs.CachingHandler: the listing a READDIR
// continues, if this user made it recently; nil otherwise.
func (h *connHandler) DataForVerifier(path string, verifier uint64) []fs.FileInfo {
	ls := h.g.listings
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l, ok := ls.m[listingKey{h.f.user(), verifier}]
	if !ok || l.path != path || time.Since(l.at) > listingTTL {
		return nil
	}
	return l.entries
}
