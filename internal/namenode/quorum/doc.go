// Package quorum replicates the NameNode's edit log with Raft
// (github.com/hashicorp/raft): the members of an HA nameservice form one
// Raft group whose log is the edit log, whose leader is the active
// NameNode and whose followers are warm standbys that apply it.
//
// This package owns the Raft plumbing: the member's storage (a bbolt log
// and stable store and a file snapshot store under <name dir>/raft), the
// transport, which shares the NameNode's RPC port (Mux tells a Raft
// connection from a Hadoop IPC one by its first four bytes), bootstrap
// of a new group, and the encoding of entries. What an entry means, and
// what a snapshot holds, is the namenode package's business (its FSM).
//
// Invariants:
//   - Raft connections are accepted only from the addresses of the
//     configured members (Peers): anyone else who can reach the RPC port
//     cannot speak Raft to it (without Kerberos, Hadoop's RPC is no
//     better authenticated; a forged AppendEntries would be worse).
//   - A connection's first bytes are read under a deadline, by a bounded
//     number of goroutines, so silent or slow peers cannot stall the
//     RPC accept loop.
//   - An entry (docs/format/namenode-ha.md) carries the transaction id the
//     leader gave it and the proposer's epoch (random per process start),
//     so an FSM can tell its own speculative edits from another leader's.
package quorum
