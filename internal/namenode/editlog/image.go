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

// writeImage writes current/fsimage_<txid> atomically: fsimage.ckpt_<txid>,
// fsync, rename, fsync current/. A nil write means an empty payload.
func writeImage(fsys vfs.FS, cur string, txid uint64, write func(io.Writer) error) (err error) {
	tmp := filepath.Join(cur, imageTmpName(txid))
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			fsys.Remove(tmp)
		}
	}()
	hdr := make([]byte, imageHeaderSize)
	copy(hdr, imageMagic)
	be.PutUint32(hdr[8:12], imageVersion)
	be.PutUint64(hdr[12:20], txid)
	bw := bufio.NewWriterSize(f, 1<<20)
	if _, err := bw.Write(hdr); err != nil {
		return err
	}
	iw := &imageWriter{w: bw, crc: crc32.Update(0, castagnoli, hdr)}
	if write != nil {
		if err := write(iw); err != nil {
			return fmt.Errorf("write image payload: %w", err)
		}
	}
	var tr [imageTrailerSize]byte
	be.PutUint64(tr[0:8], iw.n)
	be.PutUint32(tr[8:12], iw.crc)
	if _, err := bw.Write(tr[:]); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, filepath.Join(cur, imageName(txid))); err != nil {
		return err
	}
	return syncDir(fsys, cur)
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
	if err := writeImage(l.fs, l.cur, txid, write); err != nil {
		return fmt.Errorf("editlog: save image %s: %w", imageName(txid), err)
	}
	l.mu.Lock()
	if txid > l.imageTxID {
		l.imageTxID = txid
	}
	l.mu.Unlock()
	l.logger.Info("editlog: saved image", "file", imageName(txid), "txid", txid)
	if err := l.purge(); err != nil {
		l.logger.Warn("editlog: purging old images and segments failed", "err", err)
	}
	return nil
}

// purge applies the retention policy; see SaveImage.
func (l *Log) purge() error {
	ls, err := listCurrent(l.fs, l.cur)
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
		if err := l.fs.Remove(filepath.Join(l.cur, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
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
		l.logger.Info("editlog: purged old images and segments", "files", removed, "oldest_kept_image_txid", oldest)
		if err := syncDir(l.fs, l.cur); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}
