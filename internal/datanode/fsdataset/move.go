package fsdataset

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stratafs/strata/internal/storage"
)

// MoveReplica moves finalized replica b to a volume of storage type t on
// this DataNode — the mover's move across storage types on one node
// (Hadoop's moveBlockAcrossStorage). The copy is written next to the
// target volume's rbw directory, fsynced, renamed into its finalized
// directory; then the replica map points at the new volume and the old
// files are removed. A crash in between leaves two finalized copies of the
// same generation, of which the restart scan keeps one. Readers that have
// the replica open keep reading the old files. Emits Received (new
// storage) and Deleted (old storage). A replica already on type t is left
// as it is.
func (d *Dataset) MoveReplica(b Block, t storage.Type) (ReplicaInfo, error) {
	r, err := d.acquire(b, false, func(r *replica) error {
		switch {
		case r.state != Finalized:
			return errorf(ErrState, "cannot move %s: it is not finalized", r.describe())
		case r.gs != b.GenStamp:
			return errorf(ErrGenStamp, "cannot move %s: the request is for %v", r.describe(), b)
		}
		return nil
	})
	if err != nil {
		return ReplicaInfo{}, err
	}
	defer r.fileMu.Unlock()
	d.mu.Lock()
	info := r.info()
	d.mu.Unlock()
	if r.vol.typ == t {
		return info, nil
	}
	dst, err := d.chooseVolume(info.Block, t, "")
	if err != nil {
		return ReplicaInfo{}, err
	}
	old := r.vol
	srcData, srcMeta := r.dataPath(), r.metaPath()
	tmpData := filepath.Join(dst.rbw, dataName(r.id)+".move")
	tmpMeta := filepath.Join(dst.rbw, metaName(r.id, r.gs)+".move")
	cleanup := func() {
		d.fs.Remove(tmpData)
		d.fs.Remove(tmpMeta)
	}
	if err := copyFileSync(d.fs, srcData, tmpData); err != nil {
		cleanup()
		return ReplicaInfo{}, fmt.Errorf("fsdataset: move %v to %s: %w", info.Block, dst, err)
	}
	if err := copyFileSync(d.fs, srcMeta, tmpMeta); err != nil {
		cleanup()
		return ReplicaInfo{}, fmt.Errorf("fsdataset: move %v to %s: %w", info.Block, dst, err)
	}
	finDir := dst.finDir(r.id)
	if err := dst.ensureFinDir(finDir); err != nil {
		cleanup()
		return ReplicaInfo{}, err
	}
	dstData, dstMeta := filepath.Join(finDir, dataName(r.id)), filepath.Join(finDir, metaName(r.id, r.gs))
	if err := d.fs.Rename(tmpMeta, dstMeta); err != nil {
		cleanup()
		return ReplicaInfo{}, err
	}
	if err := d.fs.Rename(tmpData, dstData); err != nil {
		d.fs.Remove(dstMeta)
		cleanup()
		return ReplicaInfo{}, err
	}
	if err := errors.Join(syncDir(d.fs, finDir), syncDir(d.fs, dst.rbw)); err != nil {
		return ReplicaInfo{}, err
	}
	d.mu.Lock()
	oldInfo := r.info()
	d.dropLocked(r)
	r.vol = dst
	d.addLocked(r)
	newInfo := r.info()
	d.emitLocked(Received, newInfo)
	d.emitLocked(Deleted, oldInfo)
	d.mu.Unlock()
	for _, p := range []string{srcData, srcMeta} {
		if err := d.fs.Remove(p); err != nil && !isNotExist(err) {
			d.cfg.Logger.Warn("fsdataset: removing moved replica's old file", "file", p, "volume", old.String(), "err", err)
		}
	}
	return newInfo, nil
}

// copyFileSync copies src to a new file dst and fsyncs it.
func copyFileSync(fsys FS, src, dst string) error {
	in, err := fsys.OpenFile(src, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := fsys.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	var off int64
	for {
		n, rerr := in.ReadAt(buf, off)
		if n > 0 {
			if _, werr := out.WriteAt(buf[:n], off); werr != nil {
				out.Close()
				return werr
			}
			off += int64(n)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			out.Close()
			return rerr
		}
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
