package editlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Load recovers the namespace from the storage directory and readies the
// log for appending.
//
// It picks the newest image whose checksum verifies (logging and skipping
// damaged newer ones) and calls image with its txid and payload; the payload
// is verified before image sees a byte, so image is called at most once.
// Then it calls apply for every log record with a txid above the image's, in
// txid order; rec is only valid during the call.
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
	l.file, l.segStart, l.segBytes, l.allocEnd = st.file, st.segStart, st.segBytes, st.allocEnd
	l.imageTxID = st.imageTxID
	return nil
}

type recovered struct {
	last      uint64
	imageTxID uint64
	file      segmentFile
	segStart  uint64
	segBytes  int64
	allocEnd  int64
}

// segmentResult is what replaying one segment found.
type segmentResult struct {
	last     uint64 // last txid in the segment (start-1 if none)
	dataEnd  int64  // end of the valid records; zero fill may follow
	fileSize int64  // file size (after any truncation)
	removed  bool   // the segment was a torn, empty header and was deleted
}

func (l *Log) corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrCorrupt, l.cur, fmt.Sprintf(format, args...))
}

func (l *Log) recover(image func(uint64, io.Reader) error, apply func(uint64, []byte) error) (recovered, error) {
	var rv recovered
	ls, err := listCurrent(l.fs, l.cur)
	if err != nil {
		return rv, fmt.Errorf("editlog: list %s: %w", l.cur, err)
	}
	for _, name := range ls.tmp {
		l.logger.Info("editlog: removing abandoned image checkpoint", "file", name)
		if err := l.fs.Remove(filepath.Join(l.cur, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return rv, fmt.Errorf("editlog: %w", err)
		}
	}

	// The newest image that verifies.
	chosen := -1
	var plen int64
	for i, im := range ls.images {
		n, err := verifyImage(l.fs, filepath.Join(l.cur, im.name), im.txid)
		if err != nil {
			l.logger.Warn("editlog: image is corrupt; falling back to an older one", "file", im.name, "err", err)
			continue
		}
		chosen, plen = i, n
		break
	}
	if chosen < 0 {
		return rv, l.corrupt("no valid image (found %d)", len(ls.images))
	}
	im := ls.images[chosen]
	if chosen > 0 {
		l.logger.Warn("editlog: loading an older image", "file", im.name, "txid", im.txid)
	}
	if image != nil {
		if err := readImage(l.fs, filepath.Join(l.cur, im.name), im.txid, plen, image); err != nil {
			return rv, fmt.Errorf("editlog: load image %s: %w", im.name, err)
		}
	}
	rv.imageTxID = im.txid

	// Structural checks: one in-progress segment at most, and it is last.
	segs := ls.segments
	for i, s := range segs {
		if i > 0 && segs[i-1].start == s.start {
			return rv, l.corrupt("segments %s and %s start at the same txid", segs[i-1].name, s.name)
		}
		if s.inProgress && i != len(segs)-1 {
			return rv, l.corrupt("in-progress segment %s is followed by %s", s.name, segs[i+1].name)
		}
	}

	expected := im.txid + 1 // next txid to apply
	var tail *segmentInfo
	var tailRes segmentResult
	for i := range segs {
		s := segs[i]
		if !s.inProgress && s.end < expected {
			continue // wholly covered by the image or by earlier segments
		}
		if s.start > expected {
			return rv, l.corrupt("missing edits: txid %d is in no segment (next segment is %s)", expected, s.name)
		}
		res, err := l.replaySegment(s, &expected, apply)
		if err != nil {
			return rv, err
		}
		if s.inProgress {
			tail, tailRes = &segs[i], res
		}
	}
	last := expected - 1

	// seen_txid is the start of the newest segment ever created, written
	// once that segment was durable. Purging only deletes segments covered
	// by every kept image, so unless the image covers it, that segment must
	// still be here; if it is not, acknowledged edits are missing.
	seen, ok, err := readSeenTxID(l.fs, l.cur)
	if err != nil {
		return rv, err
	}
	if !ok {
		l.logger.Warn("editlog: seen_txid is missing", "dir", l.cur)
	} else if seen > im.txid {
		present := false
		for _, s := range segs {
			if s.start == seen && !(s.inProgress && tailRes.removed) {
				present = true
			}
		}
		if !present || seen > last+1 {
			return rv, l.corrupt("missing edits: %s says a segment starting at txid %d was created, but the log ends at txid %d", seenTxIDFile, seen, last)
		}
	}

	// Choose the segment to append to.
	if tail != nil && !tailRes.removed {
		switch {
		case tailRes.last == last:
			f, err := l.openSegmentForAppend(tail.start)
			if err != nil {
				return rv, fmt.Errorf("editlog: %w", err)
			}
			rv.file, rv.segStart, rv.segBytes, rv.allocEnd = f, tail.start, tailRes.dataEnd, tailRes.fileSize
		case tailRes.last >= tail.start:
			// Its records end before the image's txid: finalize it as is.
			to := finalizedName(tail.start, tailRes.last)
			l.logger.Warn("editlog: finalizing in-progress segment that ends before the image", "file", tail.name, "as", to)
			if err := l.fs.Rename(filepath.Join(l.cur, tail.name), filepath.Join(l.cur, to)); err != nil {
				return rv, fmt.Errorf("editlog: %w", err)
			}
		default:
			l.logger.Info("editlog: removing empty in-progress segment", "file", tail.name)
			if err := l.fs.Remove(filepath.Join(l.cur, tail.name)); err != nil {
				return rv, fmt.Errorf("editlog: %w", err)
			}
		}
	}
	if rv.file == nil {
		if err := syncDir(l.fs, l.cur); err != nil {
			return rv, fmt.Errorf("editlog: %w", err)
		}
		f, err := l.createSegment(last + 1)
		if err != nil {
			return rv, fmt.Errorf("editlog: create segment %s: %w", inProgressName(last+1), err)
		}
		rv.file, rv.segStart, rv.segBytes, rv.allocEnd = f, last+1, segmentHeaderSize, segmentHeaderSize
	}
	rv.last = last
	l.logger.Info("editlog: loaded", "dir", l.dir, "image_txid", im.txid, "last_txid", last, "segments", len(segs))
	return rv, nil
}

// replaySegment reads one segment, applying the records with txid ≥
// *expected. Only the in-progress segment (always the last) may have its
// damaged tail truncated.
func (l *Log) replaySegment(s segmentInfo, expected *uint64, apply func(uint64, []byte) error) (segmentResult, error) {
	path := filepath.Join(l.cur, s.name)
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
		return segmentResult{}, l.corrupt("%s: %s", s.name, herr)
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
				return segmentResult{}, l.corrupt("%s: finalized segment damaged at %v", s.name, re)
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
				return segmentResult{}, l.corrupt("%s: damaged record (txid %d) at %v, %s: mid-log corruption; "+
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
			return segmentResult{}, l.corrupt("%s: record at offset %d has txid %d, expected %d", s.name, rr.off-int64(recordHeaderSize+len(rec)), txid, last+1)
		}
		last = txid
		if txid < *expected {
			continue // already covered by the image
		}
		if txid != *expected {
			return segmentResult{}, l.corrupt("%s: missing edits: txid %d follows %d", s.name, txid, *expected-1)
		}
		if apply != nil {
			if err := apply(txid, rec); err != nil {
				return segmentResult{}, fmt.Errorf("editlog: apply txid %d: %w", txid, err)
			}
		}
		*expected = txid + 1
	}
	if !s.inProgress && last != s.end {
		return segmentResult{}, l.corrupt("%s: segment ends at txid %d", s.name, last)
	}
	return segmentResult{last: last, dataEnd: dataEnd, fileSize: size}, nil
}
