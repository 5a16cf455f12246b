// Package namenode is the HDFS NameNode daemon: the metadata server that
// clients ask where data is and DataNodes report to.
//
// It is made of three packages:
//
//   - namespace: the inode tree, its edits and image, permissions, paths
//     and leases;
//   - blockmgmt: replicas, DataNodes, placement, replication, recovery
//     and safe mode;
//   - namenode (this package): the daemon. Its Namesystem composes the
//     two under one lock and enforces the rules that span them (a request
//     is checked, applied and logged before it is acknowledged); the RPC
//     adapters (clientrpc.go for ClientProtocol, dnrpc.go for strata's
//     DataNode protocol) convert protocol messages to and from domain
//     types; http.go, webhdfs.go and fsck.go serve the web UI, WebHDFS,
//     fsck and metrics; NameNode runs it all with the edit log
//     (package editlog) and checkpoints, or, as a member of an HA
//     nameservice, with the Raft group (package quorum, ha.go).
//
// Lifecycle: New validates the Config, opens the storage directory, loads
// the newest image and replays the edit log; Start listens; Ready is
// closed once it serves; Close stops serving, saves a checkpoint when the
// log grew, and is safe to call twice.
//
// Invariants:
//   - A mutation that returns no error is durable: its edits were applied
//     and appended under the namesystem lock (so log order is apply order)
//     and synced before the reply.
//   - A caller that goes away never fails the journal: its applied and
//     appended edits are synced in the background, and only a write or
//     fsync failure of every storage directory stops mutations (a failed
//     directory is taken out of service and reported).
//   - With HA (ha.go) the journal is the Raft group: an edit is
//     acknowledged once a quorum has it; a standby refuses every client
//     call with StandbyException and applies committed edits in txid
//     order; a member that loses leadership rebuilds from its snapshot and
//     the committed log before applying another leader's edits; ha.go's
//     header states the invariants.
//   - After the journal fails, no further mutation is accepted; reads go
//     on.
//   - Every remotely supplied count, length and list is bounded before
//     the namesystem lock is taken or anything is allocated for it; no
//     lock is held while writing to a network peer (fsck streams its
//     report between holds of the read lock).
//   - Block keys exist from New on (a blocktoken master); DataNodes get
//     them at registration and with the first heartbeat after each roll.
//     With Config.BlockTokens every located block carries a token for the
//     caller, with Hadoop's mode for the call; WebHDFS redirects are
//     always signed (keys.go, located.go, webhdfs.go).
//   - Delegation tokens (delegation.go) are namespace state: key rolls,
//     issues, renewals and cancellations are edits applied through
//     Tree.Apply, so replay, images and HA followers agree on which
//     tokens are valid; WebHDFS's delegation= is verified before the
//     operation runs as the token's owner. In secure mode a WebHDFS
//     operation runs only for a SPNEGO-authenticated caller (KERBEROS_SSL)
//     or a verified token, never for user.name (webAuthenticate).
//   - While in safe mode the namespace is read-only.
//   - Every path a request names is validated (namespace.CheckPath) and
//     inode paths (/.reserved/.inodes/<id>) are resolved before the
//     operation runs.
//
// Formats: docs/format/namenode-storage.md (storage directory, edit log
// and image), docs/format/namenode-ha.md (Raft log, snapshots, HA
// protocols) and docs/format/datanode-protocol.md.
package namenode
