// Package namespace is the NameNode's file system tree (Hadoop's
// FSDirectory with its INodes, FSEditLogLoader and FSImage format): the
// inodes, the edits that change them and their encoding, the checkpoint
// image, permission checks, path validation and the lease table.
//
// A Tree changes only by applying an Edit. The NameNode builds edits with
// the constructors (Mkdir, AddFile, CloseFile, ...) after checking a
// request, applies them with Tree.Apply and logs Edit.Marshal's bytes; at
// start it loads ReadImage's tree and replays the log with Tree.Apply on
// DecodeEdit's result, so a replayed log rebuilds exactly the tree that
// was served. The records' encoding (namenodepb messages,
// docs/format/namenode-storage.md) stays inside this package: no exported
// function takes or returns a protobuf type.
//
// A file's blocks are blockmgmt.Blocks kept in the Tree's BlockMap: the
// tree sets their persistent part (id, generation stamp, length,
// committed) and adds and drops them as edits apply; dropped blocks wait
// in BlockMap.TakeRemoved for block management to delete their replicas.
// Inodes implement blockmgmt.BlockCollection.
//
// Nothing here is safe for concurrent use; the NameNode's Namesystem
// serializes access with its lock. Inode fields are exported for the
// Namesystem to read under that lock; only Apply (and ReadImage) change
// inodes and the tree's shape. The state of a file's blocks that the log
// does not hold (replicas, the pipeline, a length being committed before
// its CloseFile edit) belongs to block management and the Namesystem.
//
// Invariants:
//   - Directories keep their children sorted by name (byte order); names
//     in one directory are unique and never empty.
//   - Every inode but the root has a parent directory; the root is inode
//     16385; inode ids are unique and only grow (AllocInodeID).
//   - Every block of a file is in the BlockMap, and every block in the map
//     belongs to exactly one live file or, once no live file holds it, to
//     the snapshot copies that do (snapshot.go); all but the last block of
//     an open file, and all blocks of a closed file, are committed.
//   - An Edit that does not fit the tree fails with ErrReplay and may leave
//     it partly changed: the NameNode then accepts no more mutations, and
//     refuses to start when it happens during replay.
//   - An image lists parents before children and siblings in name order;
//     ReadImage refuses anything else.
//   - A directory with a quota holds the usage of its subtree, equal at
//     every point to a recount (RecountQuotas, VerifyQuotas): Apply keeps
//     it for every edit, ReadImage recounts it (quota.go).
//   - An inode's extended attributes (Inode.XAttrs, nil when none) have
//     unique (namespace, name) keys. Its ACL (Inode.ACL, nil when none) is
//     Hadoop's AclFeature of a validated ACL: the access entries other
//     than user::, mask:: and other:: (the mode holds those, its group bits
//     being the mask), then the default entries, in ACL order; only
//     directories have default entries. New children take their parent's
//     default ACL when their Mkdir or AddFile edit applies (acl.go).
package namespace
