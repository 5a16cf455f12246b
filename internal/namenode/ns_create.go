package namenode

import (
	"context"
	"path"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/storage"
)

// Mkdirs creates p (and, with createParent, its missing ancestors) with
// permission perm (already masked by the client's umask).
func (s *Namesystem) Mkdirs(ctx context.Context, p string, perm uint16, createParent bool) error {
	return s.mkdirs(ctx, p, createModes{masked: perm}, createParent)
}

// createModes are a new inode's permission as the client sent it: after
// its umask, and (Hadoop 3 clients) before, which applies instead when the
// parent has a default ACL (unless dfs.namenode.posix.acl.inheritance.enabled
// is false; Hadoop 3's default is true): the default ACL then plays the
// umask's part.
type createModes struct {
	masked, unmasked uint16
	hasUnmasked      bool
}

// mode returns the mode a child of parent is created with.
func (m createModes) mode(parent *namespace.Inode) uint16 {
	if m.hasUnmasked && parent.DefaultACL() != nil {
		return m.unmasked
	}
	return m.masked
}

func (s *Namesystem) mkdirs(ctx context.Context, p string, perms createModes, createParent bool) error {
	if err := s.checkPath(p); err != nil {
		return err
	}
	perms.hasUnmasked = perms.hasUnmasked && !s.cfg.noACLInheritance
	pc := s.checker(ctx)
	return s.mutate(ctx, func() ([]namespace.Edit, error) {
		r := s.tree.Resolve(p)
		if err := s.checkParents(pc, r); err != nil {
			return nil, err
		}
		if n := r.Target(); n != nil {
			if !n.IsDir {
				return nil, ipc.Errorf(ipc.ClassFileAlreadyExists, "Path is not a directory: %s", p)
			}
			return nil, nil
		}
		// Write access to the deepest existing ancestor is checked before
		// a missing parent is reported, as Hadoop's checkAncestorAccess.
		parent := r.LastExisting()
		if err := pc.Check(parent, namespace.AccessWX); err != nil {
			return nil, err
		}
		missing := len(r.Names) - (len(r.Inodes) - 1)
		if missing > 1 && !createParent {
			return nil, ipc.Errorf(ipc.ClassFileNotFound, "Parent directory doesn't exist: %s", path.Dir(p))
		}
		if err := s.checkDirItems(parent); err != nil {
			return nil, err
		}
		if err := s.checkQuota(parent, namespace.Usage{NS: int64(missing)}); err != nil {
			return nil, err
		}
		now := s.nowMillis()
		var ops []namespace.Edit
		cur := parent.Path()
		// Directories created below parent inherit its default ACL, if
		// any, so one mode choice holds for all of them.
		perm := perms.mode(parent)
		for i := len(r.Inodes) - 1; i < len(r.Names); i++ {
			cur = path.Join(cur, r.Names[i])
			mode := perm
			if i < len(r.Names)-1 {
				mode |= 0o300 // implicit u+wx on created parents, as HDFS
			}
			ops = append(ops, namespace.Mkdir(s.tree.AllocInodeID(), cur, namespace.Perm{Owner: pc.P.User, Group: parent.Group, Mode: mode}, now))
		}
		return ops, nil
	})
}

// CreateOptions are the arguments of Create.
type CreateOptions struct {
	Perm uint16
	// Unmasked is the permission before the client's umask, when the
	// client sent it (HasUnmasked): used instead of Perm under a
	// default ACL (createModes).
	Unmasked      uint16
	HasUnmasked   bool
	ClientName    string
	ClientMachine string
	Overwrite     bool
	CreateParent  bool
	Replication   int
	BlockSize     int64
	StoragePolicy string
}

// Create makes a new empty file under construction, leased to the client.
func (s *Namesystem) Create(ctx context.Context, p string, o CreateOptions) (*FileStatus, error) {
	if err := s.checkPath(p); err != nil {
		return nil, err
	}
	if o.ClientName == "" {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "create %s: empty client name", p)
	}
	if o.Replication <= 0 {
		o.Replication = s.cfg.defaultReplication
	}
	if o.Replication > s.cfg.maxReplication {
		return nil, ipc.Errorf(ipc.ClassIOException, "Requested replication factor of %d exceeds maximum of %d for %s", o.Replication, s.cfg.maxReplication, p)
	}
	if o.BlockSize <= 0 {
		o.BlockSize = s.cfg.defaultBlockSize
	}
	if o.BlockSize < s.cfg.minBlockSize {
		return nil, ipc.Errorf(ipc.ClassIOException, "Specified block size is less than configured minimum value (dfs.namenode.fs-limits.min-block-size): %d < %d", o.BlockSize, s.cfg.minBlockSize)
	}
	var policy uint8
	if o.StoragePolicy != "" {
		pol, ok := storage.ByName(o.StoragePolicy)
		if !ok {
			return nil, ipc.Errorf(ipc.ClassIllegalArgument, "Cannot find a block policy with the name %s", o.StoragePolicy)
		}
		policy = pol.ID
	}
	pc := s.checker(ctx)
	var st FileStatus
	err := s.mutate(ctx, func() ([]namespace.Edit, error) {
		r := s.tree.Resolve(p)
		if err := s.checkParents(pc, r); err != nil {
			return nil, err
		}
		// Hadoop checks write access to the deepest existing ancestor
		// before anything about the target (checkAncestorAccess).
		parent := r.LastExisting()
		if r.Exists() {
			parent = r.Target().Parent
		}
		if err := pc.Check(parent, namespace.AccessWrite); err != nil {
			return nil, err
		}
		var ops []namespace.Edit
		overwrite := false
		if n := r.Target(); n != nil {
			if n.IsDir {
				return nil, ipc.Errorf(ipc.ClassFileAlreadyExists, "%s already exists as a directory", p)
			}
			if n.UC() != nil {
				if n.UC().ClientName == o.ClientName {
					return nil, ipc.Errorf(ipc.ClassAlreadyBeingCreated, "failed to create file %s for %s for client %s because current leaseholder is trying to recreate file.", p, o.ClientName, o.ClientMachine)
				}
				if !s.leases.SoftExpired(n.UC().ClientName, s.now(), s.cfg.leaseSoftLimit) {
					return nil, ipc.Errorf(ipc.ClassAlreadyBeingCreated, "Failed to CREATE_FILE %s for %s on %s because this file lease is currently owned by %s on %s",
						p, o.ClientName, o.ClientMachine, n.UC().ClientName, n.UC().ClientMachine)
				}
				// The other writer's lease expired: recover the file first.
				ops = append(ops, s.closeOp(n, n.Blocks()))
			}
			if !o.Overwrite {
				return nil, ipc.Errorf(ipc.ClassFileAlreadyExists, "%s for client %s already exists", p, o.ClientMachine)
			}
			if err := pc.Check(n, namespace.AccessWrite); err != nil {
				return nil, err
			}
			if err := pc.Sticky(n.Parent, n); err != nil {
				return nil, err
			}
			overwrite = true
		}
		parentPath := path.Dir(p)
		missing := len(r.Names) - (len(r.Inodes) - 1)
		if r.Exists() {
			missing = 0
		}
		if missing > 1 && !o.CreateParent {
			return nil, ipc.Errorf(ipc.ClassFileNotFound, "Parent directory doesn't exist: %s", parentPath)
		}
		if !overwrite {
			if err := s.checkDirItems(parent); err != nil {
				return nil, err
			}
			if err := s.checkQuota(parent, namespace.Usage{NS: int64(max(missing, 1))}); err != nil {
				return nil, err
			}
		}
		now := s.nowMillis()
		group := parent.Group
		cur := parent.Path()
		mode := createModes{masked: o.Perm, unmasked: o.Unmasked, hasUnmasked: o.HasUnmasked && !s.cfg.noACLInheritance}.mode(parent)
		for i := len(r.Inodes) - 1; i < len(r.Names)-1 && missing > 0; i++ {
			cur = path.Join(cur, r.Names[i])
			ops = append(ops, namespace.Mkdir(s.tree.AllocInodeID(), cur, namespace.Perm{Owner: pc.P.User, Group: group, Mode: mode | 0o300}, now))
		}
		ops = append(ops, namespace.AddFile(namespace.NewFile{
			ID: s.tree.AllocInodeID(), Path: p, Mtime: now,
			Perm:        namespace.Perm{Owner: pc.P.User, Group: group, Mode: mode},
			Replication: o.Replication, BlockSize: o.BlockSize,
			ClientName: o.ClientName, ClientMachine: o.ClientMachine,
			Overwrite: overwrite, StoragePolicy: policy,
		}))
		return ops, nil
	})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.leases.Add(o.ClientName, p, s.now())
	if n := s.tree.Lookup(p); n != nil {
		st = s.status(n)
	}
	s.mu.Unlock()
	return &st, nil
}

// closeOp returns the edit that closes file n with blocks (n's blocks, or
// all but an empty last one).
func (s *Namesystem) closeOp(n *namespace.Inode, blocks []*blockmgmt.Block) namespace.Edit {
	now := s.nowMillis()
	return namespace.CloseFile(n.Path(), now, now, namespace.BlockInfos(blocks))
}
