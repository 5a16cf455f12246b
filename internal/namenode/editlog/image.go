package editlog

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/stratafs/strata/internal/vfs"
)

// imageWriter checksums and counts the payload on its way to the file.
type imageWriter struct {
	w   *bufio.Writer
	crc uint32
	n   uint64
}

func (iw *imageWriter) Write(p []byte) (int, error) {
	n, err := iw.w.Write(p)
	iw.crc = crc32.Update(iw.crc, castagnoli, p[:n])
	iw.n += uint64(n)
	return n, err
}

// imageFile is an image being written: fsimage.ckpt_<txid> in one
// directory, made fsimage_<txid> by finish.
type imageFile struct {
	fsys     vfs.FS
	cur, tmp string
	txid     uint64
	f        vfs.File
	iw       *imageWriter
	err      error // the first write error; the file is abandoned
}

func createImage(fsys vfs.FS, cur string, txid uint64) (*imageFile, error) {
	tmp := filepath.Join(cur, imageTmpName(txid))
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, filePerm)
	if err != nil {
		return nil, err
	}
	hdr := make([]byte, imageHeaderSize)
	copy(hdr, imageMagic)
	be.PutUint32(hdr[8:12], imageVersion)
	be.PutUint64(hdr[12:20], txid)
	bw := bufio.NewWriterSize(f, 1<<20)
	im := &imageFile{fsys: fsys, cur: cur, tmp: tmp, txid: txid, f: f, iw: &imageWriter{w: bw, crc: crc32.Update(0, castagnoli, hdr)}}
	if _, err := bw.Write(hdr); err != nil {
		im.abort()
		return nil, err
	}
	return im, nil
}

// finish writes the trailer, fsyncs, renames the file into place and
// fsyncs the directory. It abandons the file on failure.
func (im *imageFile) finish() (err error) {
	defer func() {
		if err != nil {
			im.abort()
		}
	}()
	if im.err != nil {
		return im.err
	}
	var tr [imageTrailerSize]byte
	be.PutUint64(tr[0:8], im.iw.n)
	be.PutUint32(tr[8:12], im.iw.crc)
	if _, err := im.iw.w.Write(tr[:]); err != nil {
		return err
	}
	if err := im.iw.w.Flush(); err != nil {
		return err
	}
	if err := im.f.Sync(); err != nil {
		return err
	}
	f := im.f
	im.f = nil
	if err := f.Close(); err != nil {
		return err
	}
	if err := im.fsys.Rename(im.tmp, filepath.Join(im.cur, imageName(im.txid))); err != nil {
		return err
	}
	return syncDir(im.fsys, im.cur)
}

// abort closes and deletes the unfinished file.
func (im *imageFile) abort() {
	if im.f != nil {
		im.f.Close()
		im.f = nil
	}
	im.fsys.Remove(im.tmp)
}

// writeImage writes current/fsimage_<txid> atomically: fsimage.ckpt_<txid>,
// fsync, rename, fsync current/. A nil write means an empty payload.
func writeImage(fsys vfs.FS, cur string, txid uint64, write func(io.Writer) error) error {
	im, err := createImage(fsys, cur, txid)
	if err != nil {
		return err
	}
	if write != nil {
		if err := write(im.iw); err != nil {
			im.abort()
			return fmt.Errorf("write image payload: %w", err)
		}
	}
	return im.finish()
}

// fanout writes the payload to every image still healthy; an image whose
// write fails is dropped (im.err). It fails only when none is left, so one
// bad disk does not stop a checkpoint.
type fanout struct {
	ims []*imageFile
}

func (fo *fanout) Write(p []byte) (int, error) {
	var last error
	ok := 0
	for _, im := range fo.ims {
		if im.err != nil {
			last = im.err
			continue
		}
		if _, err := im.iw.Write(p); err != nil {
			im.err, last = err, err
			continue
		}
		ok++
	}
	if ok == 0 {
		return 0, fmt.Errorf("every image write failed; last: %w", last)
	}
	return len(p), nil
}

// verifyImage checks an image file completely (header, size, trailer,
// checksum) and returns its payload length.
func verifyImage(fsys vfs.FS, path string, txid uint64) (int64, error) {
	f, err := vfs.Open(fsys, path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	if size < imageHeaderSize+imageTrailerSize {
		return 0, fmt.Errorf("file too short (%d bytes)", size)
	}
	hdr := make([]byte, imageHeaderSize)
	if _, err := f.ReadAt(hdr, 0); err != nil {
		return 0, err
	}
	if string(hdr[:8]) != imageMagic {
		return 0, fmt.Errorf("bad magic %q", hdr[:8])
	}
	if v := be.Uint32(hdr[8:12]); v != imageVersion {
		return 0, fmt.Errorf("unsupported image version %d", v)
	}
	if t := be.Uint64(hdr[12:20]); t != txid {
		return 0, fmt.Errorf("header txid %d does not match the file name", t)
	}
	var tr [imageTrailerSize]byte
	if _, err := f.ReadAt(tr[:], size-imageTrailerSize); err != nil {
		return 0, err
	}
	plen := int64(size - imageHeaderSize - imageTrailerSize)
	if n := be.Uint64(tr[0:8]); n != uint64(plen) {
		return 0, fmt.Errorf("trailer says %d payload bytes, file holds %d", n, plen)
	}
	h := crc32.New(castagnoli)
	h.Write(hdr)
	if _, err := io.CopyBuffer(h, io.NewSectionReader(f, imageHeaderSize, plen), make([]byte, 1<<20)); err != nil {
		return 0, err
	}
	if got, want := h.Sum32(), be.Uint32(tr[8:12]); got != want {
		return 0, fmt.Errorf("checksum mismatch (stored %#08x, computed %#08x)", want, got)
	}
	return plen, nil
}

// checkedReader re-checksums the payload as the image callback reads it, in
// case the file changed between verifyImage and the read.
type checkedReader struct {
	r    io.Reader
	crc  uint32
	want uint32
}

func (c *checkedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.crc = crc32.Update(c.crc, castagnoli, p[:n])
	if errors.Is(err, io.EOF) && c.crc != c.want {
		return n, fmt.Errorf("%w: image checksum mismatch while reading", ErrCorrupt)
	}
	return n, err
}

// readImage verifies then streams the payload of one image to fn.
func readImage(fsys vfs.FS, path string, txid uint64, plen int64, fn func(uint64, io.Reader) error) error {
	f, err := vfs.Open(fsys, path)
	if err != nil {
		return err
	}
	defer f.Close()
	hdr := make([]byte, imageHeaderSize)
	if _, err := f.ReadAt(hdr, 0); err != nil {
		return err
	}
	var tr [imageTrailerSize]byte
	if _, err := f.ReadAt(tr[:], imageHeaderSize+plen); err != nil {
		return err
	}
	cr := &checkedReader{
		r:    bufio.NewReaderSize(io.NewSectionReader(f, imageHeaderSize, plen), 1<<20),
		crc:  crc32.Update(0, castagnoli, hdr),
		want: be.Uint32(tr[8:12]),
	}
	if err := fn(txid, cr); err != nil {
		return err
	}
	// Drain what the callback left so the checksum is checked in full.
	_, err = io.Copy(io.Discard, cr)
	return err
}

// SaveImage writes the image (checkpoint) for txid: write receives the
// payload's writer, which buffers; the file gets a header, the payload and a
// checksummed trailer, and appears atomically (fsimage.ckpt_<txid>, fsync,
// rename to fsimage_<txid>, fsync current/). txid must be durable
// (≤ SyncedTxID), which holds for the txid Roll returned.
//
// After the image is durable SaveImage purges: it deletes the images older
// than the newest Options.ImagesToKeep, then every finalized log segment
// whose txids are all ≤ the oldest kept image's txid. A failing purge is
// logged, not returned; the next SaveImage retries it.
//
// SaveImage may run concurrently with Append, Sync and Roll (without the
// caller's namespace lock); calls to SaveImage are serialised.
func (l *Log) SaveImage(txid uint64, write func(w io.Writer) error) error {
	l.imgMu.Lock()
	defer l.imgMu.Unlock()
	l.mu.Lock()
	err := l.usableLocked()
	synced := l.syncedTxID
	l.mu.Unlock()
	if err != nil {
		return err
	}
	if txid > synced {
		return fmt.Errorf("editlog: SaveImage(%d): txid is not durable yet (synced up to %d); call Roll first", txid, synced)
	}
	l.mu.Lock()
	act := l.activeLocked()
	l.mu.Unlock()
	name := imageName(txid)

	// The payload is produced once and written to every active directory;
	// the files are then finished (fsync, rename) in parallel.
	ims := make([]*imageFile, len(act))
	errs := make([]error, len(act)) // creating each file
	fo := &fanout{}
	for i, d := range act {
		ims[i], errs[i] = createImage(l.fs, d.cur, txid)
		if errs[i] == nil {
			fo.ims = append(fo.ims, ims[i])
		}
	}
	if len(fo.ims) > 0 && write != nil {
		if err := write(fo); err != nil && !allFailed(ims) {
			// The payload's own failure, not a disk's.
			for _, im := range fo.ims {
				im.abort()
			}
			return fmt.Errorf("editlog: save image %s: write image payload: %w", name, err)
		}
	}
	ferrs := parallel(len(ims), func(i int) error {
		if ims[i] == nil {
			return errs[i]
		}
		return ims[i].finish()
	})
	saved := len(act) - countErrs(ferrs)
	if saved == 0 {
		// As with one directory: the log goes on, the next checkpoint
		// retries.
		return fmt.Errorf("editlog: save image %s: %w", name, firstErr(ferrs))
	}
	l.mu.Lock()
	// A directory that cannot take the image leaves service while others
	// did: it must not be purged on, nor trusted to hold current images.
	l.failDirsLocked(act, ferrs, "save image "+name)
	if txid > l.imageTxID {
		l.imageTxID = txid
	}
	act = l.activeLocked()
	l.mu.Unlock()
	l.logger.Info("editlog: saved image", "file", name, "txid", txid, "dirs", len(act))
	for _, d := range act {
		if err := l.purge(d); err != nil {
			l.logger.Warn("editlog: purging old images and segments failed", "dir", d.path, "err", err)
		}
	}
	return nil
}

// allFailed reports whether no image is left to write to.
func allFailed(ims []*imageFile) bool {
	for _, im := range ims {
		if im != nil && im.err == nil {
			return false
		}
	}
	return true
}

// purge applies the retention policy; see SaveImage.
func (l *Log) purge(d *storageDir) error {
	ls, err := listCurrent(l.fs, d.cur)
	if err != nil {
		return err
	}
	keep := l.opts.ImagesToKeep
	if len(ls.images) <= keep {
		if len(ls.images) == 0 {
			return nil
		}
		keep = len(ls.images)
	}
	var firstErr error
	var removed []string
	remove := func(name string) {
		if err := l.fs.Remove(filepath.Join(d.cur, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			if firstErr == nil {
				firstErr = err
			}
			return
		}
		removed = append(removed, name)
	}
	for _, im := range ls.images[keep:] {
		remove(im.name)
	}
	oldest := ls.images[keep-1].txid
	for _, s := range ls.segments {
		if !s.inProgress && s.end <= oldest {
			remove(s.name)
		}
	}
	if len(removed) > 0 {
		l.logger.Info("editlog: purged old images and segments", "dir", d.path, "files", removed, "oldest_kept_image_txid", oldest)
		if err := syncDir(l.fs, d.cur); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}
