// Package datanode is the DataNode daemon: it stores block replicas on its
// volumes (package fsdataset), serves HDFS's DataTransferProtocol to
// clients and other DataNodes (reads, pipelined writes, checksums,
// transfers), and keeps the NameNode informed (registration, heartbeats
// with storage reports, full and incremental block reports), carrying out
// the commands it sends back: copy a replica elsewhere, delete replicas,
// register again. With an HA nameservice it keeps every NameNode informed
// and obeys only the active one (bpservice.go; see
// docs/format/datanode-protocol.md).
//
// # Configuration
//
// Config holds every setting, each documented with its unit, default and
// key. ConfigFrom reads Hadoop's keys (the dataset's through
// fsdataset.ConfigFrom); DefaultConfig is ConfigFrom of an empty
// configuration, so the defaults live in conf's table only. New fills the
// fields a hand-built Config leaves at "0 means the default" from
// DefaultConfig, then Validate refuses what is out of range before any
// volume is opened.
//
// # Files
//
// The volumes' file I/O goes through Config.FS (a vfs.FS; nil is
// media.Default(), the OS with emulated media where configured). Block
// reads use sendfile, and short-circuit reads hand out descriptors, only
// for replicas whose files are plain *os.File; others (emulated media,
// fault injection) are read through the File, so every byte pays or is
// seen. A write that meets ENOSPC fails this node's stage of the
// pipeline with an error status, and the client recovers without it; the
// replica is never finalized (a failed create leaves none, a failed write
// an RBW replica for the NameNode to recover or invalidate, as Hadoop's),
// and the volume stays in service (see fsdataset).
package datanode
