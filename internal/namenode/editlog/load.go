package editlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Load recovers the namespace from the storage directories and readies the
// log for appending.
//
// Every directory is recovered on its own (below); the one whose log
// reaches furthest (the first such, in order) is the source: Load calls
// image and apply from it alone. Every other directory that does not end
// at the same txid with the same in-progress segment — one taken out of
// service in an earlier run, one whose tail was torn, one that was not
// formatted — is then repopulated from the source: its current/ is
// replaced by a copy of the source's image, the segments after it and
// VERSION (last, so a crash midway leaves an unformatted directory that
// the next Load repopulates again). Afterwards every active directory
// alone holds the whole history, and they append to segments of the same
// name. A directory the copy fails on leaves service; Load fails only if
// the source itself cannot be readied and no other directory can.
//
// A formatted directory that cannot be recovered (ErrCorrupt, or an I/O
// error reading it) fails Load, even if another directory loads: it might
// hold acknowledged edits that the others lack (if they were out of
// service when it took them), and only an operator can tell. Remove its
// contents to have it repopulated, or drop it from the list (or, for
// mid-log damage in its in-progress segment, use Options.Recover).
//
// In each directory, Load picks the newest image whose checksum verifies
// (logging and skipping damaged newer ones); the source's is passed to
// image with its txid and payload; the payload is verified before image
// sees a byte, so image is called at most once. Then it calls apply for
// every log record with a txid above the image's, in txid order; rec is
// only valid during the call.
//
// A damaged record at the tail of the in-progress segment (short read,
// length out of bounds, checksum mismatch) with no valid record after it is
// what a crash mid-write leaves: Load logs "editlog: truncating corrupt
// tail", truncates the segment where that record starts and stops there; the
// record was never acknowledged and is never applied. Damage anywhere else —
// in a finalized segment, or followed by a valid record — and gaps in the
// txid sequence return an error wrapping ErrCorrupt.
//
// Afterwards LastTxID() is the last txid recovered and Append continues at
// LastTxID()+1. A nil image or apply skips those calls. Load may be called
// once.
func (l *Log) Load(image func(txid uint64, r io.Reader) error, apply func(txid uint64, rec []byte) error) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	if l.loadCalled {
		l.mu.Unlock()
		return errors.New("editlog: Load called twice")
	}
	l.loadCalled = true
	l.mu.Unlock()

	st, err := l.recover(image, apply)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.loaded = true
	l.lastTxID, l.syncedTxID = st.last, st.last
	l.segStart, l.segBytes = st.segStart, st.segBytes
	l.imageTxID = st.imageTxID
	return nil
}

type recovered struct {
	last      uint64
	imageTxID uint64
	segStart  uint64
	segBytes  int64
}

// segmentResult is what replaying one segment found.
type segmentResult struct {
	last     uint64 // last txid in the segment (start-1 if none)
	dataEnd  int64  // end of the valid records; zero fill may follow
	fileSize int64  // file size (after any truncation)
	removed  bool   // the segment was a torn, empty header and was deleted
}

// dirScan is what recovering one directory found.
type dirScan struct {
	image   imageInfo // the newest valid image
	last    uint64    // the last txid of the log
	segs    []segmentInfo
	tail    *segmentInfo // the in-progress segment, if any
	tailRes segmentResult
}

// continuesTail reports whether appending continues the in-progress
// segment (rather than starting one at last+1).
func (sc *dirScan) continuesTail() bool {
	return sc.tail != nil && !sc.tailRes.removed && sc.tailRes.last == sc.last
}

// plan is where appending continues: the in-progress segment's start and
// the end of its records.
func (sc *dirScan) plan() (uint64, int64) {
	if sc.continuesTail() {
		return sc.tail.start, sc.tailRes.dataEnd
	}
	return sc.last + 1, segmentHeaderSize
}

func (d *storageDir) corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrCorrupt, d.cur, fmt.Sprintf(format, args...))
}

func (l *Log) recover(image func(uint64, io.Reader) error, apply func(uint64, []byte) error) (recovered, error) {
	var rv recovered
	scans := make([]*dirScan, len(l.dirs))
	var src *storageDir
	var srcScan *dirScan
	if len(l.dirs) == 1 {
		// One pass: replay while recovering.
		sc, err := l.scanDir(l.dirs[0], image, apply)
		if err != nil {
			return rv, err
		}
		src, srcScan, scans[0] = l.dirs[0], &sc, &sc
	} else {
		for i, d := range l.dirs {
			if !d.formatted {
				l.logger.Warn("editlog: storage directory is not formatted; repopulating it", "dir", d.path)
				continue
			}
			sc, err := l.scanDir(d, nil, nil)
			if err != nil {
				return rv, fmt.Errorf("%w (storage directory %s; remove its contents to have it repopulated from the others)", err, d.path)
			}
			scans[i] = &sc
			if srcScan == nil || sc.last > srcScan.last {
				src, srcScan = d, &sc
			}
		}
		sc, err := l.scanDir(src, image, apply)
		if err != nil {
			return rv, err
		}
		if sc.last != srcScan.last {
			return rv, fmt.Errorf("editlog: %s: the log ends at txid %d on replay, %d on recovery", src.path, sc.last, srcScan.last)
		}
		*srcScan = sc
	}
	segStart, segBytes := srcScan.plan()

	// Bring every other directory to the source's state.
	for i, d := range l.dirs {
		if d == src {
			continue
		}
		if sc := scans[i]; sc != nil && sc.last == srcScan.last {
			if s, b := sc.plan(); s == segStart && b == segBytes {
				continue
			}
		}
		sc, err := l.repopulate(d, src, srcScan)
		if err == nil && sc.last != srcScan.last {
			err = fmt.Errorf("its log ends at txid %d after the copy, not %d", sc.last, srcScan.last)
		}
		if err != nil {
			l.mu.Lock()
			l.failDirLocked(d, fmt.Errorf("repopulate from %s: %w", src.path, err))
			l.mu.Unlock()
			scans[i] = nil
			continue
		}
		scans[i] = &sc
	}

	// Ready every directory's in-progress segment.
	for i, d := range l.dirs {
		sc := scans[i]
		if sc == nil {
			continue
		}
		err := l.openTail(d, sc)
		if err != nil {
			if len(l.dirs) == 1 {
				return rv, err
			}
			l.mu.Lock()
			l.failDirLocked(d, err)
			l.mu.Unlock()
		}
	}
	l.mu.Lock()
	err := l.err
	l.mu.Unlock()
	if err != nil {
		l.closeFiles()
		return rv, err
	}
	rv.last, rv.imageTxID, rv.segStart, rv.segBytes = srcScan.last, srcScan.image.txid, segStart, segBytes
	l.logger.Info("editlog: loaded", "dir", src.path, "image_txid", srcScan.image.txid, "last_txid", srcScan.last, "segments", len(srcScan.segs))
	return rv, nil
}

// closeFiles closes the segments a failed Load opened.
func (l *Log) closeFiles() {
	for _, d := range l.dirs {
		if d.file != nil {
			d.file.Close()
			d.file = nil
		}
	}
}

// scanDir recovers one directory: it removes abandoned image checkpoints,
// verifies the newest image (passing it to image if non-nil), replays the
// log after it (passing every record to apply if non-nil), truncating a
// torn tail, and checks seen_txid.
func (l *Log) scanDir(d *storageDir, image func(uint64, io.Reader) error, apply func(uint64, []byte) error) (dirScan, error) {
	var sc dirScan
	ls, err := listCurrent(l.fs, d.cur)
	if err != nil {
		return sc, fmt.Errorf("editlog: list %s: %w", d.cur, err)
	}
	for _, name := range ls.tmp {
		l.logger.Info("editlog: removing abandoned image checkpoint", "file", name)
		if err := l.fs.Remove(filepath.Join(d.cur, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return sc, fmt.Errorf("editlog: %w", err)
		}
	}

	// The newest image that verifies.
	chosen := -1
	var plen int64
	for i, im := range ls.images {
		n, err := verifyImage(l.fs, filepath.Join(d.cur, im.name), im.txid)
		if err != nil {
			l.logger.Warn("editlog: image is corrupt; falling back to an older one", "file", im.name, "err", err)
			continue
		}
		chosen, plen = i, n
		break
	}
	if chosen < 0 {
		return sc, d.corrupt("no valid image (found %d)", len(ls.images))
	}
	im := ls.images[chosen]
	if chosen > 0 {
		l.logger.Warn("editlog: loading an older image", "file", im.name, "txid", im.txid)
	}
	if image != nil {
		if err := readImage(l.fs, filepath.Join(d.cur, im.name), im.txid, plen, image); err != nil {
			return sc, fmt.Errorf("editlog: load image %s: %w", im.name, err)
		}
	}
	sc.image = im

	// Structural checks: one in-progress segment at most, and it is last.
	segs := ls.segments
	for i, s := range segs {
		if i > 0 && segs[i-1].start == s.start {
			return sc, d.corrupt("segments %s and %s start at the same txid", segs[i-1].name, s.name)
		}
		if s.inProgress && i != len(segs)-1 {
			return sc, d.corrupt("in-progress segment %s is followed by %s", s.name, segs[i+1].name)
		}
	}
	sc.segs = segs

	expected := im.txid + 1 // next txid to apply
	for i := range segs {
		s := segs[i]
		if !s.inProgress && s.end < expected {
			continue // wholly covered by the image or by earlier segments
		}
		if s.start > expected {
			return sc, d.corrupt("missing edits: txid %d is in no segment (next segment is %s)", expected, s.name)
		}
		res, err := l.replaySegment(d, s, &expected, apply)
		if err != nil {
			return sc, err
		}
		if s.inProgress {
			sc.tail, sc.tailRes = &segs[i], res
		}
	}
	sc.last = expected - 1

	// seen_txid is the start of the newest segment ever created, written
	// once that segment was durable. Purging only deletes segments covered
	// by every kept image, so unless the image covers it, that segment must
	// still be here; if it is not, acknowledged edits are missing.
	seen, ok, err := readSeenTxID(l.fs, d.cur)
	if err != nil {
		return sc, err
	}
	if !ok {
		l.logger.Warn("editlog: seen_txid is missing", "dir", d.cur)
	} else if seen > im.txid {
		present := false
		for _, s := range segs {
			if s.start == seen && !(s.inProgress && sc.tailRes.removed) {
				present = true
			}
		}
		if !present || seen > sc.last+1 {
			return sc, d.corrupt("missing edits: %s says a segment starting at txid %d was created, but the log ends at txid %d", seenTxIDFile, seen, sc.last)
		}
	}
	return sc, nil
}

// openTail readies d's in-progress segment for appending, as sc.plan says:
// it continues the in-progress segment, or finalizes or removes it and
// creates a new one.
func (l *Log) openTail(d *storageDir, sc *dirScan) error {
	if tail := sc.tail; tail != nil && !sc.tailRes.removed {
		switch {
		case sc.continuesTail():
			f, err := l.openSegmentForAppend(d, tail.start)
			if err != nil {
				return fmt.Errorf("editlog: %w", err)
			}
			d.file, d.allocEnd = f, sc.tailRes.fileSize
			return nil
		case sc.tailRes.last >= tail.start:
			// Its records end before the image's txid: finalize it as is.
			to := finalizedName(tail.start, sc.tailRes.last)
			l.logger.Warn("editlog: finalizing in-progress segment that ends before the image", "file", tail.name, "as", to)
			if err := l.fs.Rename(filepath.Join(d.cur, tail.name), filepath.Join(d.cur, to)); err != nil {
				return fmt.Errorf("editlog: %w", err)
			}
		default:
			l.logger.Info("editlog: removing empty in-progress segment", "file", tail.name)
			if err := l.fs.Remove(filepath.Join(d.cur, tail.name)); err != nil {
				return fmt.Errorf("editlog: %w", err)
			}
		}
	}
	if err := syncDir(l.fs, d.cur); err != nil {
		return fmt.Errorf("editlog: %w", err)
	}
	f, err := l.createSegment(d, sc.last+1)
	if err != nil {
		return fmt.Errorf("editlog: create segment %s: %w", inProgressName(sc.last+1), err)
	}
	d.file, d.allocEnd = f, segmentHeaderSize
	return nil
}

// replaySegment reads one segment, applying the records with txid ≥
// *expected. Only the in-progress segment (always the last) may have its
// damaged tail truncated.
func (l *Log) replaySegment(d *storageDir, s segmentInfo, expected *uint64, apply func(uint64, []byte) error) (segmentResult, error) {
	path := filepath.Join(d.cur, s.name)
	flag := os.O_RDONLY
	if s.inProgress {
		flag = os.O_RDWR
	}
	f, err := l.fs.OpenFile(path, flag, 0)
	if err != nil {
		return segmentResult{}, fmt.Errorf("editlog: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return segmentResult{}, fmt.Errorf("editlog: %w", err)
	}
	size := fi.Size()

	hdr := make([]byte, segmentHeaderSize)
	var herr string
	if size < segmentHeaderSize {
		herr = fmt.Sprintf("file too short for a header (%d bytes)", size)
	} else if _, err := f.ReadAt(hdr, 0); err != nil {
		return segmentResult{}, fmt.Errorf("editlog: %s: %w", s.name, err)
	} else if string(hdr[:8]) != segmentMagic {
		herr = fmt.Sprintf("bad magic %q", hdr[:8])
	} else if v := be.Uint32(hdr[8:12]); v != segmentVersion {
		herr = fmt.Sprintf("unsupported segment version %d", v)
	} else if first := be.Uint64(hdr[12:20]); first != s.start {
		herr = fmt.Sprintf("header says first txid %d", first)
	}
	if herr != "" {
		// A crash while creating the segment leaves at most a partial
		// header: no record was ever written to it.
		if s.inProgress && size <= segmentHeaderSize {
			l.logger.Warn("editlog: removing in-progress segment with a torn header", "file", s.name, "bytes", size, "reason", herr)
			f.Close()
			if err := l.fs.Remove(path); err != nil {
				return segmentResult{}, fmt.Errorf("editlog: %w", err)
			}
			return segmentResult{last: s.start - 1, removed: true}, nil
		}
		return segmentResult{}, d.corrupt("%s: %s", s.name, herr)
	}

	rr := newRecordReader(f, segmentHeaderSize, size)
	last := s.start - 1
	dataEnd := size
	for {
		txid, rec, err := rr.next()
		if err == io.EOF {
			break
		}
		if err == errZeroHeader {
			// Preallocated space, if only zeros follow; the data ends here.
			zero, zerr := zeroFrom(f, rr.off, size)
			if zerr != nil {
				return segmentResult{}, fmt.Errorf("editlog: read %s: %w", s.name, zerr)
			}
			if zero {
				dataEnd = rr.off
				break
			}
			err = &recordError{rr.off, "zero-filled record header followed by non-zero bytes"}
		}
		var re *recordError
		if errors.As(err, &re) {
			if !s.inProgress {
				return segmentResult{}, d.corrupt("%s: finalized segment damaged at %v", s.name, re)
			}
			off, tx, found, serr := findValidRecord(f, re.off+1, size, last+1)
			if serr != nil && !errors.Is(serr, errScanBudget) {
				return segmentResult{}, fmt.Errorf("editlog: %s: %w", s.name, serr)
			}
			if (found || serr != nil) && !l.opts.Recover {
				why := fmt.Sprintf("followed by a valid record (txid %d at offset %d)", tx, off)
				if serr != nil {
					why = serr.Error()
				}
				return segmentResult{}, d.corrupt("%s: damaged record (txid %d) at %v, %s: mid-log corruption; "+
					"if this follows a crash, the records from txid %d on were probably never acknowledged, "+
					"and recovery mode (Options.Recover) truncates them", s.name, last+1, re, why, last+1)
			}
			if found || serr != nil {
				l.logger.Warn("editlog: recovery: truncating at a damaged record although valid records follow",
					"file", path, "offset", re.off, "next_valid_offset", off, "next_valid_txid", tx, "err", serr)
			}
			l.logger.Warn("editlog: truncating corrupt tail",
				"file", path, "offset", re.off, "dropped", size-re.off, "reason", re.reason, "last_txid", last)
			if err := f.Truncate(re.off); err != nil {
				return segmentResult{}, fmt.Errorf("editlog: truncate %s: %w", s.name, err)
			}
			if err := f.Sync(); err != nil {
				return segmentResult{}, fmt.Errorf("editlog: fsync %s: %w", s.name, err)
			}
			dataEnd, size = re.off, re.off
			break
		}
		if err != nil {
			return segmentResult{}, fmt.Errorf("editlog: read %s: %w", s.name, err)
		}
		if txid != last+1 {
			return segmentResult{}, d.corrupt("%s: record at offset %d has txid %d, expected %d", s.name, rr.off-int64(recordHeaderSize+len(rec)), txid, last+1)
		}
		last = txid
		if txid < *expected {
			continue // already covered by the image
		}
		if txid != *expected {
			return segmentResult{}, d.corrupt("%s: missing edits: txid %d follows %d", s.name, txid, *expected-1)
		}
		if apply != nil {
			if err := apply(txid, rec); err != nil {
				return segmentResult{}, fmt.Errorf("editlog: apply txid %d: %w", txid, err)
			}
		}
		*expected = txid + 1
	}
	if !s.inProgress && last != s.end {
		return segmentResult{}, d.corrupt("%s: segment ends at txid %d", s.name, last)
	}
	return segmentResult{last: last, dataEnd: dataEnd, fileSize: size}, nil
}
