package namespace

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/namenodepb"
	"github.com/stratafs/strata/internal/storage"
)

// Quotas, as Hadoop's DirectoryWithQuotaFeature: a directory may carry a
// namespace quota (inodes in its subtree, itself included), a space quota
// (bytes × replication) and a space quota per storage type. A directory
// with any quota set keeps the usage of its subtree, which every edit
// changing the subtree updates (chargeQuota, called by Apply) and which
// ReadImage recounts; the quotas themselves are in the image and in
// OpSetQuota edits.
//
// What a file consumes is a pure function of its persistent state: each
// block counts its length × replication, except the last block of a file
// being written, which counts the preferred block size × replication (as
// Hadoop charges a block in full at allocation and corrects the charge to
// its length when the file closes). Per storage type, each block counts
// its length once for every replica the file's storage policy places on
// that type. Because usage depends on nothing but what the log and image
// record, a recount after a restart equals the incrementally kept usage.

// NoQuota marks an unset quota.
const NoQuota int64 = -1

// typeSlots indexes per-type counters by storage.Type (DISK=1 ... NVDIMM=6).
const typeSlots = 8

// QuotaTypes are the storage types a quota can be set on, in Hadoop's
// StorageType order (PROVIDED has none).
var QuotaTypes = []storage.Type{storage.RAMDisk, storage.NVDIMM, storage.SSD, storage.Disk, storage.Archive}

// SupportsTypeQuota reports whether a quota can be set on t.
func SupportsTypeQuota(t storage.Type) bool {
	return t != storage.Provided && int(t) > 0 && int(t) < typeSlots
}

// Usage is what a subtree consumes: inodes, bytes × replication, and bytes
// per storage type (indexed by storage.Type).
type Usage struct {
	NS    int64
	Space int64
	Types [typeSlots]int64
}

func (u *Usage) add(v Usage, sign int64) {
	u.NS += sign * v.NS
	u.Space += sign * v.Space
	for i := range u.Types {
		u.Types[i] += sign * v.Types[i]
	}
}

// Sub returns u - v.
func (u Usage) Sub(v Usage) Usage {
	u.add(v, -1)
	return u
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	u.add(v, 1)
	return u
}

// Quota is a directory's quotas (NoQuota when unset) and the usage of its
// subtree.
type Quota struct {
	NS, Space int64
	Types     [typeSlots]int64
	Used      Usage
}

func newQuota() *Quota {
	q := &Quota{NS: NoQuota, Space: NoQuota}
	for i := range q.Types {
		q.Types[i] = NoQuota
	}
	return q
}

// empty reports whether no quota is set any more.
func (q *Quota) empty() bool {
	if q.NS >= 0 || q.Space >= 0 {
		return false
	}
	for _, t := range q.Types {
		if t >= 0 {
			return false
		}
	}
	return true
}

// TypeQuota is q's quota on t (NoQuota when unset).
func (q *Quota) TypeQuota(t storage.Type) int64 {
	if !SupportsTypeQuota(t) {
		return NoQuota
	}
	return q.Types[t]
}

// chargedSize is what block i of file n counts for: its length, or the
// preferred block size for the last block of a file being written.
func chargedSize(n *Inode, i int) int64 {
	if n.UC() != nil && i == len(n.Blocks())-1 {
		return int64(n.BlockSize())
	}
	return n.Blocks()[i].NumBytes
}

// FileSpace is the space file n consumes (bytes × replication), as
// FileUsage counts it; getContentSummary reports the same figure.
func FileSpace(n *Inode) int64 {
	var space int64
	for i := range n.Blocks() {
		space += chargedSize(n, i) * int64(n.Replication())
	}
	return space
}

// FileUsage is what file n consumes under policy pol.
func FileUsage(n *Inode, pol storage.Policy) Usage {
	var u Usage
	u.NS = 1
	u.Space = FileSpace(n)
	types := pol.ChooseTypes(int(n.Replication()))
	for i := range n.Blocks() {
		size := chargedSize(n, i)
		for _, t := range types {
			if SupportsTypeQuota(t) {
				u.Types[t] += size
			}
		}
	}
	return u
}

// BlockCharge is what allocating one more full block to file n adds.
func BlockCharge(n *Inode) Usage {
	var u Usage
	size := int64(n.BlockSize())
	u.Space = size * int64(n.Replication())
	for _, t := range n.EffectivePolicy().ChooseTypes(int(n.Replication())) {
		if SupportsTypeQuota(t) {
			u.Types[t] += size
		}
	}
	return u
}

// SubtreeUsage counts what n and everything under it consume.
func SubtreeUsage(n *Inode) Usage {
	inherited := storage.DefaultID
	if n.Parent != nil {
		inherited = n.Parent.EffectivePolicyID()
	}
	return subtreeUsage(n, inherited, nil)
}

// SubtreeUsageUnder counts what n's subtree would consume under directory
// dir: inodes without a policy of their own take dir's (a rename's charge
// at its destination, as Hadoop's verifyQuotaForRename).
func SubtreeUsageUnder(n, dir *Inode) Usage {
	return subtreeUsage(n, dir.EffectivePolicyID(), nil)
}

// subtreeUsage counts n's subtree with policy id inherited from above;
// with set, it stores each quota directory's usage found on the way.
func subtreeUsage(n *Inode, inherited uint8, set func(*Inode, Usage)) Usage {
	pid := inherited
	if n.StoragePolicy != storage.Unspecified {
		pid = n.StoragePolicy
	}
	if !n.IsDir {
		pol, _ := storage.ByID(pid)
		return FileUsage(n, pol)
	}
	u := Usage{NS: 1}
	for _, c := range n.Children {
		u.add(subtreeUsage(c, pid, set), 1)
	}
	if set != nil && n.Quota() != nil {
		set(n, u)
	}
	return u
}

// RecountQuotas recomputes the usage of every directory with a quota from
// its subtree (the image loader's step, and an fsck check).
func (t *Tree) RecountQuotas() {
	subtreeUsage(t.Root, storage.DefaultID, func(n *Inode, u Usage) {
		n.Quota().Used = u
		t.quotaSeen = true
	})
}

// VerifyQuotas recounts every quota directory's usage and reports the
// first that differs from the usage kept incrementally.
func (t *Tree) VerifyQuotas() error {
	var bad error
	subtreeUsage(t.Root, storage.DefaultID, func(n *Inode, u Usage) {
		if bad == nil && n.Quota().Used != u {
			bad = fmt.Errorf("namespace: quota usage of %s is %+v, recount says %+v", n.Path(), n.Quota().Used, u)
		}
	})
	return bad
}

// QuotaKind tells which quota a QuotaExceededError is about.
type QuotaKind int

const (
	NSQuota   QuotaKind = iota // Hadoop's NSQuotaExceededException
	DSQuota                    // DSQuotaExceededException
	TypeQuota                  // QuotaByStorageTypeExceededException
)

// QuotaExceededError is a refused change: it would take directory Path's
// usage to Count, over Quota.
type QuotaExceededError struct {
	Kind         QuotaKind
	Path         string
	Quota, Count int64
	Type         storage.Type // TypeQuota only
}

// Error is Hadoop's message for the exception.
func (e *QuotaExceededError) Error() string {
	switch e.Kind {
	case NSQuota:
		return fmt.Sprintf("The NameSpace quota (directories and files) of directory %s is exceeded: quota=%d file count=%d", e.Path, e.Quota, e.Count)
	case DSQuota:
		return fmt.Sprintf("The DiskSpace quota of %s is exceeded: quota = %d B = %s but diskspace consumed = %d B = %s",
			e.Path, e.Quota, Long2String(e.Quota, "B", 2), e.Count, Long2String(e.Count, "B", 2))
	}
	return fmt.Sprintf("Quota by storage type : %s on path : %s is exceeded. quota = %s but space consumed = %s",
		e.Type, e.Path, Long2String(e.Quota, "B", 2), Long2String(e.Count, "B", 2))
}

// CheckQuota returns the QuotaExceededError that adding d to the subtree
// of dir would raise at dir or one of its ancestors, nearest first (as
// Hadoop's FSDirectory.verifyQuota). Only growing counts are checked: a
// change that shrinks usage is allowed over quota.
func (t *Tree) CheckQuota(dir *Inode, d Usage) error {
	return t.CheckQuotaBelow(dir, nil, d)
}

// CheckQuotaBelow is CheckQuota stopping before ancestor stop (the common
// ancestor of a rename's source and destination, whose usage a rename does
// not change).
func (t *Tree) CheckQuotaBelow(dir, stop *Inode, d Usage) error {
	for x := dir; x != nil && x != stop; x = x.Parent {
		q := x.Quota()
		if q == nil {
			continue
		}
		if n := q.Used.NS + d.NS; d.NS > 0 && q.NS >= 0 && n > q.NS {
			return &QuotaExceededError{Kind: NSQuota, Path: x.Path(), Quota: q.NS, Count: n}
		}
		if n := q.Used.Space + d.Space; d.Space > 0 && q.Space >= 0 && n > q.Space {
			return &QuotaExceededError{Kind: DSQuota, Path: x.Path(), Quota: q.Space, Count: n}
		}
		for _, st := range QuotaTypes {
			if n := q.Used.Types[st] + d.Types[st]; d.Types[st] > 0 && q.Types[st] >= 0 && n > q.Types[st] {
				return &QuotaExceededError{Kind: TypeQuota, Path: x.Path(), Quota: q.Types[st], Count: n, Type: st}
			}
		}
	}
	return nil
}

// CommonAncestor is the deepest directory above (or equal to) both a and b.
func CommonAncestor(a, b *Inode) *Inode {
	for x := a; x != nil; x = x.Parent {
		if x.isAncestorOf(b) {
			return x
		}
	}
	return nil
}

// Long2String formats n with a binary prefix as Hadoop's
// TraditionalBinaryPrefix.long2String: "100 B", "1 MB", "1.50 MB".
func Long2String(n int64, unit string, decimals int) string {
	var b strings.Builder
	if n < 0 {
		b.WriteByte('-')
		n = -n
	}
	if n < 1024 {
		fmt.Fprintf(&b, "%d", n)
		if unit != "" {
			b.WriteString(" " + unit)
		}
		return b.String()
	}
	const symbols = "KMGTPE"
	i := 0
	for i+1 < len(symbols) && n >= int64(1)<<(10*(i+2)) {
		i++
	}
	shift := uint(10 * (i + 1))
	if n&(int64(1)<<shift-1) == 0 {
		fmt.Fprintf(&b, "%d", n>>shift)
	} else {
		s := fmt.Sprintf("%.*f", decimals, float64(n)/float64(int64(1)<<shift))
		if strings.HasPrefix(s, "1024") && i+1 < len(symbols) {
			i++
			s = fmt.Sprintf("%.*f", decimals, float64(n)/float64(int64(1)<<(10*(i+1))))
		}
		b.WriteString(s)
	}
	b.WriteString(" " + symbols[i:i+1] + unit)
	return b.String()
}

// The incremental upkeep of usage.

// quotaCharge is what one path of an edit consumed before (or after) it,
// and the quota directories on that path then.
type quotaCharge struct {
	dirs []*Quota
	used Usage
}

func (t *Tree) measureQuota(p string) quotaCharge {
	r := t.Resolve(p)
	n := r.Target()
	if n == nil {
		return quotaCharge{}
	}
	var c quotaCharge
	for _, x := range r.Inodes {
		if x.Quota() != nil {
			c.dirs = append(c.dirs, x.Quota())
		}
	}
	if len(c.dirs) > 0 {
		c.used = SubtreeUsage(n)
	}
	return c
}

// chargeQuota measures, before e applies, what the paths e changes
// consume, and returns the function that, after e applied, moves the
// difference onto the quota directories above them. A rename's source
// leaves its old ancestors and arrives at the new ones this way; so do a
// concat's sources.
func (t *Tree) chargeQuota(e Edit) func() {
	if !t.quotaSeen {
		return func() {}
	}
	var paths []string
	switch o := e.op.Op.(type) {
	case *namenodepb.EditOp_Mkdir:
		paths = []string{o.Mkdir.GetPath()}
	case *namenodepb.EditOp_AddFile:
		paths = []string{o.AddFile.GetPath()}
	case *namenodepb.EditOp_CloseFile:
		paths = []string{o.CloseFile.GetPath()}
	case *namenodepb.EditOp_AddBlock:
		paths = []string{o.AddBlock.GetPath()}
	case *namenodepb.EditOp_UpdateBlocks:
		paths = []string{o.UpdateBlocks.GetPath()}
	case *namenodepb.EditOp_ReopenFile:
		paths = []string{o.ReopenFile.GetPath()}
	case *namenodepb.EditOp_Delete:
		paths = []string{o.Delete.GetPath()}
	case *namenodepb.EditOp_Rename:
		paths = []string{o.Rename.GetSrc(), o.Rename.GetDst()}
	case *namenodepb.EditOp_SetReplication:
		paths = []string{o.SetReplication.GetPath()}
	case *namenodepb.EditOp_SetStoragePolicy:
		paths = []string{o.SetStoragePolicy.GetPath()}
	case *namenodepb.EditOp_Concat:
		paths = append([]string{o.Concat.GetTrg()}, o.Concat.GetSrcs()...)
	default:
		return func() {}
	}
	before := make([]quotaCharge, len(paths))
	for i, p := range paths {
		before[i] = t.measureQuota(p)
	}
	// A subtree whose inherited storage policy changes (a policy set on
	// it, or a rename under another policy) changes the per-type usage of
	// the quota directories inside it too.
	moved, movedTo := "", ""
	switch o := e.op.Op.(type) {
	case *namenodepb.EditOp_Rename:
		moved, movedTo = o.Rename.GetSrc(), o.Rename.GetDst()
	case *namenodepb.EditOp_SetStoragePolicy:
		moved, movedTo = o.SetStoragePolicy.GetPath(), o.SetStoragePolicy.GetPath()
	}
	policyBefore := policyAt(t, moved)
	return func() {
		for i, p := range paths {
			after := t.measureQuota(p)
			for _, q := range before[i].dirs {
				q.Used.add(before[i].used, -1)
			}
			for _, q := range after.dirs {
				q.Used.add(after.used, 1)
			}
		}
		if moved != "" && policyAt(t, movedTo) != policyBefore {
			t.recountInside(t.Lookup(movedTo))
		}
	}
}

// policyAt is the effective storage policy id of the directory at p (0
// when p is missing or a file: files hold no quota directories).
func policyAt(t *Tree, p string) uint8 {
	if p == "" {
		return 0
	}
	n := t.Lookup(p)
	if n == nil || !n.IsDir {
		return 0
	}
	return n.EffectivePolicyID()
}

// recountInside recounts the quota directories strictly below n.
func (t *Tree) recountInside(n *Inode) {
	if n == nil || !n.IsDir {
		return
	}
	inherited := storage.DefaultID
	if n.Parent != nil {
		inherited = n.Parent.EffectivePolicyID()
	}
	subtreeUsage(n, inherited, func(x *Inode, u Usage) {
		if x != n {
			x.Quota().Used = u
		}
	})
}

// SetQuota sets directory path's quotas (Hadoop's setQuota after its
// QUOTA_DONT_SET values are resolved): without a storage type, ns and ds
// are the namespace and space quotas; with one, ds is that type's quota.
// NoQuota clears.
func SetQuota(path string, ns, ds int64, typ storage.Type) Edit {
	o := &namenodepb.OpSetQuota{Path: proto.String(path), NsQuota: proto.Int64(ns), DsQuota: proto.Int64(ds)}
	if typ != 0 {
		o.StorageType = proto.Uint32(uint32(typ))
	}
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_SetQuota{SetQuota: o}}}
}

func (t *Tree) applySetQuota(o *namenodepb.OpSetQuota) error {
	n := t.Lookup(o.GetPath())
	if n == nil || !n.IsDir {
		return replayErr("setQuota of missing directory %s", o.GetPath())
	}
	q := n.Quota()
	if q == nil {
		q = newQuota()
	}
	if o.StorageType != nil {
		st := storage.Type(o.GetStorageType())
		if !SupportsTypeQuota(st) {
			return replayErr("setQuota of %s on storage type %d", o.GetPath(), st)
		}
		q.Types[st] = max(o.GetDsQuota(), NoQuota)
	} else {
		q.NS = max(o.GetNsQuota(), NoQuota)
		q.Space = max(o.GetDsQuota(), NoQuota)
	}
	if q.empty() {
		n.setQuota(nil)
		return nil
	}
	if n.Quota() == nil {
		q.Used = SubtreeUsage(n)
		n.setQuota(q)
	}
	t.quotaSeen = true
	return nil
}

// quotaToImage adds n's quotas to its image record.
func quotaToImage(n *Inode, rec *namenodepb.Inode) {
	q := n.Quota()
	if q == nil || !n.IsDir {
		return
	}
	rec.NsQuota = proto.Int64(q.NS)
	rec.DsQuota = proto.Int64(q.Space)
	for _, st := range QuotaTypes {
		if q.Types[st] >= 0 {
			rec.TypeQuotas = append(rec.TypeQuotas, &namenodepb.QuotaByStorageType{Type: proto.Uint32(uint32(st)), Quota: proto.Int64(q.Types[st])})
		}
	}
}

// quotaFromImage sets n's quotas from its image record; ReadImage
// recounts the usage once the tree is whole.
func quotaFromImage(n *Inode, rec *namenodepb.Inode) error {
	if rec.NsQuota == nil && rec.DsQuota == nil && len(rec.TypeQuotas) == 0 {
		return nil
	}
	if !n.IsDir {
		return errors.New("namenode: image has a quota on a file")
	}
	q := newQuota()
	q.NS = max(rec.GetNsQuota(), NoQuota)
	q.Space = max(rec.GetDsQuota(), NoQuota)
	for _, tq := range rec.TypeQuotas {
		st := storage.Type(tq.GetType())
		if !SupportsTypeQuota(st) {
			return fmt.Errorf("namenode: image has a quota on storage type %d", st)
		}
		q.Types[st] = max(tq.GetQuota(), NoQuota)
	}
	if !q.empty() {
		n.setQuota(q)
	}
	return nil
}
