package blockmgmt

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/storage"
)

// The tests drive a Manager directly: a fake clock, a seeded random
// source, files that are small fakes of the namespace's inodes, and
// DataNodes that exist only as registrations, reports and the commands
// the Manager queues for them. Nothing sleeps and nothing listens.

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const mb = 1 << 20

// fakeFile is a BlockCollection.
type fakeFile struct {
	id     uint64
	repl   int
	policy storage.Policy
	uc     bool
	blocks []*Block
}

func (f *fakeFile) InodeID() uint64                 { return f.id }
func (f *fakeFile) Path() string                    { return fmt.Sprintf("/f%d", f.id) }
func (f *fakeFile) ReplicationFactor() int          { return f.repl }
func (f *fakeFile) EffectivePolicy() storage.Policy { return f.policy }
func (f *fakeFile) IsUnderConstruction() bool       { return f.uc }
func (f *fakeFile) LastBlock() *Block {
	if len(f.blocks) == 0 {
		return nil
	}
	return f.blocks[len(f.blocks)-1]
}

func policy(t testing.TB, name string) storage.Policy {
	t.Helper()
	p, ok := storage.ByName(name)
	if !ok {
		t.Fatalf("no policy %s", name)
	}
	return p
}

type harness struct {
	t      testing.TB
	now    time.Time
	m      *Manager
	blocks *BlockMap
	files  uint64
}

func testConfig() Config {
	return Config{
		MinReplication: 1, HeartbeatExpiry: 630 * time.Second,
		MaxReplicationStreams: 2, ReplicationTimeout: 5 * time.Minute,
		SafeModeThreshold: 0.999, SafeModeExtension: 30 * time.Second,
	}
}

func newHarness(t testing.TB, cfg Config) *harness {
	h := &harness{t: t, now: t0, blocks: NewBlockMap()}
	h.m = New(cfg, h.blocks, Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:    func() time.Time { return h.now },
		Rand:   rand.New(rand.NewPCG(7, 7)),
	})
	return h
}

func (h *harness) advance(d time.Duration) { h.now = h.now.Add(d) }

// vol describes a storage: "dn1-ssd" style ids are built from the node.
type vol struct {
	typ       storage.Type
	remaining int64
}

func disk(remaining int64) vol { return vol{storage.Disk, remaining} }
func ssd(remaining int64) vol  { return vol{storage.SSD, remaining} }

// sid is the storage id of node's i-th volume.
func sid(node string, i int) string { return fmt.Sprintf("%s-s%d", node, i) }

// addNode registers node (ip 10.0.0.<n>) with the given volumes.
func (h *harness) addNode(node string, vols ...vol) {
	h.t.Helper()
	reg := Registration{UUID: node, IP: "10.0.0." + strings.TrimPrefix(node, "dn"), XferPort: 9866}
	for i, v := range vols {
		reg.Storages = append(reg.Storages, StorageReport{ID: sid(node, i), Type: v.typ, Capacity: 100 * v.remaining, Remaining: v.remaining})
	}
	if err := h.m.RegisterDatanode(reg, ""); err != nil {
		h.t.Fatal(err)
	}
	// The (empty) first block report, as a DataNode sends right after
	// registering.
	if _, err := h.m.BlockReport(node, nil); err != nil {
		h.t.Fatal(err)
	}
}

// heartbeat keeps node alive and returns its queued commands.
func (h *harness) heartbeat(node string) []Command {
	return h.m.Heartbeat(Heartbeat{UUID: node})
}

// addFile adds a closed file with one committed block per length, with
// no replicas yet.
func (h *harness) addFile(repl int, pol string, lengths ...int64) (*fakeFile, []*Block) {
	h.files++
	f := &fakeFile{id: 16385 + h.files, repl: repl, policy: policy(h.t, pol)}
	for _, l := range lengths {
		b := NewBlock(h.blocks.LastID()+1, f)
		b.GenStamp = h.blocks.LastGenStamp() + 1
		b.NumBytes = l
		b.Committed = true
		h.blocks.Put(b)
		h.blocks.Note(b.ID, b.GenStamp)
		f.blocks = append(f.blocks, b)
	}
	return f, f.blocks
}

func finalized(b *Block) ReportedReplica {
	return ReportedReplica{ID: b.ID, GenStamp: b.GenStamp, NumBytes: b.NumBytes, Finalized: true}
}

// report sends a full block report for node's i-th storage.
func (h *harness) report(node string, i int, reps ...ReportedReplica) []Command {
	h.t.Helper()
	cmds, err := h.m.BlockReport(node, []StorageBlockReport{{StorageID: sid(node, i), Replicas: reps}})
	if err != nil {
		h.t.Fatal(err)
	}
	return cmds
}

// place reports a good replica of b on each node's first storage.
func (h *harness) place(b *Block, nodes ...string) {
	h.t.Helper()
	for _, n := range nodes {
		if err := h.m.ReceivedDeleted(n, []StorageReceivedDeleted{{StorageID: sid(n, 0), Received: []ReportedReplica{finalized(b)}}}); err != nil {
			h.t.Fatal(err)
		}
	}
}

// holders lists the nodes with a good replica of b, sorted.
func holders(b *Block) []string {
	var out []string
	for _, r := range GoodReplicas(b) {
		out = append(out, r.Storage.DN.UUID)
	}
	sort.Strings(out)
	return out
}

// describe renders commands compactly, e.g. "transfer blk_1 -> dn2/DISK,dn3/DISK".
func describe(cmds []Command) string {
	var out []string
	for _, c := range cmds {
		switch c.Kind {
		case Reregister:
			out = append(out, "reregister")
		case Transfer:
			var ts []string
			for _, t := range c.Targets {
				ts = append(ts, t.Node.UUID+"/"+t.StorageType.String())
			}
			sort.Strings(ts)
			out = append(out, fmt.Sprintf("transfer %s -> %s", short(c.Block.ID), strings.Join(ts, ",")))
		case Move:
			out = append(out, fmt.Sprintf("move %s -> %s", short(c.Block.ID), c.TargetType))
		case Invalidate:
			var bs []string
			for _, b := range c.Blocks {
				bs = append(bs, fmt.Sprintf("%s@%d", short(b.ID), b.GenStamp))
			}
			out = append(out, "invalidate "+strings.Join(bs, ","))
		case Recover:
			out = append(out, fmt.Sprintf("recover %s gs %d->%d len %d", short(c.Block.ID), c.Block.GenStamp, c.NewGenStamp, c.NewLength))
		}
	}
	return strings.Join(out, "; ")
}

// allCommands collects every node's queued commands, as "node: cmds" lines
// for the nodes that have some.
func (h *harness) allCommands(nodes ...string) string {
	var out []string
	for _, n := range nodes {
		if h.m.dns.byUUID[n] == nil {
			continue
		}
		if d := describe(h.heartbeat(n)); d != "" {
			out = append(out, n+": "+d)
		}
	}
	return strings.Join(out, "\n")
}

// short names the n-th block the harness created "b<n>", others by id.
func short(id uint64) string {
	if id >= FirstBlockID {
		return fmt.Sprintf("b%d", id-FirstBlockID+1)
	}
	return fmt.Sprintf("id%d", id)
}
