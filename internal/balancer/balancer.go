// Package balancer is Hadoop's HDFS balancer: it moves replicas from
// DataNodes whose utilisation is above the cluster's mean to those below
// it until every node is within a threshold of the mean.
//
// Each iteration reads the live DataNodes' storage reports, groups every
// node's storages by type (a replica moves between storages of one type,
// so storage policies hold), and classifies each group against the mean
// utilisation of its type: over-utilised (above mean + threshold), above
// average, below average, under-utilised (below mean − threshold). It
// pairs over-utilised with under-utilised groups, then over-utilised with
// below-average, then above-average with under-utilised — on the same
// rack first — and for each pair asks the NameNode for blocks of the
// source (getBlocks) and moves them: REPLACE_BLOCK to the target, which
// copies from a proxy holding the block (the source, or a replica on the
// target's rack) and reports the new replica with the source as delete
// hint, so that the NameNode removes the source's copy.
//
// Invariants:
//   - A move never puts two replicas of a block on one node, and never
//     reduces the number of racks a block spans.
//   - A block moves at most once per iteration; at most MovesPerNode moves
//     run at once per node, as source, proxy or target.
//   - Between iterations the balancer waits for heartbeats to bring the
//     NameNode's figures up to date.
//   - Nodes being decommissioned, decommissioned or in maintenance, and
//     excluded (or not included) nodes, take no part.
package balancer

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/storage"
)

// Exit statuses, Hadoop's ExitStatus codes.
const (
	Success         = 0
	InProgress      = 1
	AlreadyRunning  = -1
	NoMoveBlock     = -2
	NoMoveProgress  = -3
	IOException     = -4
	IllegalArgument = -5
	Interrupted     = -6
)

// Node is a live DataNode as the balancer sees it.
type Node struct {
	UUID, IP, Host, Rack string
	XferPort             uint32
	// Normal is false for nodes being decommissioned, decommissioned or
	// in maintenance.
	Normal bool
	// Per storage type: capacity, used (DFS or block pool, by policy) and
	// remaining bytes.
	Capacity, Used, Remaining map[storage.Type]int64
}

// Addr is the node's transfer address.
func (n *Node) Addr() string { return fmt.Sprintf("%s:%d", n.IP, n.XferPort) }

// Block is a block with the nodes holding it.
type Block struct {
	ID, GenStamp uint64
	NumBytes     int64
	Holders      []string // DataNode uuids
	Types        []storage.Type
}

// Move is one replica move: Block from Source to a storage of Type on
// Target, copied from Proxy.
type Move struct {
	Block                 Block
	Source, Target, Proxy *Node
	Type                  storage.Type
}

// Cluster is what the balancer needs of HDFS: the live nodes, a source's
// blocks, and moving one.
type Cluster interface {
	Nodes(ctx context.Context) ([]*Node, error)
	Blocks(ctx context.Context, source *Node, size, minBlockSize int64) ([]Block, error)
	Move(ctx context.Context, m Move) error
}

// Config is a balancer run's parameters.
type Config struct {
	// Threshold is the allowed distance from the mean, in percent
	// (-threshold, default 10).
	Threshold float64
	// Include and Exclude are host names, addresses or address:port of
	// nodes to balance (empty Include: all) and to leave alone.
	Include, Exclude []string
	// IdleIterations is how many iterations without a move end the run
	// (-idleiterations, default 5).
	IdleIterations int
	// MaxSizeToMove bounds what one node sends or receives per iteration
	// (dfs.balancer.max-size-to-move, 10 GB); GetBlocksSize is what one
	// getBlocks asks for (dfs.balancer.getBlocks.size, 2 GB);
	// MinBlockSize the smallest block worth moving
	// (dfs.balancer.getBlocks.min-block-size, 10 MB).
	MaxSizeToMove, GetBlocksSize, MinBlockSize int64
	// MovesPerNode bounds the concurrent moves per node
	// (dfs.datanode.balance.max.concurrent.moves).
	MovesPerNode int
	// Wait is the pause between iterations (2 heartbeats plus a
	// replication interval, as Hadoop).
	Wait time.Duration
	// MaxIterations bounds the run (0: no bound).
	MaxIterations int

	Out    io.Writer    // the console
	Logger *slog.Logger // nil: slog.Default()
	Now    func() time.Time
	Rand   *rand.Rand
	Sleep  func(context.Context, time.Duration) error
}

func (c *Config) defaults() {
	if c.Threshold <= 0 {
		c.Threshold = 10
	}
	if c.IdleIterations == 0 {
		c.IdleIterations = 5
	}
	if c.MaxSizeToMove <= 0 {
		c.MaxSizeToMove = 10 << 30
	}
	if c.GetBlocksSize <= 0 {
		c.GetBlocksSize = 2 << 30
	}
	if c.MovesPerNode <= 0 {
		c.MovesPerNode = 5
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	}
	if c.Sleep == nil {
		c.Sleep = func(ctx context.Context, d time.Duration) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
				return nil
			}
		}
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
}

// maxGetBlocksRounds bounds the getBlocks calls for one task.
const maxGetBlocksRounds = 5

// Balancer runs iterations against one cluster.
type Balancer struct {
	cfg   Config
	c     Cluster
	moved int64 // bytes moved so far
}

// New returns a balancer of c.
func New(c Cluster, cfg Config) *Balancer {
	cfg.defaults()
	return &Balancer{cfg: cfg, c: c}
}

// group is one node's storages of one type.
type group struct {
	node                      *Node
	typ                       storage.Type
	capacity, used            int64
	remaining                 int64
	util                      float64
	toMove                    int64 // bytes to send (source) or receive (target) this iteration
	scheduled                 int64
	over, above, below, under bool
}

// task is a planned transfer from one group to another.
type task struct {
	src, dst *group
	size     int64
}

// Run balances until the cluster is balanced, nothing can move, or ctx
// ends, printing Hadoop's console table; it returns the exit status.
func (b *Balancer) Run(ctx context.Context) int {
	fmt.Fprintln(b.cfg.Out, "Time Stamp               Iteration#  Bytes Already Moved  Bytes Left To Move  Bytes Being Moved")
	idle := 0
	for it := 0; b.cfg.MaxIterations == 0 || it < b.cfg.MaxIterations; it++ {
		status, left, being := b.iterate(ctx, &idle)
		fmt.Fprintf(b.cfg.Out, "%-24s %10d  %19s  %18s  %17s\n", b.cfg.Now().Format("Jan 2, 2006 3:04:05 PM"), it,
			byteDesc(b.moved), byteDesc(left), byteDesc(being))
		if status != InProgress {
			return status
		}
		if err := b.cfg.Sleep(ctx, b.cfg.Wait); err != nil {
			return Interrupted
		}
	}
	return InProgress
}

// iterate is one iteration: it returns the status, the bytes left to
// move and the bytes it scheduled.
func (b *Balancer) iterate(ctx context.Context, idle *int) (status int, left, being int64) {
	nodes, err := b.c.Nodes(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return Interrupted, 0, 0
		}
		fmt.Fprintf(b.cfg.Out, "Another iteration failed: %v\n", err)
		return IOException, 0, 0
	}
	groups, left := b.classify(nodes)
	if left == 0 {
		fmt.Fprintln(b.cfg.Out, "The cluster is balanced. Exiting...")
		return Success, 0, 0
	}
	b.cfg.Logger.Info("balancer: need to move", "bytes", left)
	tasks := b.pair(groups)
	for _, t := range tasks {
		being += t.size
	}
	if being == 0 {
		fmt.Fprintln(b.cfg.Out, "No block can be moved. Exiting...")
		return NoMoveBlock, left, 0
	}
	moved := b.dispatch(ctx, tasks, nodes)
	if ctx.Err() != nil {
		return Interrupted, left, being
	}
	if moved == 0 {
		*idle++
		if *idle >= b.cfg.IdleIterations {
			fmt.Fprintf(b.cfg.Out, "No block has been moved for %d iterations. Exiting...\n", *idle)
			return NoMoveProgress, left, being
		}
	} else {
		*idle = 0
	}
	return InProgress, left, being
}

func (b *Balancer) wanted(n *Node) bool {
	match := func(list []string) bool {
		for _, h := range list {
			if h == n.IP || h == n.Host || h == n.Addr() {
				return true
			}
		}
		return false
	}
	if len(b.cfg.Include) > 0 && !match(b.cfg.Include) {
		return false
	}
	return n.Normal && !match(b.cfg.Exclude)
}

// classify computes each storage group's utilisation against its type's
// mean, and the bytes left to move (Hadoop's Balancer.init): the larger
// of what the over-utilised hold above mean + threshold and what the
// under-utilised lack below mean − threshold.
func (b *Balancer) classify(nodes []*Node) ([]*group, int64) {
	var groups []*group
	capT, usedT := map[storage.Type]int64{}, map[storage.Type]int64{}
	for _, n := range nodes {
		if !b.wanted(n) {
			continue
		}
		for t, c := range n.Capacity {
			if c <= 0 {
				continue
			}
			groups = append(groups, &group{node: n, typ: t, capacity: c, used: n.Used[t], remaining: n.Remaining[t]})
			capT[t] += c
			usedT[t] += n.Used[t]
		}
	}
	var overBytes, underBytes int64
	th := b.cfg.Threshold
	for _, g := range groups {
		avg := float64(usedT[g.typ]) * 100 / float64(capT[g.typ])
		g.util = float64(g.used) * 100 / float64(g.capacity)
		diff := g.util - avg
		size := min(pctBytes(abs(diff), g.capacity), b.cfg.MaxSizeToMove)
		switch {
		case diff > th:
			g.over = true
			overBytes += pctBytes(diff-th, g.capacity)
			g.toMove = size
		case diff > 0:
			g.above = true
			g.toMove = size
		case diff < -th:
			g.under = true
			underBytes += pctBytes(-diff-th, g.capacity)
			g.toMove = min(size, g.remaining)
		default:
			g.below = true
			g.toMove = min(size, g.remaining)
		}
	}
	sort.Slice(groups, func(i, j int) bool {
		if groups[i].node.UUID != groups[j].node.UUID {
			return groups[i].node.UUID < groups[j].node.UUID
		}
		return groups[i].typ < groups[j].typ
	})
	return groups, max(overBytes, underBytes)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func pctBytes(pct float64, capacity int64) int64 { return int64(pct * float64(capacity) / 100) }

// pair matches sources and targets of one storage type (Hadoop's
// chooseStorageGroups): over→under, over→below, above→under, each on the
// same rack first, then across racks.
func (b *Balancer) pair(groups []*group) []task {
	var tasks []task
	match := func(srcOK, dstOK func(*group) bool, sameRack bool) {
		for _, s := range groups {
			if !srcOK(s) {
				continue
			}
			for _, d := range groups {
				if s.toMove <= s.scheduled {
					break
				}
				if !dstOK(d) || d.typ != s.typ || d.node == s.node || d.toMove <= d.scheduled ||
					(s.node.Rack == d.node.Rack) != sameRack {
					continue
				}
				size := min(s.toMove-s.scheduled, d.toMove-d.scheduled)
				s.scheduled += size
				d.scheduled += size
				tasks = append(tasks, task{src: s, dst: d, size: size})
			}
		}
	}
	over := func(g *group) bool { return g.over }
	above := func(g *group) bool { return g.above }
	under := func(g *group) bool { return g.under }
	below := func(g *group) bool { return g.below }
	for _, same := range []bool{true, false} {
		match(over, under, same)
	}
	for _, same := range []bool{true, false} {
		match(over, below, same)
	}
	for _, same := range []bool{true, false} {
		match(above, under, same)
	}
	return tasks
}

// dispatch carries out the tasks: for each, blocks of the source from
// getBlocks, moved until the task's size is reached. It returns the bytes
// moved.
func (b *Balancer) dispatch(ctx context.Context, tasks []task, nodes []*Node) int64 {
	byUUID := map[string]*Node{}
	for _, n := range nodes {
		byUUID[n.UUID] = n
	}
	var mu sync.Mutex
	var moved int64
	movedBlocks := map[uint64]bool{}
	slots := map[string]chan struct{}{}
	slot := func(uuid string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if slots[uuid] == nil {
			slots[uuid] = make(chan struct{}, b.cfg.MovesPerNode)
		}
		return slots[uuid]
	}
	var wg sync.WaitGroup
	for _, t := range tasks {
		var planned int64
		// Ask again while blocks come back that can still move: another
		// task may have taken the first ones (Hadoop's source keeps
		// fetching while it has bytes to move).
		for round := 0; round < maxGetBlocksRounds && planned < t.size && ctx.Err() == nil; round++ {
			blocks, err := b.c.Blocks(ctx, t.src.node, min(b.cfg.GetBlocksSize, max(t.size-planned, 1)), b.cfg.MinBlockSize)
			if err != nil {
				b.cfg.Logger.Warn("balancer: getBlocks", "source", t.src.node.Addr(), "err", err)
				break
			}
			b.cfg.Rand.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
			progress := false
			for _, blk := range blocks {
				if planned >= t.size || ctx.Err() != nil {
					break
				}
				mu.Lock()
				taken := movedBlocks[blk.ID]
				mu.Unlock()
				if taken {
					continue
				}
				proxy, ok := b.goodMove(blk, t, byUUID)
				if !ok {
					continue
				}
				mu.Lock()
				movedBlocks[blk.ID] = true
				mu.Unlock()
				planned += blk.NumBytes
				progress = true
				m := Move{Block: blk, Source: t.src.node, Target: t.dst.node, Proxy: proxy, Type: t.src.typ}
				for _, s := range dedupe(slot(m.Source.UUID), slot(m.Target.UUID), slot(m.Proxy.UUID)) {
					select {
					case s <- struct{}{}:
					case <-ctx.Done():
						wg.Wait()
						return moved
					}
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() {
						for _, s := range dedupe(slot(m.Source.UUID), slot(m.Target.UUID), slot(m.Proxy.UUID)) {
							<-s
						}
					}()
					if err := b.c.Move(ctx, m); err != nil {
						b.cfg.Logger.Warn("balancer: move failed", "block", m.Block.ID, "source", m.Source.Addr(), "target", m.Target.Addr(), "proxy", m.Proxy.Addr(), "err", err)
						return
					}
					b.cfg.Logger.Info("balancer: moved", "block", m.Block.ID, "bytes", m.Block.NumBytes, "source", m.Source.Addr(), "target", m.Target.Addr(), "proxy", m.Proxy.Addr())
					mu.Lock()
					moved += m.Block.NumBytes
					b.moved += m.Block.NumBytes
					mu.Unlock()
				}()
			}
			if !progress {
				break
			}
		}
	}
	wg.Wait()
	return moved
}

func dedupe(cs ...chan struct{}) []chan struct{} {
	var out []chan struct{}
	for _, c := range cs {
		dup := false
		for _, o := range out {
			dup = dup || o == c
		}
		if !dup {
			out = append(out, c)
		}
	}
	return out
}

// goodMove checks that blk may move from t's source to its target (the
// source holds it, the target does not, the racks it spans do not
// shrink) and picks the proxy: a holder on the target's rack, else the
// source (Hadoop's chooseProxySource).
func (b *Balancer) goodMove(blk Block, t task, byUUID map[string]*Node) (*Node, bool) {
	onSource := false
	before := map[string]bool{}
	for i, h := range blk.Holders {
		if h == t.dst.node.UUID {
			return nil, false
		}
		if h == t.src.node.UUID && (i >= len(blk.Types) || blk.Types[i] == t.src.typ) {
			onSource = true
		}
		if n := byUUID[h]; n != nil {
			before[n.Rack] = true
		}
	}
	if !onSource {
		return nil, false
	}
	after := map[string]bool{t.dst.node.Rack: true}
	for _, h := range blk.Holders {
		if n := byUUID[h]; n != nil && h != t.src.node.UUID {
			after[n.Rack] = true
		}
	}
	if len(after) < len(before) {
		return nil, false
	}
	proxy := t.src.node
	for _, h := range blk.Holders {
		if n := byUUID[h]; n != nil && n != t.src.node && n.Rack == t.dst.node.Rack && n.Normal {
			proxy = n
			break
		}
	}
	return proxy, true
}

// byteDesc is Hadoop's StringUtils.byteDesc: "1.5 GB", "300 B".
func byteDesc(n int64) string {
	units := []string{"B", "KB", "MB", "GB", "TB", "PB", "EB"}
	v := float64(n)
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.2f %s", v, units[i])
}
