package namenode

import (
	"context"
	"path"
	"strings"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/storage"
)

// Delete removes p. A missing path returns false, not an error.
func (s *Namesystem) Delete(ctx context.Context, p string, recursive bool) (bool, error) {
	if err := s.checkPath(p); err != nil {
		return false, err
	}
	pc := s.checker(ctx)
	deleted := false
	var removed []string
	err := s.mutate(ctx, func() ([]namespace.Edit, error) {
		r := s.tree.Resolve(p)
		if err := pc.Traverse(r); err != nil {
			return nil, err
		}
		n := r.Target()
		if n == nil || n.Parent == nil { // missing, or the root
			return nil, nil
		}
		if n.IsDir && len(n.Children) > 0 && !recursive {
			return nil, ipc.Errorf(ipc.ClassPathIsNotEmptyDir, "`%s is non empty': Directory is not empty", p)
		}
		if err := pc.Check(n.Parent, namespace.AccessWX); err != nil {
			return nil, err
		}
		if err := pc.Sticky(n.Parent, n); err != nil {
			return nil, err
		}
		if err := pc.Subtree(n, namespace.AccessAll, true); err != nil {
			return nil, err
		}
		if err := s.checkNoSnapshots(n); err != nil {
			return nil, err
		}
		removed = s.openFilesUnder(n)
		deleted = true
		return []namespace.Edit{namespace.Delete(p, s.nowMillis())}, nil
	})
	if err == nil && len(removed) > 0 {
		s.mu.Lock()
		for _, h := range removed {
			parts := strings.SplitN(h, "\x00", 2)
			s.leases.Remove(parts[0], parts[1])
		}
		s.mu.Unlock()
	}
	return deleted, err
}

// openFilesUnder lists "holder\x00path" of files being written under n.
func (s *Namesystem) openFilesUnder(n *namespace.Inode) []string {
	var out []string
	var walk func(*namespace.Inode)
	walk = func(x *namespace.Inode) {
		if x.UC() != nil {
			out = append(out, x.UC().ClientName+"\x00"+x.Path())
		}
		for _, c := range x.Children {
			walk(c)
		}
	}
	walk(n)
	return out
}

// Rename moves src to dst. With legacy set it follows the old rename's
// rules (dst an existing directory: move into it; failures return false);
// otherwise rename2's (dst is the exact new name; overwrite replaces a file
// or empty directory; failures are errors).
func (s *Namesystem) Rename(ctx context.Context, src, dst string, legacy, overwrite bool) (bool, error) {
	for _, p := range []string{src, dst} {
		if err := s.checkPath(p); err != nil {
			return false, err
		}
	}
	pc := s.checker(ctx)
	ok := false
	var moved []string
	var target string
	err := s.mutate(ctx, func() ([]namespace.Edit, error) {
		rs := s.tree.Resolve(src)
		if err := pc.Traverse(rs); err != nil {
			return nil, err
		}
		sn := rs.Target()
		if sn == nil {
			if legacy {
				return nil, nil
			}
			return nil, ipc.Errorf(ipc.ClassFileNotFound, "rename source %s is not found.", src)
		}
		if sn.Parent == nil {
			if legacy {
				return nil, nil
			}
			return nil, ipc.Errorf(ipc.ClassIOException, "rename source cannot be the root")
		}
		target = dst
		rd := s.tree.Resolve(target)
		if legacy {
			if dn := rd.Target(); dn != nil && dn.IsDir && dn != sn {
				target = path.Join(dst, sn.Name)
				rd = s.tree.Resolve(target)
			}
		}
		if err := pc.Traverse(rd); err != nil {
			return nil, err
		}
		if src == target {
			if legacy {
				ok = true // renaming a file to itself succeeds
				return nil, nil
			}
			return nil, ipc.Errorf(ipc.ClassFileAlreadyExists, "The source %s and destination %s are the same", src, target)
		}
		if strings.HasPrefix(target, src+"/") {
			if legacy {
				return nil, nil
			}
			return nil, ipc.Errorf(ipc.ClassIOException, "Cannot rename %s to its subdirectory %s", src, target)
		}
		dn := rd.Target()
		replaced := false
		if dn != nil {
			if legacy || !overwrite {
				if legacy {
					return nil, nil
				}
				return nil, ipc.Errorf(ipc.ClassFileAlreadyExists, "rename destination %s already exists", target)
			}
			if dn.IsDir != sn.IsDir {
				kind := "a directory"
				if !dn.IsDir {
					kind = "a file"
				}
				return nil, ipc.Errorf(ipc.ClassIOException, "Source %s and destination %s must both be directories or files (destination is %s)", src, target, kind)
			}
			if dn.IsDir && len(dn.Children) > 0 {
				return nil, ipc.Errorf(ipc.ClassIOException, "rename destination directory is not empty: %s", target)
			}
			if err := pc.Sticky(dn.Parent, dn); err != nil {
				return nil, err
			}
			replaced = true
		}
		dparent := rd.Parent()
		if dparent == nil && !replaced {
			if legacy {
				return nil, nil
			}
			if !rd.LastExisting().IsDir {
				return nil, ipc.Errorf(ipc.ClassParentNotDirectory, "rename destination parent %s is a file.", rd.LastExisting().Path())
			}
			return nil, ipc.Errorf(ipc.ClassFileNotFound, "rename destination parent %s not found.", path.Dir(target))
		}
		if replaced {
			dparent = dn.Parent
		}
		if !dparent.IsDir {
			if legacy {
				return nil, nil
			}
			return nil, ipc.Errorf(ipc.ClassParentNotDirectory, "rename destination parent %s is a file.", dparent.Path())
		}
		if err := pc.Check(sn.Parent, namespace.AccessWX); err != nil {
			return nil, err
		}
		if err := pc.Sticky(sn.Parent, sn); err != nil {
			return nil, err
		}
		if err := pc.Check(dparent, namespace.AccessWX); err != nil {
			return nil, err
		}
		if !replaced && dparent != sn.Parent {
			if err := s.checkDirItems(dparent); err != nil {
				return nil, err
			}
		}
		var replacedInode *namespace.Inode
		if replaced {
			replacedInode = dn
		}
		// Hadoop's old rename throws quota errors too, not false.
		if err := s.checkRenameQuota(sn, dparent, replacedInode); err != nil {
			return nil, err
		}
		if err := s.checkNoSnapshots(sn); err != nil {
			return nil, err
		}
		if err := s.checkNestedSnapshottable(src, sn, dparent); err != nil {
			return nil, err
		}
		if replaced {
			if err := s.checkNoSnapshots(dn); err != nil {
				return nil, err
			}
		}
		moved = s.openFilesUnder(sn)
		ok = true
		return []namespace.Edit{namespace.Rename(src, target, s.nowMillis(), replaced)}, nil
	})
	if err == nil && len(moved) > 0 {
		s.mu.Lock()
		for _, h := range moved {
			parts := strings.SplitN(h, "\x00", 2)
			s.leases.Renamed(parts[0], parts[1], target+strings.TrimPrefix(parts[1], src))
		}
		s.mu.Unlock()
	}
	return ok, err
}

// setAttr runs a single-inode attribute change: resolve, traverse, check,
// then log the op that build returns.
func (s *Namesystem) setAttr(ctx context.Context, p string, check func(pc namespace.Checker, n *namespace.Inode) error, build func(n *namespace.Inode) (namespace.Edit, bool)) error {
	if err := s.checkPath(p); err != nil {
		return err
	}
	pc := s.checker(ctx)
	return s.mutate(ctx, func() ([]namespace.Edit, error) {
		n, err := s.resolveTarget(pc, p)
		if err != nil {
			return nil, err
		}
		if err := check(pc, n); err != nil {
			return nil, err
		}
		op, ok := build(n)
		if !ok {
			return nil, nil
		}
		return []namespace.Edit{op}, nil
	})
}

// SetPermission sets p's mode bits (0o7777).
func (s *Namesystem) SetPermission(ctx context.Context, p string, mode uint16) error {
	return s.setAttr(ctx, p, namespace.Checker.Owner, func(n *namespace.Inode) (namespace.Edit, bool) {
		return namespace.SetPermission(p, mode), true
	})
}

// SetOwner changes owner and/or group ("" leaves one unchanged). Only the
// superuser may change the owner; an owner may change the group to one of
// their own groups.
func (s *Namesystem) SetOwner(ctx context.Context, p, owner, group string) error {
	if owner == "" && group == "" {
		return ipc.Errorf(ipc.ClassIllegalArgument, "Both owner and group are empty: %s", p)
	}
	check := func(pc namespace.Checker, n *namespace.Inode) error {
		if err := pc.Owner(n); err != nil {
			return err
		}
		if !pc.Enabled || pc.P.Superuser {
			return nil
		}
		if owner != "" && owner != n.Owner {
			return ipc.Errorf(ipc.ClassAccessControl, "User %s is not a super user (non-super user cannot change owner).", pc.P.User)
		}
		if group != "" && !pc.P.InGroup(group) {
			return ipc.Errorf(ipc.ClassAccessControl, "User %s does not belong to %s", pc.P.User, group)
		}
		return nil
	}
	return s.setAttr(ctx, p, check, func(n *namespace.Inode) (namespace.Edit, bool) {
		return namespace.SetOwner(p, owner, group), true
	})
}

// SetTimes sets modification and access times in ms; -1 leaves one as is.
func (s *Namesystem) SetTimes(ctx context.Context, p string, mtime, atime int64) error {
	check := func(pc namespace.Checker, n *namespace.Inode) error {
		if pc.Has(n, namespace.AccessWrite) {
			return nil
		}
		return pc.Owner(n)
	}
	return s.setAttr(ctx, p, check, func(n *namespace.Inode) (namespace.Edit, bool) {
		return namespace.SetTimes(p, mtime, atime), true
	})
}

// SetReplication changes a file's target replication; it returns false for
// a directory, as HDFS does.
func (s *Namesystem) SetReplication(ctx context.Context, p string, repl int) (bool, error) {
	if repl < 1 || repl > s.cfg.maxReplication {
		return false, ipc.Errorf(ipc.ClassIOException, "Requested replication factor of %d is out of range [1, %d] for %s", repl, s.cfg.maxReplication, p)
	}
	isFile := false
	check := func(pc namespace.Checker, n *namespace.Inode) error {
		if err := pc.Check(n, namespace.AccessWrite); err != nil || n.IsDir {
			return err
		}
		return s.checkReplicationQuota(n, repl)
	}
	err := s.setAttr(ctx, p, check, func(n *namespace.Inode) (namespace.Edit, bool) {
		if n.IsDir {
			return namespace.Edit{}, false
		}
		isFile = true
		return namespace.SetReplication(p, repl), true
	})
	return isFile, err
}

// SetStoragePolicy sets (name != "") or unsets (name == "") p's policy.
func (s *Namesystem) SetStoragePolicy(ctx context.Context, p, name string) error {
	var id uint8
	if name != "" {
		pol, ok := storage.ByName(name)
		if !ok {
			return ipc.Errorf(ipc.ClassIllegalArgument, "Cannot find a block policy with the name %s", name)
		}
		id = pol.ID
	}
	return s.setAttr(ctx, p, func(pc namespace.Checker, n *namespace.Inode) error { return pc.Check(n, namespace.AccessWrite) }, func(n *namespace.Inode) (namespace.Edit, bool) {
		return namespace.SetStoragePolicy(p, id), true
	})
}
