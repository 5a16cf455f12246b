package fsdataset

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/stratafs/strata/internal/storage"
)

// Dataset is a DataNode's replica store over its volumes (Hadoop's
// FsDatasetImpl). All methods are safe for concurrent use.
type Dataset struct {
	cfg  Config
	fs   FS
	log  *slog.Logger
	uuid string
	vols []*volume // in configuration order, failed ones included

	chooseMu sync.Mutex
	cursors  map[cursorKey]int
	rng      *rand.Rand

	checkMu sync.Mutex // one CheckVolumes at a time

	// mu guards the replica map, the fields of replicas and volumes
	// documented as such, and the counters below. No I/O is done with it
	// held except in Open.
	mu       sync.Mutex
	replicas map[uint64]*replica
	nfailed  int
	closed   bool
}

// replica is the in-memory record of a replica. Its files are where its
// state says: rbw/ for RBW and RWR, finalized/subdir<A>/subdir<B>/ for
// Finalized.
//
// Lock order: ReplicaWriter.mu is never held while taking fileMu; fileMu
// before Dataset.mu.
type replica struct {
	id  uint64
	vol *volume
	// fileMu serializes the operations that create, rename, truncate or
	// remove the replica's files, or open them (readers), so a path
	// computed under it stays valid while it is held.
	fileMu sync.Mutex

	// gs, state and bpc change only with both fileMu and Dataset.mu
	// held; either one is enough to read them.
	gs    uint64
	state ReplicaState
	bpc   int

	// Guarded by Dataset.mu.
	numBytes int64          // Finalized/RWR: length; RBW: visible (flushed) length
	lastCRC  uint32         // RBW: checksum of the partial chunk ending at numBytes
	disk     int64          // bytes accounted in vol.used
	writer   *ReplicaWriter // the open writer of an RBW replica, if any
	dirty    bool           // a writer failed: the on-disk tail is not trusted
}

func (r *replica) dir() string {
	if r.state == Finalized {
		return r.vol.finDir(r.id)
	}
	return r.vol.rbw
}

func (r *replica) dataPath() string { return filepath.Join(r.dir(), dataName(r.id)) }
func (r *replica) metaPath() string { return filepath.Join(r.dir(), metaName(r.id, r.gs)) }

func (r *replica) describe() string {
	return fmt.Sprintf("%s (%s, %d bytes, on %s)", Block{ID: r.id, GenStamp: r.gs}, r.state, r.numBytes, r.vol.path)
}

// removeFiles deletes the replica's data and meta files.
func (r *replica) removeFiles() error {
	var errs []error
	for _, p := range []string{r.dataPath(), r.metaPath()} {
		if err := r.vol.fs.Remove(p); err != nil && !isNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// info is the replica's description; Dataset.mu held.
func (r *replica) info() ReplicaInfo {
	return ReplicaInfo{
		Block:       Block{ID: r.id, GenStamp: r.gs, NumBytes: r.numBytes},
		State:       r.state,
		StorageID:   r.vol.storageID,
		StorageType: r.vol.typ,
	}
}

// better reports whether a should be kept rather than b, two replicas of
// one block: the higher generation stamp, then the finalized one, then the
// longer one.
func better(a, b *replica) bool {
	if a.gs != b.gs {
		return a.gs > b.gs
	}
	if (a.state == Finalized) != (b.state == Finalized) {
		return a.state == Finalized
	}
	return a.numBytes > b.numBytes
}

// Open opens the volumes: creates and locks them (<vol>/in_use.lock),
// loads or creates their VERSION (DataNode UUID, storage IDs) and scans
// their replicas, repairing what a crash left behind (see the package
// documentation). A volume that cannot be used counts as failed; Open
// fails if more fail than Config.FailedVolumesTolerated allows, if a
// volume is locked by someone else (ErrInUse), or if a volume belongs to
// another DataNode (ErrDatanodeUUID).
func Open(cfg Config) (*Dataset, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Dataset{
		cfg:      cfg,
		fs:       cfg.FS,
		log:      cfg.Logger,
		cursors:  map[cursorKey]int{},
		rng:      rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		replicas: map[uint64]*replica{},
	}
	fail := func(err error) (*Dataset, error) {
		for _, v := range d.vols {
			v.release()
		}
		return nil, err
	}

	// Lock every volume and read its identity.
	versions := make([]*volumeVersion, len(cfg.Volumes))
	for i, vc := range cfg.Volumes {
		v := newVolume(d.fs, vc)
		d.vols = append(d.vols, v)
		vv, err := v.prepare()
		if errors.Is(err, ErrInUse) {
			return fail(err)
		}
		if err != nil {
			d.failAtOpen(v, err)
			continue
		}
		versions[i] = vv
	}

	// One DataNode UUID for all volumes: the first volume that has one
	// decides; a volume with another is someone else's.
	from := ""
	for i, vv := range versions {
		if vv == nil {
			continue
		}
		if d.uuid == "" {
			d.uuid, from = vv.DatanodeUUID, d.vols[i].path
			continue
		}
		if vv.DatanodeUUID != d.uuid {
			return fail(errorf(ErrDatanodeUUID, "volume %s belongs to datanode %s, but %s belongs to datanode %s: a volume of another DataNode was configured (remove it from dfs.datanode.data.dir, or clear it if its data is not wanted)",
				d.vols[i].path, vv.DatanodeUUID, from, d.uuid))
		}
	}
	if d.uuid == "" {
		d.uuid = newUUID()
	}
	seenIDs := map[string]bool{}
	for i, v := range d.vols {
		if v.failed.Load() {
			continue
		}
		vv := versions[i]
		rewrite := false
		switch {
		case vv == nil:
			vv = &volumeVersion{StorageID: "DS-" + newUUID(), DatanodeUUID: d.uuid, StorageType: v.typ}
			d.log.Info("fsdataset: new volume", "volume", v.path, "storageID", vv.StorageID, "datanodeUuid", d.uuid, "type", v.typ)
			rewrite = true
		case seenIDs[vv.StorageID]:
			old := vv.StorageID
			vv.StorageID = "DS-" + newUUID()
			d.log.Warn("fsdataset: duplicate storage ID (a copied volume?); assigning a new one", "volume", v.path, "old", old, "new", vv.StorageID)
			rewrite = true
		}
		if vv.StorageType != v.typ {
			if vv.StorageType != 0 {
				d.log.Warn("fsdataset: volume's storage type changed in the configuration", "volume", v.path, "was", vv.StorageType, "now", v.typ)
			}
			vv.StorageType = v.typ
			rewrite = true
		}
		if rewrite {
			if err := v.writeVersion(*vv); err != nil {
				d.failAtOpen(v, fmt.Errorf("write VERSION: %w", err))
				continue
			}
		}
		v.storageID = vv.StorageID
		seenIDs[vv.StorageID] = true
	}

	// Scan the volumes in parallel.
	found := make([][]*replica, len(d.vols))
	errs := make([]error, len(d.vols))
	var wg sync.WaitGroup
	for i, v := range d.vols {
		if v.failed.Load() {
			continue
		}
		wg.Go(func() { found[i], errs[i] = v.scan(d.log) })
	}
	wg.Wait()
	for i, v := range d.vols {
		if errs[i] != nil {
			d.failAtOpen(v, errs[i])
			continue
		}
		for _, r := range found[i] {
			old := d.replicas[r.id]
			if old == nil {
				d.addLocked(r)
				continue
			}
			keep, drop := old, r
			if better(r, old) {
				keep, drop = r, old
			}
			d.log.Warn("fsdataset: replicas of one block on two volumes; keeping one", "keep", keep.describe(), "drop", drop.describe())
			if err := drop.removeFiles(); err != nil {
				d.log.Error("fsdataset: cannot remove duplicate replica", "replica", drop.describe(), "err", err)
			}
			if keep == r {
				d.dropLocked(old)
				d.addLocked(r)
			}
		}
	}
	if err := d.Failed(); err != nil {
		return fail(err)
	}
	n := 0
	for _, v := range d.vols {
		if !v.failed.Load() {
			n++
		}
	}
	d.log.Info("fsdataset: opened", "datanodeUuid", d.uuid, "volumes", n, "failed", d.nfailed, "replicas", len(d.replicas))
	return d, nil
}

func (d *Dataset) failAtOpen(v *volume, err error) {
	v.failErr = err
	v.failed.Store(true)
	v.release()
	d.nfailed++
	d.log.Error("fsdataset: volume failed", "volume", v.path, "err", err)
}

// addLocked puts a replica in the map; Dataset.mu held.
func (d *Dataset) addLocked(r *replica) {
	d.replicas[r.id] = r
	r.vol.blocks++
	r.vol.used += r.disk
}

// dropLocked takes a replica out of the map; Dataset.mu held.
func (d *Dataset) dropLocked(r *replica) {
	if d.replicas[r.id] == r {
		delete(d.replicas, r.id)
		r.vol.blocks--
		r.vol.used -= r.disk
	}
}

// setDiskLocked updates a replica's accounted bytes; Dataset.mu held.
func (d *Dataset) setDiskLocked(r *replica, n int64) {
	if d.replicas[r.id] == r {
		r.vol.used += n - r.disk
	}
	r.disk = n
}

// emitLocked delivers an event; Dataset.mu held.
func (d *Dataset) emitLocked(k EventKind, info ReplicaInfo) {
	if d.cfg.OnChange != nil {
		d.cfg.OnChange(ReplicaEvent{Kind: k, Info: info})
	}
}

// DatanodeUUID returns the DataNode's UUID, the same on every volume.
func (d *Dataset) DatanodeUUID() string { return d.uuid }

// Volumes describes the volumes, in configuration order, failed ones
// included (with Failed set).
func (d *Dataset) Volumes() []VolumeInfo {
	out := make([]VolumeInfo, len(d.vols))
	for i, v := range d.vols {
		vi := VolumeInfo{StorageID: v.storageID, Type: v.typ, Path: v.path}
		if v.failed.Load() {
			vi.Failed = true
			out[i] = vi
			continue
		}
		vi.Capacity, vi.Remaining, _ = v.usage(d.cfg.Reserved)
		d.mu.Lock()
		vi.DfsUsed, vi.NumBlocks = v.used, v.blocks
		vi.Failed = v.failed.Load()
		d.mu.Unlock()
		out[i] = vi
	}
	return out
}

// Get returns the replica of a block ID.
func (d *Dataset) Get(blockID uint64) (ReplicaInfo, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.replicas[blockID]
	if r == nil {
		return ReplicaInfo{}, false
	}
	return r.info(), true
}

// Report returns every replica by storage ID, for a full block report.
// Every volume in service has an entry, possibly empty; the replicas are
// sorted by block ID.
func (d *Dataset) Report() map[string][]ReplicaInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string][]ReplicaInfo{}
	for _, v := range d.vols {
		if !v.failed.Load() {
			out[v.storageID] = []ReplicaInfo{}
		}
	}
	for _, r := range d.replicas {
		out[r.vol.storageID] = append(out[r.vol.storageID], r.info())
	}
	for _, l := range out {
		slices.SortFunc(l, func(a, b ReplicaInfo) int { return cmpU64(a.ID, b.ID) })
	}
	return out
}

// notFound is the error for a missing replica.
func notFound(b Block) error {
	return errorf(ErrReplicaNotFound, "replica %v not found", b)
}

// acquire finds the replica of b.ID and returns it with its fileMu held,
// check having passed under Dataset.mu both before and after the lock was
// taken. With stop, an open writer is stopped first (flushed and closed;
// the replica stays RBW), and the replica is returned without a writer.
func (d *Dataset) acquire(b Block, stop bool, check func(r *replica) error) (*replica, error) {
	for {
		d.mu.Lock()
		if d.closed {
			d.mu.Unlock()
			return nil, ErrClosed
		}
		r := d.replicas[b.ID]
		if r == nil {
			d.mu.Unlock()
			return nil, notFound(b)
		}
		if err := check(r); err != nil {
			d.mu.Unlock()
			return nil, err
		}
		w := r.writer
		d.mu.Unlock()
		if stop && w != nil {
			w.shutdown(true)
		}
		r.fileMu.Lock()
		d.mu.Lock()
		if d.replicas[b.ID] != r || (stop && r.writer != nil) {
			// Replaced, removed or reopened meanwhile: look again.
			d.mu.Unlock()
			r.fileMu.Unlock()
			continue
		}
		err := check(r)
		if err == nil && d.closed {
			err = ErrClosed
		}
		d.mu.Unlock()
		if err != nil {
			r.fileMu.Unlock()
			return nil, err
		}
		return r, nil
	}
}

// Delete removes a replica (the NameNode's invalidate): its writer, if any,
// is stopped, its files removed and it leaves the map (a Deleted event).
// The replica's generation stamp must be ≤ b.GenStamp (ErrGenStamp
// otherwise: the request is older than the replica). If removing the files
// fails the replica still leaves the map and the error is returned.
func (d *Dataset) Delete(b Block) error {
	r, err := d.acquire(b, true, func(r *replica) error {
		if r.gs > b.GenStamp {
			return errorf(ErrGenStamp, "not deleting %s: it is newer than %v", r.describe(), b)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer r.fileMu.Unlock()
	err = r.removeFiles()
	d.mu.Lock()
	desc := r.describe()
	d.dropLocked(r)
	d.emitLocked(Deleted, r.info())
	d.mu.Unlock()
	if err != nil {
		return fmt.Errorf("fsdataset: delete %s: %w", desc, err)
	}
	return nil
}

// CheckVolumes checks each volume in service (its directories exist and a
// file can be written and synced there) and takes a volume that fails out
// of service for good: its replicas leave the map (Deleted events) and its
// writers fail. It returns the errors of the volumes that failed in this
// check. Call it periodically and after an I/O error; then check Failed.
func (d *Dataset) CheckVolumes() []error {
	d.checkMu.Lock()
	defer d.checkMu.Unlock()
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return []error{ErrClosed}
	}
	var errs []error
	for _, v := range d.vols {
		if v.failed.Load() {
			continue
		}
		if err := v.check(); err != nil {
			err = fmt.Errorf("fsdataset: volume %s failed: %w", v, err)
			if d.failVolume(v, err) {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// failVolume takes a volume out of service; false if it already was.
func (d *Dataset) failVolume(v *volume, err error) bool {
	d.mu.Lock()
	if v.failed.Load() {
		d.mu.Unlock()
		return false
	}
	v.failErr = err
	v.failed.Store(true)
	d.nfailed++
	var dropped int
	for _, r := range d.replicas {
		if r.vol == v {
			d.dropLocked(r)
			d.emitLocked(Deleted, r.info())
			dropped++
		}
	}
	d.mu.Unlock()
	d.log.Error("fsdataset: volume taken out of service", "volume", v.path, "storageID", v.storageID, "replicasLost", dropped, "err", err)
	v.release()
	return true
}

// Failed returns an error wrapping ErrTooManyFailed when more volumes have
// failed than Config.FailedVolumesTolerated allows (with -1: when none
// works); the DataNode must then stop. Nil otherwise.
func (d *Dataset) Failed() error {
	d.mu.Lock()
	n := d.nfailed
	d.mu.Unlock()
	tol := d.cfg.FailedVolumesTolerated
	if tol < 0 {
		tol = len(d.vols) - 1
	}
	if n <= tol {
		return nil
	}
	var which []string
	for _, v := range d.vols {
		if v.failed.Load() {
			which = append(which, fmt.Sprintf("%s: %v", v.path, v.failErr))
		}
	}
	return errorf(ErrTooManyFailed, "%d of %d volumes failed, dfs.datanode.failed.volumes.tolerated is %d (%s)",
		n, len(d.vols), d.cfg.FailedVolumesTolerated, strings.Join(which, "; "))
}

// Close stops every open writer (flushing it; its replica stays RBW and is
// found as RWR by the next Open) and releases the volumes. Later calls
// return ErrClosed (writers ErrWriterClosed). Safe to call twice.
func (d *Dataset) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	var ws []*ReplicaWriter
	for _, r := range d.replicas {
		if r.writer != nil {
			ws = append(ws, r.writer)
		}
	}
	d.mu.Unlock()
	for _, w := range ws {
		w.shutdown(true)
	}
	for _, v := range d.vols {
		v.release()
	}
	return nil
}

// cursorKey is a round-robin position: per storage type, and for
// AvailableSpace per group (0 all, 1 high, 2 low).
type cursorKey struct {
	t     storage.Type
	group int
}

// chooseVolume picks the volume for a new replica of about need bytes.
func (d *Dataset) chooseVolume(b Block, t storage.Type, storageID string) (*volume, error) {
	need := max(b.NumBytes, 0)
	if storageID != "" {
		for _, v := range d.vols {
			if v.storageID == storageID {
				if v.failed.Load() {
					return nil, errorf(ErrNoVolume, "cannot create %v: volume %s has failed", b, v)
				}
				return v, nil
			}
		}
		return nil, errorf(ErrNoVolume, "cannot create %v: no volume with storage ID %s", b, storageID)
	}
	if t == 0 {
		t = storage.Disk
	}
	var cands []*volume
	for _, v := range d.vols {
		if v.typ == t && !v.failed.Load() {
			cands = append(cands, v)
		}
	}
	if len(cands) == 0 {
		return nil, errorf(ErrNoVolume, "cannot create %v: no %s volume in service", b, t)
	}
	avail := make([]int64, len(cands))
	for i, v := range cands {
		_, avail[i], _ = v.usage(d.cfg.Reserved) // an error counts as full
	}
	d.chooseMu.Lock()
	defer d.chooseMu.Unlock()
	idx := []int{}
	group := 0
	if d.cfg.Choosing == AvailableSpace {
		lo, hi := avail[0], avail[0]
		for _, a := range avail {
			lo, hi = min(lo, a), max(hi, a)
		}
		if hi-lo >= d.cfg.AvailableSpaceThreshold {
			var high, low []int
			var maxLow int64
			for i, a := range avail {
				if a < lo+d.cfg.AvailableSpaceThreshold {
					low = append(low, i)
					maxLow = max(maxLow, a)
				} else {
					high = append(high, i)
				}
			}
			p := d.cfg.AvailableSpacePreference
			nh, nl := float64(len(high)), float64(len(low))
			scaled := nh * p / (nh*p + nl*(1-p))
			if maxLow <= need || d.rng.Float64() < scaled {
				idx, group = high, 1
			} else {
				idx, group = low, 2
			}
		}
	}
	if len(idx) == 0 {
		for i := range cands {
			idx = append(idx, i)
		}
	}
	key := cursorKey{t, group}
	start := d.cursors[key] % len(idx)
	for k := range idx {
		i := idx[(start+k)%len(idx)]
		if avail[i] > need {
			d.cursors[key] = (start + k + 1) % len(idx)
			return cands[i], nil
		}
	}
	return nil, errorf(ErrNoVolume, "cannot create %v: out of space: no %s volume has more than %d bytes available", b, t, need)
}
