package namenode

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
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

// freeAddr picks a free port away from the kernel's ephemeral range, so
// that another test's outgoing connection cannot take it between this
// check and the member's listen.
func freeAddr(t *testing.T) string {
	t.Helper()
	for i := 0; i < 100; i++ {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		if l, err := net.Listen("tcp", addr); err == nil {
			l.Close()
			return addr
		}
	}
	t.Fatal("no free port")
	return ""
}

func newHAGroup(t *testing.T, n int) *haGroup {
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
			LeaderLeaseTimeout: 250 * time.Millisecond, SnapshotInterval: time.Second}
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
