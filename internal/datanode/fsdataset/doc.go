// Package fsdataset is the DataNode's on-disk replica store (Hadoop's
// FsDatasetImpl): the volumes listed in dfs.datanode.data.dir, the replicas
// of blocks on them, and the rules that keep a replica's data and checksums
// consistent across writes, appends, pipeline recoveries, crashes and
// failing disks. It knows nothing of the network: the DataNode daemon
// drives it from the data-transfer protocol and the NameNode's commands.
//
// # Layout
//
// Each volume is a directory with a storage type ([SSD]/data/ssd). A
// replica is two files, as in Hadoop: the data file blk_<id> and the meta
// file blk_<id>_<genstamp>.meta (a 7-byte header, then one big-endian
// CRC32C per 512-byte chunk). Replicas being written live in
// <vol>/current/rbw, finalized ones in
// <vol>/current/finalized/subdir<A>/subdir<B>. A DataNode serves one block
// pool, so there is no BP-* directory level. docs/format/datanode-storage.md
// describes the files byte by byte.
//
// # Lifecycle
//
//	ds, err := fsdataset.Open(cfg)      // lock volumes, load identity, scan replicas
//	w, err := ds.CreateRBW(b, storage.SSD, "")
//	w.Write(p); w.Flush()               // visible to readers (hflush)
//	info, err := w.Finalize()           // durable: only now acknowledge the block
//	rr, err := ds.OpenForRead(b)        // ReadAt/DataFile + Checksums
//	ds.Close()
//
// # Replica states
//
// A replica is RBW while being written (CreateRBW, Append, RecoverRBW),
// Finalized after ReplicaWriter.Finalize, and RWR when the start-up scan
// finds it in rbw: its data was truncated to the longest prefix whose
// checksums verify, and it waits for the NameNode's recovery (RecoverRBW).
// An RBW replica whose writer was closed or stopped stays RBW.
//
// # Invariants
//
//   - A replica's meta file holds exactly ceil(len/bytesPerChecksum)
//     checksums once finalized; the start-up scan moves a finalized replica
//     that breaks this to <vol>/current/corrupt and never serves it.
//   - Data is written before its checksums; a crash leaves at worst a torn
//     tail in rbw, which the scan cuts off.
//   - Finalize fsyncs the data and meta files, renames them into the
//     finalized directory (meta first) and fsyncs both directories.
//   - One replica per block ID on the DataNode: CreateRBW refuses a second
//     one (ErrReplicaExists) and the scan keeps one of duplicates (the
//     higher generation stamp, then the finalized one).
//   - Every volume carries the same DataNode UUID; Open refuses a volume of
//     another DataNode.
//
// # Concurrency
//
// Dataset methods are safe for concurrent use. A ReplicaWriter is used by
// one goroutine at a time (BytesWritten and Info from any), and may be
// stopped from outside: RecoverRBW, Delete and Dataset.Close flush and
// close it, after which its calls return ErrWriterClosed. A ReplicaReader
// sees the replica as of OpenForRead (its length and the checksum of a
// partial last chunk are snapshotted) and stays readable if the replica is
// finalized, appended to or deleted meanwhile.
//
// # Incremental block reports
//
// Config.OnChange receives a ReplicaEvent for every change: Receiving
// (created or reopened for writing), Received (finalized, or generation
// stamp updated) and Deleted (deleted, aborted, or lost with its volume).
// It is called with the dataset's lock held, in the order of the changes:
// it must only queue the event. Report returns the full block report.
//
// # Failing volumes
//
// Volume I/O goes through the FS interface (a vfs.FS: OSFS in production),
// so tests inject faults (vfs/errorfs). CheckVolumes (the disk checker;
// call it periodically and after an I/O error) takes a volume that fails
// its check out of service for good: its replicas leave the map (Deleted
// events), its writers fail with ErrVolumeFailed, the other volumes keep
// serving. When more volumes have failed than
// dfs.datanode.failed.volumes.tolerated, Failed returns an error and the
// DataNode must stop.
//
// A full volume is not a failed one (Hadoop's DiskOutOfSpaceException is
// not a disk error): a write that meets ENOSPC fails that replica's writer
// for good with an error naming the block, the volume and the errno (a
// CreateRBW whose first write fails leaves no replica), the replica is
// never finalized, and the client's pipeline recovery takes over (Abort
// removes it; a closed writer leaves it RBW for the NameNode's recovery);
// the volume stays in service, and new replicas go to volumes whose statfs
// shows room for them. A volume so full that the disk check's own small
// write fails is taken out of service like any volume failing its check.
//
// # Direct I/O
//
// With Config.DirectIO, replica data is written with O_DIRECT from aligned
// 1 MiB buffers, bypassing the page cache; meta files and reads stay
// buffered. A file system that refuses O_DIRECT (EINVAL) gets buffered
// writes, logged once per volume.
//
// # Drop-behind
//
// With Config.DropBehindWrites (dfs.datanode.drop.cache.behind.writes), a
// buffered writer drops each early-writeback window from the page cache
// once it has waited for the window's writeback, and the whole data file
// once Finalize's fsync made it durable (posix_fadvise DONTNEED, which
// only drops clean pages: durability is the same). Later reads of the
// replica come from the disk.
package fsdataset
