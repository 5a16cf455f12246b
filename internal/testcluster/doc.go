// Package testcluster is strata's one cluster harness: a test describes a
// cluster once (Config) and drives it through one interface (Harness),
// whichever way the daemons run.
//
// Two implementations, as etcd's tests/framework has integration and e2e
// clusters:
//
//   - New returns a *Cluster: every daemon (NameNode, DataNodes and, with
//     Config.MapReduce, a JobTracker and one TaskTracker per DataNode) is
//     a library type inside the test process, started by package
//     localcluster — the code path `strata local` and `strata experiment`
//     use. Fast, debuggable, with direct access to the daemons
//     (NameNode(), DataNode(i), Local()) and Go-configuration hooks
//     (Config.NameNode, Config.DataNode). Its MapReduce daemons come from
//     Config.Trackers (trackers.Start of internal/localcluster/trackers):
//     this package imports no MapReduce code, because the MapReduce
//     engine's own tests use it.
//   - NewProcess returns a *Processes: every daemon is a `strata` process
//     of a binary built from this module (Binary), configured with -D
//     options, so SIGKILL, restarts and exit codes are real. The test
//     binary must run under RunMain (TestMain), which removes the binary
//     at the end.
//
// Both give every daemon Settings (and MapReduceSettings): heartbeats every
// 100 ms, a DataNode declared dead ~2 s after its last one, replication
// checked every 200 ms, no safe-mode extension, blocks down to 1 KiB;
// Config.Conf adds or overrides keys for both alike.
//
// Layout: everything lives under Dir() (the test's temporary directory,
// removed with it): the name directory at <dir>/name, DataNode i's volume
// j at <dir>/dn<i>/<TYPE><j>, TaskTracker i's intermediate data under
// <dir>/dn<i>/mapred-local. Nodes are numbered from 0 in the order they
// were added and keep their number, storage and addresses when stopped.
//
// The operations' contract (Harness documents each):
//
//   - Stop is a clean stop: the NameNode saves a checkpoint (SIGINT for a
//     process); a DataNode or TaskTracker drops its connections and
//     attempts.
//   - Kill is SIGKILL for a process. In process, a DataNode's, JobTracker's
//     or TaskTracker's Kill is its Stop — their Close is already abrupt
//     and nothing a crash would lose is saved — but the NameNode has no
//     stop without a checkpoint, so Cluster.KillNameNode skips the test:
//     kill -9 of the NameNode is process-only.
//   - Start after a stop reuses the storage and the addresses: the
//     NameNode's RPC and HTTP ports, a DataNode's transfer port (block
//     locations and clients keep them), the JobTracker's port. A restarted
//     TaskTracker takes a new shuffle port and is a new tracker to the
//     JobTracker, as in Hadoop.
//   - CorruptReplica flips one byte of a replica's data file on disk, not
//     its checksums: a read from that DataNode fails with a checksum
//     error, the client fails over and reports the replica, the block
//     scanner finds it too.
//   - FailVolume replaces a volume directory by a file, which the volume
//     checker sees as a dead disk (chmod 000 would not stop root). In
//     process the DataNode checks at once, reports the volume failed
//     (DataNodeStatus) and its replicas lost, and stops past
//     dfs.datanode.failed.volumes.tolerated; a process finds it at its
//     next periodic check (30 s) or its next start.
//   - WaitFor, WaitDataNodes, WaitSafeModeOff and WaitReplicated poll and
//     fail the test on timeout, naming what they waited for.
//
// Every method fails the test (t.Fatal) when it cannot do what it says,
// and Close, registered with t.Cleanup, stops everything; the process
// implementation logs every daemon's output when the test failed
// (STRATA_TEST_LOG=1 sends the in-process daemons' logs to stderr).
//
// Each node has a host name (Host) and every daemon its own address. By
// default every daemon is on loopback. With Config.Hosts (process
// implementation, root) the NameNode, the JobTracker and each node (DataNode
// i and TaskTracker i) run on a host of their own: a network namespace
// named strata-<pid>-<id>-<host> with a veth pair into a bridge private to
// the cluster, a 10.x.y.z/24 address (the NameNode .2, the JobTracker .3,
// node i .10+i, the test process — ClientHost — the bridge's .1) that the
// daemons advertise, its own loopback
// and no other route, so nothing in it reaches beyond the cluster's own
// addresses. Partition(a, b) cuts every host of a off from every host of
// b with "unreachable" routes on both sides (new connections fail, open
// ones stall, as across a broken link); Heal removes the cuts. The
// namespaces, veths and bridge are removed at cleanup whatever the test
// did, and a later run removes what a killed test binary left behind.
// Shape(host, rate) limits a host's link with tc tbf on both ends of its
// veth pair. (The test machines' kernel has no tc classifiers and no
// netem and their image no iptables, hence routes for partitions.) The
// namespaces are package hostnet's, which strata experiment -hosts uses
// too; each gets a hosts file naming every host (nn, jt, dn<i>, tt<i>),
// and HostCommand runs a client on one of them. Config.TrackerHosts puts
// every TaskTracker on a host of its own (TrackerHost).
//
// CPU shares: Config.HostCPU gives a host's daemons and their task
// processes a cgroup CFS quota of that many CPUs (hostnet.CPUGroups);
// CPUStat reads its CPU time and throttling.
//
// Small disks: Config.NameDirSize makes the name directory a tmpfs of
// that size, Config.VolumeSize chosen DataNode volumes (root); the edit
// log or a volume can then fill up. Config.DataNodeConf gives one
// DataNode keys of its own, e.g. an emulated slow medium (strata.media.*)
// on its volumes.
//
// Neither implementation is safe for concurrent use of its methods by
// several goroutines (the daemons themselves are).
package testcluster
