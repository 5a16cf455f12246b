// Package topology maps DataNode and client addresses to network
// locations (racks) and measures the distance between them, as Hadoop's
// org.apache.hadoop.net: DNSToSwitchMapping implementations selected by
// net.topology.node.switch.mapping.impl — ScriptBasedMapping (the
// default; net.topology.script.file.name, run with batches of at most
// net.topology.script.number.args addresses) and TableMapping
// (net.topology.table.file.name, "host rack" lines) — and NetworkTopology's
// distance.
//
// Invariants:
//   - Every name resolves to a location starting with "/"; a name the
//     mapping cannot place (no script, no table line, a failed script) is
//     at DefaultRack.
//   - A script's answers are cached (at most maxCachedLocations, least
//     recently used evicted), so it runs once per new address; failures
//     are not cached. Callers resolve only admitted DataNodes' addresses.
//   - Resolution never blocks forever: a script runs under ScriptTimeout.
package topology

import (
	"bufio"
	"bytes"
	"container/list"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultRack is where a node of unknown location is (NetworkTopology's
// DEFAULT_RACK).
const DefaultRack = "/default-rack"

// Hadoop's class names for net.topology.node.switch.mapping.impl.
const (
	ScriptBasedMappingClass = "org.apache.hadoop.net.ScriptBasedMapping"
	TableMappingClass       = "org.apache.hadoop.net.TableMapping"
)

// ScriptTimeout bounds one run of a topology script.
var ScriptTimeout = 30 * time.Second

// Mapping resolves host names or addresses to network locations.
type Mapping interface {
	// Resolve returns the location of each name, in order.
	Resolve(names []string) []string
	// Cached returns the location of name if it is known without running
	// anything (a table line, or a script answer seen before).
	Cached(name string) (string, bool)
}

// Config selects and configures a Mapping.
type Config struct {
	Impl       string // net.topology.node.switch.mapping.impl
	Script     string // net.topology.script.file.name
	ScriptArgs int    // net.topology.script.number.args
	Table      string // net.topology.table.file.name
}

// New returns the mapping c names. An unknown class is an error.
func New(c Config) (Mapping, error) {
	switch c.Impl {
	case "", ScriptBasedMappingClass, "org.apache.hadoop.net.ScriptBasedMappingWithDependency":
		return NewScriptMapping(c.Script, c.ScriptArgs), nil
	case TableMappingClass:
		return NewTableMapping(c.Table), nil
	}
	return nil, fmt.Errorf("topology: unsupported net.topology.node.switch.mapping.impl %q (want %s or %s)", c.Impl, ScriptBasedMappingClass, TableMappingClass)
}

// normalize makes a rack name a path: "/" prefixed, no trailing "/".
func normalize(rack string) string {
	rack = strings.TrimSpace(rack)
	if rack == "" {
		return DefaultRack
	}
	if !strings.HasPrefix(rack, "/") {
		rack = "/" + rack
	}
	if len(rack) > 1 {
		rack = strings.TrimRight(rack, "/")
	}
	return rack
}

// ScriptMapping runs an executable with addresses as arguments; it prints
// one location per argument, separated by white space.
type ScriptMapping struct {
	script  string
	maxArgs int
	// run executes the script; tests replace it.
	run func(ctx context.Context, script string, args []string) ([]byte, error)

	mu    sync.Mutex
	cache *lru
}

// maxCachedLocations bounds a ScriptMapping's cache; the least recently
// used answer goes first (it is asked again if needed).
const maxCachedLocations = 16384

// lru is a bounded name → location map.
type lru struct {
	max   int
	order *list.List // of *lruEntry, most recent first
	index map[string]*list.Element
}

type lruEntry struct{ name, loc string }

func newLRU(max int) *lru {
	return &lru{max: max, order: list.New(), index: map[string]*list.Element{}}
}

func (c *lru) get(name string) (string, bool) {
	e, ok := c.index[name]
	if !ok {
		return "", false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry).loc, true
}

func (c *lru) put(name, loc string) {
	if e, ok := c.index[name]; ok {
		e.Value.(*lruEntry).loc = loc
		c.order.MoveToFront(e)
		return
	}
	c.index[name] = c.order.PushFront(&lruEntry{name, loc})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.index, last.Value.(*lruEntry).name)
	}
}

func (c *lru) len() int { return c.order.Len() }

// NewScriptMapping returns a mapping that runs script (none: every node
// at DefaultRack) with at most maxArgs names per run (<= 0: 100).
func NewScriptMapping(script string, maxArgs int) *ScriptMapping {
	if maxArgs <= 0 {
		maxArgs = 100
	}
	return &ScriptMapping{script: script, maxArgs: maxArgs, run: runScript, cache: newLRU(maxCachedLocations)}
}

// scriptKillGrace is how long a killed script's output pipes may stay
// open (a grandchild that escaped the group) before Wait gives up on them.
const scriptKillGrace = time.Second

// runScript runs script in its own process group and, at ctx's end,
// kills the whole group: killing only the shell would leave its children
// (a sleep, a slow lookup) holding the output pipe open, and Wait with it.
func runScript(ctx context.Context, script string, args []string) ([]byte, error) {
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, script, args...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = scriptKillGrace
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %v: %s", script, err, strings.TrimSpace(stderr.String()))
	}
	return out.Bytes(), nil
}

// Cached implements Mapping.
func (m *ScriptMapping) Cached(name string) (string, bool) {
	if m.script == "" {
		return DefaultRack, true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cache.get(name)
}

// Resolve implements Mapping: names not seen before go to the script in
// batches of maxArgs; a batch whose run fails or answers the wrong number
// of locations leaves its names at DefaultRack, uncached.
func (m *ScriptMapping) Resolve(names []string) []string {
	out := make([]string, len(names))
	var todo []string
	idx := map[string][]int{}
	for i, n := range names {
		if r, ok := m.Cached(n); ok {
			out[i] = r
			continue
		}
		out[i] = DefaultRack
		if _, seen := idx[n]; !seen {
			todo = append(todo, n)
		}
		idx[n] = append(idx[n], i)
	}
	for len(todo) > 0 {
		batch := todo[:min(len(todo), m.maxArgs)]
		todo = todo[len(batch):]
		ctx, cancel := context.WithTimeout(context.Background(), ScriptTimeout)
		raw, err := m.run(ctx, m.script, batch)
		cancel()
		if err != nil {
			continue
		}
		racks := strings.Fields(string(raw))
		if len(racks) != len(batch) {
			continue
		}
		m.mu.Lock()
		for j, n := range batch {
			r := normalize(racks[j])
			m.cache.put(n, r)
			for _, i := range idx[n] {
				out[i] = r
			}
		}
		m.mu.Unlock()
	}
	return out
}

// TableMapping reads "name location" lines from a file (once, at first
// use); lines with fewer than two fields are ignored, as Hadoop does.
type TableMapping struct {
	file string
	once sync.Once
	tab  map[string]string
}

// NewTableMapping returns a mapping over file ("": every node at
// DefaultRack).
func NewTableMapping(file string) *TableMapping { return &TableMapping{file: file} }

func (m *TableMapping) load() {
	m.tab = map[string]string{}
	if m.file == "" {
		return
	}
	f, err := os.Open(m.file)
	if err != nil {
		return // Hadoop logs and maps everything to the default rack
	}
	defer f.Close()
	tab, _ := ParseTable(f)
	m.tab = tab
}

// ParseTable reads a TableMapping file: each line "name location", white
// space separated; '#' starts a comment.
func ParseTable(r interface{ Read([]byte) (int, error) }) (map[string]string, error) {
	tab := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		tab[f[0]] = normalize(f[1])
	}
	return tab, sc.Err()
}

// Cached implements Mapping.
func (m *TableMapping) Cached(name string) (string, bool) {
	m.once.Do(m.load)
	if r, ok := m.tab[name]; ok {
		return r, true
	}
	return DefaultRack, true
}

// Resolve implements Mapping.
func (m *TableMapping) Resolve(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i], _ = m.Cached(n)
	}
	return out
}

// ResolveNode is where a DataNode is: the mapping's answer for its
// address, else (TableMapping only knows what it lists) for
// "address:port". Hadoop resolves the address alone; "address:port" lets
// one machine's loopback DataNodes sit on different racks. ip must be the
// address the node connects from, never one it reports of itself.
func ResolveNode(m Mapping, ip string, port uint32) string {
	if r, ok := m.Cached(ip); ok && r != DefaultRack {
		return r
	}
	if t, ok := m.(*TableMapping); ok {
		r, _ := t.Cached(fmt.Sprintf("%s:%d", ip, port))
		return r
	}
	return m.Resolve([]string{ip})[0]
}

// Distance is NetworkTopology's distance between two nodes given by
// their locations and names: 0 for the same node, otherwise 2 per level
// up to the common ancestor (2 on one rack, 4 across racks of one
// root).
func Distance(rackA, nodeA, rackB, nodeB string) int {
	if rackA == rackB && nodeA == nodeB {
		return 0
	}
	a := splitPath(rackA)
	b := splitPath(rackB)
	common := 0
	for common < len(a) && common < len(b) && a[common] == b[common] {
		common++
	}
	// each node sits one level below its rack path
	return (len(a) - common + 1) + (len(b) - common + 1)
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
