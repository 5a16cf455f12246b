// Package editlog is the NameNode's durable storage: a write-ahead edit log
// with group commit, plus checkpoint images, in the layout of Hadoop's
// NameNode storage directory (current/VERSION, fsimage_<txid>,
// edits_inprogress_<txid>, edits_<start>-<end>). It stores opaque records
// and image payloads; encoding the namespace into them is the caller's
// business.
//
// # Lifecycle
//
//	Format(dir, false)            // once: `strata namenode -format`
//	l, err := Open(dir, Options{}) // flock dir/in_use.lock, read VERSION
//	err = l.Load(image, apply)     // newest valid image, then the log after it
//	...
//	l.Close()
//
// # Logging a mutation (Hadoop's logEdit / logSync)
//
// The NameNode applies a mutation in memory under its namespace lock and,
// still under the lock, calls Append, which assigns the next transaction id
// and buffers the record without doing I/O. It releases the lock and calls
// Sync(ctx, txid), which returns once the record is fsynced; only then is the
// client answered. Concurrent Syncs share fsyncs (group commit): one caller
// writes and fsyncs everything buffered while new records gather for the
// next round. An I/O error fails the log for good: Append and Sync return
// an error wrapping ErrFailed from then on, and the NameNode must stop.
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
// the same path as a real one: the round's Sync and every later Append
// and Sync fail with ErrFailed, and nothing past the last acknowledged
// txid was ever acknowledged, whatever of it reached the disk.
//
// docs/format/namenode-storage.md describes the files byte by byte.
package editlog
