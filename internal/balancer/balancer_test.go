package balancer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/storage"
)

const mb = 1 << 20

// fakeCluster keeps replicas in memory: a move adds the target's replica
// and drops the source's (what the NameNode's delete hint does).
type fakeCluster struct {
	mu       sync.Mutex
	nodes    []*Node
	capacity int64
	holders  map[uint64][]string // block → node uuids
	size     int64               // every block's size
	moves    []Move
	fail     bool
}

func newFake(capacity int64, racks ...string) *fakeCluster {
	f := &fakeCluster{capacity: capacity, holders: map[uint64][]string{}, size: mb}
	for i, r := range racks {
		f.nodes = append(f.nodes, &Node{UUID: fmt.Sprintf("dn%d", i), IP: fmt.Sprintf("10.0.0.%d", i), XferPort: 9866, Rack: r, Normal: true})
	}
	return f
}

func (f *fakeCluster) used(uuid string) int64 {
	var n int64
	for _, hs := range f.holders {
		for _, h := range hs {
			if h == uuid {
				n += f.size
			}
		}
	}
	return n
}

func (f *fakeCluster) Nodes(ctx context.Context) ([]*Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*Node
	for _, n := range f.nodes {
		c := *n
		u := f.used(n.UUID)
		c.Capacity = map[storage.Type]int64{storage.Disk: f.capacity}
		c.Used = map[storage.Type]int64{storage.Disk: u}
		c.Remaining = map[storage.Type]int64{storage.Disk: f.capacity - u}
		out = append(out, &c)
	}
	return out, nil
}

func (f *fakeCluster) Blocks(ctx context.Context, src *Node, size, minBlockSize int64) ([]Block, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Block
	var total int64
	for id := uint64(1); id <= uint64(len(f.holders)) && total < size; id++ {
		hs := f.holders[id]
		for _, h := range hs {
			if h == src.UUID {
				out = append(out, Block{ID: id, NumBytes: f.size, Holders: append([]string(nil), hs...)})
				total += f.size
			}
		}
	}
	return out, nil
}

func (f *fakeCluster) Move(ctx context.Context, m Move) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return fmt.Errorf("refused")
	}
	f.moves = append(f.moves, m)
	hs := f.holders[m.Block.ID]
	for _, h := range hs {
		if h == m.Target.UUID {
			return fmt.Errorf("duplicate replica of %d on %s", m.Block.ID, m.Target.UUID)
		}
	}
	var out []string
	for _, h := range hs {
		if h != m.Source.UUID {
			out = append(out, h)
		}
	}
	f.holders[m.Block.ID] = append(out, m.Target.UUID)
	return nil
}

func testConfig(out *bytes.Buffer) Config {
	return Config{Threshold: 10, Out: out, Rand: rand.New(rand.NewPCG(1, 2)), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:   func() time.Time { return time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) },
		Sleep: func(context.Context, time.Duration) error { return nil }}
}

// TestBalancesNewNodes: everything on one node of three; the balancer
// moves until each is within the threshold of the mean.
func TestBalancesNewNodes(t *testing.T) {
	f := newFake(100*mb, "/r1", "/r1", "/r1")
	for id := uint64(1); id <= 60; id++ {
		f.holders[id] = []string{"dn0"}
	}
	var out bytes.Buffer
	if st := New(f, testConfig(&out)).Run(context.Background()); st != Success {
		t.Fatalf("status %d\n%s", st, out.String())
	}
	for _, n := range f.nodes {
		u := float64(f.used(n.UUID)) * 100 / float64(f.capacity)
		if u < 10 || u > 30 {
			t.Errorf("%s at %.0f%%, mean 20%%", n.UUID, u)
		}
	}
	if !strings.HasPrefix(out.String(), "Time Stamp               Iteration#  Bytes Already Moved  Bytes Left To Move  Bytes Being Moved\n") ||
		!strings.Contains(out.String(), "The cluster is balanced. Exiting...") {
		t.Errorf("console:\n%s", out.String())
	}
	// Hadoop's columns: %-24s %10d  %19s  %18s  %17s.
	if !regexp.MustCompile(`(?m)^Jan 1, 2026 12:00:00 PM           0  {12}\d\d\.\d\d MB            30\.00 MB           40\.00 MB$`).MatchString(out.String()) {
		t.Errorf("first iteration line:\n%s", out.String())
	}
}

// TestBalancedAtOnce: a cluster within the threshold moves nothing.
func TestBalancedAtOnce(t *testing.T) {
	f := newFake(100*mb, "/r1", "/r1")
	for id := uint64(1); id <= 10; id++ {
		f.holders[id] = []string{fmt.Sprintf("dn%d", id%2)}
	}
	var out bytes.Buffer
	if st := New(f, testConfig(&out)).Run(context.Background()); st != Success || len(f.moves) != 0 {
		t.Fatalf("status %d, %d moves", st, len(f.moves))
	}
}

// TestMovesKeepRackSpread: a block on /r1 and /r2 does not move from
// /r2 to another /r1 node; replicas never double up on one node.
func TestMovesKeepRackSpread(t *testing.T) {
	f := newFake(100*mb, "/r1", "/r1", "/r2", "/r1")
	// dn2 (/r2) is full of blocks also held on dn0; dn3 (/r1) is empty.
	for id := uint64(1); id <= 40; id++ {
		f.holders[id] = []string{"dn0", "dn2"}
	}
	var out bytes.Buffer
	cfg := testConfig(&out)
	cfg.MaxIterations = 3
	New(f, cfg).Run(context.Background())
	for _, m := range f.moves {
		if m.Source.Rack == "/r2" && m.Target.Rack != "/r2" {
			t.Fatalf("block %d moved off its only /r2 replica to %s", m.Block.ID, m.Target.Rack)
		}
	}
	for id, hs := range f.holders {
		seen := map[string]bool{}
		for _, h := range hs {
			if seen[h] {
				t.Fatalf("block %d twice on %s", id, h)
			}
			seen[h] = true
		}
	}
}

// TestNoProgressExits: moves that all fail end the run after the idle
// iterations with Hadoop's message and status.
func TestNoProgressExits(t *testing.T) {
	f := newFake(100*mb, "/r1", "/r1")
	for id := uint64(1); id <= 40; id++ {
		f.holders[id] = []string{"dn0"}
	}
	f.fail = true
	var out bytes.Buffer
	cfg := testConfig(&out)
	cfg.IdleIterations = 3
	if st := New(f, cfg).Run(context.Background()); st != NoMoveProgress {
		t.Fatalf("status %d", st)
	}
	if !strings.Contains(out.String(), "No block has been moved for 3 iterations. Exiting...") {
		t.Errorf("console:\n%s", out.String())
	}
}

// TestExcludedNodesStayPut: an excluded node neither sends nor receives.
func TestExcludedNodesStayPut(t *testing.T) {
	f := newFake(100*mb, "/r1", "/r1", "/r1")
	for id := uint64(1); id <= 60; id++ {
		f.holders[id] = []string{"dn0"}
	}
	var out bytes.Buffer
	cfg := testConfig(&out)
	cfg.Exclude = []string{"10.0.0.2"}
	New(f, cfg).Run(context.Background())
	if f.used("dn2") != 0 {
		t.Fatal("an excluded node received blocks")
	}
	if f.used("dn1") == 0 {
		t.Fatal("nothing moved to the included node")
	}
}
