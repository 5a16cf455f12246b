package namenode

import (
	"context"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/namespace"
)

// maxConcatSources bounds the sources of one concat call, which a client
// sends in one request.
const maxConcatSources = 10000

// Concat moves the blocks of srcs, in order, to the end of trg and deletes
// srcs (Hadoop's ClientProtocol.concat), with Hadoop's preconditions: trg
// is a closed file; every source is a closed, non-empty file in trg's
// directory, not trg, named once, whose preferred block size is at most
// trg's; the caller may write trg, read each source and write its
// directory. The sources take the target's replication.
func (s *Namesystem) Concat(ctx context.Context, trg string, srcs []string) error {
	if trg == "" {
		return ipc.Errorf(classIllegalArgumentJava, "Target file name is empty")
	}
	if len(srcs) == 0 {
		return ipc.Errorf(classIllegalArgumentJava, "No sources given")
	}
	if len(srcs) > maxConcatSources {
		return ipc.Errorf(ipc.ClassIllegalArgument, "concat: %d sources exceed the limit of %d", len(srcs), maxConcatSources)
	}
	for _, p := range append([]string{trg}, srcs...) {
		if err := s.checkPath(p); err != nil {
			return err
		}
	}
	pc := s.checker(ctx)
	return s.mutate(ctx, func() ([]namespace.Edit, error) {
		t, err := s.resolveTarget(pc, trg)
		if err != nil {
			return nil, err
		}
		if err := pc.Check(t, namespace.AccessWrite); err != nil {
			return nil, err
		}
		if t.IsDir {
			return nil, ipc.Errorf(ipc.ClassFileNotFound, "Path is not a file: %s", trg)
		}
		if t.UC() != nil {
			return nil, ipc.Errorf(ipc.ClassIllegalArgument, "concat: target file %s is under construction", trg)
		}
		seen := map[*namespace.Inode]bool{}
		var files []*namespace.Inode
		for _, p := range srcs {
			n, err := s.resolveTarget(pc, p)
			if err != nil {
				return nil, err
			}
			if err := pc.Check(n, namespace.AccessRead); err != nil {
				return nil, err
			}
			if n.Parent != nil {
				if err := pc.Check(n.Parent, namespace.AccessWrite); err != nil {
					return nil, err
				}
			}
			if n.IsDir {
				return nil, ipc.Errorf(ipc.ClassFileNotFound, "Path is not a file: %s", p)
			}
			if n.Parent != t.Parent {
				return nil, ipc.Errorf(ipc.ClassIllegalArgument, "Source file %s is not in the same directory with the target %s", p, trg)
			}
			if n == t {
				return nil, ipc.Errorf(ipc.ClassIllegalArgument, "concat: the src file %s is the same with the target file %s", p, trg)
			}
			if n.UC() != nil || len(n.Blocks()) == 0 {
				return nil, ipc.Errorf(ipc.ClassIllegalArgument, "concat: source file %s is invalid or empty or underConstruction", p)
			}
			// Hadoop refuses a source a snapshot has (its blocks would
			// belong to two files).
			for _, b := range n.Blocks() {
				if s.tree.SnapshotHolds(b) {
					return nil, ipc.Errorf(namespace.ClassSnapshot, "Concat: the source file %s is in snapshot", p)
				}
			}
			if n.BlockSize() > t.BlockSize() {
				return nil, ipc.Errorf(ipc.ClassIllegalArgument, "concat: source file %s has preferred block size %d which is greater than the target file's preferred block size %d", p, n.BlockSize(), t.BlockSize())
			}
			if !seen[n] {
				files = append(files, n)
			}
			seen[n] = true
		}
		if len(files) < len(srcs) {
			return nil, ipc.Errorf(ipc.ClassIllegalArgument, "concat: at least two of the source files are the same")
		}
		// Sources take the target's replication: a quota may refuse that.
		d := fileCharge(t, func(c *namespace.Inode) {
			for _, n := range files {
				c.SetBlockList(append(c.Blocks(), n.Blocks()...))
			}
		})
		for _, n := range files {
			d = d.Sub(namespace.FileUsage(n, n.EffectivePolicy()))
		}
		if err := s.checkQuota(t.Parent, d); err != nil {
			return nil, err
		}
		return []namespace.Edit{namespace.Concat(trg, srcs, s.nowMillis())}, nil
	})
}
