package namenode

import (
	"context"
	"errors"
	"math"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/storage"
)

// Hadoop's quota exception classes.
const (
	ClassNSQuotaExceeded     = "org.apache.hadoop.hdfs.protocol.NSQuotaExceededException"
	ClassDSQuotaExceeded     = "org.apache.hadoop.hdfs.protocol.DSQuotaExceededException"
	ClassTypeQuotaExceeded   = "org.apache.hadoop.hdfs.protocol.QuotaByStorageTypeExceededException"
	ClassUnsupportedAction   = "org.apache.hadoop.hdfs.protocol.UnsupportedActionException"
	ClassPathIsNotDirectory  = "org.apache.hadoop.fs.PathIsNotDirectoryException"
	classIllegalArgumentJava = "java.lang.IllegalArgumentException"
)

// HdfsConstants' special quota values in setQuota.
const (
	QuotaDontSet int64 = math.MaxInt64 // leave this quota as it is
	QuotaReset   int64 = -1            // clear it
)

// quotaError turns the namespace's quota refusal into Hadoop's exception.
func quotaError(err error) error {
	var qe *namespace.QuotaExceededError
	if !errors.As(err, &qe) {
		return err
	}
	class := ClassNSQuotaExceeded
	switch qe.Kind {
	case namespace.DSQuota:
		class = ClassDSQuotaExceeded
	case namespace.TypeQuota:
		class = ClassTypeQuotaExceeded
	}
	return ipc.Errorf(class, "%s", qe.Error())
}

// checkQuota refuses adding d under dir when it exceeds a quota at dir or
// above. Lock held.
func (s *Namesystem) checkQuota(dir *namespace.Inode, d namespace.Usage) error {
	return quotaError(s.tree.CheckQuota(dir, d))
}

// fileCharge is what changing file n as change does to its usage: change
// edits a shallow copy of n. Lock held.
func fileCharge(n *namespace.Inode, change func(c *namespace.Inode)) namespace.Usage {
	pol := n.EffectivePolicy()
	c := n.Copy()
	change(c)
	return namespace.FileUsage(c, pol).Sub(namespace.FileUsage(n, pol))
}

// checkAddBlockQuota refuses a new block for n (whose last block, if any,
// is committed at prevLen) over a quota, before the client writes it.
func (s *Namesystem) checkAddBlockQuota(n *namespace.Inode, prevLen int64) error {
	d := fileCharge(n, func(c *namespace.Inode) {
		if k := len(c.Blocks()); k > 0 {
			c.Blocks()[k-1] = &blockmgmt.Block{NumBytes: prevLen}
		}
		c.SetBlockList(append(c.Blocks(), &blockmgmt.Block{}))
	})
	return s.checkQuota(n.Parent, d)
}

// checkAppendQuota refuses reopening n for append when charging its
// partial last block in full would exceed a quota (Hadoop's
// prepareFileForAppend).
func (s *Namesystem) checkAppendQuota(n *namespace.Inode) error {
	d := fileCharge(n, func(c *namespace.Inode) { c.SetUC(&namespace.UnderConstruction{}) })
	return s.checkQuota(n.Parent, d)
}

// checkTruncateQuota refuses cutting file n in the middle of block i to
// length last of that block when a quota would be exceeded: the file is
// reopened while the DataNodes cut the block, so the cut block is charged
// in full, as Hadoop's computeQuotaDeltaForTruncate records it (it is
// copied in full during recovery).
func (s *Namesystem) checkTruncateQuota(n *namespace.Inode, i int, last int64) error {
	d := fileCharge(n, func(c *namespace.Inode) {
		c.SetBlockList(append(c.Blocks()[:i], &blockmgmt.Block{NumBytes: last}))
		c.SetUC(&namespace.UnderConstruction{})
	})
	return s.checkQuota(n.Parent, d)
}

// checkReplicationQuota refuses raising n's replication over a quota.
func (s *Namesystem) checkReplicationQuota(n *namespace.Inode, repl int) error {
	d := fileCharge(n, func(c *namespace.Inode) { c.SetReplication(uint16(repl)) })
	return s.checkQuota(n.Parent, d)
}

// checkRenameQuota refuses moving src under dstParent (replacing dst when
// not nil) when the destination's quotas would be exceeded; directories
// above both are not checked (Hadoop's verifyQuotaForRename). The moved
// subtree is charged under the destination's storage policy unless it
// has its own.
func (s *Namesystem) checkRenameQuota(src, dstParent, dst *namespace.Inode) error {
	d := namespace.SubtreeUsageUnder(src, dstParent)
	if dst != nil {
		d = d.Sub(namespace.SubtreeUsage(dst))
	}
	stop := namespace.CommonAncestor(src.Parent, dstParent)
	return quotaError(s.tree.CheckQuotaBelow(dstParent, stop, d))
}

// QuotaUsage is a directory's quotas and usage (Hadoop's QuotaUsage).
// Quotas are -1 when unset; Types are indexed by storage.Type.
type QuotaUsage struct {
	HasQuota                bool // the directory has a quota (usage is kept, not counted)
	Count, Quota            int64
	SpaceConsumed           int64
	SpaceQuota              int64
	TypeConsumed, TypeQuota [8]int64
}

// QuotaUsage answers getQuotaUsage: a quota directory's kept usage, or a
// count of the subtree elsewhere.
func (s *Namesystem) QuotaUsage(ctx context.Context, p string) (QuotaUsage, error) {
	if err := s.checkPath(p); err != nil {
		return QuotaUsage{}, err
	}
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.tree.Resolve(p)
	if err := pc.Traverse(r); err != nil {
		return QuotaUsage{}, err
	}
	n := r.Target()
	if n == nil {
		return QuotaUsage{}, notFound(p)
	}
	if err := pc.Subtree(n, namespace.AccessRX, false); err != nil {
		return QuotaUsage{}, err
	}
	qu := QuotaUsage{Quota: -1, SpaceQuota: -1}
	for i := range qu.TypeQuota {
		qu.TypeQuota[i] = -1
	}
	used := namespace.Usage{}
	if q := n.Quota(); q != nil {
		qu.HasQuota = true
		qu.Quota, qu.SpaceQuota = q.NS, q.Space
		for _, t := range namespace.QuotaTypes {
			qu.TypeQuota[t] = q.TypeQuota(t)
		}
		used = q.Used
	} else {
		used = namespace.SubtreeUsage(n)
	}
	qu.Count, qu.SpaceConsumed = used.NS, used.Space
	copy(qu.TypeConsumed[:], used.Types[:])
	return qu, nil
}

// SetQuota sets directory p's quotas (Hadoop's ClientProtocol.setQuota):
// with typ 0, ns and ds are the namespace and space quotas; otherwise ds
// is typ's quota and ns must be QuotaDontSet. QuotaDontSet keeps a quota,
// QuotaReset clears it. Only the superuser may. A quota below the current
// usage is allowed: the directory is then over quota.
func (s *Namesystem) SetQuota(ctx context.Context, p string, ns, ds int64, typ storage.Type) error {
	if err := s.checkPath(p); err != nil {
		return err
	}
	if err := s.checker(ctx).Superuser("setQuota"); err != nil {
		return err
	}
	if ns < 0 && ns != QuotaDontSet && ns != QuotaReset || ds < 0 && ds != QuotaDontSet && ds != QuotaReset {
		return ipc.Errorf(classIllegalArgumentJava, "Illegal value for nsQuota or ssQuota : %d and %d", ns, ds)
	}
	if typ != 0 && (ns != QuotaDontSet || !namespace.SupportsTypeQuota(typ)) {
		return ipc.Errorf(ClassUnsupportedAction, "Failed to set quota by storage type because eitherdfs.quota.by.storage.type.enabled is set to true or nsQuota value is illegal %d", ns)
	}
	return s.mutate(ctx, func() ([]namespace.Edit, error) {
		n := s.tree.Lookup(p)
		if n == nil {
			return nil, ipc.Errorf(ipc.ClassFileNotFound, "Directory does not exist: %s", p)
		}
		if !n.IsDir {
			return nil, ipc.Errorf(ClassPathIsNotDirectory, "`%s': Is not a directory", p)
		}
		if n.Parent == nil && ns == QuotaReset {
			return nil, ipc.Errorf(classIllegalArgumentJava, "Cannot clear namespace quota on root.")
		}
		old := n.Quota()
		oldNS, oldDS, oldType := int64(-1), int64(-1), int64(-1)
		if old != nil {
			oldNS, oldDS = old.NS, old.Space
			oldType = old.TypeQuota(typ)
		}
		if typ != 0 {
			if ds == QuotaDontSet || ds == oldType {
				return nil, nil
			}
			return []namespace.Edit{namespace.SetQuota(p, 0, ds, typ)}, nil
		}
		if ns == QuotaDontSet {
			ns = oldNS
		}
		if ds == QuotaDontSet {
			ds = oldDS
		}
		if ns == oldNS && ds == oldDS {
			return nil, nil
		}
		return []namespace.Edit{namespace.SetQuota(p, ns, ds, 0)}, nil
	})
}

// VerifyQuotas recounts every quota directory's usage and returns an error
// when one differs from the usage kept as edits applied.
func (s *Namesystem) VerifyQuotas() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tree.VerifyQuotas()
}
