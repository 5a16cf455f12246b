// Package errorfs is a fault-injecting vfs.FS: it wraps another FS and
// makes chosen operations fail, tear or stall, so tests can drive the data
// path (DataNode volumes, spill, shuffle, the edit log) into the failures
// a real disk has: ENOSPC from a write, EIO from an fsync, a short (torn)
// write, a slow device.
//
// A Rule names the operations it applies to (Ops), the paths (Path, e.g.
// Under(dir)), how many matching operations to let through first (After:
// "fail the N-th" is After N-1) and how many to hit (Times; 0 means every
// one from then on, a disk that stays broken). What it does to a hit: wait
// Latency (through FS.Sleep, so a test can record instead of sleep), then,
// for a write with ShortWrite k, write the first k bytes and fail; and
// return Err wrapped in an *fs.PathError naming the operation and path,
// so errors.Is(err, syscall.ENOSPC) holds as for a real failure.
//
// Rules are checked in the order they were added; every matching rule
// counts the operation, the latencies of all hits add up, and the first
// hit with an error decides the outcome. An operation that is not failed
// is the inner FS's, unchanged. Files opened through the FS are wrapped
// (their Read, Write, Sync, Truncate, Stat and Close are operations too)
// and are not *os.File, so zero-copy paths (sendfile, fd passing) fall
// back to reading through them and every byte is seen.
//
// An FS is safe for concurrent use: counting and deciding is done under
// one mutex, so exactly Times operations are hit however many goroutines
// race; the inner operation and the latency run outside it.
package errorfs
