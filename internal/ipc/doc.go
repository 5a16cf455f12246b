// Package ipc implements Hadoop IPC (protocol version 9) with the protobuf RPC
// engine, server and client. It carries HDFS's ClientProtocol, so that
// existing HDFS clients talk to strata unmodified, and strata's own internal
// protocols (DataNode↔NameNode, TaskTracker↔JobTracker).
//
// # Connection
//
// A client opens TCP and sends the 7-byte connection header
// ("hrpc", version 9, service class, auth protocol: 0 simple, 0xDF SASL).
// If it asked for SASL it then sends a NEGOTIATE (call id -33), which this
// server answers with SUCCESS so the client falls back to simple
// authentication — unless the server has a SASLConfig (secure mode): then
// a simple client is refused, and the client authenticates by one of the
// server's SASLMechanisms (Kerberos GSSAPI today, delegation tokens
// later: a mechanism is an entry of the NEGOTIATE reply plus a
// per-connection SASLSession that steps tokens and reports the principal
// and negotiated QOP, with Wrap/Unwrap for integrity and privacy); see
// sasl.go and docs/format/ipc-sasl.md. A Client authenticates with its
// Login or the process's (SetLogin); KerberosInfo names each protocol's
// server and client principals. Next comes the connection context (call id -3, no reply)
// naming the user and protocol. After that, any number of calls may be in
// flight on the connection at once; responses carry the call id and may
// come back in any order.
//
// # Framing
//
// Every packet in both directions is a 4-byte big-endian length followed by
// varint-length-delimited protobuf messages: a request is
// RpcRequestHeaderProto, RequestHeaderProto (method, protocol, version) and
// the request message; a response is RpcResponseHeaderProto followed, on
// success, by the response message. Frames longer than the server's limit
// (ipc.maximum.data.length, default 128 MiB) are refused with a fatal
// response and the connection is closed; so is any frame that does not
// decode. Errors from handlers travel as Java exception class names
// (RemoteError) so that Java and Go HDFS clients map them as Hadoop's do.
//
// The byte layout is documented in docs/format/ipc.md.
//
// # Limits
//
// Everything a peer sends is bounded before it costs the server anything
// (ServerConfig, ServerConfigFrom): a frame's claimed length is checked
// against the limit and its buffer grows only as bytes arrive; a frame
// that stalls for IdleTimeout closes its connection; each connection may
// have MaxConnInFlight calls between request and written reply, after
// which the server stops reading it (TCP pushes back on that client
// alone); MaxInFlight handlers run at once over all connections, a slot
// held only while the handler runs, never while its reply is written;
// every reply write has a deadline, so a client that does not read loses
// its connection instead of holding anything; connections past
// MaxConnections are closed at once, and idle ones are closed when more
// than IdleThreshold are open.
package ipc
