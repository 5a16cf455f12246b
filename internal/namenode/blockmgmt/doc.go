// Package blockmgmt is the NameNode's block management (Hadoop's
// server/blockmanagement): where the replicas of every block are, which
// DataNodes are alive and what they hold, where new replicas go, and the
// work that keeps every block at its file's replication — copying,
// moving, deleting, recovering the last block of an abandoned file — plus
// the safe mode that holds the namespace read-only until enough blocks are
// reported.
//
// The namespace (package namespace) owns each Block's persistent part (id,
// generation stamp, length, file) and adds and drops blocks as edits
// apply; a Manager owns the rest: Replicas, Expected (the write
// pipeline), Deleting, and the DataNode descriptors. It sees a block's
// file only through the BlockCollection interface.
//
// Everything speaks domain types: DataNodes' registrations, heartbeats and
// reports come in as Registration, Heartbeat, StorageBlockReport and
// friends, and the work for them goes out as Command values, which the
// NameNode's RPC adapter turns into protocol messages
// (docs/format/datanode-protocol.md). Time comes from Options.Now and
// randomness (placement, read order) from Options.Rand, so that tests
// drive a Manager with a fake clock and a seeded source.
//
// A Manager is not safe for concurrent use: the NameNode calls it under
// its namesystem lock (see Manager).
//
// Invariants:
//   - A replica is listed both in its Block's Replicas (one per storage)
//     and in its Storage's Blocks; the two are changed together.
//   - After a full block report a storage holds exactly the replicas the
//     report recorded; those it reports unchanged are left as they were
//     and their blocks are not queued for the replication monitor, so a
//     healthy node's periodic report costs the monitor nothing.
//   - A replica is good (GoodReplicas) when it is finalized, not corrupt,
//     on a live node's working storage, with the block's generation stamp
//     and, once the block is committed, its length. Only good replicas
//     count towards replication, safe mode and reads.
//   - Bad copies are deleted only while a good copy exists: the last copy
//     of a block, corrupt or not, is never deleted.
//   - A node told to delete a replica gets no new copy of that block until
//     it confirms the deletion or ReplicationTimeout passes.
//   - At most one copy of a block is pending at a time, and a node is the
//     source of at most MaxReplicationStreams of them; a pending copy not
//     reported within ReplicationTimeout is scheduled again.
//   - New replicas of one block go to distinct DataNodes, of the types the
//     file's storage policy asks for, or its fallbacks.
//   - Blocks being written (uncommitted, or the last block of an open
//     file) are not the replication monitor's: the writer or a recovery
//     finishes them.
//   - Replicas on DataNodes being decommissioned, decommissioned or in
//     maintenance (decommission.go) are read and serve as copy sources but
//     are not live: replication counts live replicas only, new replicas
//     never go to such nodes, and their replicas are never deleted as
//     excess. A node leaves Decommission In Progress (Entering
//     Maintenance) only once its full block report since it (re-)registered
//     has been processed and every block it holds is sufficiently
//     replicated on in-service nodes.
//   - DataNodes are admitted, matched against the hosts files and placed
//     on racks by the address their registration came from (NodeIP),
//     never by the IP or host name they report.
//   - New replicas follow the default rack policy (racks.go): a block of
//     replication 2 or more spans two racks when the cluster has two; one
//     that does not is mis-replicated and gets a copy on a new rack, and
//     excess deletion never narrows a block's racks when it can help it.
//   - While in safe mode nothing is replicated or deleted (the caller skips
//     Replicate).
//   - A standby (SetStandby) queues no command for any DataNode and holds
//     back the reports it cannot judge yet instead of acting on them
//     (standby.go); it does advance admin states, which need no command.
package blockmgmt
