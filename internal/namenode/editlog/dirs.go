package editlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stratafs/strata/internal/vfs"
)

// repopulate makes d a copy of what src's recovery used (sc): it replaces
// d's current/ with src's image, the segments after it (the in-progress one
// up to the end of its records), seen_txid and, last, VERSION; then it
// recovers d as Load does and returns what that found. A crash midway
// leaves d without VERSION, which the next Load repopulates again.
func (l *Log) repopulate(d, src *storageDir, sc *dirScan) (dirScan, error) {
	l.logger.Warn("editlog: repopulating storage directory", "dir", d.path, "from", src.path,
		"image_txid", sc.image.txid, "last_txid", sc.last)
	if err := l.fs.RemoveAll(d.cur); err != nil {
		return dirScan{}, err
	}
	if err := l.fs.Mkdir(d.cur, dirPerm); err != nil {
		return dirScan{}, err
	}
	if err := copyFile(l.fs, filepath.Join(src.cur, sc.image.name), filepath.Join(d.cur, sc.image.name), -1); err != nil {
		return dirScan{}, err
	}
	for _, s := range sc.segs {
		if !s.inProgress && s.end <= sc.image.txid {
			continue
		}
		if s.inProgress && (sc.tail == nil || sc.tailRes.removed) {
			continue
		}
		n := int64(-1)
		if s.inProgress {
			n = sc.tailRes.dataEnd
		}
		if err := copyFile(l.fs, filepath.Join(src.cur, s.name), filepath.Join(d.cur, s.name), n); err != nil {
			return dirScan{}, err
		}
	}
	seen, ok, err := readSeenTxID(l.fs, src.cur)
	if err != nil {
		return dirScan{}, err
	}
	if ok {
		if err := writeSeenTxID(l.fs, d.cur, seen); err != nil {
			return dirScan{}, err
		}
	}
	if err := syncDir(l.fs, d.cur); err != nil {
		return dirScan{}, err
	}
	if err := writeFileAtomic(l.fs, d.cur, versionFile, l.version.marshal()); err != nil {
		return dirScan{}, err
	}
	if err := syncDir(l.fs, d.path); err != nil {
		return dirScan{}, err
	}
	d.formatted = true
	return l.scanDir(d, nil, nil)
}

// copyFile copies the first n bytes of from (all of it if n < 0) to a new
// file to, and fsyncs it.
func copyFile(fsys vfs.FS, from, to string, n int64) (err error) {
	in, err := vfs.Open(fsys, from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := fsys.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	var r io.Reader = io.NewSectionReader(in, 0, 1<<62)
	if n >= 0 {
		r = io.NewSectionReader(in, 0, n)
	}
	buf := make([]byte, 1<<20)
	var off int64
	for {
		k, rerr := r.Read(buf)
		if k > 0 {
			if err := writeFullAt(out, buf[:k], off); err != nil {
				return fmt.Errorf("copy %s: %w", from, err)
			}
			off += int64(k)
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return fmt.Errorf("copy %s: %w", from, rerr)
		}
	}
	if n >= 0 && off != n {
		return fmt.Errorf("copy %s: %w after %d of %d bytes", from, io.ErrUnexpectedEOF, off, n)
	}
	return out.Sync()
}
