package conf

import (
	"sort"
	"strings"
)

// Key describes one known configuration key.
type Key struct {
	Name    string // Hadoop's key name, e.g. "dfs.replication"
	Default string // Hadoop's default value (strata's where noted in Doc)
	Doc     string // one line
}

// knownKeys is every key strata knows, sorted by name (byte order; the tests
// check). To add a key, add one line here in its sorted place. Durations
// without a unit are read in the unit the Doc names; sizes accept Hadoop's
// k/m/g/t/p/e suffixes where the Doc says so.
var knownKeys = []Key{
	{"dfs.balancer.getBlocks.min-block-size", "10485760", "Smallest block, in bytes, the balancer moves (getBlocks leaves smaller ones out)."},
	{"dfs.balancer.getBlocks.size", "2147483648", "Bytes of blocks the balancer asks the NameNode for in one getBlocks."},
	{"dfs.balancer.max-size-to-move", "10737418240", "Bytes one DataNode sends or receives at most in one balancer iteration."},
	{"dfs.block.access.key.update.interval", "600", "Minutes between two rolls of the NameNode's block access key."},
	{"dfs.block.access.token.enable", "false", "Whether the NameNode puts block access tokens in every located block it returns and DataNodes check them on every data-transfer op."},
	{"dfs.block.access.token.lifetime", "600", "Minutes a block access token is good for."},
	{"dfs.block.scanner.volume.bytes.per.second", "1048576", "Bytes per second the DataNode block scanner reads when verifying replicas."},
	{"dfs.blockreport.intervalMsec", "21600000", "Milliseconds between full block reports from a DataNode to the NameNode."},
	{"dfs.blocksize", "134217728", "Default block size in bytes for new files; size suffixes (k, m, g, t, p, e) allowed, e.g. 128m."},
	{"dfs.bytes-per-checksum", "512", "Bytes of data covered by each checksum; must divide dfs.blocksize."},
	{"dfs.checksum.type", "CRC32C", "Checksum algorithm for block data: NULL, CRC32 or CRC32C."},
	{"dfs.client.block.write.replace-datanode-on-failure.enable", "true", "Whether a writing client replaces a failed DataNode in its pipeline with a new one."},
	{"dfs.client.failover.max.attempts", "15", "Failovers a client makes for one call to an HA nameservice (after StandbyException or a connection failure) before it gives up."},
	{"dfs.client.failover.sleep.base.millis", "500", "Milliseconds of the exponential backoff between failovers: the n-th after the first waits min(base*2^n, max) times a random factor in [0.5, 1.5)."},
	{"dfs.client.failover.sleep.max.millis", "15000", "Milliseconds the failover backoff grows to at most (before its random factor)."},
	{"dfs.client.read.shortcircuit", "false", "Whether a client on a DataNode's host reads block files directly instead of over TCP."},
	{"dfs.client.retry.max.attempts", "10", "Retries a client makes for one call on the same NameNode after RetriableException."},
	{"dfs.client.server-defaults.validity.period.ms", "3600000", "Milliseconds a client keeps the NameNode's server defaults (block size, replication, whether data transfer is encrypted) before asking again."},
	{"dfs.client.socket-timeout", "60000", "Milliseconds a data-transfer peer may stay silent while an op, a packet, an ack or a checksum is awaited (client and DataNode reads); a writing client waits this plus 5000 per pipeline node for each ack, then recovers the pipeline, and sends a heartbeat every half of it (0: no timeout for the client)."},
	{"dfs.client.use.datanode.hostname", "false", "Whether clients connect to DataNodes by the host names they report (dfs.datanode.hostname) rather than their IP addresses."},
	{"dfs.data.transfer.protection", "", "SASL protection of DataTransferProtocol connections, with block tokens as credentials: a comma-separated list of authentication, integrity, privacy (empty: none); needs dfs.block.access.token.enable."},
	{"dfs.datanode.address", "127.0.0.1:9866", "DataNode data-transfer server address (host:port); strata's default binds loopback (Hadoop: 0.0.0.0:9866): name the address other hosts reach, or 0.0.0.0, to serve them."},
	{"dfs.datanode.available-space-volume-choosing-policy.balanced-space-preference-fraction", "0.75", "With the available-space volume choosing policy, the share of new replicas that go to the emptier volumes when the volumes are unbalanced."},
	{"dfs.datanode.available-space-volume-choosing-policy.balanced-space-threshold", "10737418240", "With the available-space volume choosing policy, bytes of free space by which volumes may differ and still count as balanced."},
	{"dfs.datanode.balance.bandwidthPerSec", "104857600", "Bytes per second a DataNode spends on balancer moves (REPLACE_BLOCK and COPY_BLOCK), summed over them; size suffixes allowed, e.g. 100m."},
	{"dfs.datanode.balance.max.concurrent.moves", "100", "Balancer moves a DataNode serves at once; more are refused with an ERROR status."},
	{"dfs.datanode.data.dir", "file://${hadoop.tmp.dir}/dfs/data", "Comma-separated directories where a DataNode stores blocks, each optionally prefixed by a storage type, e.g. [SSD]/data."},
	{"dfs.datanode.dns.interface", "default", "Network interface whose address a DataNode advertises when dfs.datanode.hostname is unset; default: the address it binds, else the one that reaches the NameNode (Hadoop: the host's DNS name)."},
	{"dfs.datanode.drop.cache.behind.writes", "false", "Whether a DataNode, once a written block file's pages are on disk, drops them from the page cache (posix_fadvise DONTNEED, every 8 MiB and when the replica is finalized): for data that will not be read again soon, so the cache keeps other data and new writes reuse freed pages."},
	{"dfs.datanode.du.reserved", "0", "Bytes per volume a DataNode leaves free for other uses."},
	{"dfs.datanode.failed.volumes.tolerated", "0", "Number of volumes that may fail before a DataNode stops serving."},
	{"dfs.datanode.fsdataset.volume.choosing.policy", "", "Policy choosing the volume for a new block; empty means round-robin (Hadoop's RoundRobinVolumeChoosingPolicy)."},
	{"dfs.datanode.hostname", "", "Host name or address a DataNode reports to the NameNode; empty: slave.host.name, else per dfs.datanode.dns.interface."},
	{"dfs.datanode.http.address", "127.0.0.1:9864", "DataNode HTTP server address (host:port); strata's default binds loopback (Hadoop: 0.0.0.0:9864)."},
	{"dfs.datanode.ipc.address", "127.0.0.1:9867", "DataNode IPC server address (host:port); strata's default binds loopback (Hadoop: 0.0.0.0:9867)."},
	{"dfs.datanode.kerberos.principal", "", "The DataNode's Kerberos principal; _HOST becomes the DataNode's host name (e.g. dn/_HOST@REALM). Only it may speak DatanodeProtocol to the NameNode."},
	{"dfs.datanode.keytab.file", "", "Keytab file of the DataNode's Kerberos principal (kerberos mode)."},
	{"dfs.datanode.max.transfer.threads", "4096", "Maximum concurrent data-transfer connections a DataNode serves."},
	{"dfs.datanode.readahead.bytes", "4194304", "Bytes a DataNode asks the kernel to read ahead of a block read (posix_fadvise WILLNEED), so the disk works while the network sends; 0 leaves it to the kernel's own readahead."},
	{"dfs.datanode.scan.period.hours", "504", "Hours between two verifications of every replica by the block scanner; negative disables it."},
	{"dfs.datanode.socket.reuse.keepalive", "4000", "Milliseconds an idle DataTransferProtocol connection waits for the next op."},
	{"dfs.datanode.socket.write.timeout", "480000", "Milliseconds one write to a data-transfer peer may block before the DataNode gives up on the connection; a writing client allows this plus 5000 per pipeline node (0: no timeout for the client)."},
	{"dfs.datanode.use.datanode.hostname", "false", "Whether DataNodes connect to other DataNodes (pipeline mirrors, replica transfers) by the host names those report rather than their IP addresses."},
	{"dfs.domain.socket.path", "", "UNIX domain socket shared by DataNode and clients for short-circuit reads; empty disables it."},
	{"dfs.encrypt.data.transfer", "false", "Whether DataTransferProtocol connections are encrypted (SASL privacy with data encryption keys from the NameNode's getDataEncryptionKey); needs dfs.block.access.token.enable."},
	{"dfs.encrypt.data.transfer.algorithm", "", "DIGEST-MD5 cipher of encrypted data transfer: rc4, or empty for rc4 as well (the 40- and 56-bit variants are never offered: the offer is unauthenticated; Hadoop's 3des is not supported)."},
	{"dfs.encrypt.data.transfer.cipher.key.bitlength", "128", "Bits of the AES keys of data transfer with dfs.encrypt.data.transfer.cipher.suites set: 128, 192 or 256."},
	{"dfs.encrypt.data.transfer.cipher.suites", "", "AES/CTR/NoPadding to switch privacy-protected data transfer from DIGEST-MD5's cipher to AES/CTR after the handshake; empty: none."},
	{"dfs.ha.namenode.id", "", "This NameNode's id within its nameservice (dfs.ha.namenodes.<ns>); unset: the member whose RPC address is local."},
	{"dfs.heartbeat.interval", "3", "Seconds between DataNode heartbeats to the NameNode."},
	{"dfs.hosts", "", "File of DataNodes (host or host:port per line, # comments) allowed to register; empty allows all. With CombinedHostFileManager, the JSON hosts file."},
	{"dfs.hosts.exclude", "", "File of DataNodes (host or host:port per line) to decommission; read at start and by dfsadmin -refreshNodes."},
	{"dfs.ls.limit", "1000", "Maximum entries the NameNode returns in one getListing page."},
	{"dfs.namenode.acls.enabled", "true", "Whether the NameNode supports ACLs (setAcl, getAclStatus, ...); ACLs already set are still enforced."},
	{"dfs.namenode.checkpoint.period", "3600", "Seconds between namespace checkpoints (fsimage plus edits)."},
	{"dfs.namenode.checkpoint.txns", "1000000", "Uncheckpointed transactions that force a checkpoint before dfs.namenode.checkpoint.period expires."},
	{"dfs.namenode.delegation.key.update-interval", "86400000", "Milliseconds between rolls of the NameNode's delegation token master key."},
	{"dfs.namenode.delegation.token.always-use", "false", "Issue delegation tokens even with simple authentication (Hadoop's switch for tests)."},
	{"dfs.namenode.delegation.token.max-lifetime", "604800000", "Milliseconds a delegation token may be renewed for at most, from its issue."},
	{"dfs.namenode.delegation.token.renew-interval", "86400000", "Milliseconds a delegation token stays valid after its issue or last renewal."},
	{"dfs.namenode.enable.retrycache", "true", "Whether the NameNode answers a retried at-most-once call (create, append, delete, rename, rename2, updatePipeline) with its first answer instead of running it again."},
	{"dfs.namenode.fs-limits.max-component-length", "255", "Maximum bytes in one path component; 0 disables the check."},
	{"dfs.namenode.fs-limits.max-directory-items", "1048576", "Maximum number of entries in one directory."},
	{"dfs.namenode.fs-limits.max-xattr-size", "16384", "Maximum bytes of an extended attribute's name and value together (at most 32768)."},
	{"dfs.namenode.fs-limits.max-xattrs-per-inode", "32", "Maximum user-visible (user and trusted) extended attributes on one inode."},
	{"dfs.namenode.fs-limits.min-block-size", "1048576", "Smallest block size in bytes a file may be created with."},
	{"dfs.namenode.handler.count", "10", "Number of NameNode RPC server handlers."},
	{"dfs.namenode.heartbeat.recheck-interval", "300000", "Milliseconds between NameNode checks for dead DataNodes (dead after 2*recheck + 10*heartbeat)."},
	{"dfs.namenode.hosts.provider.classname", "org.apache.hadoop.hdfs.server.blockmanagement.HostFileManager", "Hosts file format: HostFileManager (dfs.hosts and dfs.hosts.exclude) or CombinedHostFileManager (JSON in dfs.hosts with adminState and maintenanceExpireTimeInMS)."},
	{"dfs.namenode.http-address", "127.0.0.1:9870", "NameNode web UI and WebHDFS address (host:port); strata's default (Hadoop binds 0.0.0.0:9870)."},
	{"dfs.namenode.kerberos.principal", "", "The NameNode's Kerberos principal; _HOST becomes the host name of its RPC address (e.g. nn/_HOST@REALM). Its user is the superuser."},
	{"dfs.namenode.keytab.file", "", "Keytab file of the NameNode's Kerberos principal (kerberos mode)."},
	{"dfs.namenode.maintenance.replication.min", "1", "Live replicas a block keeps on in-service DataNodes while others are on nodes in maintenance."},
	{"dfs.namenode.name.dir", "file://${hadoop.tmp.dir}/dfs/name", "Comma-separated directories where the NameNode stores fsimage and edits."},
	{"dfs.namenode.posix.acl.inheritance.enabled", "true", "Whether a new file or directory under a default ACL takes the client's permission before its umask (Hadoop 3's POSIX ACL inheritance) rather than after it."},
	{"dfs.namenode.reconstruction.pending.timeout-sec", "300", "Seconds before a scheduled replica copy that was not reported done is scheduled again."},
	{"dfs.namenode.redundancy.interval.seconds", "3", "Seconds between runs of the NameNode replication monitor."},
	{"dfs.namenode.replication.max-streams", "2", "Replica copies the NameNode schedules from one DataNode at a time."},
	{"dfs.namenode.replication.min", "1", "Replicas a block needs before its file can be closed."},
	{"dfs.namenode.retrycache.expirytime.millis", "600000", "Milliseconds a NameNode retry cache entry is kept."},
	{"dfs.namenode.retrycache.heap.percent", "0.03f", "Percent of the memory limit (GOMEMLIMIT; 1 GiB without one) the NameNode retry cache may take, as an entry count: the power of two nearest percent/100 × limit / 8, as Hadoop sizes it."},
	{"dfs.namenode.rpc-address", "127.0.0.1:8020", "NameNode RPC address (host:port); strata's default (Hadoop derives it from fs.defaultFS)."},
	{"dfs.namenode.safemode.extension", "30000", "Milliseconds the NameNode stays in safe mode after the threshold is reached."},
	{"dfs.namenode.safemode.threshold-pct", "0.999f", "Fraction of blocks that must be minimally replicated to leave safe mode; <= 0 leaves at once, > 1 stays."},
	{"dfs.namenode.xattrs.enabled", "true", "Whether the NameNode supports extended attributes (setXAttr, getXAttrs, ...)."},
	{"dfs.nameservices", "", "Comma-separated HA nameservice ids; each has dfs.ha.namenodes.<ns> and dfs.namenode.rpc-address.<ns>.<nn> (and http-address), and hdfs://<ns> names it."},
	{"dfs.permissions.enabled", "true", "Whether HDFS checks permissions."},
	{"dfs.permissions.superusergroup", "supergroup", "Group whose members are HDFS superusers."},
	{"dfs.replication", "3", "Default replication factor of new files."},
	{"dfs.replication.max", "512", "Largest replication factor a file may have."},
	{"dfs.snapshotdiff-report.limit", "1000", "Most entries one getSnapshotDiffReportListing reply carries (0 or less: 1000); clients ask again for the rest."},
	{"dfs.storage.policy.enabled", "true", "Whether storage policies (HOT, COLD, ALL_SSD, ...) may be set."},
	{"dfs.web.authentication.kerberos.keytab", "", "Keytab of the NameNode's WebHDFS SPNEGO principal; empty: hadoop.http.authentication.kerberos.keytab."},
	{"dfs.web.authentication.kerberos.principal", "", "The NameNode's WebHDFS SPNEGO principal (WebHDFS needs SPNEGO whenever hadoop.security.authentication is kerberos); empty: hadoop.http.authentication.kerberos.principal."},
	{"fixedlengthinputformat.record.length", "0", "Record length in bytes for FixedLengthInputFormat (required by it)."},
	{"fs.defaultFS", "file:///", "Default file system URI; paths without a scheme resolve against it, e.g. hdfs://namenode:8020."},
	{"fs.permissions.umask-mode", "022", "Umask for new files and directories, octal (022) or symbolic (u=rwx,g=rx,o=rx)."},
	{"fs.trash.checkpoint.interval", "0", "Minutes between two trash checkpoints by the NameNode's trash emptier; 0 or more than fs.trash.interval: fs.trash.interval."},
	{"fs.trash.interval", "0", "Minutes a trash checkpoint is kept before the NameNode deletes it; 0 turns trash off (dfs -rm deletes at once). Clients use the NameNode's value."},
	{"hadoop.http.authentication.cookie.domain", "", "Domain attribute of the hadoop.auth cookie the web endpoints set after authentication (empty: the host that served it)."},
	{"hadoop.http.authentication.cookie.path", "/", "Path attribute of the hadoop.auth cookie."},
	{"hadoop.http.authentication.kerberos.keytab", "", "Keytab holding the keys of hadoop.http.authentication.kerberos.principal (required with type kerberos)."},
	{"hadoop.http.authentication.kerberos.principal", "HTTP/_HOST", "The web endpoints' SPNEGO service principal; _HOST is the server's host name, and a principal without @REALM takes krb5.conf's default realm."},
	{"hadoop.http.authentication.signature.secret.file", "", "File whose contents sign hadoop.auth cookies (share it so daemons accept each other's cookies); empty: a random secret per daemon."},
	{"hadoop.http.authentication.simple.anonymous.allowed", "true", "With type simple, whether a web request without user.name is served (as dr.who); false answers it 403."},
	{"hadoop.http.authentication.token.validity", "36000", "Seconds a hadoop.auth cookie is accepted after the SPNEGO authentication that issued it."},
	{"hadoop.http.authentication.type", "simple", "Authentication of the web endpoints and WebHDFS: simple (user.name is trusted) or kerberos (SPNEGO, curl --negotiate)."},
	{"hadoop.http.idle_timeout.ms", "60000", "Milliseconds an HTTP server keeps an idle keep-alive connection open."},
	{"hadoop.rpc.protection", "authentication", "SASL protection of Kerberos RPC connections, a comma list of authentication, integrity (signed) and privacy (encrypted); the strongest both sides list is used."},
	{"hadoop.security.auth_to_local", "DEFAULT", "Rules mapping Kerberos principals to user names (RULE:[n:fmt](regex)s/pattern/replacement/g/L and DEFAULT, one per line)."},
	{"hadoop.security.auth_to_local.mechanism", "hadoop", "hadoop: a principal no rule maps, or a name left with / or @, is refused; mit: both are kept as they are."},
	{"hadoop.security.authentication", "simple", "Authentication method: simple (the client's user name is trusted) or kerberos."},
	{"hadoop.security.sensitive-config-keys", `secret$,password$,username$,ssl.keystore.pass$,fs.s3.*[Ss]ecret.?[Kk]ey,fs.s3a.*.server-side-encryption.key,fs.s3a.encryption.algorithm,fs.s3a.encryption.key,fs.azure\.account.key.*,credential$,oauth.*secret,oauth.*password,oauth.*token,hadoop.security.sensitive-config-keys`, "Comma-separated regular expressions; a setting whose name any of them matches anywhere is shown as <redacted> on web pages (Hadoop's ConfigRedactor)."},
	{"hadoop.tmp.dir", "/tmp/hadoop-${user.name}", "Base directory for temporary files and the default data directories."},
	{"io.file.buffer.size", "4096", "Buffer size in bytes for sequential file reads and writes."},
	{"ipc.client.connect.timeout", "20000", "Milliseconds an RPC client waits to establish a connection to a server."},
	{"ipc.client.connection.maxidletime", "10000", "Milliseconds a client keeps an idle RPC connection; servers close idle connections after twice this (see ipc.client.idlethreshold) and connections stalled in the middle of a request after twice this."},
	{"ipc.client.idlethreshold", "4000", "Open connections above which an RPC server closes idle ones."},
	{"ipc.maximum.data.length", "134217728", "Largest RPC message in bytes a server accepts."},
	{"ipc.server.handler.queue.size", "100", "RPC calls allowed in a server's call queue per handler."},
	{"ipc.server.max.connections", "0", "Most connections an RPC server keeps open; more are closed at once. 0: no limit."},
	{"mapred.child.java.opts", "", "Java options of task children (the papers' Hadoop 1 setting; mapreduce.{map,reduce}.java.opts take precedence): strata has no JVM and reads only -Xmx, the heap a task's memory cap is derived from when mapreduce.{map,reduce}.memory.mb is unset (cap = heap / mapreduce.job.heap.memory-mb.ratio, rounded up to a MiB)."},
	{"mapred.tasktracker.dns.interface", "default", "Network interface whose address a TaskTracker advertises when slave.host.name is unset; default: the address it binds, else the one that reaches the JobTracker (Hadoop: the host's DNS name)."},
	{"mapred.tasktracker.map.tasks.maximum", "2", "Map tasks a TaskTracker runs at the same time."},
	{"mapred.tasktracker.reduce.tasks.maximum", "2", "Reduce tasks a TaskTracker runs at the same time."},
	{"mapreduce.cluster.acls.enabled", "true", "Whether the JobTracker checks job ACLs: killing a job then needs its owner, a mapreduce.cluster.administrators member or one named by the job's mapreduce.job.acl-modify-job (strata's default; Hadoop's is false, which lets anyone kill any job)."},
	{"mapreduce.cluster.administrators", " ", "ACL (\"users groups\", * for everyone) of the MapReduce administrators, who may kill any job; the JobTracker's own user always is one."},
	{"mapreduce.cluster.local.dir", "${hadoop.tmp.dir}/mapred/local", "Comma-separated local directories for intermediate MapReduce data."},
	{"mapreduce.fileoutputcommitter.marksuccessfuljobs", "true", "Whether a successful job writes an empty _SUCCESS file in its output directory."},
	{"mapreduce.framework.name", "local", "How MapReduce jobs run: local (in-process) or classic (JobTracker and TaskTrackers)."},
	{"mapreduce.input.fileinputformat.input.dir.recursive", "false", "Whether input directories are read recursively."},
	{"mapreduce.input.fileinputformat.split.maxsize", "9223372036854775807", "Largest input split in bytes."},
	{"mapreduce.input.fileinputformat.split.minsize", "1", "Smallest input split in bytes."},
	{"mapreduce.input.keyvaluelinerecordreader.key.value.separator", "\t", "Separator between key and value for KeyValueTextInputFormat."},
	{"mapreduce.input.linerecordreader.line.maxlength", "", "Longest line a text record reader accepts; longer lines are skipped. Empty: 64 MiB, and longer is an error."},
	{"mapreduce.job.acl-modify-job", " ", "ACL (\"users groups\", * for everyone) of the users besides the job's owner and the administrators who may kill the job."},
	{"mapreduce.job.acl-view-job", " ", "ACL (\"users groups\", * for everyone) of the users besides the job's owner and the administrators who may read the job's task reports (getTaskReports) and see its web pages, configuration and task logs when mapreduce.cluster.acls.enabled is true."},
	{"mapreduce.job.application.attempt.id", "0", "Attempt number of the job, used in the committer temporary directory names."},
	{"mapreduce.job.complete.cancel.delegation.tokens", "true", "Whether the JobTracker cancels the job's delegation tokens (obtained by the job client in kerberos mode) when the job ends."},
	{"mapreduce.job.hdfs-servers", "", "Comma-separated URIs of file systems besides fs.defaultFS that a job's tasks use; in kerberos mode the job client obtains a delegation token for each."},
	{"mapreduce.job.heap.memory-mb.ratio", "0.8", "Fraction of mapreduce.{map,reduce}.memory.mb counted as a task's heap, which sizes the reduce's shuffle memory (Hadoop derives -Xmx from it)."},
	{"mapreduce.job.jvm.numtasks", "1", "Task attempts of a job that one task child process runs in turn on a TaskTracker, maps and reduces in children of their own (Hadoop's JVM reuse); -1: any number. Local mode runs every task in the client's process."},
	{"mapreduce.job.maps", "2", "Default number of map tasks per job; a hint, the input splits decide."},
	{"mapreduce.job.reduce.slowstart.completedmaps", "0.05", "Fraction of a job's maps that must be done before its reduces are scheduled; they fetch the other maps' outputs as those finish."},
	{"mapreduce.job.reduces", "1", "Default number of reduce tasks per job."},
	{"mapreduce.jobhistory.done-dir", "${hadoop.tmp.dir}/mapred/history/done", "Directory where the JobTracker keeps finished jobs' histories (<job id>.json), on the JobTracker's own default file system, as the JobTracker's user; read from the JobTracker's configuration, never a job's (strata job -history reads it from its own)."},
	{"mapreduce.jobtracker.address", "local", "JobTracker RPC address (host:port), or local to run jobs in-process."},
	{"mapreduce.jobtracker.expire.trackers.interval", "600000", "Milliseconds without a heartbeat after which the JobTracker declares a TaskTracker lost and re-runs its work."},
	{"mapreduce.jobtracker.heartbeat.interval", "1000", "Milliseconds between TaskTracker heartbeats, as the JobTracker tells them (strata key; Hadoop derives it from the cluster size)."},
	{"mapreduce.jobtracker.http.address", "127.0.0.1:50030", "JobTracker web UI address (host:port); strata's default binds loopback (Hadoop: 0.0.0.0:50030)."},
	{"mapreduce.jobtracker.kerberos.principal", "", "The JobTracker's Kerberos principal; _HOST becomes the host name of its address (e.g. jt/_HOST@REALM)."},
	{"mapreduce.jobtracker.keytab.file", "", "Keytab file of the JobTracker's Kerberos principal (kerberos mode)."},
	{"mapreduce.jobtracker.retiredjobs.cache.size", "1000", "Finished jobs the JobTracker keeps in memory for strata job -list and -status; older ones are only in the job history."},
	{"mapreduce.jobtracker.staging.root.dir", "${hadoop.tmp.dir}/mapred/staging", "Directory on the default file system under which job clients stage what the tasks need (a user program's binary)."},
	{"mapreduce.local.map.tasks.maximum", "", "Tasks the local job runner runs at once; empty means the number of CPUs."},
	{"mapreduce.map.java.opts", "", "Java options of map task children; only -Xmx is read, as for mapred.child.java.opts, which it overrides."},
	{"mapreduce.map.maxattempts", "4", "Attempts per map task before the job fails."},
	{"mapreduce.map.memory.mb", "1024", "Megabytes of resident memory a map attempt's process tree (the task child and what it starts) may use before its TaskTracker kills it; 0 or less: no cap."},
	{"mapreduce.map.output.compress", "false", "Whether map outputs are compressed before the shuffle."},
	{"mapreduce.map.output.compress.codec", "org.apache.hadoop.io.compress.DefaultCodec", "Codec for compressed map outputs (Hadoop class name)."},
	{"mapreduce.map.sort.spill.percent", "0.80", "Fill fraction of the map sort buffer at which a background spill starts."},
	{"mapreduce.map.speculative", "true", "Whether slow map tasks may get speculative duplicate attempts."},
	{"mapreduce.output.fileoutputformat.compress", "false", "Whether job output files are compressed."},
	{"mapreduce.output.fileoutputformat.compress.codec", "", "Codec for compressed job output (gzip or deflate; Hadoop class names accepted)."},
	{"mapreduce.output.textoutputformat.separator", "\t", "Separator between key and value in text output."},
	{"mapreduce.randomtextwriter.bytespermap", "1073741824", "Bytes of text each RandomTextWriter map writes."},
	{"mapreduce.randomwriter.bytespermap", "1073741824", "Bytes each RandomWriter map writes."},
	{"mapreduce.reduce.java.opts", "", "Java options of reduce task children; only -Xmx is read, as for mapred.child.java.opts, which it overrides."},
	{"mapreduce.reduce.maxattempts", "4", "Attempts per reduce task before the job fails."},
	{"mapreduce.reduce.memory.mb", "1024", "Megabytes of resident memory a reduce attempt's process tree may use before its TaskTracker kills it; 0 or less: no cap."},
	{"mapreduce.reduce.shuffle.connect.timeout", "180000", "Milliseconds a reducer waits to connect to a map output server."},
	{"mapreduce.reduce.shuffle.input.buffer.percent", "0.70", "Fraction of a reduce's heap (see mapreduce.job.heap.memory-mb.ratio) that holds fetched map outputs during the shuffle."},
	{"mapreduce.reduce.shuffle.memory.limit.percent", "0.25", "Largest fraction of the shuffle memory one map output may take; larger ones go straight to disk."},
	{"mapreduce.reduce.shuffle.merge.percent", "0.66", "Fill fraction of the shuffle buffer at which an in-memory merge starts."},
	{"mapreduce.reduce.shuffle.parallelcopies", "5", "Map outputs a reducer fetches in parallel during the shuffle."},
	{"mapreduce.reduce.shuffle.read.timeout", "180000", "Milliseconds a reducer waits on a map output fetch connection before giving up on it."},
	{"mapreduce.reduce.speculative", "true", "Whether slow reduce tasks may get speculative duplicate attempts."},
	{"mapreduce.task.io.sort.factor", "10", "Number of streams merged at once while sorting."},
	{"mapreduce.task.io.sort.mb", "100", "Map-side sort buffer size in MiB."},
	{"mapreduce.task.profile", "false", "Whether the attempts selected by mapreduce.task.profile.maps/.reduces write a pprof CPU profile, userlogs/<job>/<attempt>.pprof beside their stderr log (Hadoop writes a JVM profiler's profile.out)."},
	{"mapreduce.task.profile.maps", "0-2", "Map tasks profiled when mapreduce.task.profile is set (Hadoop's integer ranges: 0-2,5,9-)."},
	{"mapreduce.task.profile.reduces", "0-2", "Reduce tasks profiled when mapreduce.task.profile is set (integer ranges, as .maps)."},
	{"mapreduce.task.timeout", "600000", "Milliseconds a task may go without reporting progress before it is killed; 0 disables."},
	{"mapreduce.tasktracker.http.address", "127.0.0.1:50060", "TaskTracker HTTP server address (host:port); serves map outputs to the shuffle. strata's default binds loopback (Hadoop: 0.0.0.0:50060)."},
	{"mapreduce.tasktracker.kerberos.principal", "", "The TaskTrackers' Kerberos principal; _HOST becomes the tracker's host name (e.g. tt/_HOST@REALM). Only it may speak InterTrackerProtocol."},
	{"mapreduce.tasktracker.keytab.file", "", "Keytab file of the TaskTracker's Kerberos principal (kerberos mode)."},
	{"mapreduce.tasktracker.outofband.heartbeat", "true", "Whether a TaskTracker heartbeats as soon as an attempt ends or asks to commit, instead of at the next interval (strata's default; Hadoop's is false)."},
	{"mapreduce.tasktracker.taskcontroller", "org.apache.hadoop.mapred.DefaultTaskController", "How a TaskTracker runs attempts: DefaultTaskController runs them as the TaskTracker's own OS user; org.apache.hadoop.mapred.LinuxTaskController, on a TaskTracker running as root, runs each as the job's user (its uid, gid and groups), with its work and log dirs owned by that user; unknown users and uids below 1000 (Hadoop's min.user.id; root among them) are refused."},
	{"mapreduce.tasktracker.taskmemorymanager.monitoringinterval", "5000", "Milliseconds between a TaskTracker's checks of its attempts' memory use."},
	{"mapreduce.terasort.output.replication", "1", "Replication factor of TeraSort's output files."},
	{"net.topology.node.switch.mapping.impl", "org.apache.hadoop.net.ScriptBasedMapping", "How the NameNode finds racks: org.apache.hadoop.net.ScriptBasedMapping (net.topology.script.file.name) or org.apache.hadoop.net.TableMapping (net.topology.table.file.name)."},
	{"net.topology.script.file.name", "", "Script printing the rack of each address it is given; unset: every node on /default-rack."},
	{"net.topology.script.number.args", "100", "Addresses given to one run of the topology script at most."},
	{"net.topology.table.file.name", "", "File of \"host rack\" lines for TableMapping."},
	{"nfs.exports.allowed.hosts", "* rw", "Hosts that may use the NFS gateway: ';'-separated entries of a host (name, address, CIDR block or regular expression) and rw or ro (default ro); the first match decides."},
	{"nfs.kerberos.principal", "", "Kerberos principal of the NFS gateway (strata nfs3), _HOST for the machine's name; with nfs.keytab.file it logs in from the keytab and acts for users as a proxy user (kerberos mode)."},
	{"nfs.keytab.file", "", "Keytab file of the NFS gateway's principal (nfs.kerberos.principal)."},
	{"nfs.server.port", "2049", "TCP port of the NFSv3 gateway (strata nfs3), which serves MOUNT on the same port."},
	{"nfs.stream.timeout", "600000", "Milliseconds the NFS gateway keeps an idle file's HDFS output stream open before closing it."},
	{"slave.host.name", "", "Host name or address a TaskTracker (and a DataNode without dfs.datanode.hostname) reports and is named by, tracker_<host>:<port>; empty: per the dns.interface keys."},
	{"strata.client.read-ahead.bytes", "4194304", "Bytes an HDFS client reads ahead of its consumer in each file it reads sequentially (in 1 MiB chunks, at least one; 0 turns it off: one chunk at a time), so that network, checksum checks and the consumer's own writes overlap. It grows with demand: a reader that stops early costs one 64 KiB chunk."},
	{"strata.datanode.direct-io.write", "false", "Whether DataNodes write block files with O_DIRECT, bypassing the page cache."},
	{"strata.datanode.http.cors.allowed-origins", "", "Comma-separated origins (scheme://host:port) besides the NameNodes' web UIs (dfs.namenode.http-address) whose pages may call a DataNode's WebHDFS across origins (CORS)."},
	{"strata.fuse.kerberos.principal", "", "Kerberos principal a FUSE mount (strata fuse) logs in as from strata.fuse.keytab.file instead of the mounting user's ticket cache (kerberos mode)."},
	{"strata.fuse.keytab.file", "", "Keytab file of strata.fuse.kerberos.principal."},
	{"strata.ha.raft.election.timeout.ms", "1000", "Milliseconds a Raft election may take before a NameNode of an HA nameservice starts another (hashicorp/raft ElectionTimeout)."},
	{"strata.ha.raft.heartbeat.timeout.ms", "1000", "Milliseconds a standby NameNode hears no active before it calls an election; failover takes about this plus an election."},
	{"strata.ha.raft.leader-lease.timeout.ms", "500", "Milliseconds an active NameNode that reaches no quorum keeps serving before it steps down; must be below the heartbeat timeout."},
	{"strata.ha.raft.snapshot.interval.ms", "30000", "Milliseconds between checks whether dfs.namenode.checkpoint.txns edits accumulated since a NameNode's last Raft snapshot (its checkpoint)."},
	{"strata.ha.raft.trailing-logs", "10240", "Raft entries a NameNode keeps after a snapshot for members that lag a little; a member further behind is sent the snapshot."},
	{"strata.http.pprof.enabled", "false", "Whether every daemon's HTTP server also serves Go's profiler at /debug/pprof/ (off by default: profiles show internals and cost CPU)."},
	{"strata.ipc.sasl.require-wrapped-requests", "false", "In kerberos mode with integrity or privacy, refuse clients that send their requests unwrapped (colinmarc/hdfs does); by default they are served and logged once per connection."},
	{"strata.ipc.server.connection.max-inflight", "128", "Calls one RPC connection may have between the read of a request and the write of its reply; its reader waits past that."},
	{"strata.ipc.server.handlers.max", "1024", "Calls an RPC server handles at once over all connections."},
	{"strata.ipc.server.write.timeout", "60000", "Milliseconds an RPC server waits to write one reply before closing the connection of a client that does not read."},
	{"strata.local.datanodes", "3", "Number of DataNodes a local (single-process) strata cluster starts."},
	{"strata.mapreduce.speculative.lag", "60000", "Milliseconds a task must have run (and twice the mean time of its job's finished tasks of its kind) before the JobTracker starts a speculative attempt of it."},
	{"strata.mover.timeout", "600", "Seconds strata mover waits for replicas to reach their storage types."},
	{"strata.namenode.snapshot.max-copied-inodes", "1000000", "Most inodes one createSnapshot may copy (strata copies a snapshot's whole subtree, Hadoop records only later changes); a larger subtree is refused."},
	{"strata.namenode.snapshot.max-total-inodes", "10000000", "Most inodes all snapshots together may hold (about 200 bytes of NameNode memory each); a createSnapshot going past it is refused."},
	{"strata.power.watts", "", "Power draw of this machine in watts, for energy estimates; empty means unknown."},
	{"test.build.data", "", "Base directory of strata testdfsio (Hadoop's TestDFSIO) files; empty means /benchmarks/TestDFSIO."},
	{"zones.block.height", "", "Declination height in degrees of the blocks (reduce keys) of strata examples neighbors and neighborstats; empty means chosen from the input size and zones.block.objects."},
	{"zones.block.objects", "100000", "Objects per block the neighbour applications aim at when they choose the block size."},
	{"zones.block.width", "", "Right-ascension width in degrees at the equator of the neighbour applications' blocks (wider towards the poles); empty means the block height."},
	{"zones.input.format", "binary", "Catalogue format the neighbour applications read: binary (24-byte records, docs/format/sky-catalogue.md) or text (id ra dec lines)."},
	{"zones.maxtheta", "60", "Largest distance in arcseconds strata examples neighborstats counts pairs to, in 1-arcsecond bins."},
	{"zones.skygen.cluster.fraction", "0.5", "Fraction of the objects strata examples skygen puts in clusters when zones.skygen.distribution is clustered."},
	{"zones.skygen.cluster.sigma", "3", "Gaussian scatter in arcseconds (per axis) of clustered objects around their cluster centre."},
	{"zones.skygen.clusters", "0", "Number of cluster centres of a clustered catalogue; 0 means one per 100 objects."},
	{"zones.skygen.distribution", "uniform", "How strata examples skygen places objects: uniform on the sphere, or clustered (Neyman-Scott)."},
	{"zones.skygen.format", "binary", "Catalogue format strata examples skygen writes: binary (24-byte records) or text (id ra dec lines)."},
	{"zones.skygen.seed", "0", "Seed of strata examples skygen's random generator; the same seed gives the same catalogue."},
	{"zones.theta", "60", "Radius in arcseconds within which strata examples neighbors finds pairs of objects."},
	{"zones.zone.height", "", "Height in arcseconds of the zones (sub-blocks) the neighbour applications' reducers sort objects into; empty means the search radius."},
}

// deprecations maps Hadoop's old key names to their replacements, as
// Hadoop's DeprecationContext does. Setting an old name sets the new one
// and records the warning "<old> is deprecated. Instead, use <new>";
// getting an old name gets the new one. Every replacement is a known key.
var deprecations = map[string]string{
	"dfs.block.size":                         "dfs.blocksize",
	"dfs.data.dir":                           "dfs.datanode.data.dir",
	"dfs.name.dir":                           "dfs.namenode.name.dir",
	"dfs.permissions":                        "dfs.permissions.enabled",
	"dfs.umaskmode":                          "fs.permissions.umask-mode",
	"fs.default.name":                        "fs.defaultFS",
	"io.sort.factor":                         "mapreduce.task.io.sort.factor",
	"io.sort.mb":                             "mapreduce.task.io.sort.mb",
	"io.sort.spill.percent":                  "mapreduce.map.sort.spill.percent",
	"mapred.compress.map.output":             "mapreduce.map.output.compress",
	"mapred.job.tracker":                     "mapreduce.jobtracker.address",
	"mapred.local.dir":                       "mapreduce.cluster.local.dir",
	"mapred.map.max.attempts":                "mapreduce.map.maxattempts",
	"mapred.map.output.compression.codec":    "mapreduce.map.output.compress.codec",
	"mapred.map.tasks":                       "mapreduce.job.maps",
	"mapred.reduce.max.attempts":             "mapreduce.reduce.maxattempts",
	"mapred.reduce.parallel.copies":          "mapreduce.reduce.shuffle.parallelcopies",
	"mapred.min.split.size":                  "mapreduce.input.fileinputformat.split.minsize",
	"mapred.max.split.size":                  "mapreduce.input.fileinputformat.split.maxsize",
	"mapred.textoutputformat.separator":      "mapreduce.output.textoutputformat.separator",
	"mapred.output.compression.codec":        "mapreduce.output.fileoutputformat.compress.codec",
	"mapred.reduce.tasks":                    "mapreduce.job.reduces",
	"mapred.reduce.slowstart.completed.maps": "mapreduce.job.reduce.slowstart.completedmaps",
	"mapred.task.timeout":                    "mapreduce.task.timeout",

	// Hadoop 1 names from the papers' configuration tables (Hadoop's
	// DeprecatedProperties).
	"dfs.datanode.max.xcievers":                 "dfs.datanode.max.transfer.threads",
	"mapred.job.map.memory.mb":                  "mapreduce.map.memory.mb",
	"mapred.job.reduce.memory.mb":               "mapreduce.reduce.memory.mb",
	"mapred.job.reuse.jvm.num.tasks":            "mapreduce.job.jvm.numtasks",
	"mapred.job.shuffle.input.buffer.percent":   "mapreduce.reduce.shuffle.input.buffer.percent",
	"mapred.job.shuffle.merge.percent":          "mapreduce.reduce.shuffle.merge.percent",
	"mapred.map.child.java.opts":                "mapreduce.map.java.opts",
	"mapred.map.tasks.speculative.execution":    "mapreduce.map.speculative",
	"mapred.output.compress":                    "mapreduce.output.fileoutputformat.compress",
	"mapred.reduce.child.java.opts":             "mapreduce.reduce.java.opts",
	"mapred.reduce.tasks.speculative.execution": "mapreduce.reduce.speculative",
	"mapred.task.tracker.http.address":          "mapreduce.tasktracker.http.address",
}

// freePrefixes are key prefixes under which users define their own keys;
// keys under them are never reported as unknown.
var freePrefixes = []string{
	// Per-job parameters of user programs (mappers, reducers, tools): the
	// place for keys like Hadoop jobs' own settings, read with Get.
	"strata.job.",
	// Emulated storage media: strata.media.dirs, strata.media.request.bytes
	// and per-preset overrides strata.media.<preset>.<param>; package
	// internal/media validates them (docs/MEDIA.md).
	"strata.media.",
	// Hadoop's proxy-user keys embed a user name:
	// hadoop.proxyuser.<user>.hosts and hadoop.proxyuser.<user>.groups.
	"hadoop.proxyuser.",
	// Hadoop's HA keys embed the nameservice and NameNode ids:
	// dfs.ha.namenodes.<ns>, dfs.namenode.rpc-address.<ns>.<nn>,
	// dfs.namenode.http-address.<ns>.<nn> and
	// dfs.client.failover.proxy.provider.<ns> (internal/nameservice).
	"dfs.ha.namenodes.",
	"dfs.namenode.rpc-address.",
	"dfs.namenode.http-address.",
	"dfs.client.failover.proxy.provider.",
}

// userNameKey is resolvable in ${...} expansion (as Hadoop's Java system
// property) and readable with Get, but not settable.
const userNameKey = "user.name"

// keys indexes knownKeys by name.
var keys = func() map[string]Key {
	m := make(map[string]Key, len(knownKeys))
	for _, k := range knownKeys {
		m[k.Name] = k
	}
	return m
}()

// KnownKeys returns every key strata knows, sorted by name.
func KnownKeys() []Key {
	return append([]Key(nil), knownKeys...)
}

// LookupKey returns the known key name, if name is one. A deprecated name
// is not known; see Deprecation.
func LookupKey(name string) (Key, bool) {
	k, ok := keys[name]
	return k, ok
}

// Deprecation returns the key that replaces the deprecated key name, if
// name is deprecated.
func Deprecation(name string) (replacement string, ok bool) {
	r, ok := deprecations[name]
	return r, ok
}

// isFree reports whether key lies under a prefix users define freely.
func isFree(key string) bool {
	for _, p := range freePrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// maxSuggestDistance is the largest edit distance Suggest accepts.
const maxSuggestDistance = 3

// suggestCandidates pairs every name Suggest compares against (known and
// deprecated keys) with the key it suggests, in a fixed order.
var suggestCandidates = func() [][2]string {
	var c [][2]string
	for _, k := range knownKeys {
		c = append(c, [2]string{k.Name, k.Name})
	}
	old := make([]string, 0, len(deprecations))
	for o := range deprecations {
		old = append(old, o)
	}
	sort.Strings(old)
	for _, o := range old {
		c = append(c, [2]string{o, deprecations[o]})
	}
	return c
}()

// Suggest returns the known key closest to key (edit distance at most 3,
// ignoring case, a swap of adjacent characters counting as one edit), or ""
// when none is that close. A deprecated name close to key yields its
// replacement. A known key yields itself. Use it in messages like
//
//	conf: unknown key "dfs.replciation" (did you mean "dfs.replication"?)
func Suggest(key string) string {
	if _, ok := keys[key]; ok {
		return key
	}
	lk := strings.ToLower(key)
	best, bestDist := "", maxSuggestDistance+1
	for _, c := range suggestCandidates {
		d := editDistance(lk, strings.ToLower(c[0]), bestDist)
		if d < bestDist {
			best, bestDist = c[1], d
		}
	}
	return best
}

// editDistance returns the optimal-string-alignment distance between a and
// b (insertions, deletions, substitutions and adjacent transpositions), or
// any value >= limit once the distance is known to reach limit.
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d >= limit || -d >= limit {
		return limit
	}
	// Three rows: two back (for transpositions), previous, current.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin >= limit {
			return limit
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
