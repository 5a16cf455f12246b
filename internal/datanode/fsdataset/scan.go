package fsdataset

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Start-up scan of a volume (the restart rules of
// docs/format/datanode-storage.md).

type fileKind int

const (
	kindUnknown fileKind = iota
	kindData
	kindMeta
	kindTmp
)

// parseBlockName recognizes blk_<id> and blk_<id>_<gs>.meta.
func parseBlockName(name string) (id, gs uint64, kind fileKind) {
	if strings.HasSuffix(name, ".tmp") {
		return 0, 0, kindTmp
	}
	rest, ok := strings.CutPrefix(name, "blk_")
	if !ok {
		return 0, 0, kindUnknown
	}
	if m, ok := strings.CutSuffix(rest, ".meta"); ok {
		ids, gss, ok := strings.Cut(m, "_")
		if !ok {
			return 0, 0, kindUnknown
		}
		id, err1 := strconv.ParseUint(ids, 10, 64)
		gs, err2 := strconv.ParseUint(gss, 10, 64)
		if err1 != nil || err2 != nil {
			return 0, 0, kindUnknown
		}
		return id, gs, kindMeta
	}
	id, err := strconv.ParseUint(rest, 10, 64)
	if err != nil {
		return 0, 0, kindUnknown
	}
	return id, 0, kindData
}

type metaEntry struct {
	path string
	gs   uint64
}

// blockFiles are the files of one block ID found on a volume.
type blockFiles struct {
	rbwData  []string
	rbwMetas []metaEntry
	finData  []string
	finMetas []metaEntry
}

type scanner struct {
	v     *volume
	log   *slog.Logger
	files map[uint64]*blockFiles
}

func (s *scanner) entry(id uint64) *blockFiles {
	bf := s.files[id]
	if bf == nil {
		bf = &blockFiles{}
		s.files[id] = bf
	}
	return bf
}

// scan finds the replicas of a volume, repairing what a crash can leave
// behind. An error means the volume cannot be read (it is then failed).
func (v *volume) scan(log *slog.Logger) ([]*replica, error) {
	s := &scanner{v: v, log: log.With("volume", v.path), files: map[uint64]*blockFiles{}}
	if err := s.walk(v.rbw, 0, true); err != nil {
		return nil, err
	}
	if err := s.walk(v.fin, 0, false); err != nil {
		return nil, err
	}
	ids := make([]uint64, 0, len(s.files))
	for id := range s.files {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []*replica
	for _, id := range ids {
		r, err := s.resolve(id, s.files[id])
		if err != nil {
			return nil, err
		}
		if r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// walk collects block files: in rbw directly, in finalized down to the
// subdir<A>/subdir<B> level.
func (s *scanner) walk(dir string, depth int, rbw bool) error {
	ents, err := s.v.fs.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("scan %s: %w", dir, err)
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			if !rbw && depth < 2 && strings.HasPrefix(e.Name(), "subdir") {
				if err := s.walk(p, depth+1, false); err != nil {
					return err
				}
				continue
			}
			s.log.Warn("fsdataset: ignoring unexpected directory", "path", p)
			continue
		}
		id, gs, kind := parseBlockName(e.Name())
		switch kind {
		case kindTmp:
			s.log.Info("fsdataset: removing stray temporary file", "path", p)
			if err := s.v.fs.Remove(p); err != nil && !isNotExist(err) {
				return err
			}
		case kindUnknown:
			s.log.Warn("fsdataset: ignoring unexpected file", "path", p)
		case kindData:
			bf := s.entry(id)
			if rbw {
				bf.rbwData = append(bf.rbwData, p)
			} else {
				bf.finData = append(bf.finData, p)
			}
		case kindMeta:
			bf := s.entry(id)
			if rbw {
				bf.rbwMetas = append(bf.rbwMetas, metaEntry{p, gs})
			} else {
				bf.finMetas = append(bf.finMetas, metaEntry{p, gs})
			}
		}
	}
	return nil
}

// toCorrupt moves a file aside to <vol>/current/corrupt.
func (s *scanner) toCorrupt(p, why string) error {
	dir := filepath.Join(s.v.cur, corruptDir)
	if err := s.v.fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dst := filepath.Join(dir, filepath.Base(p))
	if _, err := s.v.fs.Stat(dst); err == nil {
		dst = fmt.Sprintf("%s.%d", dst, time.Now().UnixNano())
	}
	s.log.Warn("fsdataset: moving damaged replica file aside", "path", p, "to", dst, "reason", why)
	return s.v.fs.Rename(p, dst)
}

func (s *scanner) remove(p, why string) error {
	s.log.Warn("fsdataset: removing replica file", "path", p, "reason", why)
	if err := s.v.fs.Remove(p); err != nil && !isNotExist(err) {
		return err
	}
	return nil
}

// resolve turns the files of one block into at most one replica.
func (s *scanner) resolve(id uint64, bf *blockFiles) (*replica, error) {
	v := s.v
	want := v.finDir(id)
	// Finalized files belong in subdir<A>/subdir<B> of their ID.
	fix := func(p string) (string, error) {
		if filepath.Dir(p) == want {
			return p, nil
		}
		dst := filepath.Join(want, filepath.Base(p))
		if _, err := v.fs.Stat(dst); err == nil {
			return "", s.toCorrupt(p, "misplaced duplicate of "+dst)
		}
		if err := v.ensureFinDir(want); err != nil {
			return "", err
		}
		s.log.Warn("fsdataset: moving misplaced finalized file", "path", p, "to", dst)
		return dst, v.fs.Rename(p, dst)
	}
	var finData []string
	for _, p := range bf.finData {
		q, err := fix(p)
		if err != nil {
			return nil, err
		}
		if q != "" {
			finData = append(finData, q)
		}
	}
	var finMetas []metaEntry
	for _, m := range bf.finMetas {
		q, err := fix(m.path)
		if err != nil {
			return nil, err
		}
		if q != "" {
			finMetas = append(finMetas, metaEntry{q, m.gs})
		}
	}
	// One meta per directory: keep the newest generation stamp.
	newest := func(ms []metaEntry) (*metaEntry, error) {
		if len(ms) == 0 {
			return nil, nil
		}
		slices.SortFunc(ms, func(a, b metaEntry) int { return -cmpU64(a.gs, b.gs) })
		for _, m := range ms[1:] {
			if err := s.toCorrupt(m.path, fmt.Sprintf("older meta file of %s", filepath.Base(ms[0].path))); err != nil {
				return nil, err
			}
		}
		return &ms[0], nil
	}
	rm, err := newest(bf.rbwMetas)
	if err != nil {
		return nil, err
	}
	fm, err := newest(finMetas)
	if err != nil {
		return nil, err
	}
	var rd, fd string
	if len(bf.rbwData) > 0 {
		rd = bf.rbwData[0]
	}
	if len(finData) > 0 {
		fd = finData[0]
	}

	// A block whose files are split between rbw and finalized was being
	// moved (finalize or append) when the DataNode stopped: the move was
	// never acknowledged, so the replica goes back to rbw and is
	// recovered like any replica being written.
	if rd != "" && rm == nil && fd == "" && fm != nil {
		dst := filepath.Join(v.rbw, filepath.Base(fm.path))
		s.log.Warn("fsdataset: completing an interrupted move back to rbw", "path", fm.path, "to", dst)
		if err := v.fs.Rename(fm.path, dst); err != nil {
			return nil, err
		}
		rm, fm = &metaEntry{dst, fm.gs}, nil
	} else if fd != "" && fm == nil && rd == "" && rm != nil {
		dst := filepath.Join(v.rbw, filepath.Base(fd))
		s.log.Warn("fsdataset: completing an interrupted move back to rbw", "path", fd, "to", dst)
		if err := v.fs.Rename(fd, dst); err != nil {
			return nil, err
		}
		rd, fd = dst, ""
	}

	var cands []*replica
	switch {
	case fd != "" && fm != nil:
		r, err := s.loadFinalized(id, fd, *fm)
		if err != nil {
			return nil, err
		}
		if r != nil {
			cands = append(cands, r)
		}
	case fd != "":
		if err := s.toCorrupt(fd, "finalized data file without a meta file"); err != nil {
			return nil, err
		}
	case fm != nil:
		if err := s.toCorrupt(fm.path, "finalized meta file without a data file"); err != nil {
			return nil, err
		}
	}
	switch {
	case rd != "" && rm != nil:
		r, err := s.loadRBW(id, rd, *rm)
		if err != nil {
			return nil, err
		}
		if r != nil {
			cands = append(cands, r)
		}
	case rd != "":
		if err := s.remove(rd, "replica being written without a meta file"); err != nil {
			return nil, err
		}
	case rm != nil:
		if err := s.remove(rm.path, "meta file of a replica being written without its data file"); err != nil {
			return nil, err
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	if len(cands) == 2 {
		keep, drop := cands[0], cands[1]
		if better(drop, keep) {
			keep, drop = drop, keep
		}
		s.log.Warn("fsdataset: two replicas of one block on a volume; keeping one", "keep", keep.describe(), "drop", drop.describe())
		if err := drop.removeFiles(); err != nil {
			return nil, err
		}
		return keep, nil
	}
	return cands[0], nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// loadFinalized checks a finalized replica: valid meta header and one
// checksum per chunk of data. A damaged one is moved aside (nil, nil).
func (s *scanner) loadFinalized(id uint64, dataPath string, m metaEntry) (*replica, error) {
	v := s.v
	di, err := v.fs.Stat(dataPath)
	if err != nil {
		return nil, err
	}
	mf, err := v.fs.OpenFile(m.path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer mf.Close()
	mi, err := mf.Stat()
	if err != nil {
		return nil, err
	}
	problem := ""
	bpc, herr := readMetaHeader(mf)
	switch {
	case herr != nil && !isFormatError(herr):
		return nil, herr
	case herr != nil:
		problem = herr.Error()
	case mi.Size() != metaLen(di.Size(), bpc):
		problem = fmt.Sprintf("data is %d bytes (%d chunks of %d) but the meta file holds %d checksums",
			di.Size(), numChunks(di.Size(), bpc), bpc, (mi.Size()-metaHeaderLen)/crcLen)
	}
	if problem != "" {
		if err := s.toCorrupt(dataPath, problem); err != nil {
			return nil, err
		}
		return nil, s.toCorrupt(m.path, problem)
	}
	return &replica{
		id: id, vol: v, gs: m.gs, state: Finalized, bpc: bpc,
		numBytes: di.Size(), disk: di.Size() + mi.Size(),
	}, nil
}

// loadRBW turns a replica that was being written into an RWR replica of
// its longest verified length, truncating a torn tail.
func (s *scanner) loadRBW(id uint64, dataPath string, m metaEntry) (*replica, error) {
	v := s.v
	mf, err := v.fs.OpenFile(m.path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer mf.Close()
	mi, err := mf.Stat()
	if err != nil {
		return nil, err
	}
	if mi.Size() < metaHeaderLen {
		// Torn at creation: nothing of it was ever acknowledged.
		if err := s.remove(dataPath, "replica being written whose meta header is incomplete"); err != nil {
			return nil, err
		}
		return nil, s.remove(m.path, "incomplete meta header")
	}
	bpc, err := readMetaHeader(mf)
	if err != nil {
		if !isFormatError(err) {
			return nil, err
		}
		if err := s.toCorrupt(dataPath, err.Error()); err != nil {
			return nil, err
		}
		return nil, s.toCorrupt(m.path, err.Error())
	}
	df, err := v.fs.OpenFile(dataPath, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer df.Close()
	di, err := df.Stat()
	if err != nil {
		return nil, err
	}
	n, err := verifiedLength(df, mf, di.Size(), mi.Size(), bpc)
	if err != nil {
		return nil, err
	}
	ml := metaLen(n, bpc)
	if n != di.Size() || ml != mi.Size() {
		s.log.Warn("fsdataset: truncating replica being written to its verified length",
			"block", Block{ID: id, GenStamp: m.gs}.String(), "data", di.Size(), "verified", n,
			"checksums", (mi.Size()-metaHeaderLen)/crcLen)
		if err := df.Truncate(n); err != nil {
			return nil, err
		}
		if err := mf.Truncate(ml); err != nil {
			return nil, err
		}
		if err := df.Sync(); err != nil {
			return nil, err
		}
		if err := mf.Sync(); err != nil {
			return nil, err
		}
	}
	s.log.Info("fsdataset: replica waiting for recovery", "block", Block{ID: id, GenStamp: m.gs}.String(), "bytes", n)
	return &replica{
		id: id, vol: v, gs: m.gs, state: RWR, bpc: bpc,
		numBytes: n, disk: n + ml,
	}, nil
}

// formatError is a meta header that is not what this package writes.
type formatError struct{ msg string }

func (e *formatError) Error() string { return e.msg }

func isFormatError(err error) bool {
	_, ok := err.(*formatError)
	return ok
}
