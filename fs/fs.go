// Package fs is strata's file system abstraction, the counterpart of Hadoop's
// org.apache.hadoop.fs.FileSystem: one interface over hdfs:// (a strata or
// Hadoop NameNode) and file:// (the local disk), so that the shell, the
// MapReduce engine and the benchmarks work on either.
//
// Paths given to a FileSystem are absolute, cleaned, slash-separated paths
// without scheme or authority ("/user/alice/data"). Resolve turns a user's
// path argument (absolute, relative to the home directory, or a full URI)
// into a FileSystem and such a path.
//
// Errors wrap the standard sentinels so callers can use errors.Is:
// os.ErrNotExist, os.ErrExist, os.ErrPermission, and this package's
// ErrNotEmpty, ErrNotDir, ErrIsDir, ErrInvalid.
package fs

import (
	"context"
	"errors"
	"io"
	"net/url"
	"time"
)

// Sentinel errors beyond the os package's.
var (
	ErrNotEmpty = errors.New("directory is not empty")
	ErrNotDir   = errors.New("not a directory")
	ErrIsDir    = errors.New("is a directory")
	ErrInvalid  = errors.New("invalid argument")
)

// FileStatus describes one file or directory, as Hadoop's FileStatus does.
type FileStatus struct {
	// Path is the absolute path within its file system (no scheme).
	Path string
	// Length in bytes; 0 for directories.
	Length int64
	IsDir  bool
	// Replication is the file's target replication; 0 for directories and
	// for file systems without replication.
	Replication int
	// BlockSize in bytes; 0 for directories.
	BlockSize int64
	ModTime   time.Time
	// AccessTime may be the zero time where the file system does not keep it.
	AccessTime time.Time
	// Perm holds the permission bits, 0o7777 (sticky bit included).
	Perm  uint16
	Owner string
	Group string
	// StoragePolicy is the HDFS storage policy id set on this inode (0 =
	// unset, inherited); always 0 on file://.
	StoragePolicy uint8
	// FileID is the HDFS inode id; 0 on file://.
	FileID uint64
	// HasACL is set when the inode has an HDFS ACL beyond its
	// permission bits (ls shows a '+').
	HasACL bool
}

// Name returns the last element of Path ("" for the root).
func (s FileStatus) Name() string {
	for i := len(s.Path) - 1; i >= 0; i-- {
		if s.Path[i] == '/' {
			return s.Path[i+1:]
		}
	}
	return s.Path
}

// ContentSummary is the result of a recursive size count under a path.
type ContentSummary struct {
	Length         int64
	FileCount      int64
	DirectoryCount int64
	// Quota and SpaceQuota are -1 when unset.
	Quota         int64
	SpaceConsumed int64
	SpaceQuota    int64
}

// FsStatus is the capacity of a whole file system, in bytes.
type FsStatus struct {
	Capacity  int64
	Used      int64
	Remaining int64
}

// CreateOptions control FileSystem.Create. Zero values mean the file
// system's defaults.
type CreateOptions struct {
	Overwrite   bool
	Perm        uint16 // 0 → 0o644 before umask
	Replication int
	BlockSize   int64
	// CreateParent makes missing parent directories (Hadoop's default).
	CreateParent bool
	// NoSync lets a local file's Close return before its data is on disk,
	// as cp and Hadoop's local file system do; by default the local file
	// system fsyncs on Close. Other file systems ignore it (HDFS data is
	// durable once acknowledged).
	NoSync bool
}

// FileSystem is implemented by each scheme. Implementations are safe for
// concurrent use.
type FileSystem interface {
	// URI is scheme and authority, e.g. hdfs://127.0.0.1:8020 or file:///.
	URI() *url.URL
	// Home is the user's home directory ("/user/<name>" on hdfs).
	Home() string
	// User is the name the file system acts as.
	User() string

	Stat(ctx context.Context, path string) (FileStatus, error)
	// List returns a directory's entries sorted by name; for a file it
	// returns that file's status alone.
	List(ctx context.Context, path string) ([]FileStatus, error)
	// Mkdirs creates path and any missing parents; an existing directory is
	// not an error, an existing file is (ErrExist / ErrNotDir).
	Mkdirs(ctx context.Context, path string, perm uint16) error
	// Delete removes path; a non-empty directory needs recursive (else
	// ErrNotEmpty). A missing path is os.ErrNotExist.
	Delete(ctx context.Context, path string, recursive bool) error
	// Rename moves src to dst with HDFS rename semantics: if dst is an
	// existing directory, src is moved into it.
	Rename(ctx context.Context, src, dst string) error
	SetPermission(ctx context.Context, path string, perm uint16) error
	// SetOwner changes owner and/or group; an empty string leaves it as is.
	SetOwner(ctx context.Context, path, owner, group string) error
	// SetTimes sets modification and access times; a zero time leaves it.
	SetTimes(ctx context.Context, path string, mtime, atime time.Time) error
	ContentSummary(ctx context.Context, path string) (ContentSummary, error)
	Status(ctx context.Context) (FsStatus, error)
	// Create opens a new file for writing. The file exists (length 0) once
	// Create returns; its data is durable once Close returns nil.
	Create(ctx context.Context, path string, opts CreateOptions) (io.WriteCloser, error)
	// Open opens a file for reading.
	Open(ctx context.Context, path string) (File, error)
	// Close releases connections. The FileSystem must not be used after.
	Close() error
}

// File is an open file for reading.
type File interface {
	io.Reader
	io.ReaderAt
	io.Seeker
	io.Closer
}
