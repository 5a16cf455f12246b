// Package delegation is HDFS's delegation token secret manager (Hadoop's
// AbstractDelegationTokenSecretManager with DelegationTokenIdentifier),
// without sockets or clocks of its own: callers pass the time (ms since
// the epoch) and a source of randomness.
//
// A delegation token lets a process act as the user who obtained it
// without that user's Kerberos credentials. Its identifier (Identifier,
// Hadoop's Writable encoding) names the owner, the renewer, dates, a
// sequence number and the master key its password was made with; the
// password is HMAC-SHA1 of the identifier bytes under that key.
//
// State holds the keys and live tokens. Its mutators (AddKey, AddToken,
// RenewToken, CancelToken) are applied from edit-log records, so that a
// NameNode's restart, replay and HA followers reach the same state; its
// Check*/New* methods decide, from the time given, what to record.
//
// For the IPC SASL (DIGEST-MD5 / TOKEN) server: State.Retrieve(identifier
// bytes, now) returns the password to check the client's digest against
// and the identifier (its User() is the authenticated user), or an
// *Error of class ClassInvalidToken with Hadoop's message. The NameNode
// wraps it with its lock as Namesystem.RetrieveDelegationPassword.
//
// Invariants: identifiers and tokens from peers are bounded (Text at
// 1 MiB, an identifier at MaxIdentifier, a URL token at 64 KiB) before
// they are decoded; a token is valid only while it is in the state and
// its renew date has not passed; a token is renewable only by its named
// renewer and up to its max date; the owner or renewer may cancel it.
//
// Formats: docs/format/delegation-token.md.
package delegation
