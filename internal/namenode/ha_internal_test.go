package namenode

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/nameservice"
)

// haGroup is three in-process members of nameservice "ns" on loopback.
type haGroup struct {
	t    *testing.T
	cfgs []Config
	nns  []*NameNode
}

// handedOut is every address freeAddr has returned in this test binary:
// a port is free again once its probe closes, so without it two members
// of one group could be given the same address.
var handedOut sync.Map

// freeAddr picks a free port away from the kernel's ephemeral range, so
// that another test's outgoing connection cannot take it between this
// check and the member's listen, and never the same one twice.
func freeAddr(t *testing.T) string {
	t.Helper()
	for i := 0; i < 100; i++ {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		if _, taken := handedOut.LoadOrStore(addr, true); taken {
			continue
		}
		if l, err := net.Listen("tcp", addr); err == nil {
			l.Close()
			return addr
		}
	}
	t.Fatal("no free port")
	return ""
}

func newHAGroup(t *testing.T, n int) *haGroup { return newHAGroupWith(t, n, nil) }

// newHAGroupWith is newHAGroup with adjust applied to every member's
// Config before it is formatted.
func newHAGroupWith(t *testing.T, n int, adjust func(*Config)) *haGroup {
	t.Helper()
	var members []nameservice.NameNode
	for i := 0; i < n; i++ {
		members = append(members, nameservice.NameNode{ID: fmt.Sprintf("nn%d", i+1), RPCAddr: freeAddr(t), HTTPAddr: freeAddr(t)})
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("STRATA_TEST_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	g := &haGroup{t: t, nns: make([]*NameNode, n)}
	for _, m := range members {
		cfg := DefaultConfig()
		cfg.NameDir = t.TempDir()
		cfg.RPCAddr, cfg.HTTPAddr = m.RPCAddr, m.HTTPAddr
		cfg.Superuser = "hdfs"
		cfg.SafeModeThreshold, cfg.SafeModeExtension = 0, 0
		cfg.Logger = logger.With("nn", m.ID)
		cfg.HA = &HAConfig{Nameservice: "ns", ID: m.ID, Members: members,
			HeartbeatTimeout: 500 * time.Millisecond, ElectionTimeout: 500 * time.Millisecond,
			LeaderLeaseTimeout: 250 * time.Millisecond, SnapshotInterval: time.Second, TrailingLogs: 10240}
		if adjust != nil {
			adjust(&cfg)
		}
		g.cfgs = append(g.cfgs, cfg)
	}
	if _, err := Format(g.cfgs[0], false); err != nil {
		t.Fatal(err)
	}
	g.start(0)
	for i := 1; i < n; i++ {
		if _, err := BootstrapStandby(g.cfgs[i], false); err != nil {
			t.Fatal(err)
		}
		g.start(i)
	}
	t.Cleanup(func() {
		for _, nn := range g.nns {
			if nn != nil {
				nn.Close()
			}
		}
	})
	return g
}

func (g *haGroup) start(i int) {
	g.t.Helper()
	nn, err := New(g.cfgs[i])
	if err != nil {
		g.t.Fatal(err)
	}
	if err := nn.Start(); err != nil {
		g.t.Fatal(err)
	}
	g.nns[i] = nn
}

func (g *haGroup) stop(i int) {
	g.nns[i].Close()
	g.nns[i] = nil
}

// active waits for exactly one active member and returns its index.
func (g *haGroup) active(timeout time.Duration) int {
	g.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		found := -1
		count := 0
		for i, nn := range g.nns {
			if nn != nil && nn.ServiceState() == HAActive {
				found, count = i, count+1
			}
		}
		if count == 1 {
			return found
		}
		time.Sleep(10 * time.Millisecond)
	}
	g.t.Fatalf("no single active NameNode within %v", timeout)
	return -1
}

func TestHAFailoverKeepsAcknowledgedEdits(t *testing.T) {
	g := newHAGroup(t, 3)
	a := g.active(10 * time.Second)
	ctx := context.Background()
	for i := 0; i < 50; i++ {
		mustOK(t, g.nns[a].Namesystem().Mkdirs(ctx, fmt.Sprintf("/d%d", i), 0o755, true))
	}
	for i, nn := range g.nns {
		if i == a {
			continue
		}
		err := nn.Namesystem().Mkdirs(ctx, "/standby", 0o755, true)
		if !ipc.IsClass(err, ipc.ClassStandby) {
			t.Fatalf("mkdirs on standby %d: %v, want StandbyException", i, err)
		}
	}
	start := time.Now()
	g.stop(a)
	b := g.active(10 * time.Second)
	t.Logf("new active nn%d after %v", b+1, time.Since(start))
	// The new active's namespace holds every acknowledged mkdir.
	deadline := time.Now().Add(5 * time.Second)
	for i := 0; i < 50; i++ {
		for {
			st, err := g.nns[b].Namesystem().FileInfo(ctx, fmt.Sprintf("/d%d", i))
			if err == nil && st != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("/d%d missing on the new active: %v", i, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	mustOK(t, g.nns[b].Namesystem().Mkdirs(ctx, "/after", 0o755, true))
	// The old member comes back as a follower and catches up.
	g.start(a)
	deadline = time.Now().Add(10 * time.Second)
	for {
		if st, err := g.nns[a].Namesystem().FileInfo(ctx, "/after"); err == nil && st != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("restarted member did not catch up")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitDigests waits until every running member has the same namespace.
func (g *haGroup) waitDigests(timeout time.Duration) Digest {
	g.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var ds []Digest
		for _, nn := range g.nns {
			if nn == nil {
				continue
			}
			d, err := nn.NamespaceDigest()
			if err != nil {
				g.t.Fatal(err)
			}
			ds = append(ds, d)
		}
		same := true
		for _, d := range ds[1:] {
			same = same && d == ds[0]
		}
		if same {
			return ds[0]
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("members differ after %v: %+v", timeout, ds)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A member whose disk was lost is bootstrapped again and catches up from
// a snapshot (the log before it is compacted away); then the group grows
// by a member and shrinks by one (membership changes through the Raft
// admin methods).
func TestHAReplaceLostMemberAndMembership(t *testing.T) {
	g := newHAGroupWith(t, 3, func(c *Config) {
		c.CheckpointTxns = 50
		c.HA.TrailingLogs = 10
		c.HA.SnapshotInterval = 100 * time.Millisecond
	})
	a := g.active(10 * time.Second)
	ctx := context.Background()
	for i := 0; i < 300; i++ {
		mustOK(t, g.nns[a].Namesystem().Mkdirs(ctx, fmt.Sprintf("/m/d%d", i), 0o755, true))
	}
	lost := (a + 1) % 3
	g.stop(lost)
	if err := os.RemoveAll(g.cfgs[lost].NameDir); err != nil {
		t.Fatal(err)
	}
	for i := 300; i < 400; i++ {
		mustOK(t, g.nns[a].Namesystem().Mkdirs(ctx, fmt.Sprintf("/m/d%d", i), 0o755, true))
	}
	// Let the active snapshot and compact past what the lost member had.
	waitSnapshotPast(t, g.nns[a], 300)
	if _, err := BootstrapStandby(g.cfgs[lost], false); err != nil {
		t.Fatal(err)
	}
	g.start(lost)
	d := g.waitDigests(20 * time.Second)
	if rebuilds := g.nns[lost].ns.rebuildCount(); rebuilds == 0 {
		t.Errorf("the replaced member caught up without a snapshot")
	}
	t.Logf("replaced %s caught up to txid %d from a snapshot", g.cfgs[lost].HA.ID, d.AppliedTxID)

	// Grow: a fourth member joins (bootstrapped from a running one).
	m4 := nameservice.NameNode{ID: "nn4", RPCAddr: freeAddr(t), HTTPAddr: freeAddr(t)}
	cfg4 := g.cfgs[0]
	cfg4.NameDir = t.TempDir()
	cfg4.RPCAddr, cfg4.HTTPAddr = m4.RPCAddr, m4.HTTPAddr
	ha4 := *cfg4.HA
	ha4.ID = "nn4"
	ha4.Members = append(append([]nameservice.NameNode(nil), g.cfgs[0].HA.Members...), m4)
	cfg4.HA = &ha4
	if _, err := BootstrapStandby(cfg4, false); err != nil {
		t.Fatal(err)
	}
	g.cfgs = append(g.cfgs, cfg4)
	g.nns = append(g.nns, nil)
	g.start(3)
	h := g.nns[a].ha
	if err := h.addMember(as("hdfs"), "nn4", m4.RPCAddr); err != nil {
		t.Fatal(err)
	}
	if err := h.addMember(as("hdfs"), "nn5", ""); err == nil {
		t.Error("addMember without an address succeeded")
	}
	if err := h.addMember(as("mallory"), "nn5", "127.0.0.1:1"); !ipc.IsClass(err, ipc.ClassAccessControl) {
		t.Errorf("mallory's addMember: %v, want AccessControlException", err)
	}
	mustOK(t, g.nns[a].Namesystem().Mkdirs(ctx, "/after-add", 0o755, true))
	g.waitDigests(20 * time.Second)
	// Shrink: remove a standby; the group of three goes on.
	gone := -1
	for i := 0; i < 3; i++ {
		if i != a {
			gone = i
			break
		}
	}
	if err := h.removeMember(as("hdfs"), g.cfgs[gone].HA.ID); err != nil {
		t.Fatal(err)
	}
	g.stop(gone)
	if n := len(g.nns[a].ha.stats().Members); n != 3 {
		t.Errorf("%d members after removing one of four", n)
	}
	mustOK(t, g.nns[a].Namesystem().Mkdirs(ctx, "/after-remove", 0o755, true))
	g.waitDigests(20 * time.Second)
}

// waitSnapshotPast waits up to 20 s for nn to take a snapshot at Raft
// index index or later.
func waitSnapshotPast(t *testing.T, nn *NameNode, index uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for snapshotIndex(nn) < index {
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot at index %d or later (last at %d)", index, snapshotIndex(nn))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func snapshotIndex(nn *NameNode) uint64 {
	v, _ := strconv.ParseUint(nn.ha.node.Raft.Stats()["last_snapshot_index"], 10, 64)
	return v
}

// Standbys take snapshots too (their checkpoints), not only the active.
func TestHAStandbysSnapshot(t *testing.T) {
	g := newHAGroupWith(t, 3, func(c *Config) {
		c.CheckpointTxns = 16
		c.HA.SnapshotInterval = 100 * time.Millisecond
	})
	a := g.active(10 * time.Second)
	ctx := context.Background()
	for i := 0; i < 200; i++ {
		mustOK(t, g.nns[a].Namesystem().Mkdirs(ctx, fmt.Sprintf("/d%d", i), 0o755, true))
	}
	deadline := time.Now().Add(15 * time.Second)
	for i, nn := range g.nns {
		for snapshotIndex(nn) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("nn%d (active %v) took no snapshot", i+1, i == a)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// A leadership transfer to a member that is down fails; the Raft log
// must keep its txids without a gap and the active go on serving
// (Raft refuses proposals while the transfer is in progress: the active
// fences itself and activates again).
func TestHAFailedTransferLeavesNoGap(t *testing.T) {
	g := newHAGroup(t, 3)
	a := g.active(10 * time.Second)
	ctx := context.Background()
	mustOK(t, g.nns[a].Namesystem().Mkdirs(ctx, "/warm", 0o755, true))
	down := (a + 1) % 3
	g.stop(down)
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		ok := 0
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- ok
				return
			default:
			}
			c, cancel := context.WithTimeout(ctx, 3*time.Second)
			if g.nns[a].Namesystem().Mkdirs(c, fmt.Sprintf("/w%d", i), 0o755, true) == nil {
				ok++
			}
			cancel()
		}
	}()
	time.Sleep(200 * time.Millisecond)
	err := g.nns[a].ha.transferTo(ctx, g.cfgs[down].HA.ID)
	t.Logf("transfer to a stopped member: %v", err)
	time.Sleep(500 * time.Millisecond)
	close(stop)
	t.Logf("%d mkdirs acknowledged around the transfer", <-done)
	b := g.active(10 * time.Second)
	for i := 0; i < 3; i++ {
		mustOK(t, g.nns[b].Namesystem().Mkdirs(ctx, fmt.Sprintf("/after%d", i), 0o755, true))
	}
	d := g.waitDigests(10 * time.Second)
	if d.AppliedTxID != d.CommittedTxID {
		t.Fatalf("digest %+v", d)
	}
	for _, nn := range g.nns {
		if nn == nil {
			continue
		}
		if ap, cm := nn.Namesystem().txids(); ap != cm || ap != d.AppliedTxID {
			t.Errorf("member at applied %d committed %d, want %d", ap, cm, d.AppliedTxID)
		}
	}
}

// A member that was down while the leader compacted its log past the
// member's last entry gets a snapshot, then goes on taking new entries
// (its log store starts again after the snapshot).
func TestHALaggingMemberGetsSnapshotThenEntries(t *testing.T) {
	g := newHAGroupWith(t, 3, func(c *Config) {
		c.CheckpointTxns = 40
		c.HA.TrailingLogs = 5
		c.HA.SnapshotInterval = 100 * time.Millisecond
	})
	a := g.active(10 * time.Second)
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		mustOK(t, g.nns[a].Namesystem().Mkdirs(ctx, fmt.Sprintf("/a%d", i), 0o755, true))
	}
	lag := (a + 1) % 3
	g.waitDigests(10 * time.Second)
	g.stop(lag)
	for i := 0; i < 300; i++ {
		mustOK(t, g.nns[a].Namesystem().Mkdirs(ctx, fmt.Sprintf("/b%d", i), 0o755, true))
	}
	waitSnapshotPast(t, g.nns[a], 250)
	g.start(lag)
	g.waitDigests(20 * time.Second)
	for i := 0; i < 50; i++ {
		mustOK(t, g.nns[a].Namesystem().Mkdirs(ctx, fmt.Sprintf("/c%d", i), 0o755, true))
	}
	d := g.waitDigests(20 * time.Second)
	if g.nns[lag].ns.rebuildCount() == 0 {
		t.Error("the lagging member caught up without a snapshot")
	}
	t.Logf("lagging member caught up to txid %d", d.AppliedTxID)
}

// Retries answered by a member that learnt the namespace from a snapshot:
// the snapshot carries the recent edits with rpc ids, so its retry cache
// knows calls made before the snapshot.
func TestHARetryCacheSurvivesSnapshotInstall(t *testing.T) {
	g := newHAGroupWith(t, 3, func(c *Config) {
		c.CheckpointTxns = 20
		c.HA.TrailingLogs = 5
		c.HA.SnapshotInterval = 100 * time.Millisecond
	})
	a := g.active(10 * time.Second)
	rc := &retryClient{t: t, cp: &clientProtocol{nn: g.nns[a], ns: g.nns[a].ns}, id: []byte("client-000000042")}
	if _, err := rc.create(7, 0, "/r/f"); err != nil {
		t.Fatal(err)
	}
	if ok, err := rc.delete(8, 0, "/r/gone-not"); err != nil || ok {
		t.Fatalf("delete of a missing path: %v %v", ok, err)
	}
	rc.mkdir(9, "/r/x")
	if ok, err := rc.delete(10, 0, "/r/x"); err != nil || !ok {
		t.Fatalf("delete: %v %v", ok, err)
	}
	// A member with a wiped disk comes back after the active compacted.
	lost := (a + 1) % 3
	g.stop(lost)
	os.RemoveAll(g.cfgs[lost].NameDir)
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		mustOK(t, g.nns[a].Namesystem().Mkdirs(ctx, fmt.Sprintf("/pad/d%d", i), 0o755, true))
	}
	waitSnapshotPast(t, g.nns[a], 80)
	if _, err := BootstrapStandby(g.cfgs[lost], false); err != nil {
		t.Fatal(err)
	}
	g.start(lost)
	g.waitDigests(20 * time.Second)
	// The restored member becomes the active; the client retries there.
	if err := g.nns[a].ha.transferTo(as("hdfs"), g.cfgs[lost].HA.ID); err != nil {
		t.Fatal(err)
	}
	// The old active learns it lost the leadership a moment later: wait
	// for the restored member to be the only active.
	deadline := time.Now().Add(10 * time.Second)
	for g.nns[lost].ServiceState() != HAActive || g.nns[a].ServiceState() == HAActive {
		if time.Now().After(deadline) {
			t.Fatalf("the restored member %d did not become the only active", lost)
		}
		time.Sleep(10 * time.Millisecond)
	}
	rc.cp = &clientProtocol{nn: g.nns[lost], ns: g.nns[lost].ns}
	if _, err := rc.create(7, 1, "/r/f"); err != nil {
		t.Errorf("retried create on the restored member: %v", err)
	}
	if ok, err := rc.delete(10, 1, "/r/x"); err != nil || !ok {
		t.Errorf("retried delete on the restored member: %v %v, want true", ok, err)
	}
}
