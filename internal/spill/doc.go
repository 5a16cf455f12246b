// Package spill is MapReduce's intermediate-data machinery: the map-side
// sort buffer with its spills and combiner, the on-disk segment format and
// index, and the k-way multi-pass merge used on both sides of the shuffle.
// The byte formats and the policies are in docs/format/map-output.md.
//
// # Map side
//
// A map task makes one Collector (Hadoop's MapOutputBuffer) and Collects
// (partition, key, value) records. They are copied into a buffer of
// Config.SortBytes (mapreduce.task.io.sort.mb); when it is
// Config.SpillPercent full, a background goroutine sorts the full part by
// (partition, key) — metadata only, with a radix sort on 8-byte key
// prefixes when keys are compared as bytes — runs the combiner and writes
// a spill file, while Collect goes on filling the rest. Close merges the
// spills, Config.SortFactor at a time, and the records collected since the
// last spill (sorted in memory, merged last; spilled first only when there
// is a combiner to run on them, or no spill yet) into the task's one
// output file, <local dir>/<Name>/file.out, with one segment per
// partition, and its index file.out.index. (Hadoop spills the remainder
// too; merging it from memory saves writing and reading it again.)
//
// # Reduce side
//
// A reducer fetches its partition's segment of every map output (the
// shuffle server reads IndexEntry.Offset and PartLength from ReadIndex),
// keeps small ones in memory (NewMemorySegment verifies the checksum
// before anything is read) and copies large ones to disk (CopySegment
// verifies on the way, OpenSegment reads them back), merges groups of
// them to disk with Merge and a SegmentWriter, and finally streams a Merge
// of everything into Groups, which calls the reducer once per key.
//
// # Invariants
//
//   - Order is stable: records with equal keys leave a Collector in the
//     order they were collected, and Merge puts equal keys in input order.
//   - Every segment ends with a CRC32C of its stored bytes; a reader that
//     reaches the end has verified it, and corruption anywhere is reported
//     with an error wrapping ErrCorrupt, never a panic. Lengths read from
//     disk are checked against what remains before anything is allocated.
//   - The buffer never holds more than SortBytes of records and metadata;
//     I/O goes through 256 KiB buffers.
//   - Nothing is left behind: Close removes the spills and temporary
//     files, Abort (and a failed Close) everything of the task attempt.
//
// # Local dirs and faults
//
// All file I/O goes through Config.FS (MergeFS, ReadIndexFS), a vfs.FS;
// nil is media.Default(), the OS with emulated media where configured.
// As Hadoop's LocalDirAllocator, each spill, output and intermediate
// merge file goes to the next local dir round-robin whose file system
// has room for it (statfs). A write that then fails (ENOSPC, EIO) is not
// moved: the spill or Close fails with an error wrapping the errno and
// naming the file, and the attempt's files are removed, so the framework
// re-runs the attempt.
package spill
