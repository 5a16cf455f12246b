// Package blocktoken mints and checks HDFS block access tokens, the
// NameNode-signed capabilities a DataNode asks for before it reads, writes,
// copies or replaces a replica (dfs.block.access.token.enable).
//
// A token is Hadoop's: the identifier is a BlockTokenIdentifier in its
// Writable ("legacy") encoding — expiry, key id, user, block pool, block
// id, access modes, storage types and ids — and the password is
// HMAC-SHA1 of the identifier's bytes under the block key named by the key
// id. The byte layout is in docs/format/block-token.md.
//
// # Keys
//
// The NameNode's Manager (NewMaster) makes a new random 64-byte key every
// KeyUpdateInterval and keeps the keys that may still verify an unexpired
// token: a key expires KeyUpdateInterval + TokenLifetime after it became
// current, so every token it signed has expired before it goes. The
// NameNode hands ExportKeys to DataNodes at registration and with
// heartbeats; a DataNode's Manager (NewWorker) takes them with ImportKeys
// and uses the current one to mint tokens of its own for the copies it
// makes on the NameNode's behalf.
//
// # Invariants
//
//   - Check accepts a token only if its password is the HMAC of its
//     identifier under a known, unexpired key with that id, it has not
//     expired, and it names the block pool, block id and an access mode
//     the operation needs. Anything else is an *InvalidTokenError whose
//     message follows Hadoop's InvalidBlockTokenException.
//   - Decode bounds every count and length before it allocates: a token
//     is at most MaxIdentifierLen bytes, and counts are checked against
//     the bytes left.
//   - Time comes from the injected clock; keys from the injected reader.
package blocktoken
