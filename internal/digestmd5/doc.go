// Package digestmd5 is SASL DIGEST-MD5 (RFC 2831) as Java's SASL provider
// speaks it to Hadoop: client and server sessions, and the security layer
// they negotiate. HDFS uses it on DataTransferProtocol (block tokens and
// data encryption keys as credentials, dfs.data.transfer.protection) and
// on the IPC port (TOKEN authentication with delegation tokens). No
// third-party Go DIGEST-MD5 library is well kept, so this one lives here;
// it uses only Go's crypto packages.
//
// # Handshake
//
// The server sends a digest-challenge (Server.Challenge): realm, a random
// nonce, the qops it offers (auth, auth-int, auth-conf, in its order of
// preference), maxbuf, charset=utf-8, the ciphers for auth-conf and
// algorithm=md5-sess. The client answers a digest-response
// (Client.Respond) naming one qop, its cnonce, nc=00000001, the
// digest-uri protocol/server and the response hash; the server checks it
// against the password its Credentials callback gives for the username
// (Server.Respond) and answers rspauth, which the client verifies
// (Client.Verify). Java's quirks are kept: md5-sess A1, the A2 zero
// suffix for auth-int and auth-conf, rspauth's A2 without "AUTHENTICATE".
//
// # Security layer
//
// For auth-int and auth-conf the session yields a *Security. Wrap turns a
// message into msg ‖ HMAC-MD5(Ki, seq ‖ msg)[0:10] ‖ 0x0001 ‖ seq
// (auth-int), or RC4(Kc, msg ‖ mac) ‖ 0x0001 ‖ seq (auth-conf, ciphers
// rc4, rc4-56 and rc4-40 — those colinmarc/hdfs and the JDK share; des and
// 3des are not offered; only rc4 unless a config names the weaker two,
// since the challenge's cipher list is unauthenticated). Unwrap checks
// the type, the sequence number (a replayed or reordered message fails)
// and the MAC; Wrap fails once the 32-bit sequence number would wrap. NewConn frames
// wrapped messages with a 4-byte big-endian length, as Hadoop's
// SaslInputStream and SaslOutputStream do.
//
// # Invariants
//
//   - Every length read from a peer is bounded before allocation: a
//     challenge is at most MaxChallenge bytes, a response MaxResponse, a
//     wrapped message at most the maxbuf this side advertised, and the
//     buffer for it grows only as its bytes arrive.
//   - Wrap never produces a message longer than the peer's maxbuf (unless
//     SetSendLimit raised the limit for a peer known to take more): Conn
//     splits writes to fit.
//   - A session's Wrap state and Unwrap state are separate: one goroutine
//     may write while another reads. An error from Unwrap is final; the
//     connection must be dropped.
//   - Passwords and MACs are compared in constant time.
package digestmd5
