// Package vfs is the file system under strata's data path: a small
// interface (FS, File) that the DataNode's volumes, the map-side spill,
// the shuffle, the local job runner and the NameNode's edit log take from
// their configuration instead of calling package os, so that one value
// decides where their bytes go.
//
// Three implementations exist: Default, the operating system's file
// system; package media's FS, which wraps another FS and paces the I/O of
// emulated directories by a device model; and package vfs/errorfs, which
// wraps another FS and injects faults (ENOSPC, EIO on fsync, short writes,
// latency) at chosen operations.
//
// # Contract
//
// An FS behaves as the corresponding functions of package os: OpenFile is
// os.OpenFile, Rename is os.Rename, and so on, with the same error values
// (errors.Is(err, fs.ErrNotExist) for a missing file, *fs.PathError and
// syscall.Errno underneath where the OS gives them). In particular:
//
//   - A write that returns n < len(p) returns a non-nil error, and the
//     bytes [0, n) may be on the file; nothing is promised about the rest.
//   - Sync returning nil makes the file's data durable (fsync(2)); after
//     Sync fails, the file's contents since the previous successful Sync
//     are unknown (Linux may have dropped the dirty pages), so callers
//     must not retry the Sync and carry on as if nothing happened.
//   - Syncing a directory opened read-only makes the names in it durable.
//   - Rename within a directory is atomic.
//   - OpenFile may be given O_DIRECT (package fsdataset's O_DIRECT); an FS
//     that cannot honour it returns an error wrapping syscall.EINVAL, as
//     Linux does for a file system without direct I/O.
//   - Statfs returns errors.ErrUnsupported where the size of the file
//     system cannot be known; callers then treat it as never full.
//   - Lock takes an exclusive, non-blocking lock, and fails with an error
//     wrapping ErrLocked when someone else holds it.
//
// Every implementation is safe for concurrent use; a File is safe for
// concurrent ReadAt and WriteAt, and otherwise used by one goroutine at a
// time, as an *os.File.
//
// # Real descriptors
//
// Zero-copy paths (sendfile for shuffle and block reads, fd passing for
// short-circuit reads, O_DIRECT alignment) need an operating-system file.
// They use one only when the File is an *os.File (or, for sendfile with
// the bytes charged separately, a Raw file of a Charger FS, see OSFile);
// any wrapping that must see every byte (fault injection, pacing) makes
// them fall back to reading through the File.
package vfs
