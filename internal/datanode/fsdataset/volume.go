package fsdataset

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/vfs"
)

// Names in a volume (docs/format/datanode-storage.md).
const (
	lockName      = "in_use.lock"
	currentDir    = "current"
	versionName   = "VERSION"
	rbwDir        = "rbw"
	finalizedDir  = "finalized"
	corruptDir    = "corrupt"
	diskCheckName = ".diskcheck.tmp"
	// LayoutVersion is the version of the volume layout this package
	// writes and reads.
	LayoutVersion = 1
)

// volume is one data directory. Its identity and paths are fixed after
// Open; failed and noDirect are atomic; used and blocks are guarded by
// Dataset.mu.
type volume struct {
	fs        FS
	path      string
	typ       storage.Type
	storageID string
	cur       string // <path>/current
	rbw       string // <path>/current/rbw
	fin       string // <path>/current/finalized

	lockMu sync.Mutex
	lock   io.Closer

	failed   atomic.Bool
	failErr  error // set before failed; read after failed is seen
	noDirect atomic.Bool
	warnOnce sync.Once

	dirsMu sync.Mutex
	dirs   map[string]bool // finalized subdirectories known to exist

	used   int64 // bytes of replicas (data + meta); Dataset.mu
	blocks int   // replicas in the map; Dataset.mu
}

func newVolume(fsys FS, vc VolumeConfig) *volume {
	cur := filepath.Join(vc.Path, currentDir)
	return &volume{
		fs:   fsys,
		path: vc.Path,
		typ:  vc.Type,
		cur:  cur,
		rbw:  filepath.Join(cur, rbwDir),
		fin:  filepath.Join(cur, finalizedDir),
		dirs: map[string]bool{},
	}
}

func (v *volume) String() string {
	if v.storageID == "" {
		return v.path
	}
	return fmt.Sprintf("%s (%s, %s)", v.path, v.storageID, v.typ)
}

// finDir is the finalized directory of a block: Hadoop's
// DatanodeUtil.idToBlockDir.
func (v *volume) finDir(id uint64) string {
	return filepath.Join(v.fin, fmt.Sprintf("subdir%d", (id>>16)&0x1F), fmt.Sprintf("subdir%d", (id>>8)&0x1F))
}

func dataName(id uint64) string            { return fmt.Sprintf("blk_%d", id) }
func metaName(id uint64, gs uint64) string { return fmt.Sprintf("blk_%d_%d.meta", id, gs) }

// ensureFinDir creates a block's finalized directory if needed and makes
// its creation durable.
func (v *volume) ensureFinDir(dir string) error {
	v.dirsMu.Lock()
	defer v.dirsMu.Unlock()
	if v.dirs[dir] {
		return nil
	}
	if _, err := v.fs.Stat(dir); err != nil {
		if !isNotExist(err) {
			return err
		}
		if err := v.fs.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := syncDir(v.fs, filepath.Dir(dir)); err != nil {
			return err
		}
		if err := syncDir(v.fs, v.fin); err != nil {
			return err
		}
	}
	v.dirs[dir] = true
	return nil
}

// usage returns the volume's capacity and remaining bytes, net of the
// reservation. An FS that cannot tell makes the volume unlimited.
func (v *volume) usage(reserved int64) (capacity, remaining int64, err error) {
	du, err := v.fs.Statfs(v.path)
	if errors.Is(err, errors.ErrUnsupported) {
		return math.MaxInt64, math.MaxInt64, nil
	}
	if err != nil {
		return 0, 0, err
	}
	return max(du.Total-reserved, 0), max(du.Free-reserved, 0), nil
}

// refuseDirect records that direct I/O does not work on the volume,
// logging it once.
func (v *volume) refuseDirect(log *slog.Logger, err error) {
	v.noDirect.Store(true)
	v.warnOnce.Do(func() {
		log.Warn("fsdataset: direct I/O refused; writing through the page cache on this volume", "volume", v.path, "err", err)
	})
}

// isEINVAL reports the error Linux gives for O_DIRECT on a file system
// that does not support it, or for a misaligned direct transfer.
func isEINVAL(err error) bool { return errors.Is(err, syscall.EINVAL) }

// check is the disk checker: the volume's directories exist and a small
// file can be written, synced and removed.
func (v *volume) check() error {
	for _, d := range []string{v.path, v.cur, v.rbw, v.fin} {
		fi, err := v.fs.Stat(d)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", d)
		}
	}
	p := filepath.Join(v.cur, diskCheckName)
	f, err := v.fs.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteAt([]byte("strata disk check\n"), 0)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if rerr := v.fs.Remove(p); err == nil {
		err = rerr
	}
	return err
}

// volumeVersion is the content of <vol>/current/VERSION.
type volumeVersion struct {
	StorageID    string
	DatanodeUUID string
	StorageType  storage.Type
	CTime        int64
}

func (vv volumeVersion) marshal() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "#strata DataNode volume, written %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "storageID=%s\n", vv.StorageID)
	fmt.Fprintf(&b, "datanodeUuid=%s\n", vv.DatanodeUUID)
	fmt.Fprintf(&b, "storageType=%s\n", vv.StorageType)
	fmt.Fprintf(&b, "cTime=%d\n", vv.CTime)
	fmt.Fprintf(&b, "layoutVersion=%d\n", LayoutVersion)
	return b.Bytes()
}

func parseVolumeVersion(data []byte) (volumeVersion, error) {
	kv, err := storage.ParseVersionFile(data)
	if err != nil {
		return volumeVersion{}, err
	}
	var vv volumeVersion
	lv, ok := kv["layoutVersion"]
	if !ok {
		return vv, errors.New("missing key layoutVersion")
	}
	if n, err := strconv.Atoi(lv); err != nil || n != LayoutVersion {
		return vv, fmt.Errorf("unsupported layoutVersion %q (this build supports %d)", lv, LayoutVersion)
	}
	if vv.StorageID = kv["storageID"]; !strings.HasPrefix(vv.StorageID, "DS-") {
		return vv, fmt.Errorf("bad or missing storageID %q", vv.StorageID)
	}
	if vv.DatanodeUUID = kv["datanodeUuid"]; vv.DatanodeUUID == "" {
		return vv, errors.New("missing key datanodeUuid")
	}
	if s := kv["storageType"]; s != "" {
		t, err := storage.ParseType(s)
		if err != nil {
			return vv, err
		}
		vv.StorageType = t
	}
	if s := kv["cTime"]; s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return vv, fmt.Errorf("cTime: %v", err)
		}
		vv.CTime = n
	}
	return vv, nil
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var u [16]byte
	if _, err := io.ReadFull(rand.Reader, u[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// prepare creates the volume's directories, takes its lock and reads its
// VERSION (nil if it has none yet).
func (v *volume) prepare() (*volumeVersion, error) {
	if err := v.fs.MkdirAll(v.path, 0o700); err != nil {
		return nil, err
	}
	l, err := v.fs.Lock(filepath.Join(v.path, lockName))
	if errors.Is(err, vfs.ErrLocked) {
		return nil, &msgError{fmt.Sprintf("fsdataset: %s is held by another process (or another open dataset)", filepath.Join(v.path, lockName)), ErrInUse}
	}
	if err != nil {
		return nil, err
	}
	v.lockMu.Lock()
	v.lock = l
	v.lockMu.Unlock()
	for _, d := range []string{v.cur, v.rbw, v.fin} {
		if err := v.fs.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	for _, stray := range []string{versionName + ".tmp", diskCheckName} {
		if err := v.fs.Remove(filepath.Join(v.cur, stray)); err != nil && !isNotExist(err) {
			return nil, err
		}
	}
	data, err := readFile(v.fs, filepath.Join(v.cur, versionName))
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	vv, err := parseVolumeVersion(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(v.cur, versionName), err)
	}
	return &vv, nil
}

func (v *volume) writeVersion(vv volumeVersion) error {
	return writeFileAtomic(v.fs, v.cur, filepath.Join(v.cur, versionName), vv.marshal())
}

func (v *volume) release() {
	v.lockMu.Lock()
	defer v.lockMu.Unlock()
	if v.lock != nil {
		v.lock.Close()
		v.lock = nil
	}
}
