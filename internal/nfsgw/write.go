package nfsgw

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	nfs "github.com/willscott/go-nfs"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
)

// Writes. HDFS files are written once, front to back; NFS clients send
// WRITEs of byte ranges, out of order and from several connections, and
// retransmit them. Like Hadoop's gateway (OpenFileCtx), the gateway keeps
// one HDFS output stream per file being written and:
//
//   - appends a WRITE at the file's current end to the stream, then any
//     buffered WRITEs that became contiguous;
//   - buffers a WRITE beyond the end in memory (at most MaxPendingPerFile
//     bytes per file and MaxPending for all files; past that,
//     NFS3ERR_JUKEBOX asks the client to retry);
//     an UNSTABLE one is acknowledged at once, a FILE_SYNC or DATA_SYNC one
//     when the gap is filled and the data synced (or JUKEBOX after
//     StableWriteWait);
//   - accepts a WRITE below the end only if its bytes equal those already
//     written (a retransmission); different bytes are an overwrite, which
//     HDFS cannot do: NFS3ERR_PERM, logged, the file unchanged;
//   - answers FILE_SYNC and DATA_SYNC WRITEs after hsync, UNSTABLE ones
//     after handing the data to the stream;
//   - on COMMIT, waits for buffered data to become contiguous, then closes
//     the stream: the data is durable and the file complete in HDFS. The
//     next WRITE reopens the file for append. A COMMIT answers
//     NFS3ERR_IO when data acknowledged since the last one was lost (a
//     stream closed with buffered writes, or a failed write or close);
//   - closes a stream idle for StreamTimeout.
//
// The write verifier changes whenever the gateway starts, so a client
// resends UNSTABLE data a restarted gateway may have lost.

// tailKeep is how many of the last bytes written to a stream are kept to
// recognise retransmissions.
const tailKeep = 4 << 20

type openFiles struct {
	g       *Gateway
	mu      sync.Mutex
	byID    map[uint64]*openFile
	n       atomic.Int32 // len(byID), read without the lock
	pending atomic.Int64 // out-of-order bytes buffered over all files
	// lost holds the files whose stream ended with acknowledged data
	// lost (buffered writes dropped, a failed write or close); the next
	// COMMIT of the file reports it. Bounded by maxLost.
	lost map[uint64]struct{}
}

const maxLost = 4096

// markLost records that acknowledged writes to inode id were lost.
func (o *openFiles) markLost(id uint64) {
	o.mu.Lock()
	if len(o.lost) >= maxLost {
		clear(o.lost)
	}
	o.lost[id] = struct{}{}
	o.mu.Unlock()
}

// takeLost reports whether writes to id were lost since its last COMMIT.
func (o *openFiles) takeLost(id uint64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.lost[id]
	delete(o.lost, id)
	return ok
}

type openFile struct {
	id   uint64
	u    *userFS
	path string
	st   fs.FileStatus // as opened
	size atomic.Int64  // highest byte written or buffered

	mu           sync.Mutex
	cond         *sync.Cond
	w            *hdfs.FileWriter // nil until data must be appended
	next         int64            // bytes in HDFS or in the stream
	pending      map[int64]chunk  // out-of-order data, offsets > next
	pendingBytes int64            // memory pending holds (chunk.size)
	tail         tail             // the last bytes before next (tailKeep or more)
	synced       bool             // nothing written since the last hsync
	lastUse      time.Time
	waiters      int
	err          error
	done         bool // closed: callers must look the file up again
}

func newOpenFiles(g *Gateway) *openFiles {
	return &openFiles{g: g, byID: map[uint64]*openFile{}, lost: map[uint64]struct{}{}}
}

func (o *openFiles) lookup(id uint64) *openFile {
	if o.n.Load() == 0 {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.byID[id]
}

// adjust raises st's length to what the gateway has written or buffered.
func (o *openFiles) adjust(st *fs.FileStatus) {
	if of := o.lookup(st.FileID); of != nil {
		st.Length = max(st.Length, of.size.Load())
	}
}

func (o *openFiles) pathOf(id uint64) (string, bool) {
	if of := o.lookup(id); of != nil {
		return of.path, true
	}
	return "", false
}

// add registers of, finishing the stream it replaces. With shared, a
// stream the same user opened meanwhile is kept and returned instead.
func (o *openFiles) add(of *openFile, shared bool) *openFile {
	o.mu.Lock()
	old := o.byID[of.id]
	if shared && old != nil && old.u == of.u {
		// A concurrent WRITE opened the file first: its stream is the
		// one, and its end may already be past of's.
		o.mu.Unlock()
		return old
	}
	o.byID[of.id] = of
	o.n.Store(int32(len(o.byID)))
	o.mu.Unlock()
	if old != nil {
		old.close("replaced")
	}
	if o.g.closing.Load() {
		// Added while Close's closeAll ran, perhaps after it looked.
		of.close("gateway closing")
	}
	return of
}

func (o *openFiles) remove(of *openFile) {
	o.mu.Lock()
	if o.byID[of.id] == of {
		delete(o.byID, of.id)
		o.n.Store(int32(len(o.byID)))
	}
	o.mu.Unlock()
}

func newOpenFile(u *userFS, st fs.FileStatus) *openFile {
	of := &openFile{id: st.FileID, u: u, path: st.Path, st: st, next: st.Length,
		pending: map[int64]chunk{}, lastUse: time.Now(), synced: true}
	of.cond = sync.NewCond(&of.mu)
	of.size.Store(st.Length)
	return of
}

// adopt registers the stream of a file just created through u.
// Without room (see makeRoom) the stream is closed: the file is complete
// and empty, and the first WRITE opens it again.
func (o *openFiles) adopt(u *userFS, st fs.FileStatus, w *hdfs.FileWriter) {
	if !o.makeRoom() {
		if err := w.Close(); err != nil {
			o.g.log.Error("nfs3: closing a new file", "path", st.Path, "user", u.user, "err", err)
		}
		return
	}
	of := newOpenFile(u, st)
	of.w = w
	of.synced = false
	o.add(of, false)
}

// get returns the open file for inode id written by u, opening it.
func (o *openFiles) get(u *userFS, id uint64) (*openFile, error) {
	o.mu.Lock()
	of := o.byID[id]
	o.mu.Unlock()
	if of != nil && of.u == u {
		return of, nil
	}
	if o.g.closing.Load() {
		return nil, errors.New("nfsgw: gateway closing")
	}
	ctx, cancel := u.ctx()
	defer cancel()
	st, err := u.c.StatInode(ctx, id)
	if err != nil {
		return nil, err
	}
	if of != nil {
		// Another user's stream. Only a user who may write the file
		// may end it: a refused write must not cost the stream's
		// writer the data it was acknowledged.
		if err := u.c.Access(ctx, st.Path, 2); err != nil {
			return nil, err
		}
		of.close("written by another user")
	}
	if st.IsDir {
		return nil, &os.PathError{Op: "write", Path: st.Path, Err: errIsDir}
	}
	if !o.makeRoom() {
		return nil, errTooManyOpen
	}
	return o.add(newOpenFile(u, st), true), nil
}

var (
	errIsDir       = errors.New("is a directory")
	errTooManyOpen = errors.New("nfsgw: too many files being written, none idle")
)

// makeRoom reports whether another stream may open: fewer than
// MaxOpenFiles are open, or the least recently used one that nothing
// waits on and that buffers nothing could be closed to make room.
func (o *openFiles) makeRoom() bool {
	if int(o.n.Load()) < o.g.opts.MaxOpenFiles {
		return true
	}
	var lru *openFile
	for _, of := range o.all() {
		if !of.mu.TryLock() {
			continue // busy
		}
		if of.waiters == 0 && of.pendingBytes == 0 && (lru == nil || of.lastUse.Before(lru.lastUse)) {
			lru = of
		}
		of.mu.Unlock()
	}
	if lru == nil {
		return false
	}
	lru.mu.Lock()
	defer lru.mu.Unlock()
	if lru.waiters != 0 || lru.pendingBytes != 0 {
		return false // became busy: the client retries
	}
	lru.closeLocked("too many open files")
	return true
}

func (o *openFiles) closeID(id uint64) {
	if of := o.lookup(id); of != nil {
		of.close("renamed, removed or truncated")
	}
}

// closePath finishes the stream of p, if one is open, before p is renamed,
// removed or truncated.
func (o *openFiles) closePath(u *userFS, p string) {
	if o.n.Load() == 0 {
		return
	}
	if st, err := u.stat(p); err == nil {
		o.closeID(st.FileID)
	}
}

// flushPath makes the data acknowledged for p visible to readers.
func (o *openFiles) flushPath(p string) {
	if o.n.Load() == 0 {
		return
	}
	o.mu.Lock()
	var of *openFile
	for _, f := range o.byID {
		if f.path == p {
			of = f
		}
	}
	o.mu.Unlock()
	if of != nil {
		of.mu.Lock()
		if of.w != nil && of.err == nil {
			if err := of.w.Flush(); err != nil {
				of.fail(err)
			}
		}
		of.mu.Unlock()
	}
}

// all returns the open files. Never hold o.mu while taking an openFile's
// lock: a writer holding its file's lock takes o.mu to leave the table.
func (o *openFiles) all() []*openFile {
	o.mu.Lock()
	defer o.mu.Unlock()
	all := make([]*openFile, 0, len(o.byID))
	for _, of := range o.byID {
		all = append(all, of)
	}
	return all
}

func (o *openFiles) closeAll() {
	for _, of := range o.all() {
		of.close("gateway closing")
	}
}

// reap closes streams idle for StreamTimeout.
func (o *openFiles) reap(ctx context.Context) {
	tick := time.NewTicker(min(time.Second, o.g.opts.StreamTimeout/2))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, of := range o.all() {
			of.mu.Lock()
			if of.waiters == 0 && time.Since(of.lastUse) > o.g.opts.StreamTimeout {
				of.closeLocked("idle")
			}
			of.mu.Unlock()
		}
		o.g.readers.expire(false)
	}
}

// close finishes the file's stream and forgets the file.
func (of *openFile) close(why string) error {
	of.mu.Lock()
	defer of.mu.Unlock()
	return of.closeLocked(why)
}

func (of *openFile) closeLocked(why string) error {
	g := of.u.g
	g.writes.remove(of)
	if of.done {
		return of.err
	}
	of.done = true
	of.cond.Broadcast()
	if of.pendingBytes > 0 {
		g.log.Error("nfs3: closing a file with a gap: buffered writes dropped", "path", of.path,
			"user", of.u.user, "end", of.next, "dropped_bytes", of.pendingBytes, "why", why)
		of.dropPending()
		g.writes.markLost(of.id)
	}
	if of.w != nil {
		if err := of.w.Close(); err != nil && of.err == nil {
			of.err = err
			g.log.Error("nfs3: closing stream", "path", of.path, "user", of.u.user, "err", err)
			g.writes.markLost(of.id)
		}
		of.w = nil
	}
	of.tail.reset()
	of.u.forget() // statuses cached while the stream was open are stale now
	return of.err
}

func (of *openFile) fail(err error) {
	if of.err == nil {
		of.err = err
		of.u.g.log.Error("nfs3: write failed", "path", of.path, "user", of.u.user, "err", err)
	}
	if of.w != nil {
		of.w.Close()
		of.w = nil
	}
	of.dropPending()
	of.tail.reset()
	of.u.g.writes.markLost(of.id)
	of.done = true
	of.u.g.writes.remove(of)
	of.cond.Broadcast()
}

// addPending counts delta bytes of out-of-order data for the file and for
// the gateway. of.mu is held.
func (of *openFile) addPending(delta int64) {
	of.pendingBytes += delta
	of.u.g.writes.pending.Add(delta)
}

// dropPending forgets the file's out-of-order data. of.mu is held.
func (of *openFile) dropPending() {
	for _, c := range of.pending {
		c.release()
	}
	of.addPending(-of.pendingBytes)
	of.pending = nil
}

// Stability levels (stable_how).
const (
	unstable = 0
	dataSync = 1
	fileSync = 2
)

// errRetry asks the caller to look the file up again: it was closed.
var errRetry = errors.New("nfsgw: stream closed, retry")

// write applies one WRITE of data, held in the record *rec (which write
// may take, see tail.go). It returns the NFS status and the stability the
// data reached.
func (of *openFile) write(off int64, data []byte, rec *[]byte, stable uint32) (nfs.NFSStatus, uint32, error) {
	of.mu.Lock()
	defer of.mu.Unlock()
	if of.done {
		if of.err != nil {
			return nfs.NFSStatusIO, 0, of.err
		}
		return 0, 0, errRetry
	}
	of.lastUse = time.Now()
	end := off + int64(len(data))
	if off < of.next {
		upto := min(end, of.next)
		same, err := of.sameAsWritten(off, data[:upto-off])
		if err != nil {
			return nfs.NFSStatusIO, 0, err
		}
		if !same {
			of.u.g.log.Warn("nfs3: refusing to overwrite written data (HDFS files are write-once)",
				"path", of.path, "user", of.u.user, "offset", off, "count", len(data), "file_end", of.next)
			return nfs.NFSStatusPerm, 0, nil
		}
		data, off = data[upto-off:], upto
		if len(data) == 0 {
			return of.finish(stable)
		}
	}
	if off > of.next {
		if prev, ok := of.pending[off]; ok && bytes.Equal(prev.data, data) {
			// a retransmission of buffered data
		} else {
			o, n, whole := of.u.g.writes, int64(len(data)), tight(data, rec)
			if whole {
				n = int64(cap(*rec))
			}
			if of.pendingBytes+n > of.u.g.opts.MaxPendingPerFile || o.pending.Load()+n > of.u.g.opts.MaxPending {
				of.u.g.log.Warn("nfs3: out-of-order buffer full, client must retry", "path", of.path, "offset", off, "end", of.next,
					"buffered", of.pendingBytes, "buffered_all_files", o.pending.Load())
				return nfs.NFSStatusJukebox, 0, nil
			}
			if prev, ok := of.pending[off]; ok {
				of.addPending(-prev.size())
				prev.release()
			}
			c := keep(data, rec, whole)
			of.pending[off] = c
			of.addPending(c.size())
			of.size.Store(max(of.size.Load(), end))
		}
		if stable == unstable {
			return nfs.NFSStatusOk, unstable, nil
		}
		of.waitFor(end)
		switch {
		case of.done && of.err != nil:
			return nfs.NFSStatusIO, 0, of.err
		case of.next >= end:
			return of.finish(stable)
		case of.done:
			return nfs.NFSStatusIO, 0, errors.New("stream closed before the gap before this write was filled")
		}
		return nfs.NFSStatusJukebox, 0, nil
	}
	if err := of.appendData(data, rec); err != nil {
		return nfs.NFSStatusIO, 0, err
	}
	if err := of.drain(); err != nil {
		return nfs.NFSStatusIO, 0, err
	}
	return of.finish(stable)
}

// finish syncs for a stable WRITE.
func (of *openFile) finish(stable uint32) (nfs.NFSStatus, uint32, error) {
	if stable == unstable {
		return nfs.NFSStatusOk, unstable, nil
	}
	if of.w != nil && !of.synced {
		if err := of.w.Sync(); err != nil {
			of.fail(err)
			return nfs.NFSStatusIO, 0, err
		}
		of.synced = true
	}
	return nfs.NFSStatusOk, fileSync, nil
}

// waitFor waits until the file's contiguous end reaches end, the file is
// closed, or StableWriteWait passes. of.mu is held.
func (of *openFile) waitFor(end int64) bool {
	if of.next >= end {
		return true
	}
	deadline := time.Now().Add(of.u.g.opts.StableWriteWait)
	t := time.AfterFunc(of.u.g.opts.StableWriteWait, func() {
		of.mu.Lock()
		of.cond.Broadcast()
		of.mu.Unlock()
	})
	defer t.Stop()
	of.waiters++
	defer func() { of.waiters-- }()
	for of.next < end && !of.done && time.Now().Before(deadline) {
		of.cond.Wait()
	}
	return of.next >= end || of.done
}

// appendData writes data at of.next; the tail may take the record *rec
// holding it. of.mu is held.
func (of *openFile) appendData(data []byte, rec *[]byte) error {
	if of.w == nil {
		// By inode: of.path may name another file by now (a rename by
		// another HDFS client).
		w, err := of.u.c.Append(of.u.g.ctx, hdfs.InodePath(of.id))
		if err != nil {
			of.fail(err)
			return err
		}
		of.w = w
	}
	if _, err := of.w.Write(data); err != nil {
		of.fail(err)
		return err
	}
	of.synced = false
	of.next += int64(len(data))
	of.size.Store(max(of.size.Load(), of.next))
	of.tail.add(data, rec)
	of.cond.Broadcast()
	return nil
}

// drain appends buffered writes that the end has reached.
func (of *openFile) drain() error {
	for len(of.pending) > 0 {
		progressed := false
		for off, d := range of.pending {
			if off > of.next {
				continue
			}
			delete(of.pending, off)
			of.addPending(-d.size())
			progressed = true
			if err := of.drainOne(off, d); err != nil {
				return err
			}
		}
		if !progressed {
			return nil
		}
	}
	return nil
}

// drainOne appends the part of buffered chunk d (at off, at or below
// of.next) past of.next, then releases d.
func (of *openFile) drainOne(off int64, d chunk) error {
	defer d.release()
	if off+int64(len(d.data)) <= of.next {
		return nil // covered already
	}
	same, err := of.sameAsWritten(off, d.data[:of.next-off])
	if err != nil {
		return err
	}
	if !same {
		of.u.g.log.Warn("nfs3: dropping a buffered write that overlaps different data", "path", of.path, "offset", off, "count", len(d.data))
		return nil
	}
	return of.appendData(d.data[of.next-off:], &d.rec)
}

// sameAsWritten reports whether b equals the bytes at off, all below
// of.next: from the kept tail, or from HDFS when they were there before
// this stream opened (a retransmission after COMMIT or a restart).
func (of *openFile) sameAsWritten(off int64, b []byte) (bool, error) {
	if len(b) == 0 {
		return true, nil
	}
	tailStart := of.next - int64(of.tail.len())
	if off >= tailStart {
		return of.tail.equal(int(off-tailStart), b), nil
	}
	if off+int64(len(b)) > of.st.Length {
		// Written by this stream, earlier than what is kept: cannot tell.
		return false, nil
	}
	ctx, cancel := of.u.ctx()
	defer cancel()
	r, err := of.u.c.OpenFile(ctx, hdfs.InodePath(of.id))
	if err != nil {
		return false, err
	}
	defer r.Close()
	have := make([]byte, len(b))
	if _, err := readFull(r, have, off); err != nil {
		return false, err
	}
	return bytes.Equal(have, b), nil
}

// commit waits for buffered data to become contiguous, then closes the
// stream (flush, complete: durable), or only hsyncs it when WRITEs beyond
// arrived meanwhile.
func (of *openFile) commit() (nfs.NFSStatus, error) {
	of.mu.Lock()
	defer of.mu.Unlock()
	if of.done {
		return nfs.NFSStatusOk, nil
	}
	if of.pendingBytes > 0 {
		var maxEnd int64
		for off, d := range of.pending {
			maxEnd = max(maxEnd, off+int64(len(d.data)))
		}
		if !of.waitFor(maxEnd) {
			return nfs.NFSStatusJukebox, nil
		}
		if !of.done && of.pendingBytes > 0 {
			// WRITEs past the committed data arrived while waiting:
			// closing would drop them. hsync instead; the stream stays.
			status, _, err := of.finish(fileSync)
			return status, err
		}
	}
	if err := of.closeLocked("commit"); err != nil {
		return nfs.NFSStatusIO, err
	}
	return nfs.NFSStatusOk, nil
}

// write serves a WRITE call's arguments (RFC 1813 WRITE3args), which lie
// in the pooled record *rec; write may take the record (setting *rec to
// nil), else the caller gives it back to the pool.
func (g *Gateway) write(cred credential, args []byte, rec *[]byte) []byte {
	r := xdrReader{b: args}
	fh := r.opaque(64)
	off := r.u64()
	count := r.u32()
	stable := r.u32()
	data := r.opaque(maxRecord)
	if r.err != nil || stable > fileSync || int(count) > len(data) {
		return wccReply(nfs.NFSStatusInval, nil)
	}
	data = data[:count]
	if off > 1<<62 {
		return wccReply(nfs.NFSStatusFBig, nil)
	}
	id, err := decodeHandle(fh)
	if err != nil {
		return wccReply(nfs.NFSStatusBadHandle, nil)
	}
	u, err := g.fsFor(cred.user)
	if err != nil {
		return wccReply(nfs.NFSStatusServerFault, nil)
	}
	for range 3 {
		of, err := g.writes.get(u, id)
		if err == errTooManyOpen {
			g.log.Warn("nfs3: too many files being written, client must retry", "user", cred.user, "inode", id)
			return wccReply(nfs.NFSStatusJukebox, nil)
		}
		if err != nil {
			g.log.Info("nfs3: write", "user", cred.user, "inode", id, "err", err)
			return wccReply(statusOf(err, nfs.NFSStatusStale), nil)
		}
		status, committed, err := of.write(int64(off), data, rec, stable)
		if err == errRetry {
			continue
		}
		if err != nil {
			g.log.Error("nfs3: write", "path", of.path, "user", cred.user, "offset", off, "err", err)
		}
		attrs := g.attrsOf(of)
		if status != nfs.NFSStatusOk {
			return wccReply(status, attrs)
		}
		var b bytes.Buffer
		b.Write(wccReply(status, attrs))
		binary.Write(&b, binary.BigEndian, count)
		binary.Write(&b, binary.BigEndian, committed)
		b.Write(g.verf[:])
		return b.Bytes()
	}
	return wccReply(nfs.NFSStatusJukebox, nil)
}

// commit serves a COMMIT call's arguments (COMMIT3args).
func (g *Gateway) commit(cred credential, args []byte) []byte {
	r := xdrReader{b: args}
	fh := r.opaque(64)
	r.u64()
	r.u32()
	if r.err != nil {
		return wccReply(nfs.NFSStatusInval, nil)
	}
	id, err := decodeHandle(fh)
	if err != nil {
		return wccReply(nfs.NFSStatusBadHandle, nil)
	}
	status := nfs.NFSStatusOk
	var attrs *nfs.FileAttribute
	if of := g.writes.lookup(id); of != nil {
		if status, err = of.commit(); err != nil {
			g.log.Error("nfs3: commit", "path", of.path, "user", cred.user, "err", err)
		}
		attrs = g.attrsOf(of)
	}
	if g.writes.takeLost(id) && status == nfs.NFSStatusOk {
		// Data acknowledged since the last COMMIT never reached HDFS.
		g.log.Error("nfs3: commit: acknowledged writes were lost", "inode", id, "user", cred.user)
		status = nfs.NFSStatusIO
	}
	b := wccReply(status, attrs)
	if status == nfs.NFSStatusOk {
		b = append(b, g.verf[:]...)
	}
	return b
}

func (g *Gateway) attrsOf(of *openFile) *nfs.FileAttribute {
	st := of.st
	st.Length = of.size.Load()
	st.ModTime = time.Now()
	return nfs.ToFileAttribute(g.info(st), st.Path)
}

// wccReply is a status followed by wcc_data without pre-operation
// attributes.
func wccReply(status nfs.NFSStatus, post *nfs.FileAttribute) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(status))
	nfs.WriteWcc(&b, nil, post)
	return b.Bytes()
}

// statusOf picks the NFS status for an HDFS error; missing is the one for
// a file that does not exist.
func statusOf(err error, missing nfs.NFSStatus) nfs.NFSStatus {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return missing
	case errors.Is(err, os.ErrPermission):
		return nfs.NFSStatusAccess
	case errors.Is(err, errIsDir):
		return nfs.NFSStatusIsDir
	default:
		return nfs.NFSStatusIO
	}
}

// fsinfoReply is FSINFO3res: no attributes; 1 MiB reads, 4 MiB writes.
func fsinfoReply() []byte {
	var b bytes.Buffer
	for _, v := range []uint32{uint32(nfs.NFSStatusOk), 0,
		maxRead, maxRead, 4096, // rtmax, rtpref, rtmult
		maxWrite, maxWrite, 4096, // wtmax, wtpref, wtmult
		64 << 10, // dtpref
	} {
		binary.Write(&b, binary.BigEndian, v)
	}
	binary.Write(&b, binary.BigEndian, uint64(1)<<62)         // maxfilesize
	binary.Write(&b, binary.BigEndian, [2]uint32{0, 1e6})     // time_delta: 1 ms
	binary.Write(&b, binary.BigEndian, uint32(0x0010|0x0008)) // FSF3_CANSETTIME | FSF3_HOMOGENEOUS
	return b.Bytes()
}
