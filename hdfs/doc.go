// Package hdfs is strata's HDFS client: a Go API for hdfs:// paths that
// talks to a NameNode (strata's or Hadoop's) with ClientProtocol over
// Hadoop IPC. Client implements fs.FileSystem; importing this package
// registers the "hdfs" scheme with package fs.
//
// Errors wrap the os and fs sentinels (os.ErrNotExist, os.ErrExist,
// os.ErrPermission, fs.ErrNotEmpty, fs.ErrNotDir) so errors.Is works, and
// their text is the NameNode's message, as Hadoop's shell prints it.
//
// # High availability
//
// The authority of hdfs://<authority> is resolved with
// nameservice.Resolve: a nameservice listed in dfs.nameservices stands
// for all its NameNodes (dfs.ha.namenodes.<ns>,
// dfs.namenode.rpc-address.<ns>.<nn>), anything else for one host[:8020].
// URI keeps the authority as written (hdfs://ns1). OptionsFrom does this
// for tools that build Options themselves.
//
// With several NameNodes (Options.Addrs) every NameNode call goes through
// an ipc.FailoverClient, the Go form of Hadoop's RetryInvocationHandler
// over ConfiguredFailoverProxyProvider:
//
//   - A call goes to the current NameNode, the first configured at start.
//   - org.apache.hadoop.ipc.StandbyException, or a connection failure
//     (refused, reset, EOF, dial timeout: ipc.ConnError, never a
//     NameNode's answer), moves the client to the next NameNode in
//     configuration order, round-robin, and the call is sent again.
//   - org.apache.hadoop.ipc.RetriableException sends it again to the same
//     NameNode.
//   - Every other answer, success or exception, ends the call.
//   - A call resent keeps its client id and call id and raises its retry
//     count by one (0 on the first attempt), so a NameNode's retry cache
//     can answer an at-most-once call (create, rename, delete...) that ran
//     before the connection broke instead of running it again. All
//     ClientProtocol methods are treated as idempotent or at-most-once,
//     as Hadoop annotates them.
//   - The first failover is immediate; the n-th after it waits
//     min(base·2^n, max) times a random factor in [0.5, 1.5), and after
//     dfs.client.failover.max.attempts failovers (or
//     dfs.client.retry.max.attempts retries on one NameNode) the call
//     fails with the last error. A done ctx ends the wait and the call.
//   - Concurrent calls share the current NameNode: calls that failed on a
//     NameNode the client has already left do not move it again.
//
// Keys (Hadoop's names and defaults): dfs.client.failover.max.attempts
// (15), dfs.client.failover.sleep.base.millis (500),
// dfs.client.failover.sleep.max.millis (15000),
// dfs.client.retry.max.attempts (10).
//
// Lease renewal is a NameNode call like any other, so it follows the
// active NameNode. Block reads and writes talk to DataNodes and do not
// fail over; only the NameNode calls among them (getBlockLocations,
// addBlock, complete, ...) do.
package hdfs
