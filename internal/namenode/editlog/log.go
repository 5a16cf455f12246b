package editlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/vfs"
)

// Options tune a Log. The zero value is usable.
type Options struct {
	// Logger receives recovery and checkpoint messages; slog.Default() if
	// nil.
	Logger *slog.Logger
	// ImagesToKeep is how many of the newest images SaveImage keeps
	// (Hadoop's dfs.namenode.num.checkpoints.retained); default 2, minimum 1.
	// Keeping 2 lets Load fall back to the previous image if the newest is
	// damaged.
	ImagesToKeep int
	// SyncHook, if set, is called by the group-commit leader after writing
	// a batch and before fsyncing it. A non-nil error fails the log exactly
	// as an fsync error would. Meant for tests: injecting disk failures, or
	// slowing fsync down to make group commit deterministic.
	SyncHook func() error

	// SegmentPreallocation is the step, in bytes, by which the in-progress
	// segment is extended with zeros ahead of the records written into it,
	// as Hadoop preallocates edit logs: fsync is much cheaper when it need
	// not commit a new file size. 0 means 1 MiB; negative disables it.
	SegmentPreallocation int64

	// Recover makes Load truncate the in-progress segment at its first
	// damaged record even when valid records follow it, instead of failing
	// with ErrCorrupt (Hadoop's `namenode -recover`). A crash can leave
	// such a hole when the pages of the last, never-fsynced batch reach the
	// disk out of order; bit rot in acknowledged records looks the same, so
	// this is for an operator to choose. Damage in finalized segments is
	// an error regardless.
	Recover bool

	// FS is the file system of the storage directory; nil means
	// vfs.Default, the operating system's. Tests inject faults here
	// (vfs/errorfs): a failed write or fsync fails the log as described
	// at Sync.
	FS vfs.FS

	// wrapFile, for this package's tests, wraps every segment file opened
	// for writing, to inject write and fsync failures.
	wrapFile func(segmentFile) segmentFile
}

// segmentFile is what the log needs of the segment it appends to.
type segmentFile interface {
	io.WriterAt
	Truncate(size int64) error
	Sync() error
	Close() error
}

const defaultPreallocation = 1 << 20

// zeros is the source of preallocation writes; never modified.
var zeros = make([]byte, 256<<10)

// Stats are counters for metrics and checkpoint decisions. Counters start at
// zero at Open.
type Stats struct {
	// Syncs is the number of group commits (write + fsync rounds).
	Syncs uint64
	// Records is the number of records appended.
	Records uint64
	// Bytes is the number of bytes written to segments, framing included.
	Bytes uint64
	// SyncTime is the total time spent writing and fsyncing batches.
	SyncTime time.Duration

	// LastTxID and SyncedTxID are LastTxID() and SyncedTxID().
	LastTxID   uint64
	SyncedTxID uint64
	// SegmentStartTxID is the first txid of the in-progress segment.
	SegmentStartTxID uint64
	// SegmentBytes is the in-progress segment's size, including records
	// appended but not yet written.
	SegmentBytes int64
	// ImageTxID is the txid of the newest image (loaded or saved).
	ImageTxID uint64
	// TxnsSinceImage is LastTxID - ImageTxID: compare it with
	// dfs.namenode.checkpoint.txns to decide when to checkpoint.
	TxnsSinceImage uint64
}

// Log is a set of open NameNode storage directories (one or more, Hadoop's
// redundant dfs.namenode.name.dir): their images and their write-ahead edit
// log, every directory holding the same. Append, Sync, LastTxID,
// SyncedTxID, Stats, Dirs and SaveImage are safe for concurrent use; Append
// and Roll must be serialised by the caller (its namespace lock) so that
// txid order is the order in which mutations were applied.
type Log struct {
	fs      vfs.FS // never nil
	dirs    []*storageDir
	opts    Options
	logger  *slog.Logger
	version Version

	imgMu sync.Mutex // serialises SaveImage, and Close against it

	mu         sync.Mutex
	loaded     bool
	loadCalled bool
	closed     bool
	err        error // set once, on the first I/O failure; wraps ErrFailed

	lastTxID   uint64
	syncedTxID uint64
	buf        []byte // framed records lastTxID-(bufRecords-1)..lastTxID, not yet written
	spare      []byte // the other half of the double buffer
	flushing   bool   // a goroutine owns file I/O (group-commit leader, Roll)
	flushed    chan struct{}

	// Every active directory's in-progress segment starts at segStart and
	// holds the same records, so they end at the same segBytes.
	segStart  uint64
	segBytes  int64 // end of the records written to the segments
	imageTxID uint64
	stats     Stats
}

// storageDir is one of a Log's directories. A write, fsync, roll or image
// failure takes it out of service for the rest of the Log's life (Hadoop's
// dfs.namenode.name.dir.restore is false by default); the next Load
// repopulates it.
type storageDir struct {
	path, cur string
	lock      *dirLock
	formatted bool // VERSION was found at Open

	// file is the in-progress segment; only the flushing owner uses it and
	// allocEnd (its size: records + zero fill).
	file     segmentFile
	allocEnd int64

	// Guarded by Log.mu.
	active   bool
	err      error // why it was taken out of service
	failedAt time.Time
}

// DirStatus is the state of one storage directory, for the NameNode's
// status page, metrics and reports.
type DirStatus struct {
	// Path is the directory as configured.
	Path string `json:"path"`
	// Active: the directory receives every edit and image. False once a
	// failure took it out of service.
	Active bool `json:"active"`
	// Err is the failure that took it out of service; "" while active.
	Err string `json:"error,omitempty"`
	// FailedAt is when that happened; zero while active.
	FailedAt time.Time `json:"failedAt,omitzero"`
}

// Open is OpenDirs with the single directory dir.
func Open(dir string, opts Options) (*Log, error) { return OpenDirs([]string{dir}, opts) }

// OpenDirs locks every directory of dirs (flock on <dir>/in_use.lock) and
// reads their VERSION files, which must agree on the namespace's identity.
// A directory that exists but holds no VERSION (a wiped or replaced disk)
// is accepted when another one is formatted: Load repopulates it. A
// missing directory is refused, as Hadoop refuses an inaccessible one (an
// unmounted disk must not silently become an empty directory). The Log
// must then be Loaded before use.
func OpenDirs(dirs []string, opts Options) (*Log, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ImagesToKeep <= 0 {
		opts.ImagesToKeep = 2
	}
	if opts.SegmentPreallocation == 0 {
		opts.SegmentPreallocation = defaultPreallocation
	}
	if err := checkDirs(dirs); err != nil {
		return nil, err
	}
	fsys := vfs.Or(opts.FS)
	l := &Log{fs: fsys, opts: opts, logger: opts.Logger, flushed: make(chan struct{})}
	fail := func(err error) (*Log, error) {
		for _, d := range l.dirs {
			d.lock.release()
		}
		return nil, err
	}
	var first *storageDir
	for _, dir := range dirs {
		st, err := fsys.Stat(dir)
		if err != nil || !st.IsDir() {
			return fail(notFormatted(dir))
		}
		lk, err := lockDir(fsys, dir)
		if err != nil {
			return fail(err)
		}
		if err := tighten(fsys, dir); err != nil {
			lk.release()
			return fail(fmt.Errorf("editlog: restricting %s to its owner: %w", dir, err))
		}
		d := &storageDir{path: dir, cur: filepath.Join(dir, currentDir), lock: lk, active: true}
		l.dirs = append(l.dirs, d)
		v, err := readVersion(fsys, dir)
		if errors.Is(err, ErrNotFormatted) && len(dirs) > 1 {
			continue
		}
		if err != nil {
			return fail(err)
		}
		d.formatted = true
		if first == nil {
			first, l.version = d, v
		} else if v.NamespaceID != l.version.NamespaceID || v.ClusterID != l.version.ClusterID || v.BlockPoolID != l.version.BlockPoolID {
			return fail(fmt.Errorf("%w: storage directories %s and %s hold different namespaces (namespaceID %d and %d, clusterID %s and %s)",
				ErrCorrupt, first.path, dir, l.version.NamespaceID, v.NamespaceID, l.version.ClusterID, v.ClusterID))
		}
	}
	if first == nil {
		return fail(notFormatted(dirs[0]))
	}
	return l, nil
}

// checkDirs refuses an empty list and a directory named twice.
func checkDirs(dirs []string) error {
	if len(dirs) == 0 {
		return errors.New("editlog: no storage directory")
	}
	seen := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		if d == "" {
			return errors.New("editlog: empty storage directory name")
		}
		c := filepath.Clean(d)
		if seen[c] {
			return fmt.Errorf("editlog: storage directory %s is listed twice", d)
		}
		seen[c] = true
	}
	return nil
}

// Version returns the storage's identity from VERSION.
func (l *Log) Version() Version { return l.version }

// Dir returns the first storage directory.
func (l *Log) Dir() string { return l.dirs[0].path }

// Dirs reports every storage directory's state, in the order given to
// OpenDirs.
func (l *Log) Dirs() []DirStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]DirStatus, len(l.dirs))
	for i, d := range l.dirs {
		out[i] = DirStatus{Path: d.path, Active: d.active, FailedAt: d.failedAt}
		if d.err != nil {
			out[i].Err = d.err.Error()
		}
	}
	return out
}

// activeLocked returns the directories in service.
func (l *Log) activeLocked() []*storageDir {
	act := make([]*storageDir, 0, len(l.dirs))
	for _, d := range l.dirs {
		if d.active {
			act = append(act, d)
		}
	}
	return act
}

// failDirLocked takes d out of service for err. When no directory is left
// the log fails (failLocked) with why.
func (l *Log) failDirLocked(d *storageDir, err error) {
	if !d.active {
		return
	}
	d.active, d.err, d.failedAt = false, err, time.Now()
	left := len(l.activeLocked())
	l.logger.Error("editlog: storage directory failed; taken out of service", "dir", d.path, "err", err, "active_dirs", left)
	if left == 0 {
		if len(l.dirs) == 1 {
			l.failLocked(err)
		} else {
			l.failLocked(fmt.Errorf("every storage directory failed; last: %s: %w", d.path, err))
		}
	}
}

// failDirsLocked takes out of service every dirs[i] with errs[i] != nil,
// each error prefixed by what(dir).
func (l *Log) failDirsLocked(dirs []*storageDir, errs []error, what string) {
	for i, err := range errs {
		if err != nil {
			l.failDirLocked(dirs[i], fmt.Errorf("%s: %w", what, err))
		}
	}
}

// parallel runs fn(0) … fn(n-1) at once and returns their errors, index
// for index: a round of I/O on every directory takes as long as the
// slowest disk, not their sum.
func parallel(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	if n == 1 {
		errs[0] = fn(0)
		return errs
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	return errs
}

func countErrs(errs []error) int {
	n := 0
	for _, err := range errs {
		if err != nil {
			n++
		}
	}
	return n
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// usableLocked reports why the log cannot take new work, if it cannot.
func (l *Log) usableLocked() error {
	switch {
	case l.err != nil:
		return l.err
	case l.closed:
		return ErrClosed
	case !l.loaded:
		return ErrNotLoaded
	}
	return nil
}

// failLocked records the failure that left no directory in service; the
// log stays failed.
func (l *Log) failLocked(err error) {
	if l.err == nil {
		l.err = fmt.Errorf("%w: %w", ErrFailed, err)
		for _, d := range l.dirs {
			if d.active {
				d.active, d.err, d.failedAt = false, err, time.Now()
			}
		}
		l.logger.Error("editlog: edit log failed; the NameNode must stop", "err", err)
	}
}

// Append assigns the next txid to rec and buffers a copy of it. It does no
// I/O and never blocks on I/O; the record is durable once Sync(txid)
// returns nil. The caller serialises Append (under its namespace lock) so
// that txid order is apply order. It fails on a failed or closed log, before
// Load, or when rec is longer than MaxRecordSize.
func (l *Log) Append(rec []byte) (uint64, error) {
	if len(rec) > MaxRecordSize {
		return 0, fmt.Errorf("editlog: record of %d bytes exceeds the maximum %d", len(rec), MaxRecordSize)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usableLocked(); err != nil {
		return 0, err
	}
	l.lastTxID++
	l.buf = appendRecord(l.buf, l.lastTxID, rec)
	l.stats.Records++
	return l.lastTxID, nil
}

// Sync returns nil once every record up to txid is durable (written and
// fsynced). Concurrent callers share fsyncs: one of them writes and fsyncs
// everything buffered so far while later records accumulate for the next
// round. After an I/O failure Sync returns the failure (wrapping ErrFailed)
// for every txid. If ctx ends first Sync returns ctx.Err(); the record stays
// buffered and is synced by a later round.
func (l *Log) Sync(ctx context.Context, txid uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if l.err != nil {
			return l.err
		}
		if !l.loaded && !l.closed {
			return ErrNotLoaded
		}
		if txid <= l.syncedTxID {
			return nil
		}
		if l.closed {
			return ErrClosed
		}
		if txid > l.lastTxID {
			return fmt.Errorf("editlog: Sync(%d): txid was never appended (last is %d)", txid, l.lastTxID)
		}
		if !l.flushing {
			l.flushLocked()
			continue
		}
		ch := l.flushed
		l.mu.Unlock()
		select {
		case <-ch:
			l.mu.Lock()
		case <-ctx.Done():
			l.mu.Lock()
			return ctx.Err()
		}
	}
}

// waitFlushLocked waits until no goroutine owns the file.
func (l *Log) waitFlushLocked() {
	for l.flushing {
		ch := l.flushed
		l.mu.Unlock()
		<-ch
		l.mu.Lock()
	}
}

// flushLocked makes the caller the group-commit leader for one round: it
// takes the buffer, writes it to every active directory and fsyncs them
// all, in parallel and without holding l.mu, then publishes the new
// syncedTxID (or the failure) and wakes the waiters. A directory whose
// write or fsync fails leaves service; the round succeeds if any directory
// remains. Called with l.mu held, !l.flushing and l.buf non-empty; returns
// with l.mu held.
func (l *Log) flushLocked() {
	l.flushing = true
	batch, target, off, seg := l.buf, l.lastTxID, l.segBytes, l.segStart
	act := l.activeLocked()
	l.buf, l.spare = l.spare[:0], nil
	l.mu.Unlock()

	start := time.Now()
	errs := parallel(len(act), func(i int) error { return l.writeBatch(act[i], batch, off) })
	if l.opts.SyncHook != nil {
		if err := l.opts.SyncHook(); err != nil {
			for i := range errs {
				if errs[i] == nil {
					errs[i] = err
				}
			}
		}
	}
	ok := make([]*storageDir, 0, len(act))
	for i, d := range act {
		if errs[i] == nil {
			ok = append(ok, d)
		}
	}
	serrs := parallel(len(ok), func(i int) error { return ok[i].file.Sync() })
	elapsed := time.Since(start)

	l.mu.Lock()
	if cap(batch) <= 16<<20 {
		l.spare = batch[:0]
	}
	what := "write " + inProgressName(seg)
	l.failDirsLocked(act, errs, what)
	l.failDirsLocked(ok, serrs, what)
	if l.err == nil {
		l.syncedTxID = target
		l.segBytes += int64(len(batch))
		l.stats.Syncs++
		l.stats.Bytes += uint64(len(batch))
		l.stats.SyncTime += elapsed
	}
	l.flushing = false
	close(l.flushed)
	l.flushed = make(chan struct{})
}

// writeBatch writes batch at off, extending the zero-filled preallocation
// past it when needed. Called by the flushing owner only.
func (l *Log) writeBatch(d *storageDir, batch []byte, off int64) error {
	f := d.file
	if err := writeFullAt(f, batch, off); err != nil {
		return err
	}
	end := off + int64(len(batch))
	step := l.opts.SegmentPreallocation
	if step <= 0 || end <= d.allocEnd {
		if end > d.allocEnd {
			d.allocEnd = end
		}
		return nil
	}
	newEnd := (end + step - 1) / step * step
	for pos := end; pos < newEnd; {
		n := int64(len(zeros))
		if newEnd-pos < n {
			n = newEnd - pos
		}
		if err := writeFullAt(f, zeros[:n], pos); err != nil {
			return fmt.Errorf("preallocate: %w", err)
		}
		pos += n
	}
	d.allocEnd = newEnd
	return nil
}

func writeFullAt(f segmentFile, p []byte, off int64) error {
	n, err := f.WriteAt(p, off)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return err
}

// LastTxID returns the txid of the last record appended (or loaded).
func (l *Log) LastTxID() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastTxID
}

// SyncedTxID returns the txid up to which records are durable.
func (l *Log) SyncedTxID() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.syncedTxID
}

// Stats returns the counters.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.LastTxID = l.lastTxID
	s.SyncedTxID = l.syncedTxID
	s.SegmentStartTxID = l.segStart
	s.SegmentBytes = l.segBytes + int64(len(l.buf))
	s.ImageTxID = l.imageTxID
	if l.lastTxID > l.imageTxID {
		s.TxnsSinceImage = l.lastTxID - l.imageTxID
	}
	return s
}

// Roll syncs the in-progress segment, finalizes it (renames it
// edits_<start>-<end>) and starts a new one at end+1. It returns end, the
// last txid: call it under the namespace lock right before snapshotting the
// namespace, then SaveImage(end, ...) with the snapshot. Rolling an empty
// segment does nothing and returns LastTxID(). An I/O error fails the log.
func (l *Log) Roll() (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usableLocked(); err != nil {
		return 0, err
	}
	l.waitFlushLocked()
	if l.err != nil {
		return 0, l.err
	}
	if l.syncedTxID < l.lastTxID {
		l.flushLocked()
		if l.err != nil {
			return 0, l.err
		}
	}
	end := l.syncedTxID
	if end < l.segStart {
		return end, nil // nothing in this segment
	}
	l.flushing = true
	start, dataEnd := l.segStart, l.segBytes
	act := l.activeLocked()
	l.mu.Unlock()
	errs := parallel(len(act), func(i int) error { return l.rollFiles(act[i], start, end, dataEnd) })
	l.mu.Lock()
	l.failDirsLocked(act, errs, "roll segment "+inProgressName(start))
	if l.err == nil {
		l.segStart, l.segBytes = end+1, segmentHeaderSize
	}
	l.flushing = false
	close(l.flushed)
	l.flushed = make(chan struct{})
	if l.err != nil {
		return 0, l.err
	}
	l.logger.Debug("editlog: rolled segment", "finalized", finalizedName(start, end), "next", end+1)
	return end, nil
}

// rollFiles cuts the preallocated zeros off d's segment [start, end],
// finalizes it and creates the next one. d.file is nil on failure.
func (l *Log) rollFiles(d *storageDir, start, end uint64, dataEnd int64) error {
	old := d.file
	d.file = nil
	if d.allocEnd > dataEnd {
		if err := old.Truncate(dataEnd); err != nil {
			old.Close()
			return err
		}
		if err := old.Sync(); err != nil {
			old.Close()
			return err
		}
	}
	if err := old.Close(); err != nil {
		return err
	}
	if err := l.fs.Rename(filepath.Join(d.cur, inProgressName(start)), filepath.Join(d.cur, finalizedName(start, end))); err != nil {
		return err
	}
	if err := syncDir(l.fs, d.cur); err != nil {
		return err
	}
	f, err := l.createSegment(d, end+1)
	if err != nil {
		return err
	}
	d.file, d.allocEnd = f, segmentHeaderSize
	return nil
}

// createSegment creates d's edits_inprogress_<start> with its header,
// makes it durable, then records start in seen_txid.
func (l *Log) createSegment(d *storageDir, start uint64) (segmentFile, error) {
	path := filepath.Join(d.cur, inProgressName(start))
	f, err := l.fs.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return nil, err
	}
	sf := l.wrap(f)
	err = writeFullAt(sf, segmentHeader(start), 0)
	if err == nil {
		err = sf.Sync()
	}
	if err == nil {
		err = syncDir(l.fs, d.cur)
	}
	if err == nil {
		err = writeSeenTxID(l.fs, d.cur, start)
	}
	if err != nil {
		sf.Close()
		return nil, err
	}
	return sf, nil
}

// openSegmentForAppend reopens d's existing in-progress segment.
func (l *Log) openSegmentForAppend(d *storageDir, start uint64) (segmentFile, error) {
	f, err := l.fs.OpenFile(filepath.Join(d.cur, inProgressName(start)), os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	return l.wrap(f), nil
}

func (l *Log) wrap(f vfs.File) segmentFile {
	if l.opts.wrapFile != nil {
		return l.opts.wrapFile(f)
	}
	return f
}

// Close syncs what was appended, closes the segment (which stays in
// progress; the next Load continues it) and releases the directory lock.
// It waits for a running SaveImage. It returns the log's failure, if any.
// Calling it again returns nil.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.waitFlushLocked()
	if l.err == nil && l.loaded && l.syncedTxID < l.lastTxID {
		l.flushLocked()
	}
	err := l.err
	l.closed = true
	type open struct {
		f      segmentFile
		active bool
	}
	var files []open
	for _, d := range l.dirs {
		if d.file != nil {
			files = append(files, open{d.file, d.active})
			d.file = nil
		}
	}
	l.mu.Unlock()
	for _, o := range files {
		// A directory already out of service may fail again here; its
		// failure was reported when it happened.
		if cerr := o.f.Close(); err == nil && cerr != nil && o.active {
			err = fmt.Errorf("editlog: close segment: %w", cerr)
		}
	}
	l.imgMu.Lock()
	defer l.imgMu.Unlock()
	for _, d := range l.dirs {
		if rerr := d.lock.release(); err == nil && rerr != nil {
			err = fmt.Errorf("editlog: release lock %s: %w", d.path, rerr)
		}
	}
	return err
}
