package faultmatrix

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/testcluster"
)

// mutator is one client's stream of mutations: op i makes /m<k>/<i>,
// writes /f<k>/<i> (i+1 bytes) and renames the chain file /r<k>/at-<j>
// to at-<i+1>. It records the ops whose three calls were all
// acknowledged and those it started.
type mutator struct {
	mu        sync.Mutex // guards acked and err while run runs
	k         int
	acked     []int
	attempted map[int]bool
	last      int // the last op started
	chain     int // the chain file's index after the last acknowledged rename
	err       error
}

func (m *mutator) run(ctx context.Context, cl *hdfs.Client, from int, stop <-chan struct{}) {
	for i := from; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		m.attempted[i], m.last = true, i
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := cl.Mkdirs(cctx, fmt.Sprintf("/m%d/%d", m.k, i), 0o755)
		if err == nil {
			p := fmt.Sprintf("/f%d/%d", m.k, i)
			err = writeFile(cctx, cl, p, content(p, i+1), 1, 1<<20)
		}
		if err == nil {
			err = cl.Rename(cctx, fmt.Sprintf("/r%d/at-%d", m.k, m.chain), fmt.Sprintf("/r%d/at-%d", m.k, i+1))
		}
		cancel()
		m.mu.Lock()
		if err != nil {
			m.err = err
			m.mu.Unlock()
			return
		}
		m.chain = i + 1
		m.acked = append(m.acked, i)
		m.mu.Unlock()
	}
}

// progress is how many ops were acknowledged so far and the error that
// stopped run, if any.
func (m *mutator) progress() (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.acked), m.err
}

// check verifies the namespace after a restart: every acknowledged op's
// effects are there, no op that was never started, nothing twice.
func (m *mutator) check(t *testing.T, ctx context.Context, cl *hdfs.Client) {
	t.Helper()
	names := func(dir string) []string {
		st, err := cl.List(ctx, dir)
		if err != nil {
			t.Fatalf("list %s: %v", dir, err)
		}
		var out []string
		for _, s := range st {
			out = append(out, filepath.Base(s.Path))
		}
		return out
	}
	seen := map[int]bool{}
	for _, n := range names(fmt.Sprintf("/m%d", m.k)) {
		i, err := strconv.Atoi(n)
		if err != nil || seen[i] || !m.attempted[i] {
			t.Errorf("/m%d holds %q: not a mkdir this client started, or twice", m.k, n)
		}
		seen[i] = true
	}
	for _, i := range m.acked {
		if !seen[i] {
			t.Errorf("acknowledged mkdir /m%d/%d lost", m.k, i)
		}
		p := fmt.Sprintf("/f%d/%d", m.k, i)
		got, err := readFile(ctx, cl, p)
		if err != nil || string(got) != string(content(p, i+1)) {
			t.Errorf("acknowledged file %s: %d bytes, %v", p, len(got), err)
		}
	}
	chain := names(fmt.Sprintf("/r%d", m.k))
	if len(chain) != 1 {
		t.Fatalf("/r%d holds %v after the kill, want one file", m.k, chain)
	}
	at, _ := strconv.Atoi(strings.TrimPrefix(chain[0], "at-"))
	if at != m.chain && at != m.last+1 {
		t.Errorf("/r%d/%s: the last acknowledged rename made at-%d, the one in flight at-%d", m.k, chain[0], m.chain, m.last+1)
	}
	m.chain = at
}

// The NameNode is killed (SIGKILL) while clients make directories,
// write small files and rename: after the restart every acknowledged
// mutation is there, none past the ones in flight, none twice.
func TestNameNodeKillMidMutations(t *testing.T) {
	t.Parallel()
	r := record(t, "NameNode kill -9 mid-mutations")
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1, Volumes: disk})
	ctx := ctxT(t)
	const workers = 3
	per := 40 * scale()
	r.Running = fmt.Sprintf("%d clients each looping mkdir + 1-op file write + rename, killed after ~%d ops each; %d round(s)", workers, per, rounds())
	ms := make([]*mutator, workers)
	setup := client(t, c)
	for k := range ms {
		ms[k] = &mutator{k: k, attempted: map[int]bool{}, last: -1}
		if err := writeFile(ctx, setup, fmt.Sprintf("/r%d/at-0", k), nil, 1, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	totalAcked := 0
	var recovers []string
	for round := 0; round < rounds(); round++ {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		cls := make([]*hdfs.Client, workers)
		want := make([]int, workers)
		for k, m := range ms {
			want[k] = len(m.acked) + per
			cls[k] = client(t, c)
			wg.Add(1)
			from := m.last + 1
			m.err = nil
			go func() { defer wg.Done(); m.run(ctx, cls[k], from, stop) }()
		}
		c.WaitFor("the clients to get mutations acknowledged", 60*time.Second, func() bool {
			for k, m := range ms {
				n, err := m.progress()
				if err != nil {
					t.Fatalf("client %d before the kill: %v", k, err)
				}
				if n < want[k] {
					return false
				}
			}
			return true
		})
		c.KillNameNode()
		t0 := time.Now()
		wg.Wait()
		close(stop)
		c.StartNameNode()
		c.WaitDataNodes(1)
		c.WaitSafeModeOff()
		cl := client(t, c)
		if err := cl.Mkdirs(ctx, fmt.Sprintf("/after%d", round), 0o755); err != nil {
			t.Fatalf("mutation after the restart: %v", err)
		}
		recovers = append(recovers, since(t0))
		for k, m := range ms {
			totalAcked += len(m.acked) - want[k] + per
			m.check(t, ctx, cl)
			if m.err == nil {
				t.Errorf("client %d saw no error from the killed NameNode", k)
			}
		}
		for k := range cls {
			cls[k].Close()
		}
	}
	r.Acked = fmt.Sprintf("%d ops (each a mkdir, a file create+write+close and a rename) acknowledged before the kills", totalAcked)
	r.Survived = "every acknowledged op; no op past the ones in flight, none twice"
	r.Recover = strings.Join(recovers, ", ") + " from kill to a mutation on the restarted NameNode"
}

// The NameNode's edit log disk (a tmpfs) fills up while a client makes
// directories: the NameNode refuses further mutations with a clear
// error and keeps serving reads; after the space is freed and a restart
// it serves mutations again with every acknowledged one there.
func TestNameNodeEditLogDiskFull(t *testing.T) {
	t.Parallel()
	r := record(t, "NameNode edit-log disk full")
	const size = 4 << 20
	c := testcluster.NewProcess(t, testcluster.Config{NameDirSize: size})
	ctx := ctxT(t)
	cl := client(t, c)
	// Leave ~256 KiB: fill the rest with a file of our own.
	filler := filepath.Join(c.NameDir(), "filler")
	free := func() int64 {
		var st syscallStatfs
		if statfs(c.NameDir(), &st) != nil {
			return -1
		}
		return st.free
	}
	if err := os.WriteFile(filler, make([]byte, free()-1<<20), 0o644); err != nil && !strings.Contains(err.Error(), "no space") {
		t.Fatal(err)
	}
	r.Running = "one client making directories with 200-byte names; name dir a 4 MiB tmpfs, 1 MiB left"
	name := strings.Repeat("d", 200)
	var acked []string
	var refused error
	for i := 0; i < 20000*scale() && refused == nil; i++ {
		p := fmt.Sprintf("/full/%06d-%s", i, name)
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := cl.Mkdirs(cctx, p, 0o755)
		cancel()
		if err != nil {
			refused = err
			break
		}
		acked = append(acked, p)
	}
	if refused == nil {
		t.Fatalf("%d mkdirs acknowledged on a full edit-log disk", len(acked))
	}
	t.Logf("after %d mkdirs: %v", len(acked), refused)
	if len(acked) == 0 {
		t.Fatalf("the first mkdir was refused: %v", refused)
	}
	r.Acked = fmt.Sprintf("%d mkdirs; then refused: %s", len(acked), errText(refused))
	if !strings.Contains(strings.ToLower(refused.Error()), "space") {
		t.Errorf("the refusal does not say the disk is full: %v", refused)
	}
	if !c.NameNodeProcess().Running() {
		t.Fatalf("the NameNode exited on a full edit-log disk; log:\n%s", c.NameNodeProcess().Log())
	}
	// Further mutations are refused too, reads still served.
	if err := cl.Mkdirs(ctx, "/more", 0o755); err == nil {
		t.Error("a mkdir was acknowledged after the edit log failed")
	}
	if _, err := cl.Stat(ctx, acked[len(acked)-1]); err != nil {
		t.Errorf("stat on a NameNode whose edit log is full: %v", err)
	}
	os.Remove(filler)
	t0 := time.Now()
	c.KillNameNode()
	c.StartNameNode()
	c.WaitSafeModeOff()
	cl = client(t, c)
	if err := cl.Mkdirs(ctx, "/after", 0o755); err != nil {
		t.Fatalf("mkdir after freeing space and a restart: %v", err)
	}
	r.Recover = since(t0) + " from freeing space (kill -9, restart) to a mutation"
	lost := 0
	for _, p := range acked {
		if _, err := cl.Stat(ctx, p); err != nil {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged mkdirs lost", lost, len(acked))
	}
	r.Survived = fmt.Sprintf("%d/%d acknowledged mkdirs; reads served while full", len(acked)-lost, len(acked))
}
