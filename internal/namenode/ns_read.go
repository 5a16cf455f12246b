package namenode

import (
	"context"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/storage"
)

// FileInfo returns the status of p, or nil when it does not exist.
func (s *Namesystem) FileInfo(ctx context.Context, p string) (*FileStatus, error) {
	if err := s.checkPath(p); err != nil {
		return nil, err
	}
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.tree.Resolve(p)
	if err := pc.Traverse(r); err != nil {
		return nil, err
	}
	n := r.Target()
	if n == nil {
		return nil, nil
	}
	st := s.status(n)
	return &st, nil
}

// Listing is one page of a directory listing.
type Listing struct {
	Entries   []FileStatus
	Remaining int
}

// List returns up to listLimit entries of directory p whose names sort
// after startAfter. A file lists as itself. A missing path returns nil.
func (s *Namesystem) List(ctx context.Context, p string, startAfter string) (*Listing, error) {
	if err := s.checkPath(p); err != nil {
		return nil, err
	}
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.tree.Resolve(p)
	if err := pc.Traverse(r); err != nil {
		return nil, err
	}
	n := r.Target()
	if n == nil {
		return nil, nil
	}
	if !n.IsDir {
		// A file lists as itself, with an empty name (HDFS's EMPTY_NAME):
		// the caller already has its path.
		st := s.status(n)
		st.Name = ""
		return &Listing{Entries: []FileStatus{st}}, nil
	}
	if err := pc.Check(n, namespace.AccessRX); err != nil {
		return nil, err
	}
	i, found := n.ChildIndex(startAfter)
	if found {
		i++
	}
	end := min(len(n.Children), i+s.cfg.listLimit)
	l := &Listing{Remaining: len(n.Children) - end}
	for _, c := range n.Children[i:end] {
		l.Entries = append(l.Entries, s.status(c))
	}
	return l, nil
}

// StoragePolicy returns the effective policy of p: its own, else the
// nearest ancestor's, else the default (HOT).
func (s *Namesystem) StoragePolicy(ctx context.Context, p string) (storage.Policy, error) {
	if err := s.checkPath(p); err != nil {
		return storage.Policy{}, err
	}
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.tree.Resolve(p)
	if err := pc.Traverse(r); err != nil {
		return storage.Policy{}, err
	}
	n := r.Target()
	if n == nil {
		return storage.Policy{}, notFound(p)
	}
	return n.EffectivePolicy(), nil
}

// Summary is a ContentSummary.
type Summary struct {
	Length, Files, Dirs, SpaceConsumed int64
}

// ContentSummary counts everything under p.
func (s *Namesystem) ContentSummary(ctx context.Context, p string) (Summary, error) {
	if err := s.checkPath(p); err != nil {
		return Summary{}, err
	}
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.tree.Resolve(p)
	if err := pc.Traverse(r); err != nil {
		return Summary{}, err
	}
	n := r.Target()
	if n == nil {
		return Summary{}, ipc.Errorf(ipc.ClassFileNotFound, "File does not exist: %s", p)
	}
	if err := pc.Subtree(n, namespace.AccessRX, false); err != nil {
		return Summary{}, err
	}
	var sum Summary
	var walk func(*namespace.Inode)
	walk = func(x *namespace.Inode) {
		if x.IsDir {
			sum.Dirs++
			for _, c := range x.Children {
				walk(c)
			}
			return
		}
		sum.Files++
		l := x.Length()
		sum.Length += l
		// As quota usage counts it (an open file's last block in full),
		// so that -count -q and -count -u agree, as in Hadoop.
		sum.SpaceConsumed += namespace.FileSpace(x)
	}
	walk(n)
	return sum, nil
}

// Counts returns the number of files and directories.
func (s *Namesystem) Counts() (files, dirs int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tree.Counts()
}

// FileStatus is what getFileInfo and getListing report for an inode.
type FileStatus struct {
	Name          string
	IsDir         bool
	Length        int64
	Mode          uint16
	Owner, Group  string
	Mtime, Atime  int64
	Replication   uint16
	BlockSize     uint64
	FileID        uint64
	Children      int
	StoragePolicy uint8
	HasACL        bool // the inode has an extended ACL (ls's '+')
	// SnapshotEnabled: a snapshottable directory (HDFS's SNAPSHOT_ENABLED
	// flag).
	SnapshotEnabled bool
}

func (s *Namesystem) status(n *namespace.Inode) FileStatus {
	st := FileStatus{
		Name: n.Name, IsDir: n.IsDir, Mode: n.Mode, Owner: n.Owner, Group: n.Group,
		Mtime: n.Mtime, Atime: n.Atime, FileID: n.ID, StoragePolicy: n.StoragePolicy, Children: -1,
		HasACL: n.HasACL(),
	}
	if n.IsDir {
		st.Children = len(n.Children)
		st.SnapshotEnabled = n.Snap() != nil
	} else {
		st.Length = n.Length()
		st.Replication = n.Replication()
		st.BlockSize = n.BlockSize()
	}
	return st
}

// CheckAccess returns an AccessControlException unless the caller has
// access a to p.
func (s *Namesystem) CheckAccess(ctx context.Context, p string, a namespace.Access) error {
	if err := s.checkPath(p); err != nil {
		return err
	}
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.tree.Resolve(p)
	if err := pc.Traverse(r); err != nil {
		return err
	}
	n := r.Target()
	if n == nil {
		return notFound(p)
	}
	return pc.Check(n, a&namespace.AccessAll)
}
