package fs

import (
	"context"
	"io"
)

// Optional capabilities. A FileSystem that can do more than the common
// interface implements these; callers check with a type assertion.

// Appender opens an existing file for writing at its end.
type Appender interface {
	AppendFile(ctx context.Context, path string) (io.WriteCloser, error)
}

// Replicator changes a file's target replication. WaitReplicated blocks
// until every block of path has that many replicas (or ctx ends).
type Replicator interface {
	SetReplication(ctx context.Context, path string, n int) error
	WaitReplicated(ctx context.Context, path string, n int) error
}

// Truncater shortens a file. done is false when the file system finishes
// the truncation in the background (HDFS cutting a block in the middle);
// WaitTruncated blocks until it is finished.
type Truncater interface {
	Truncate(ctx context.Context, path string, size int64) (done bool, err error)
	WaitTruncated(ctx context.Context, path string) error
}

// ExactRenamer renames src to exactly dst, never into a directory there
// (Hadoop's FileSystem.rename with Options.Rename, HDFS's rename2): an
// existing dst is os.ErrExist unless overwrite.
type ExactRenamer interface {
	Rename2(ctx context.Context, src, dst string, overwrite bool) error
}

// Checksummer computes a whole-file checksum, as HDFS's getFileChecksum.
type Checksummer interface {
	FileChecksum(ctx context.Context, path string) (FileChecksum, error)
}

// FileChecksum is a file checksum: its algorithm name as Hadoop prints it
// (e.g. "MD5-of-262144MD5-of-512CRC32C") and its bytes.
type FileChecksum struct {
	Algorithm string
	Bytes     []byte
}

// StorageStatuser reports capacity per storage type (DISK, SSD, ...), for
// `df` on a tiered file system.
type StorageStatuser interface {
	StorageStatus(ctx context.Context) (map[string]FsStatus, error)
}

// BlockLocator tells where a file's blocks are stored, so that work on a
// block can be placed near it (MapReduce input splits).
type BlockLocator interface {
	FileBlockLocations(ctx context.Context, path string) ([]BlockLocation, error)
}

// BlockLocation is one block of a file and the hosts holding it.
type BlockLocation struct {
	Offset, Length int64
	// Hosts are host names or IPs (no port) of the machines with a replica.
	Hosts []string
}
