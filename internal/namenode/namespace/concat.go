package namespace

import (
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/namenodepb"
)

// Concat moves the blocks of srcs, in order, to the end of trg and
// removes srcs (Hadoop's concat); mtime is the target's and its parent's
// new modification time. The caller has checked Hadoop's preconditions:
// closed, non-empty sources in the target's directory, none the target.
func Concat(trg string, srcs []string, mtime int64) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_Concat{Concat: &namenodepb.OpConcat{
		Trg: proto.String(trg), Srcs: append([]string(nil), srcs...), Mtime: proto.Int64(mtime),
	}}}}
}

func (t *Tree) applyConcat(o *namenodepb.OpConcat) error {
	trg := t.Lookup(o.GetTrg())
	if trg == nil || trg.IsDir || trg.UC() != nil || trg.Parent == nil {
		return replayErr("concat to %s, which is not a closed file", o.GetTrg())
	}
	srcs := make([]*Inode, 0, len(o.GetSrcs()))
	seen := map[*Inode]bool{trg: true}
	for _, p := range o.GetSrcs() {
		n := t.Lookup(p)
		if n == nil || n.IsDir || n.UC() != nil || n.Parent != trg.Parent || seen[n] {
			return replayErr("concat of %s into %s: not a distinct closed file beside the target", p, o.GetTrg())
		}
		seen[n] = true
		srcs = append(srcs, n)
	}
	// The blocks change files, keeping their replicas: they are not
	// dropped from the block map with their old inodes.
	for _, n := range srcs {
		for _, b := range n.Blocks() {
			b.File = trg
			b.Committed = true
			t.Blocks.Changed(b.ID)
			trg.SetBlockList(append(trg.Blocks(), b))
		}
		n.SetBlockList(nil)
		t.removeSubtree(n)
	}
	trg.Mtime = o.GetMtime()
	trg.Parent.Mtime = o.GetMtime()
	return nil
}
