// Package editlog is the NameNode's durable storage: a write-ahead edit log
// with group commit, plus checkpoint images, in the layout of Hadoop's
// NameNode storage directory (current/VERSION, fsimage_<txid>,
// edits_inprogress_<txid>, edits_<start>-<end>), kept in one or more
// redundant directories (dfs.namenode.name.dir). It stores opaque records
// and image payloads; encoding the namespace into them is the caller's
// business.
//
// # Lifecycle
//
//	FormatDirs(nil, dirs, false)          // once: `strata namenode -format`
//	l, err := OpenDirs(dirs, Options{})   // flock each in_use.lock, read VERSIONs
//	err = l.Load(image, apply)            // newest valid image, then the log after it
//	...
//	l.Close()
//
// Format and Open are the same for a single directory.
//
// # Several directories
//
// Invariants: every active directory receives every record, roll and
// image, so each alone holds the whole acknowledged history; a txid is
// acknowledged once every active directory fsynced it (the fsyncs of a
// round run in parallel). A write, fsync, roll or image failure takes its
// directory out of service for the Log's life (Dirs reports it); the log
// fails only when no directory is left. Load recovers each directory,
// loads from the one whose log reaches furthest, and repopulates the
// others that differ (out of service last time, torn tail, wiped) by
// copying its image and segments; a formatted directory that cannot be
// recovered fails Load, since it might be the one holding acknowledged
// edits the others lack.
//
// # Logging a mutation (Hadoop's logEdit / logSync)
//
// The NameNode applies a mutation in memory under its namespace lock and,
// still under the lock, calls Append, which assigns the next transaction id
// and buffers the record without doing I/O. It releases the lock and calls
// Sync(ctx, txid), which returns once the record is fsynced; only then is the
// client answered. Concurrent Syncs share fsyncs (group commit): one caller
// writes and fsyncs everything buffered while new records gather for the
// next round. An I/O error takes its directory out of service; when no
// directory is left the log fails for good: Append and Sync return an
// error wrapping ErrFailed from then on, and the NameNode must stop.
//
// # Checkpointing
//
// Under the namespace lock: end, err := l.Roll() (finalizes the segment at
// end and starts a new one), snapshot the namespace in memory; unlock; then
// l.SaveImage(end, write). SaveImage writes the image atomically and purges
// images beyond Options.ImagesToKeep and the segments the oldest kept image
// makes useless. Stats().TxnsSinceImage and Stats().SegmentBytes tell when a
// checkpoint is due (dfs.namenode.checkpoint.txns).
//
// # Recovery
//
// Load truncates a damaged record at the tail of the in-progress segment
// (the remnant of a crash mid-write; never acknowledged) and refuses, with
// ErrCorrupt, damage in the middle of the log or gaps in the txids (unless
// the operator asks for Options.Recover). A damaged newest image is skipped
// in favour of the previous one.
//
// # File system
//
// Every file operation goes through Options.FS (FormatFS for Format), a
// vfs.FS; nil is the operating system's. A fault injected there (ENOSPC
// on a write, EIO on an fsync, a torn write; package vfs/errorfs) takes
// the same path as a real one: its directory leaves service and, with no
// directory left, the round's Sync and every later Append and Sync fail
// with ErrFailed, and nothing past the last acknowledged txid was ever
// acknowledged, whatever of it reached the disk.
//
// docs/format/namenode-storage.md describes the files byte by byte.
package editlog
