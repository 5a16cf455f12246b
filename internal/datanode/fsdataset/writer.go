package fsdataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/stratafs/strata/internal/storage"
)

const (
	// dioAlign is the alignment of direct I/O buffers, offsets and
	// lengths: 4 KiB suits both 512-byte and 4 KiB sector devices.
	dioAlign = 4096
	// directBufSize is a direct-I/O writer's buffer: full buffers are
	// written with one O_DIRECT pwrite.
	directBufSize = 1 << 20
	// bufferedBufSize is a buffered writer's buffer: full buffers are
	// written with one pwrite, on the write-behind goroutine.
	bufferedBufSize = 256 << 10
)

var bufPools = map[int]*sync.Pool{directBufSize: {}, bufferedBufSize: {}}

// getBuf returns a dioAlign-aligned buffer of len 0 and cap size.
func getBuf(size int) []byte {
	if b, ok := bufPools[size].Get().(*[]byte); ok {
		return (*b)[:0]
	}
	raw := make([]byte, size+dioAlign)
	off := int(uintptr(unsafe.Pointer(&raw[0])) & (dioAlign - 1))
	if off != 0 {
		off = dioAlign - off
	}
	return raw[off : off : off+size]
}

func putBuf(b []byte) {
	if p := bufPools[cap(b)]; p != nil {
		p.Put(&b)
	}
}

// ReplicaWriter writes a replica being written: data at the end of the
// replica and the CRC32C of every chunk in the meta file. It is used by
// one goroutine at a time (the block receiver); BytesWritten and Info may
// be called from others. Data is buffered in memory: only Flush (or Sync,
// Finalize, Close) makes it visible to readers, and only Finalize makes the
// replica durable and acknowledgeable.
//
// Full buffers are written by a write-behind goroutine (writebehind.go)
// while Write fills the next one; buffered replicas also have their
// writeback started early (sync_file_range), so that Finalize's fsync
// waits for little more than the last window. With Config.DirectIO, full
// buffers (1 MiB) are written with O_DIRECT; a flush writes the aligned
// part of the buffer that way and the unaligned tail through the page
// cache (rewritten with O_DIRECT once its 4 KiB block fills), so flushing
// often costs synchronous device writes.
type ReplicaWriter struct {
	d   *Dataset
	r   *replica
	v   *volume
	id  uint64
	gs  uint64
	bpc int

	written   atomic.Int64 // bytes accepted by Write
	finalized atomic.Bool

	mu       sync.Mutex
	data     File   // the data file, through the page cache
	direct   File   // the data file opened with O_DIRECT, or nil
	meta     File   // the meta file
	buf      []byte // data not yet written out, from bufOff
	bufOff   int64
	wb       *writeBehind // started by the first full buffer; nil before
	nbufs    int          // buffers taken, w.buf and those of wb
	lent     bool         // Room handed out w.buf's free space; the owner's next call ends the loan
	length   int64        // bytes written (accepted), = written
	chunkCRC uint32       // CRC32C of the partial chunk at the end
	crcBase  int64        // index of the first checksum in pending
	pending  []byte       // checksums of completed chunks not yet written
	err      error        // sticky I/O error
	doneWhy  string       // why the writer is closed; "" while open
}

// openWriter opens a writer on a replica's files (dataPath, metaPath) for a
// replica of length bytes whose generation stamp will be gs. fresh
// creates the files (and writes the meta header); checkTail verifies the
// stored checksum of a partial last chunk before anything is appended to
// it.
func (d *Dataset) openWriter(r *replica, dataPath, metaPath string, gs uint64, bpc int, length int64, fresh, checkTail bool) (_ *ReplicaWriter, err error) {
	v := r.vol
	flag := os.O_RDWR
	if fresh {
		flag |= os.O_CREATE | os.O_TRUNC
	}
	w := &ReplicaWriter{d: d, r: r, v: v, id: r.id, gs: gs, bpc: bpc, length: length, bufOff: length, crcBase: length / int64(bpc)}
	w.written.Store(length)
	defer func() {
		if err != nil {
			w.closeFiles()
		}
	}()
	if w.data, err = d.fs.OpenFile(dataPath, flag, 0o644); err != nil {
		return nil, err
	}
	if w.meta, err = d.fs.OpenFile(metaPath, flag, 0o644); err != nil {
		return nil, err
	}
	if fresh {
		if _, err = w.meta.WriteAt(metaHeader(bpc), 0); err != nil {
			return nil, err
		}
	}
	if d.cfg.DirectIO && !v.noDirect.Load() {
		if O_DIRECT == 0 {
			v.refuseDirect(d.log, errors.New("the platform has no O_DIRECT"))
		} else if f, derr := d.fs.OpenFile(dataPath, os.O_WRONLY|O_DIRECT, 0); derr == nil {
			w.direct = f
		} else if isEINVAL(derr) {
			v.refuseDirect(d.log, derr)
		} else {
			return nil, derr
		}
	}
	if w.direct != nil {
		w.buf = getBuf(directBufSize)
		w.bufOff = length &^ (dioAlign - 1)
	} else {
		w.buf = getBuf(bufferedBufSize)
	}
	w.nbufs = 1
	// Read back the unaligned tail (direct I/O rewrites its block) and the
	// partial last chunk (its checksum covers the bytes to come too).
	partial := length % int64(bpc)
	from := min(w.bufOff, length-partial)
	if length > from {
		tail := make([]byte, length-from)
		if n, rerr := w.data.ReadAt(tail, from); n < len(tail) {
			if rerr == nil || rerr == io.EOF {
				rerr = fmt.Errorf("data file is shorter than the replica's %d bytes", length)
			}
			return nil, rerr
		}
		w.buf = append(w.buf, tail[w.bufOff-from:]...)
		w.chunkCRC = crc32c(tail[length-partial-from:])
		if checkTail && partial > 0 {
			var slot [crcLen]byte
			if _, err = w.meta.ReadAt(slot[:], crcOffset(w.crcBase)); err != nil {
				return nil, err
			}
			if binary.BigEndian.Uint32(slot[:]) != w.chunkCRC {
				return nil, &CorruptReplicaError{Block: Block{ID: r.id, GenStamp: r.gs, NumBytes: length}, StorageID: v.storageID, Offset: length - partial}
			}
		}
	}
	return w, nil
}

func (w *ReplicaWriter) closeFiles() {
	if w.wb != nil {
		w.wb.stop()
		w.wb = nil
	}
	for _, f := range []*File{&w.data, &w.direct, &w.meta} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
	if w.buf != nil {
		if !w.lent { // a lent buffer may still be read into: it is not reused
			putBuf(w.buf)
		}
		w.buf = nil
	}
}

func (w *ReplicaWriter) block() Block {
	return Block{ID: w.id, GenStamp: w.gs, NumBytes: w.written.Load()}
}

// usable is nil if the writer can write; w.mu held.
func (w *ReplicaWriter) usable() error {
	switch {
	case w.doneWhy != "":
		return errorf(ErrWriterClosed, "writer of %v is closed (%s)", w.block(), w.doneWhy)
	case w.err != nil:
		return w.err
	case w.v.failed.Load():
		return errorf(ErrVolumeFailed, "cannot write %v: volume %s has failed", w.block(), w.v)
	}
	return nil
}

// fail records an I/O error for good; w.mu held.
func (w *ReplicaWriter) fail(err error) error {
	if w.v.failed.Load() {
		err = fmt.Errorf("%w: %w", ErrVolumeFailed, err)
	}
	w.err = fmt.Errorf("fsdataset: write %v on %s: %w", w.block(), w.v.path, err)
	w.d.mu.Lock()
	if w.r.writer == w {
		w.r.dirty = true
	}
	w.d.mu.Unlock()
	return w.err
}

// Write appends p to the replica. It returns an error wrapping
// ErrWriterClosed after the writer was closed (or stopped by a recovery,
// a delete or Dataset.Close), ErrVolumeFailed once the volume is out of
// service, and the I/O error (for good) after one.
func (w *ReplicaWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lent = false
	if err := w.usable(); err != nil {
		return 0, err
	}
	return w.write(p)
}

// write is Write; w.mu held.
func (w *ReplicaWriter) write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(cap(w.buf)-len(w.buf), len(p))
		w.buf = append(w.buf, p[:k]...)
		w.sum(p[:k])
		p, n = p[k:], n+k
		if len(w.buf) == cap(w.buf) {
			if err := w.spill(); err != nil {
				return n, w.fail(err)
			}
		}
	}
	return n, nil
}

// WriteVerified is Write for data whose chunk checksums the caller has
// verified already: sums holds the CRC32C of each bpc-byte chunk of p, 4
// bytes big-endian each, the last chunk possibly partial — a packet's
// checksums. When bpc is the replica's and p starts on a chunk boundary
// of the replica, those checksums go to the meta file as they are,
// without a second pass over the data; otherwise (or if sums does not
// have one per chunk) it is Write.
func (w *ReplicaWriter) WriteVerified(p, sums []byte, bpc int) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lent = false
	if err := w.usable(); err != nil {
		return 0, err
	}
	if !w.sumsFit(len(p), sums, bpc) {
		return w.write(p)
	}
	// The data first: the checksums then go out with it or after it,
	// never before it (a crash may leave data without checksums, not
	// checksums without data).
	n := 0
	for len(p) > 0 {
		k := min(cap(w.buf)-len(w.buf), len(p))
		w.buf = append(w.buf, p[:k]...)
		p, n = p[k:], n+k
		if len(w.buf) == cap(w.buf) {
			if err := w.spill(); err != nil {
				return n, w.fail(err)
			}
		}
	}
	w.addSums(n, sums, bpc)
	return n, nil
}

// Room returns the free space of the writer's buffer, for a caller that
// reads the next data straight into it and then accepts it with
// CommitVerified: the block receiver saves a copy per packet. It is empty
// when the writer is closed or failed. Until the next call on the writer
// the space is the caller's; a writer closed meanwhile (by a recovery,
// say) drops the buffer instead of reusing it, while the caller's own
// Close or Abort (a receive that failed after Room) returns it to the
// pool.
func (w *ReplicaWriter) Room() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.usable() != nil || w.buf == nil {
		return nil
	}
	w.lent = true
	return w.buf[len(w.buf):cap(w.buf)]
}

// CommitVerified accepts the first n bytes of the space Room returned as
// the next data, with their verified checksums as WriteVerified takes
// them. Data that cannot take them (not starting on a chunk boundary, or
// another chunk size) has its checksums computed instead.
func (w *ReplicaWriter) CommitVerified(n int, sums []byte, bpc int) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lent = false
	if err := w.usable(); err != nil {
		return 0, err
	}
	if n < 0 || n > cap(w.buf)-len(w.buf) {
		return 0, fmt.Errorf("fsdataset: commit of %d bytes with %d free", n, cap(w.buf)-len(w.buf))
	}
	p := w.buf[len(w.buf) : len(w.buf)+n]
	if w.sumsFit(n, sums, bpc) {
		w.addSums(n, sums, bpc)
	} else {
		w.sum(p)
	}
	w.buf = w.buf[:len(w.buf)+n]
	if len(w.buf) == cap(w.buf) {
		if err := w.spill(); err != nil {
			return n, w.fail(err)
		}
	}
	return n, nil
}

// sumsFit reports whether the caller's checksums of the next n bytes can
// be taken as they are: bpc is the replica's, the replica ends on a chunk
// boundary and sums has one checksum per chunk. w.mu held.
func (w *ReplicaWriter) sumsFit(n int, sums []byte, bpc int) bool {
	return bpc == w.bpc && w.length%int64(bpc) == 0 && len(sums) == (n+bpc-1)/bpc*crcLen
}

// addSums accounts for the next n bytes, already in the buffer, with
// their checksums (sumsFit); w.mu held.
func (w *ReplicaWriter) addSums(n int, sums []byte, bpc int) {
	full := n / bpc
	w.pending = append(w.pending, sums[:full*crcLen]...)
	w.chunkCRC = 0
	if n%bpc != 0 {
		w.chunkCRC = binary.BigEndian.Uint32(sums[full*crcLen:])
	}
	w.length += int64(n)
	w.written.Store(w.length)
}

// sum folds q into the chunk checksums; w.mu held.
func (w *ReplicaWriter) sum(q []byte) {
	bpc := int64(w.bpc)
	for len(q) > 0 {
		in := w.length % bpc
		k := min(int64(len(q)), bpc-in)
		w.chunkCRC = crc32.Update(w.chunkCRC, castagnoli, q[:k])
		w.length += k
		q = q[k:]
		if in+k == bpc {
			w.pending = binary.BigEndian.AppendUint32(w.pending, w.chunkCRC)
			w.chunkCRC = 0
		}
	}
	w.written.Store(w.length)
}

// spill hands the full buffer to the write-behind goroutine, with the
// checksums of the chunks completed so far, and takes the next buffer
// (waiting for one while all are in flight); w.mu held.
func (w *ReplicaWriter) spill() error {
	if w.wb == nil {
		w.wb = newWriteBehind(w.data, w.meta, w.bufOff, w.d.cfg.DropBehindWrites, func(err error) { w.v.refuseDirect(w.d.log, err) })
	}
	if err := w.settle(false); err != nil {
		return err
	}
	j := wbJob{buf: w.buf, off: w.bufOff, direct: w.direct, sumOff: crcOffset(w.crcBase)}
	if len(w.pending) > 0 {
		j.sums = append([]byte(nil), w.pending...)
		w.crcBase += int64(len(w.pending) / crcLen)
		w.pending = w.pending[:0]
	}
	w.bufOff += int64(len(w.buf))
	size := cap(w.buf)
	w.wb.handOff(j)
	select {
	case b := <-w.wb.free:
		w.buf = b[:0]
	default:
		if w.nbufs < writeBehindBufs {
			w.buf = getBuf(size)
			w.nbufs++
		} else {
			w.buf = (<-w.wb.free)[:0]
		}
	}
	return nil
}

// settle reports the write-behind goroutine's failure, waiting first for
// all it was handed if drain, and drops the direct file once a direct
// write was refused; w.mu held.
func (w *ReplicaWriter) settle(drain bool) error {
	if w.wb == nil {
		return nil
	}
	err, noDirect := w.wb.failure()
	if drain || (noDirect && w.direct != nil && err == nil) {
		err = w.wb.drain()
	}
	if err != nil {
		return err
	}
	if noDirect && w.direct != nil {
		w.direct.Close()
		w.direct = nil
	}
	return nil
}

// writeOut writes everything out, the checksum of a partial last chunk
// included: what the write-behind goroutine has, then the buffered data,
// then the checksums. w.mu held.
func (w *ReplicaWriter) writeOut() error {
	if err := w.settle(true); err != nil {
		return err
	}
	if w.wb != nil {
		w.nbufs -= w.wb.release()
	}
	n := len(w.buf)
	if w.direct != nil {
		a := n &^ (dioAlign - 1)
		if a > 0 {
			if _, err := w.direct.WriteAt(w.buf[:a], w.bufOff); err != nil {
				if !isEINVAL(err) {
					return err
				}
				// The file system took the O_DIRECT open but refuses the
				// transfer: fall back to the page cache.
				w.v.refuseDirect(w.d.log, err)
				w.direct.Close()
				w.direct = nil
			}
		}
		if w.direct != nil {
			if a < n {
				if _, err := w.data.WriteAt(w.buf[a:n], w.bufOff+int64(a)); err != nil {
					return err
				}
			}
			// Keep the unaligned tail: its block is rewritten with
			// O_DIRECT once it fills.
			w.bufOff += int64(a)
			w.buf = w.buf[:copy(w.buf, w.buf[a:n])]
		}
	}
	if w.direct == nil {
		if n > 0 {
			if _, err := w.data.WriteAt(w.buf, w.bufOff); err != nil {
				return err
			}
		}
		w.bufOff += int64(n)
		w.buf = w.buf[:0]
	}
	slots := w.pending
	if w.length%int64(w.bpc) != 0 {
		slots = binary.BigEndian.AppendUint32(slots, w.chunkCRC)
	}
	if len(slots) > 0 {
		if _, err := w.meta.WriteAt(slots, crcOffset(w.crcBase)); err != nil {
			return err
		}
	}
	w.crcBase += int64(len(w.pending) / crcLen)
	w.pending = w.pending[:0]
	return nil
}

// publish makes the written length visible to readers; w.mu held.
func (w *ReplicaWriter) publish() {
	w.d.mu.Lock()
	if w.r.writer == w {
		w.r.numBytes = w.length
		w.r.lastCRC = w.chunkCRC
		w.d.setDiskLocked(w.r, w.length+metaLen(w.length, w.bpc))
	}
	w.d.mu.Unlock()
}

// BytesWritten returns the bytes of the replica, those written so far by
// Write included (its length if it were flushed now).
func (w *ReplicaWriter) BytesWritten() int64 { return w.written.Load() }

// Info describes the replica being written: NumBytes is BytesWritten, the
// state RBW (Finalized after Finalize).
func (w *ReplicaWriter) Info() ReplicaInfo {
	st := RBW
	if w.finalized.Load() {
		st = Finalized
	}
	return ReplicaInfo{Block: w.block(), State: st, StorageID: w.v.storageID, StorageType: w.v.typ}
}

// Flush writes everything written so far to the operating system and makes
// it visible to readers (hflush). It does not make it durable.
func (w *ReplicaWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lent = false
	if err := w.usable(); err != nil {
		return err
	}
	if err := w.writeOut(); err != nil {
		return w.fail(err)
	}
	w.publish()
	return nil
}

// Sync is Flush, then fsync of the data and meta files (hsync).
func (w *ReplicaWriter) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lent = false
	if err := w.usable(); err != nil {
		return err
	}
	err := w.writeOut()
	if err == nil {
		err = w.data.Sync()
	}
	if err == nil {
		err = w.meta.Sync()
	}
	if err != nil {
		return w.fail(err)
	}
	w.publish()
	return nil
}

// Finalize completes the replica: it writes and fsyncs the data and meta
// files, moves them from rbw to the finalized directory and fsyncs both
// directories. The replica is then Finalized (a Received event) and may be
// acknowledged. The writer is closed in any case. An error before the move
// leaves the replica RBW for recovery.
func (w *ReplicaWriter) Finalize() (ReplicaInfo, error) {
	w.mu.Lock()
	w.lent = false
	if err := w.usable(); err != nil {
		w.mu.Unlock()
		return ReplicaInfo{}, err
	}
	err := w.writeOut()
	if err == nil {
		err = w.data.Sync()
	}
	if err == nil {
		err = w.meta.Sync()
	}
	if err != nil {
		err = w.fail(err)
	} else {
		w.publish()
		if f, ok := w.data.(*os.File); ok && w.d.cfg.DropBehindWrites {
			dropCache(f, 0, 0) // durable now: every page is clean
		}
	}
	w.closeFiles()
	w.doneWhy = "finalized"
	length := w.length
	w.mu.Unlock()
	if err != nil {
		w.detach()
		return ReplicaInfo{}, err
	}

	d, r, v := w.d, w.r, w.v
	b := Block{ID: w.id, GenStamp: w.gs, NumBytes: length}
	r.fileMu.Lock()
	defer r.fileMu.Unlock()
	d.mu.Lock()
	if d.replicas[r.id] != r || r.writer != w {
		d.mu.Unlock()
		return ReplicaInfo{}, errorf(ErrWriterClosed, "cannot finalize %v: the replica was recovered, deleted or lost meanwhile", b)
	}
	d.mu.Unlock()
	if v.failed.Load() {
		return ReplicaInfo{}, errorf(ErrVolumeFailed, "cannot finalize %v: volume %s has failed", b, v)
	}
	moved, err := d.moveToFinalized(r, w.gs, w.gs)
	d.mu.Lock()
	defer d.mu.Unlock()
	r.writer = nil
	if !moved {
		return ReplicaInfo{}, fmt.Errorf("fsdataset: finalize %v on %s: %w", b, v, err)
	}
	r.state = Finalized
	w.finalized.Store(true)
	info := r.info()
	if err != nil {
		return info, fmt.Errorf("fsdataset: finalize %v on %s: %w", b, v, err)
	}
	d.emitLocked(Received, info)
	return info, nil
}

// moveToFinalized moves an RBW replica's files (meta named for gs) from
// rbw to its finalized directory, the meta file renamed for newGS: meta
// first, then data, then fsync of both directories. moved reports whether
// both files moved (an error after that is a directory fsync's). r.fileMu
// held.
func (d *Dataset) moveToFinalized(r *replica, gs, newGS uint64) (moved bool, err error) {
	v := r.vol
	src, dst := v.rbw, v.finDir(r.id)
	if err := v.ensureFinDir(dst); err != nil {
		return false, err
	}
	// Meta first: a crash in between leaves the files split between rbw
	// and finalized, which the start-up scan puts back in rbw.
	srcMeta, dstMeta := filepath.Join(src, metaName(r.id, gs)), filepath.Join(dst, metaName(r.id, newGS))
	if err := d.fs.Rename(srcMeta, dstMeta); err != nil {
		return false, err
	}
	if err := d.fs.Rename(filepath.Join(src, dataName(r.id)), filepath.Join(dst, dataName(r.id))); err != nil {
		d.fs.Rename(dstMeta, srcMeta)
		return false, err
	}
	if err := syncDir(d.fs, dst); err != nil {
		return true, err
	}
	return true, syncDir(d.fs, src)
}

// detach disconnects a closed writer from its replica.
func (w *ReplicaWriter) detach() {
	w.d.mu.Lock()
	if w.r.writer == w {
		w.r.writer = nil
	}
	w.d.mu.Unlock()
}

// shutdown closes the writer, writing out its buffer first if flush (the
// replica stays RBW at that length). Safe to call on a closed writer.
func (w *ReplicaWriter) shutdown(flush bool) {
	w.mu.Lock()
	if w.doneWhy == "" {
		if flush && w.err == nil {
			if err := w.writeOut(); err != nil {
				w.fail(err)
			} else {
				w.publish()
			}
		}
		w.closeFiles()
		w.doneWhy = "stopped"
	}
	w.mu.Unlock()
	w.detach()
}

// Close writes out what was written, publishes it and closes the writer
// without finalizing: the replica stays RBW (for pipeline recovery). It
// returns the writer's I/O error, if any. Closing a finalized or closed
// writer does nothing.
func (w *ReplicaWriter) Close() error {
	w.mu.Lock()
	w.lent = false // the owner's call ends a loan: its buffer goes back to the pool
	if w.doneWhy != "" {
		w.mu.Unlock()
		return nil
	}
	err := w.err
	if err == nil && !w.v.failed.Load() {
		if err = w.writeOut(); err != nil {
			err = w.fail(err)
		} else {
			w.publish()
		}
	}
	w.closeFiles()
	w.doneWhy = "closed"
	w.mu.Unlock()
	w.detach()
	return err
}

// Abort closes the writer and removes the replica (a failed write that
// will not be recovered, e.g. a replication transfer): its files are
// deleted and it leaves the map (a Deleted event). If the replica was
// meanwhile recovered by another writer, finalized, or deleted, Abort
// leaves it alone.
func (w *ReplicaWriter) Abort() error {
	w.mu.Lock()
	w.lent = false // as in Close
	w.mu.Unlock()
	w.shutdown(false)
	d, r := w.d, w.r
	r.fileMu.Lock()
	defer r.fileMu.Unlock()
	d.mu.Lock()
	if d.replicas[r.id] != r || r.writer != nil || r.state == Finalized || r.gs != w.gs {
		d.mu.Unlock()
		return nil
	}
	d.mu.Unlock()
	var err error
	if !r.vol.failed.Load() {
		err = r.removeFiles()
	}
	d.mu.Lock()
	d.dropLocked(r)
	d.emitLocked(Deleted, r.info())
	d.mu.Unlock()
	return err
}

// CreateRBW creates a replica being written for a new block b (b.NumBytes
// is the expected size, used to skip volumes without room; the replica
// starts empty). The volume is the one with storageID if given (it must
// be in service), else one of storage type t (0 means DISK) chosen by
// Config.Choosing among those in service with more than b.NumBytes
// available; ErrNoVolume if there is none. A block ID that already has a
// replica is ErrReplicaExists. Emits Receiving.
func (d *Dataset) CreateRBW(b Block, t storage.Type, storageID string) (*ReplicaWriter, error) {
	exists := func() error {
		if d.closed {
			return ErrClosed
		}
		if r := d.replicas[b.ID]; r != nil {
			return errorf(ErrReplicaExists, "cannot create %v: replica %s exists", b, r.describe())
		}
		return nil
	}
	d.mu.Lock()
	err := exists()
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	v, err := d.chooseVolume(b, t, storageID)
	if err != nil {
		return nil, err
	}
	r := &replica{id: b.ID, vol: v, gs: b.GenStamp, state: RBW, bpc: d.cfg.BytesPerChecksum}
	r.fileMu.Lock()
	defer r.fileMu.Unlock()
	d.mu.Lock()
	if err := exists(); err != nil {
		d.mu.Unlock()
		return nil, err
	}
	d.addLocked(r)
	d.mu.Unlock()
	w, err := d.openWriter(r, r.dataPath(), r.metaPath(), b.GenStamp, r.bpc, 0, true, false)
	if err != nil {
		r.removeFiles()
		d.mu.Lock()
		d.dropLocked(r)
		d.mu.Unlock()
		return nil, fmt.Errorf("fsdataset: create %v on %s: %w", b, v, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.setDiskLocked(r, metaHeaderLen)
	if d.closed { // Close did not see this writer: leave the replica RBW
		w.closeFiles()
		return nil, ErrClosed
	}
	r.writer = w
	d.emitLocked(Receiving, r.info())
	return w, nil
}

// Append reopens finalized replica b for an HDFS append: the replica must
// have b's generation stamp (ErrGenStamp) and length (ErrLength), and
// newGS must not be older. The stored checksum of a partial last chunk is
// verified first (a *CorruptReplicaError if it does not match). The files
// move back to rbw with the meta file named for newGS; the replica is RBW
// with generation stamp newGS. Emits Receiving.
func (d *Dataset) Append(b Block, newGS uint64) (*ReplicaWriter, error) {
	r, err := d.acquire(b, false, func(r *replica) error {
		switch {
		case r.state != Finalized:
			return errorf(ErrState, "cannot append to %s: it is not finalized", r.describe())
		case r.gs != b.GenStamp:
			return errorf(ErrGenStamp, "cannot append to %s: the request is for %v", r.describe(), b)
		case newGS < r.gs:
			// Equal is allowed, as Hadoop's DataNode does: some clients
			// append without asking for a new generation stamp.
			return errorf(ErrGenStamp, "cannot append to %s: new generation stamp %d is older", r.describe(), newGS)
		case r.numBytes != b.NumBytes:
			return errorf(ErrLength, "cannot append to %s: the request expects %d bytes", r.describe(), b.NumBytes)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	defer r.fileMu.Unlock()
	v := r.vol
	d.mu.Lock()
	length, old := r.numBytes, r.info().Block
	d.mu.Unlock()
	srcData, srcMeta := r.dataPath(), r.metaPath()
	w, err := d.openWriter(r, srcData, srcMeta, newGS, r.bpc, length, false, true)
	if err != nil {
		return nil, fmt.Errorf("fsdataset: append to %v on %s: %w", old, v, err)
	}
	dstData, dstMeta := filepath.Join(v.rbw, dataName(r.id)), filepath.Join(v.rbw, metaName(r.id, newGS))
	if err = d.fs.Rename(srcData, dstData); err == nil {
		if err = d.fs.Rename(srcMeta, dstMeta); err != nil {
			d.fs.Rename(dstData, srcData)
		}
	}
	if err != nil {
		w.closeFiles()
		return nil, fmt.Errorf("fsdataset: append to %v on %s: %w", old, v, err)
	}
	serr := syncDir(d.fs, v.rbw)
	if serr == nil {
		serr = syncDir(d.fs, filepath.Dir(srcData))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	r.state, r.gs, r.dirty, r.lastCRC = RBW, newGS, false, w.chunkCRC
	if serr != nil {
		w.closeFiles()
		return nil, fmt.Errorf("fsdataset: append to %v on %s: %w", old, v, serr)
	}
	if d.closed {
		w.closeFiles()
		return nil, ErrClosed
	}
	r.writer = w
	d.emitLocked(Receiving, r.info())
	return w, nil
}

// RecoverRBW reopens an RBW or RWR replica for pipeline recovery. Its
// writer, if any, is stopped first. The replica's generation stamp must be
// within [b.GenStamp, newGS] (ErrGenStamp); keepBytes, the length the
// pipeline acknowledged, must not exceed its valid length (ErrLength). The
// data is truncated to keepBytes (the checksum of a now-partial last chunk
// recomputed), the meta file renamed for newGS, and a writer returned that
// appends from keepBytes. Emits Receiving.
func (d *Dataset) RecoverRBW(b Block, newGS uint64, keepBytes int64) (*ReplicaWriter, error) {
	r, err := d.acquire(b, true, func(r *replica) error {
		switch {
		case r.state != RBW && r.state != RWR:
			return errorf(ErrState, "cannot recover %s: it is not being written", r.describe())
		case r.gs < b.GenStamp || r.gs > newGS:
			return errorf(ErrGenStamp, "cannot recover %s as %v with generation stamp %d", r.describe(), b, newGS)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	defer r.fileMu.Unlock()
	v := r.vol
	d.mu.Lock()
	valid, dirty, old := r.numBytes, r.dirty, r.info().Block
	d.mu.Unlock()
	wrap := func(err error) error {
		d.mu.Lock()
		r.dirty = true
		d.mu.Unlock()
		return fmt.Errorf("fsdataset: recover %v on %s: %w", old, v, err)
	}
	dataPath, metaPath := r.dataPath(), r.metaPath()
	if err := truncateReplica(d, r, dataPath, metaPath, &valid, dirty, keepBytes); err != nil {
		if errors.Is(err, ErrLength) {
			return nil, err
		}
		return nil, wrap(err)
	}
	if newGS != r.gs {
		newMeta := filepath.Join(v.rbw, metaName(r.id, newGS))
		if err := d.fs.Rename(metaPath, newMeta); err != nil {
			return nil, wrap(err)
		}
		d.mu.Lock()
		r.gs = newGS
		d.mu.Unlock()
		metaPath = newMeta
		if err := syncDir(d.fs, v.rbw); err != nil {
			return nil, wrap(err)
		}
	}
	w, err := d.openWriter(r, dataPath, metaPath, newGS, r.bpc, keepBytes, false, false)
	if err != nil {
		return nil, wrap(err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	r.state, r.numBytes, r.lastCRC, r.dirty = RBW, keepBytes, w.chunkCRC, false
	d.setDiskLocked(r, keepBytes+metaLen(keepBytes, r.bpc))
	if d.closed {
		w.closeFiles()
		return nil, ErrClosed
	}
	r.writer = w
	d.emitLocked(Receiving, r.info())
	return w, nil
}

// truncateReplica cuts an RBW replica's files to keep bytes, after
// checking keep against its valid length (recomputed from the files when
// dirty).
func truncateReplica(d *Dataset, r *replica, dataPath, metaPath string, valid *int64, dirty bool, keep int64) error {
	data, err := d.fs.OpenFile(dataPath, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer data.Close()
	meta, err := d.fs.OpenFile(metaPath, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer meta.Close()
	if dirty {
		di, err := data.Stat()
		if err != nil {
			return err
		}
		mi, err := meta.Stat()
		if err != nil {
			return err
		}
		if *valid, err = verifiedLength(data, meta, di.Size(), mi.Size(), r.bpc); err != nil {
			return err
		}
	}
	if keep < 0 || keep > *valid {
		return errorf(ErrLength, "cannot recover %v to %d bytes: only %d bytes are valid", Block{ID: r.id, GenStamp: r.gs}, keep, *valid)
	}
	if err := data.Truncate(keep); err != nil {
		return err
	}
	if err := meta.Truncate(metaLen(keep, r.bpc)); err != nil {
		return err
	}
	if partial := keep % int64(r.bpc); partial != 0 {
		chunk := make([]byte, partial)
		if _, err := data.ReadAt(chunk, keep-partial); err != nil {
			return err
		}
		var slot [crcLen]byte
		binary.BigEndian.PutUint32(slot[:], crc32c(chunk))
		if _, err := meta.WriteAt(slot[:], crcOffset(keep/int64(r.bpc))); err != nil {
			return err
		}
	}
	if err := data.Sync(); err != nil {
		return err
	}
	return meta.Sync()
}

// UpdateFinalizedGenStamp gives replica b the generation stamp newGS and
// leaves it finalized (pipeline close recovery, Hadoop's recoverClose). The
// replica's generation stamp must be within [b.GenStamp, newGS]
// (ErrGenStamp) and its length b.NumBytes (ErrLength). A finalized replica
// has its meta file renamed. An RBW or RWR replica (a node that had all
// the data but not the last packet) has its writer stopped, its files
// fsynced, and is finalized with newGS. Emits Received.
func (d *Dataset) UpdateFinalizedGenStamp(b Block, newGS uint64) error {
	r, err := d.acquire(b, true, func(r *replica) error {
		switch {
		case r.gs < b.GenStamp || r.gs > newGS:
			return errorf(ErrGenStamp, "cannot update %s as %v to generation stamp %d", r.describe(), b, newGS)
		case r.numBytes != b.NumBytes && (r.state == Finalized || !r.dirty):
			return errorf(ErrLength, "cannot update %s: the request expects %d bytes", r.describe(), b.NumBytes)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer r.fileMu.Unlock()
	fail := func(err error) error {
		return fmt.Errorf("fsdataset: update %v to generation stamp %d: %w", b, newGS, err)
	}
	if r.state == Finalized {
		if newGS != r.gs {
			dir := r.dir()
			if err := d.fs.Rename(r.metaPath(), filepath.Join(dir, metaName(r.id, newGS))); err != nil {
				return fail(err)
			}
			d.mu.Lock()
			r.gs = newGS
			d.mu.Unlock()
			if err := syncDir(d.fs, dir); err != nil {
				return fail(err)
			}
		}
		d.mu.Lock()
		d.emitLocked(Received, r.info())
		d.mu.Unlock()
		return nil
	}
	d.mu.Lock()
	valid, dirty := r.numBytes, r.dirty
	d.mu.Unlock()
	// Cut a dirty replica to the length (if that much verifies) and fsync
	// both files.
	if err := truncateReplica(d, r, r.dataPath(), r.metaPath(), &valid, dirty, b.NumBytes); err != nil {
		if errors.Is(err, ErrLength) {
			return err
		}
		return fail(err)
	}
	moved, err := d.moveToFinalized(r, r.gs, newGS)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !moved {
		r.dirty = true
		return fail(err)
	}
	r.state, r.gs, r.numBytes, r.dirty = Finalized, newGS, b.NumBytes, false
	d.setDiskLocked(r, b.NumBytes+metaLen(b.NumBytes, r.bpc))
	if err != nil {
		return fail(err)
	}
	d.emitLocked(Received, r.info())
	return nil
}
