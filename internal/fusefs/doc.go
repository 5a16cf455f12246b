// Package fusefs mounts strata's HDFS as a local file system with FUSE
// (github.com/hanwen/go-fuse/v2, its fs node API), as Hadoop's fuse-dfs
// does: `strata fuse MOUNTPOINT` serves it; tests call Mount in process.
//
// # Nodes and paths
//
// Each kernel inode is a node whose inode number is the HDFS inode id
// (FileStatus.FileID), so `ls -i` is stable and a file keeps its number
// across renames. Operations name files by path: the node's place in the
// go-fuse tree, which Rename keeps up to date.
//
// # Acting user
//
// Every FUSE request carries the caller's uid. The mount maps it to a user
// name with os/user (an unknown uid acts as its decimal number) and talks
// to the NameNode through a client acting as that user, one cached client
// per user, so HDFS permissions are enforced for the caller: a `cat` by
// alice reads as alice. uid 0 and the uid that mounted act as the mount
// user (Options.User, default the current HDFS user), which is the
// NameNode's superuser when the mount runs as the user that started it.
// Owners and groups shown in stat come the other way: an HDFS user name
// maps to the local uid of that name; the mount user to the mounting uid;
// a decimal name (what an unknown uid acted as) to that number; any other
// name to the overflow id 65534 (nobody/nogroup).
//
// # Caching
//
// The kernel caches attributes and names for AttrTimeout / EntryTimeout
// (1 s by default). The mount itself keeps the FileStatus of every entry a
// listing returned for the same time, so the lookups and getattrs that
// follow a readdir — `ls -l` of a large directory — cost one getListing
// per 1000 entries and no getFileInfo at all. Every change made through
// the mount drops the cached entries it touches; changes made by other
// HDFS clients show within the timeout. The cache is shared by all users
// of the mount, as the kernel's own attribute cache is; permissions are
// checked by the NameNode when a file is opened or changed.
//
// # Reads
//
// A file opened for reading streams from the DataNodes through one
// hdfs.FileReader per handle. Each handle keeps a read-ahead window
// (Options.ReadAhead, 4 MiB by default): a read outside the window fills
// it from the stream (seeking only when the read is not sequential), and
// once half of it is consumed the next window is fetched in the
// background, so the network and the kernel's requests overlap. Replies
// are written to the kernel straight from the windows (a window's buffer
// is reused only after the last reply using it is sent), and windows of
// all handles together are bounded (about 256 MiB) by not reading ahead
// past it. Mounted by root, the mount raises the kernel's read-ahead for
// itself, so sequential reads arrive as 1 MiB requests; DirectIO (-o
// direct_io) bypasses the page cache altogether.
//
// # Writes: HDFS files are write-once
//
// A handle writes sequentially. A file made with create(2) streams into
// the new HDFS file from offset 0. A write to an existing file is taken
// only at its end — the handle then reopens it with HDFS append — or
// anywhere when the file was opened with O_APPEND (which appends, as
// POSIX says). A write at any other offset (a random write, or an
// overwrite in the middle) fails with ENOTSUP and a log line, and the file
// is left as it was. Truncation uses HDFS truncate: to 0 (open with
// O_TRUNC, so `cp` over an existing file works) or to any smaller length;
// growing a file with truncate is ENOTSUP. HDFS allows one writer per
// file: a write that would need a second one is EBUSY.
//
// A handle queues up to eight writes ahead of HDFS and a goroutine
// streams them into the hdfs.FileWriter, so the caller's next write
// overlaps the DataNode pipeline. An error a queued write meets is
// returned by the next write, by fsync and by close. A file opened
// write-only (as cp opens its target) bypasses the kernel's page cache
// (FOPEN_DIRECT_IO) unless another open handle of the file uses it: each
// write(2) reaches the mount straight from the caller's buffer, sparing
// the copy into cached pages; such a descriptor could not be mapped
// anyway. Handles opened while one writes that way bypass the cache too,
// so no cached page misses a write.
//
// close(2) sends FLUSH, which closes the HDFS file: its last block is
// finished and the NameNode completes it, so once close returns the data
// is durable and every reader sees its full length, and an error in that
// (a lost pipeline, too few replicas) is returned by close. A later write
// through another descriptor of the same open file reopens it with
// append. fsync(2) is hsync; RELEASE closes what is still open.
//
// # Not supported
//
// Symbolic and hard links, special files, extended attributes, locks,
// random writes and overwrites, and growing a file by truncate.
package fusefs
