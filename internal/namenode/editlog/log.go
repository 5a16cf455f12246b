package editlog

import (
	"context"
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

// Log is an open NameNode storage directory: its images and its write-ahead
// edit log. Append, Sync, LastTxID, SyncedTxID, Stats and SaveImage are safe
// for concurrent use; Append and Roll must be serialised by the caller (its
// namespace lock) so that txid order is the order in which mutations were
// applied.
type Log struct {
	fs      vfs.FS // never nil
	dir     string
	cur     string
	opts    Options
	logger  *slog.Logger
	version Version
	lock    *dirLock

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

	file      segmentFile // in-progress segment; written only by the flushing owner
	segStart  uint64
	segBytes  int64 // end of the records written to file
	allocEnd  int64 // file size (records + zero fill); only the flushing owner uses it
	imageTxID uint64
	stats     Stats
}

// Open locks dir (flock on dir/in_use.lock) and reads its VERSION. The Log
// must then be Loaded before use.
func Open(dir string, opts Options) (*Log, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ImagesToKeep <= 0 {
		opts.ImagesToKeep = 2
	}
	if opts.SegmentPreallocation == 0 {
		opts.SegmentPreallocation = defaultPreallocation
	}
	fsys := vfs.Or(opts.FS)
	st, err := fsys.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, notFormatted(dir)
	}
	lk, err := lockDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	v, err := readVersion(fsys, dir)
	if err != nil {
		lk.release()
		return nil, err
	}
	return &Log{
		fs:      fsys,
		dir:     dir,
		cur:     filepath.Join(dir, currentDir),
		opts:    opts,
		logger:  opts.Logger,
		version: v,
		lock:    lk,
		flushed: make(chan struct{}),
	}, nil
}

// Version returns the storage's identity from VERSION.
func (l *Log) Version() Version { return l.version }

// Dir returns the storage directory.
func (l *Log) Dir() string { return l.dir }

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

// failLocked records the first I/O failure; the log stays failed.
func (l *Log) failLocked(err error) {
	if l.err == nil {
		l.err = fmt.Errorf("%w: %w", ErrFailed, err)
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
// takes the buffer, writes and fsyncs it without holding l.mu, then
// publishes the new syncedTxID (or the failure) and wakes the waiters.
// Called with l.mu held, !l.flushing and l.buf non-empty; returns with l.mu
// held.
func (l *Log) flushLocked() {
	l.flushing = true
	batch, target, f, off := l.buf, l.lastTxID, l.file, l.segBytes
	l.buf, l.spare = l.spare[:0], nil
	l.mu.Unlock()

	start := time.Now()
	err := l.writeBatch(f, batch, off)
	if err == nil && l.opts.SyncHook != nil {
		err = l.opts.SyncHook()
	}
	if err == nil {
		err = f.Sync()
	}
	elapsed := time.Since(start)

	l.mu.Lock()
	if cap(batch) <= 16<<20 {
		l.spare = batch[:0]
	}
	if err != nil {
		l.failLocked(fmt.Errorf("write %s: %w", inProgressName(l.segStart), err))
	} else {
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
func (l *Log) writeBatch(f segmentFile, batch []byte, off int64) error {
	if err := writeFullAt(f, batch, off); err != nil {
		return err
	}
	end := off + int64(len(batch))
	step := l.opts.SegmentPreallocation
	if step <= 0 || end <= l.allocEnd {
		if end > l.allocEnd {
			l.allocEnd = end
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
	l.allocEnd = newEnd
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
	old, start, dataEnd := l.file, l.segStart, l.segBytes
	l.mu.Unlock()
	nf, err := l.rollFiles(old, start, end, dataEnd)
	l.mu.Lock()
	if err == nil {
		l.file, l.segStart, l.segBytes, l.allocEnd = nf, end+1, segmentHeaderSize, segmentHeaderSize
	} else {
		l.file = nil
		l.failLocked(fmt.Errorf("roll segment %s: %w", inProgressName(start), err))
	}
	l.flushing = false
	close(l.flushed)
	l.flushed = make(chan struct{})
	if err != nil {
		return 0, l.err
	}
	l.logger.Debug("editlog: rolled segment", "finalized", finalizedName(start, end), "next", end+1)
	return end, nil
}

// rollFiles cuts the preallocated zeros off the segment [start, end],
// finalizes it and creates the next one.
func (l *Log) rollFiles(old segmentFile, start, end uint64, dataEnd int64) (segmentFile, error) {
	if l.allocEnd > dataEnd {
		if err := old.Truncate(dataEnd); err != nil {
			old.Close()
			return nil, err
		}
		if err := old.Sync(); err != nil {
			old.Close()
			return nil, err
		}
	}
	if err := old.Close(); err != nil {
		return nil, err
	}
	if err := l.fs.Rename(filepath.Join(l.cur, inProgressName(start)), filepath.Join(l.cur, finalizedName(start, end))); err != nil {
		return nil, err
	}
	if err := syncDir(l.fs, l.cur); err != nil {
		return nil, err
	}
	return l.createSegment(end + 1)
}

// createSegment creates edits_inprogress_<start> with its header, makes it
// durable, then records start in seen_txid.
func (l *Log) createSegment(start uint64) (segmentFile, error) {
	path := filepath.Join(l.cur, inProgressName(start))
	f, err := l.fs.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	sf := l.wrap(f)
	err = writeFullAt(sf, segmentHeader(start), 0)
	if err == nil {
		err = sf.Sync()
	}
	if err == nil {
		err = syncDir(l.fs, l.cur)
	}
	if err == nil {
		err = writeSeenTxID(l.fs, l.cur, start)
	}
	if err != nil {
		sf.Close()
		return nil, err
	}
	return sf, nil
}

// openSegmentForAppend reopens an existing in-progress segment.
func (l *Log) openSegmentForAppend(start uint64) (segmentFile, error) {
	f, err := l.fs.OpenFile(filepath.Join(l.cur, inProgressName(start)), os.O_WRONLY, 0)
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
	f := l.file
	l.file = nil
	l.mu.Unlock()
	if f != nil {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("editlog: close segment: %w", cerr)
		}
	}
	l.imgMu.Lock()
	defer l.imgMu.Unlock()
	if rerr := l.lock.release(); err == nil && rerr != nil {
		err = fmt.Errorf("editlog: release lock: %w", rerr)
	}
	return err
}
