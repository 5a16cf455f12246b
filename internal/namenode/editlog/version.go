package editlog

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/stratafs/strata/internal/storage"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/internal/vfs"
)

// Sentinel errors; the errors returned wrap them so callers can use
// errors.Is.
var (
	// ErrNotFormatted: the directory holds no formatted storage.
	ErrNotFormatted = errors.New("editlog: storage directory is not formatted")
	// ErrFormatted: Format without force found an existing storage.
	ErrFormatted = errors.New("editlog: storage directory is already formatted")
	// ErrInUse: another process (or another Open in this one) holds the
	// directory's lock.
	ErrInUse = errors.New("editlog: storage directory is in use by another process")
	// ErrCorrupt: the storage is damaged in a way Load must not repair by
	// itself (mid-log corruption, a txid gap, no valid image).
	ErrCorrupt = errors.New("editlog: corrupt storage")
	// ErrFailed: an I/O error made the log unusable; the NameNode must stop.
	ErrFailed = errors.New("editlog: log failed")
	// ErrClosed: the Log was closed.
	ErrClosed = errors.New("editlog: log is closed")
	// ErrNotLoaded: Append, Sync, Roll or SaveImage before Load.
	ErrNotLoaded = errors.New("editlog: log is not loaded")
)

// msgError is an error with a fixed message that wraps a sentinel.
type msgError struct {
	msg string
	err error
}

func (e *msgError) Error() string { return e.msg }
func (e *msgError) Unwrap() error { return e.err }

// Version is the content of current/VERSION: the identity of a namespace,
// fixed at Format time.
type Version struct {
	// LayoutVersion of the storage (LayoutVersion).
	LayoutVersion int
	// NamespaceID is random in [1, 2^31-1], so it fits Hadoop's Java int.
	NamespaceID uint32
	// ClusterID is "CID-" followed by a random UUID.
	ClusterID string
	// BlockPoolID is "BP-<random>-<ip>-<creation ms>", as Hadoop makes it.
	BlockPoolID string
	// CTime is Hadoop's cTime (the time of the last upgrade); 0 for a
	// namespace that was never upgraded, which is every strata namespace.
	CTime int64
	// Created is when Format ran (millisecond precision).
	Created time.Time
}

func newVersion() (Version, error) {
	var b [24]byte
	if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
		return Version{}, err
	}
	nsid := binary.BigEndian.Uint32(b[0:4]) & 0x7fffffff
	if nsid == 0 {
		nsid = 1
	}
	u := b[4:20]
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	cid := fmt.Sprintf("CID-%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
	now := time.Now().Truncate(time.Millisecond)
	bpRand := binary.BigEndian.Uint32(b[20:24]) & 0x7fffffff
	bpid := fmt.Sprintf("BP-%d-%s-%d", bpRand, localIP(), now.UnixMilli())
	return Version{
		LayoutVersion: LayoutVersion,
		NamespaceID:   nsid,
		ClusterID:     cid,
		BlockPoolID:   bpid,
		CTime:         0,
		Created:       now,
	}, nil
}

// localIP returns the first non-loopback IPv4 address, or 127.0.0.1.
func localIP() string {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() {
				if v4 := n.IP.To4(); v4 != nil {
					return v4.String()
				}
			}
		}
	}
	return "127.0.0.1"
}

func (v Version) marshal() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "#strata NameNode storage, formatted %s\n", v.Created.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "namespaceID=%d\n", v.NamespaceID)
	fmt.Fprintf(&b, "clusterID=%s\n", v.ClusterID)
	fmt.Fprintf(&b, "cTime=%d\n", v.CTime)
	fmt.Fprintf(&b, "creationTime=%d\n", v.Created.UnixMilli())
	fmt.Fprintf(&b, "storageType=NAME_NODE\n")
	fmt.Fprintf(&b, "blockpoolID=%s\n", v.BlockPoolID)
	fmt.Fprintf(&b, "layoutVersion=%d\n", v.LayoutVersion)
	return b.Bytes()
}

func parseVersion(data []byte) (Version, error) {
	kv, err := storage.ParseVersionFile(data)
	if err != nil {
		return Version{}, err
	}
	var v Version
	need := func(k string) (string, error) {
		s, ok := kv[k]
		if !ok || s == "" {
			return "", fmt.Errorf("missing key %s", k)
		}
		return s, nil
	}
	s, err := need("layoutVersion")
	if err != nil {
		return v, err
	}
	if v.LayoutVersion, err = strconv.Atoi(s); err != nil {
		return v, fmt.Errorf("layoutVersion: %v", err)
	}
	if v.LayoutVersion != LayoutVersion {
		return v, fmt.Errorf("unsupported layoutVersion %d (this build supports %d)", v.LayoutVersion, LayoutVersion)
	}
	if st, ok := kv["storageType"]; ok && st != "NAME_NODE" {
		return v, fmt.Errorf("storageType is %s, not NAME_NODE", st)
	}
	if s, err = need("namespaceID"); err != nil {
		return v, err
	}
	ns, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return v, fmt.Errorf("namespaceID: %v", err)
	}
	v.NamespaceID = uint32(ns)
	if v.ClusterID, err = need("clusterID"); err != nil {
		return v, err
	}
	v.BlockPoolID = kv["blockpoolID"]
	if s := kv["cTime"]; s != "" {
		if v.CTime, err = strconv.ParseInt(s, 10, 64); err != nil {
			return v, fmt.Errorf("cTime: %v", err)
		}
	}
	if s := kv["creationTime"]; s != "" {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return v, fmt.Errorf("creationTime: %v", err)
		}
		v.Created = time.UnixMilli(ms)
	}
	return v, nil
}

func notFormatted(dir string) error {
	return &msgError{fmt.Sprintf("editlog: %s is not formatted; run 'strata namenode -format'", dir), ErrNotFormatted}
}

func readVersion(fsys vfs.FS, dir string) (Version, error) {
	data, err := vfs.ReadFile(fsys, filepath.Join(dir, currentDir, versionFile))
	if errors.Is(err, os.ErrNotExist) {
		return Version{}, notFormatted(dir)
	}
	if err != nil {
		return Version{}, fmt.Errorf("editlog: read VERSION: %w", err)
	}
	v, err := parseVersion(data)
	if err != nil {
		return Version{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, filepath.Join(dir, currentDir, versionFile), err)
	}
	return v, nil
}

// holdsStorage reports whether cur holds a VERSION file, an image or an edit
// log segment: what Format must not destroy without force.
func holdsStorage(fsys vfs.FS, cur string) (bool, error) {
	ents, err := fsys.ReadDir(cur)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		n := e.Name()
		if n == versionFile || strings.HasPrefix(n, imagePrefix) || strings.HasPrefix(n, finalizedPrefix) {
			return true, nil
		}
	}
	return false, nil
}

// Format initialises dir as an empty NameNode storage directory: it creates
// dir if missing, then writes current/VERSION with a new random namespace
// identity, an image with an empty payload at txid 0 (the image callback of
// Load must read an empty payload as an empty namespace), and seen_txid 0.
// The edit log starts empty; Load creates its first segment at txid 1.
//
// Format refuses a directory that already holds a storage (VERSION, an image
// or an edit log segment) unless force is set, in which case it deletes
// current/ first. It takes the directory lock, so it also refuses a
// directory a running NameNode has open.
func Format(dir string, force bool) (Version, error) { return FormatFS(nil, dir, force) }

// FormatFS is Format on fsys (nil means vfs.Default).
func FormatFS(fsys vfs.FS, dir string, force bool) (Version, error) {
	if dir == "" {
		return Version{}, errors.New("editlog: Format: empty directory name")
	}
	return FormatDirs(fsys, []string{dir}, force)
}

// FormatDirs is Format of every directory of dirs with one namespace
// identity (the same VERSION in each). It checks them all (lock, existing
// storage) before writing any; without force, one formatted directory
// refuses the whole format.
func FormatDirs(fsys vfs.FS, dirs []string, force bool) (Version, error) {
	return formatDirs(fsys, dirs, force, nil)
}

// FormatDirsAs is FormatDirs with a given identity instead of a new one:
// an HA standby's storage takes its nameservice's namespace, cluster and
// block pool ids (`namenode -bootstrapStandby`).
func FormatDirsAs(fsys vfs.FS, dirs []string, force bool, v Version) (Version, error) {
	return formatDirs(fsys, dirs, force, &v)
}

func formatDirs(fsys vfs.FS, dirs []string, force bool, given *Version) (Version, error) {
	fsys = vfs.Or(fsys)
	if err := checkDirs(dirs); err != nil {
		return Version{}, err
	}
	var locks []*dirLock
	defer func() {
		for _, lk := range locks {
			lk.release()
		}
	}()
	for _, dir := range dirs {
		if err := fsys.MkdirAll(dir, dirPerm); err != nil {
			return Version{}, fmt.Errorf("editlog: format: %w", err)
		}
		lk, err := lockDir(fsys, dir)
		if err != nil {
			return Version{}, err
		}
		locks = append(locks, lk)
		if err := tighten(fsys, dir); err != nil {
			return Version{}, fmt.Errorf("editlog: format: restricting %s to its owner: %w", dir, err)
		}
		has, err := holdsStorage(fsys, filepath.Join(dir, currentDir))
		if err != nil {
			return Version{}, fmt.Errorf("editlog: format: %w", err)
		}
		if has && !force {
			return Version{}, &msgError{fmt.Sprintf("editlog: %s already holds a formatted storage; format with force to wipe it", dir), ErrFormatted}
		}
	}
	v, err := newVersion()
	if err != nil {
		return Version{}, fmt.Errorf("editlog: format: %w", err)
	}
	if given != nil {
		v = *given
	}
	for _, dir := range dirs {
		if err := formatDir(fsys, dir, v); err != nil {
			return Version{}, fmt.Errorf("editlog: format %s: %w", dir, err)
		}
	}
	return v, nil
}

func formatDir(fsys vfs.FS, dir string, v Version) error {
	cur := filepath.Join(dir, currentDir)
	if err := fsys.RemoveAll(cur); err != nil {
		return err
	}
	if err := fsys.Mkdir(cur, dirPerm); err != nil {
		return err
	}
	if err := writeImage(fsys, cur, 0, nil); err != nil {
		return err
	}
	if err := writeSeenTxID(fsys, cur, 0); err != nil {
		return err
	}
	// VERSION last: its presence marks a complete format.
	if err := writeFileAtomic(fsys, cur, versionFile, v.marshal()); err != nil {
		return err
	}
	return syncDir(fsys, dir)
}
