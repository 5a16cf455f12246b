package nfsgw

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"
)

// Exports is the gateway's host allowlist, nfs.exports.allowed.hosts as
// Hadoop's NFS gateway reads it: entries separated by ';', each a host
// pattern and an optional access mode, "rw" or "ro" (the default):
//
//   - every host
//     192.168.0.0/22       a CIDR block
//     10.1.2.3             one address
//     host.example.com     one name, as the client's address resolves
//     .*\.example\.com     any other entry is a regular expression on the
//     client's address and, when it has one, its name
//
// The first entry that matches decides. A host that none matches may not
// connect; a read-only host's mutating calls get NFS3ERR_ACCES.
type Exports struct {
	entries []exportEntry
}

type exportEntry struct {
	all    bool
	prefix netip.Prefix
	name   string
	re     *regexp.Regexp
	rw     bool
}

// DefaultExports is Hadoop's default, "* rw": every host may read and write.
const DefaultExports = "* rw"

// ParseExports parses an nfs.exports.allowed.hosts value.
func ParseExports(s string) (*Exports, error) {
	e := &Exports{}
	for _, item := range strings.Split(s, ";") {
		f := strings.Fields(item)
		if len(f) == 0 {
			continue
		}
		if len(f) > 2 {
			return nil, fmt.Errorf("nfsgw: nfs.exports.allowed.hosts: %q: want HOST [rw|ro]", strings.TrimSpace(item))
		}
		var ent exportEntry
		if len(f) == 2 {
			switch strings.ToLower(f[1]) {
			case "rw":
				ent.rw = true
			case "ro":
			default:
				return nil, fmt.Errorf("nfsgw: nfs.exports.allowed.hosts: %q: access must be rw or ro", f[1])
			}
		}
		host := f[0]
		switch {
		case host == "*":
			ent.all = true
		case strings.Contains(host, "/"):
			p, err := netip.ParsePrefix(host)
			if err != nil {
				return nil, fmt.Errorf("nfsgw: nfs.exports.allowed.hosts: %q: %v", host, err)
			}
			ent.prefix = p.Masked()
		default:
			if a, err := netip.ParseAddr(host); err == nil {
				ent.prefix = netip.PrefixFrom(a, a.BitLen())
			} else if isPlainName(host) {
				ent.name = strings.ToLower(host)
			} else {
				re, err := regexp.Compile("^(?:" + host + ")$")
				if err != nil {
					return nil, fmt.Errorf("nfsgw: nfs.exports.allowed.hosts: %q: %v", host, err)
				}
				ent.re = re
			}
		}
		e.entries = append(e.entries, ent)
	}
	if len(e.entries) == 0 {
		return nil, fmt.Errorf("nfsgw: nfs.exports.allowed.hosts is empty: no host could mount")
	}
	return e, nil
}

func isPlainName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// Access reports whether the host at addr may connect, and whether it may
// write. lookup resolves an address to names (nil: net.LookupAddr); it is
// asked only when a name or pattern entry is reached.
func (e *Exports) Access(addr netip.Addr, lookup func(string) ([]string, error)) (allowed, rw bool) {
	addr = addr.Unmap()
	var names []string
	resolved := false
	for _, ent := range e.entries {
		switch {
		case ent.all:
			return true, ent.rw
		case ent.prefix.IsValid():
			if ent.prefix.Contains(addr) {
				return true, ent.rw
			}
			continue
		}
		if !resolved {
			resolved = true
			if lookup == nil {
				lookup = net.LookupAddr
			}
			names, _ = lookup(addr.String())
		}
		for _, n := range append([]string{addr.String()}, names...) {
			n = strings.ToLower(strings.TrimSuffix(n, "."))
			if ent.name != "" && n == ent.name || ent.re != nil && ent.re.MatchString(n) {
				return true, ent.rw
			}
		}
	}
	return false, false
}

// NFSv3 procedures that change the file system, and the size of the
// wcc_data/post_op_attr fields that follow the status in their error
// replies (RFC 1813): a read-only host gets NFS3ERR_ACCES for these.
var mutatingProcs = map[uint32]int{
	2:  8,  // SETATTR: wcc_data
	7:  8,  // WRITE: wcc_data
	8:  8,  // CREATE: dir_wcc
	9:  8,  // MKDIR: dir_wcc
	10: 8,  // SYMLINK: dir_wcc
	11: 8,  // MKNOD: dir_wcc
	12: 8,  // REMOVE: dir_wcc
	13: 8,  // RMDIR: dir_wcc
	14: 16, // RENAME: fromdir_wcc, todir_wcc
	15: 12, // LINK: file_attributes, linkdir_wcc
	21: 8,  // COMMIT: file_wcc
}

// accessDenied is the reply body of a refused mutating call: NFS3ERR_ACCES
// and empty (FALSE) attribute fields.
func accessDenied(proc uint32) []byte {
	b := make([]byte, 4+mutatingProcs[proc])
	binary.BigEndian.PutUint32(b, 13) // NFS3ERR_ACCES
	return b
}

// refuseReadOnly consumes a mutating call's record from a read-only host
// and answers NFS3ERR_ACCES.
func (f *front) refuseReadOnly(h callHeader, n int) error {
	if _, err := f.br.Discard(4 + n); err != nil {
		return err
	}
	f.g.log.Info("nfs3: refused a change from a read-only host", "remote", f.nc.RemoteAddr(), "proc", h.proc, "user", h.cred.user)
	f.reply(h.xid, accessDenied(h.proc))
	return nil
}
