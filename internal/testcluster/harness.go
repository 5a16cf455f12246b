package testcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/storage"
)

// Harness is a running cluster as a test sees it, whichever way its
// daemons run: in this process (New, *Cluster) or as strata processes
// (NewProcess, *Processes). Node indexes count from 0 in the order the
// nodes were added; a stopped node keeps its index, storage and
// addresses. Every method fails the test (t.Fatal) when it cannot do what
// it says, so a test reads as a script of operations.
type Harness interface {
	// Addr is the NameNode's RPC address (the same after restarts); URI
	// is hdfs://Addr.
	Addr() string
	URI() string
	// Dir is the cluster's root directory; NameDir the NameNode's name
	// directory under it.
	Dir() string
	NameDir() string
	// Superuser is the user the NameNode treats as superuser.
	Superuser() string
	// Client returns a strata HDFS client acting as user, closed at
	// cleanup.
	Client(user string) *hdfs.Client
	// ClientConf is a client configuration for the cluster: fs.defaultFS
	// and, with MapReduce, the JobTracker.
	ClientConf() *conf.Configuration
	// LiveDataNodes is how many DataNodes the NameNode counts live.
	LiveDataNodes() int

	// StopNameNode stops the NameNode cleanly (it saves a checkpoint);
	// KillNameNode stops it without one (SIGKILL: process only, an
	// in-process cluster skips the test); StartNameNode starts it again on
	// the same storage and addresses; RestartNameNode is Stop then Start.
	// With Config.NameNodes > 1 (an HA nameservice) Stop and Kill act on
	// the active member and Start starts every stopped member; Addr and
	// NameDir are the first member's and URI is hdfs://ns1.
	StopNameNode()
	KillNameNode()
	StartNameNode()
	RestartNameNode()

	// NumDataNodes is the number of DataNodes ever added; AddDataNode
	// starts one more (with the cluster's volume layout) and returns its
	// index.
	NumDataNodes() int
	AddDataNode() int
	// StopDataNode stops DataNode i (SIGTERM; in-process its Close, which
	// drops its connections as a crash would); KillDataNode kills it
	// (SIGKILL; in-process the same as Stop: a DataNode keeps nothing in
	// memory that a clean stop would save); StartDataNode starts it again
	// on the same storage and transfer address; RestartDataNode is Stop
	// then Start.
	StopDataNode(i int)
	KillDataNode(i int)
	StartDataNode(i int)
	RestartDataNode(i int)
	// DataNodeAddr is DataNode i's transfer address, as block locations
	// name it (the same after restarts).
	DataNodeAddr(i int) string
	// DataNodeByAddr is the index of the DataNode serving at a transfer
	// address, or -1.
	DataNodeByAddr(addr string) int
	// DataNodeStatus is running DataNode i's own report (volumes and
	// whether each failed, counters), as its /status page serves it.
	DataNodeStatus(i int) datanode.Status
	// Host is node i's host as its DataNode and TaskTracker advertise it:
	// their identity. In process a name of the harness's; as processes
	// the address they advertise (dfs.datanode.hostname, slave.host.name
	// unset): 127.0.0.1, or with Config.Hosts node i's own address
	// (HostAddr(DataNodeHost(i))).
	Host(i int) string

	// JobTrackerAddr is the JobTracker's address, "" without MapReduce.
	JobTrackerAddr() string
	// NumTaskTrackers is the number of TaskTrackers.
	NumTaskTrackers() int
	// StopJobTracker, KillJobTracker (SIGKILL; in-process the same as
	// Stop) and StartJobTracker (same address) act on the JobTracker;
	// StopTaskTracker, KillTaskTracker and StartTaskTracker on
	// TaskTracker i. A stopped tracker's attempts are killed; the
	// JobTracker declares it lost after its expiry and re-runs its work.
	StopJobTracker()
	KillJobTracker()
	StartJobTracker()
	StopTaskTracker(i int)
	KillTaskTracker(i int)
	StartTaskTracker(i int)

	// VolumeDir is the directory of DataNode i's volume v.
	VolumeDir(i, v int) string
	// ReplicaFile is the path of DataNode i's data file for blockID, ""
	// when it has none.
	ReplicaFile(i int, blockID uint64) string
	// CorruptReplica flips the byte at off of DataNode i's replica of
	// blockID on disk, as a failing disk would; the checksums stay, so a
	// reader or the block scanner finds the damage.
	CorruptReplica(i int, blockID uint64, off int64)
	// FailVolume makes DataNode i's volume v unusable (the directory is
	// replaced by a file), as a dead disk looks to the volume checker.
	// In-process the DataNode checks its volumes at once; a process finds
	// it at its next periodic check (30 s) or when it restarts.
	FailVolume(i, v int)

	// WaitFor polls cond until it holds or timeout passes, then fails the
	// test naming what it waited for.
	WaitFor(what string, timeout time.Duration, cond func() bool)
	// WaitDataNodes waits until at least n DataNodes are live.
	WaitDataNodes(n int)
	// WaitSafeModeOff waits until the NameNode has left safe mode (after
	// a restart, once the DataNodes have reported enough blocks).
	WaitSafeModeOff()
	// BlockReplicas lists, for each block of p, the storage types of its
	// good replicas as the NameNode reports them.
	BlockReplicas(p string) [][]storage.Type
	// WaitReplicated waits until every block of p has n good replicas.
	WaitReplicated(p string, n int, timeout time.Duration)
	// Close stops every daemon; it is registered with t.Cleanup and safe
	// to call twice.
	Close()
}

var (
	_ Harness = (*Cluster)(nil)
	_ Harness = (*Processes)(nil)
)

// Settings are the configuration keys both implementations give every
// daemon before Config.Conf: fast failure detection and replication, so
// fault tests take seconds. A DataNode is declared dead about 2 s after
// its last heartbeat (2 × recheck + 10 × heartbeat).
var Settings = map[string]string{
	"dfs.heartbeat.interval":                          "100ms",
	"dfs.namenode.heartbeat.recheck-interval":         "500",
	"dfs.namenode.redundancy.interval.seconds":        "200ms",
	"dfs.namenode.reconstruction.pending.timeout-sec": "10",
	"dfs.namenode.safemode.extension":                 "0",
	"dfs.namenode.fs-limits.min-block-size":           "1024",
}

// MapReduceSettings are added with Config.MapReduce: TaskTrackers
// heartbeat every 100 ms and are declared lost after 2 s.
var MapReduceSettings = map[string]string{
	"mapreduce.jobtracker.heartbeat.interval":       "100",
	"mapreduce.jobtracker.expire.trackers.interval": "2000",
}

// volumeTypes is the storage types of each DataNode's volumes.
func (cfg *Config) volumeTypes() []storage.Type {
	if len(cfg.Volumes) == 0 {
		return []storage.Type{storage.SSD, storage.Disk}
	}
	return cfg.Volumes
}

// volumeDir is where both implementations put DataNode i's volume j.
func volumeDir(root string, i, j int, ty storage.Type) string {
	return filepath.Join(root, fmt.Sprintf("dn%d", i), fmt.Sprintf("%s%d", ty, j))
}

// hostName is node i's host name in both implementations.
func hostName(i int) string { return fmt.Sprintf("dn%d", i) }

func testLogger(verbose bool) *slog.Logger {
	if verbose || os.Getenv("STRATA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func waitFor(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("testcluster: timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func blockReplicas(t testing.TB, cl *hdfs.Client, p string) [][]storage.Type {
	t.Helper()
	locs, err := cl.BlockLocations(context.Background(), p)
	if err != nil {
		t.Fatalf("testcluster: block locations of %s: %v", p, err)
	}
	var out [][]storage.Type
	for _, b := range locs {
		out = append(out, b.StorageTypes)
	}
	return out
}

func waitSafeModeOff(t testing.TB, h Harness) {
	t.Helper()
	cl := h.Client(h.Superuser())
	h.WaitFor("the NameNode to leave safe mode", 30*time.Second, func() bool {
		on, err := cl.SafeMode(context.Background(), "get")
		return err == nil && !on
	})
}

func waitReplicated(t testing.TB, h Harness, p string, n int, timeout time.Duration) {
	t.Helper()
	h.WaitFor(fmt.Sprintf("%s to have %d replicas per block", p, n), timeout, func() bool {
		for _, b := range h.BlockReplicas(p) {
			if len(b) != n {
				return false
			}
		}
		return true
	})
}

// replicaFile finds blk_<id> under a DataNode's directory.
func replicaFile(nodeDir string, blockID uint64) string {
	want := fmt.Sprintf("blk_%d", blockID)
	found := ""
	filepath.WalkDir(nodeDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == want {
			found = p
		}
		return nil
	})
	return found
}

func corruptFile(t testing.TB, p string, off int64) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// breakVolume replaces a volume directory by a regular file: the
// volume checker's stat finds "not a directory", for root too (chmod 000
// does not stop root).
func breakVolume(t testing.TB, dir string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatalf("testcluster: failing volume %s: %v", dir, err)
	}
	if err := os.WriteFile(dir, []byte("failed volume\n"), 0o644); err != nil {
		t.Fatalf("testcluster: failing volume %s: %v", dir, err)
	}
}

var (
	binMu   sync.Mutex
	binDir  string
	binPath string
	inMain  bool
)

// RunMain runs a test binary's tests and removes the strata binary that
// Binary built, if any. A package whose tests use the process
// implementation, or MapReduce in process (TaskTrackers run attempts as
// `strata task` children), calls it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testcluster.RunMain(m)) }
func RunMain(m *testing.M) int {
	binMu.Lock()
	inMain = true
	binMu.Unlock()
	code := m.Run()
	binMu.Lock()
	defer binMu.Unlock()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	return code
}

// Binary returns the path of a strata binary built from this module,
// building it on first use (once per test binary). The test binary must
// run under RunMain.
func Binary(t testing.TB) string {
	t.Helper()
	binMu.Lock()
	defer binMu.Unlock()
	if !inMain {
		t.Fatal("testcluster: the strata binary needs TestMain to call testcluster.RunMain")
	}
	if binPath != "" {
		return binPath
	}
	if binDir == "" {
		d, err := os.MkdirTemp("", "strata-testcluster-bin")
		if err != nil {
			t.Fatal(err)
		}
		binDir = d
	}
	p := filepath.Join(binDir, "strata")
	out, err := exec.Command("go", "build", "-o", p, "github.com/stratafs/strata/cmd/strata").CombinedOutput()
	if err != nil {
		t.Fatalf("testcluster: building strata: %v\n%s", err, out)
	}
	binPath = p
	return p
}

var errProcessOnly = errors.New("testcluster: this operation needs the process implementation (NewProcess)")
