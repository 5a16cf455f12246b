package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"
	"github.com/colinmarc/hdfs/v2/hadoopconf"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/histcheck"
	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/testcluster"
)

// haBigFileBytes is the size of the file written across the failover:
// 1 GB, or STRATA_HA_BIG_BYTES.
func haBigFileBytes(t *testing.T) int64 {
	if v := os.Getenv("STRATA_HA_BIG_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return 1 << 30
}

// mixedClient runs a stream of mkdirs, creates, renames and deletes in
// its own directory and keeps the namespace it expects from the
// acknowledged ones. Every operation must succeed: failover retries it
// with the same call id, and the retry cache gives the first answer, so
// an error (AlreadyExists, FileNotFound, a false delete) means an
// operation was lost or applied twice.
type mixedClient struct {
	id   int
	cl   *hdfs.Client
	dir  string
	want map[string]string // path -> "dir" or file content
	ops  int
	err  error
}

func (m *mixedClient) run(ctx context.Context, stop <-chan struct{}) {
	m.want = map[string]string{}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		octx, cancel := context.WithTimeout(ctx, 60*time.Second)
		err := m.step(octx, i)
		cancel()
		if err != nil {
			m.err = fmt.Errorf("client %d op %d: %w", m.id, i, err)
			return
		}
	}
}

func (m *mixedClient) step(ctx context.Context, i int) error {
	d := fmt.Sprintf("%s/d%d", m.dir, i)
	f := fmt.Sprintf("%s/f%d", m.dir, i)
	g := fmt.Sprintf("%s/g%d", m.dir, i)
	if err := m.cl.Mkdir(ctx, d, 0o755); err != nil {
		return fmt.Errorf("mkdir %s: %w", d, err)
	}
	m.want[d] = "dir"
	m.ops++
	content := fmt.Sprintf("client %d file %d", m.id, i)
	w, err := m.cl.Create(ctx, f, fs.CreateOptions{Perm: 0o644})
	if err != nil {
		return fmt.Errorf("create %s: %w", f, err)
	}
	if _, err := io.WriteString(w, content); err != nil {
		return fmt.Errorf("write %s: %w", f, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("close %s: %w", f, err)
	}
	m.want[f] = content
	m.ops++
	if err := m.cl.Rename(ctx, f, g); err != nil {
		return fmt.Errorf("rename %s: %w", f, err)
	}
	delete(m.want, f)
	m.want[g] = content
	m.ops++
	if i >= 2 {
		old := fmt.Sprintf("%s/g%d", m.dir, i-2)
		if err := m.cl.Delete(ctx, old, false); err != nil {
			return fmt.Errorf("delete %s: %w", old, err)
		}
		delete(m.want, old)
		m.ops++
	}
	return nil
}

// verify checks that the namespace holds exactly what the client expects.
func (m *mixedClient) verify(ctx context.Context) error {
	list, err := m.cl.List(ctx, m.dir)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, st := range list {
		p := m.dir + "/" + st.Name()
		seen[p] = true
		want, ok := m.want[p]
		if !ok {
			return fmt.Errorf("%s exists but was deleted or renamed by an acknowledged operation", p)
		}
		if (want == "dir") != st.IsDir {
			return fmt.Errorf("%s: dir %v, want %q", p, st.IsDir, want)
		}
		if !st.IsDir {
			r, err := m.cl.Open(ctx, p)
			if err != nil {
				return err
			}
			b, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				return err
			}
			if string(b) != want {
				return fmt.Errorf("%s holds %q, want %q", p, b, want)
			}
		}
	}
	for p := range m.want {
		if !seen[p] {
			return fmt.Errorf("acknowledged %s is missing", p)
		}
	}
	return nil
}

// bigWriter writes n pseudo-random bytes to p and returns their SHA-256.
func bigWriter(ctx context.Context, cl *hdfs.Client, p string, n int64, progress *atomic.Int64) ([32]byte, error) {
	h := sha256.New()
	w, err := cl.Create(ctx, p, fs.CreateOptions{Perm: 0o644})
	if err != nil {
		return [32]byte{}, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 1<<20)
	for written := int64(0); written < n; {
		chunk := buf[:min(int64(len(buf)), n-written)]
		for i := 0; i+8 <= len(chunk); i += 8 {
			v := rng.Uint64()
			for j := 0; j < 8; j++ {
				chunk[i+j] = byte(v >> (8 * j))
			}
		}
		h.Write(chunk)
		if _, err := w.Write(chunk); err != nil {
			w.Close()
			return [32]byte{}, fmt.Errorf("write at %d: %w", written, err)
		}
		written += int64(len(chunk))
		progress.Store(written)
	}
	if err := w.Close(); err != nil {
		return [32]byte{}, fmt.Errorf("close: %w", err)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

func fileSum(ctx context.Context, cl *hdfs.Client, p string) ([32]byte, int64, error) {
	r, err := cl.Open(ctx, p)
	if err != nil {
		return [32]byte{}, 0, err
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, n, err
}

func digestOf(addr string) (namenode.Digest, error) {
	cl := http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Get("http://" + addr + "/strata/ha/digest")
	if err != nil {
		return namenode.Digest{}, err
	}
	defer resp.Body.Close()
	var d namenode.Digest
	return d, json.NewDecoder(resp.Body).Decode(&d)
}

// waitSameNamespace waits until every running member reports the same
// applied txid and namespace digest.
func waitSameNamespace(t *testing.T, c *testcluster.Processes, timeout time.Duration) namenode.Digest {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var ds []namenode.Digest
		var errs []error
		for i := 0; i < c.NumNameNodes(); i++ {
			d, err := digestOf(c.NameNodeHTTPAddrAt(i))
			ds, errs = append(ds, d), append(errs, err)
		}
		same := errors.Join(errs...) == nil
		for _, d := range ds[1:] {
			same = same && d == ds[0]
		}
		if same {
			return ds[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("members' namespaces differ after %v: %+v (%v)", timeout, ds, errors.Join(errs...))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// linWorkload runs histcheck's register/namespace workload and checks
// the history for linearizability when done.
type linWorkload struct {
	rec  *histcheck.Recorder
	done chan struct{}
}

func startLinWorkload(t *testing.T, c *testcluster.Processes, root string, d time.Duration) *linWorkload {
	var clients []histcheck.FS
	for i := 0; i < 4; i++ {
		clients = append(clients, histcheck.NewHDFS(c.Client(c.Superuser())))
	}
	lw := &linWorkload{rec: histcheck.NewRecorder(nil), done: make(chan struct{})}
	cfg := histcheck.Config{Root: root, Keys: 3, Names: 3, Duration: d, OpTimeout: 60 * time.Second, Seed: 7}
	go func() {
		defer close(lw.done)
		if err := histcheck.Run(context.Background(), clients, cfg, lw.rec); err != nil {
			t.Error(err)
		}
	}()
	return lw
}

func (lw *linWorkload) check(t *testing.T) {
	t.Helper()
	<-lw.done
	ops := lw.rec.Operations()
	viz := filepath.Join(t.TempDir(), "history.html")
	for name, model := range map[string]any{"register": histcheck.RegisterModel, "namespace": histcheck.NamespaceModel} {
		_ = model
		m := histcheck.RegisterModel
		if name == "namespace" {
			m = histcheck.NamespaceModel
		}
		ok, rep := histcheck.Check(m, ops, 2*time.Minute, viz)
		if rep.Ops == 0 {
			t.Errorf("%s history is empty", name)
		}
		if !ok {
			t.Errorf("%s history is not linearizable: %v (visualization %s)", name, rep, viz)
		} else {
			t.Logf("%s history: %d operations, linearizable", name, rep.Ops)
		}
	}
	t.Logf("operations by outcome: %v", lw.rec.Stats())
}

// TestHAKillActive is issue 14's first check: kill -9 of the active
// NameNode while 8 clients run mkdirs, creates, renames and deletes and
// one writes a 1 GB file. A new active must serve within 5 s; every
// acknowledged operation is present, none applied twice, the big file
// completes and reads back byte-identical, and the history of a
// register workload run alongside is linearizable.
func TestHAKillActive(t *testing.T) {
	if testing.Short() {
		t.Skip("3 NameNodes, 3 DataNodes and a 1 GB file")
	}
	c := testcluster.NewProcess(t, testcluster.Config{NameNodes: 3, DataNodes: 3, Conf: map[string]string{
		"dfs.replication": "2",
	}})
	c.WaitSafeModeOff()
	ctx := context.Background()
	admin := c.Client(c.Superuser())
	if err := admin.Mkdirs(ctx, "/mix", 0o777); err != nil {
		t.Fatal(err)
	}
	lw := startLinWorkload(t, c, "/lin", 12*time.Second)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	mixed := make([]*mixedClient, 8)
	for i := range mixed {
		m := &mixedClient{id: i, cl: c.Client(c.Superuser()), dir: fmt.Sprintf("/mix/c%d", i)}
		if err := m.cl.Mkdirs(ctx, m.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		mixed[i] = m
		wg.Add(1)
		go func() { defer wg.Done(); m.run(ctx, stop) }()
	}
	size := haBigFileBytes(t)
	var progress atomic.Int64
	type bigResult struct {
		sum [32]byte
		err error
	}
	bigDone := make(chan bigResult, 1)
	go func() {
		sum, err := bigWriter(ctx, c.Client(c.Superuser()), "/big", size, &progress)
		bigDone <- bigResult{sum, err}
	}()

	// Kill the active once the big file is well under way.
	deadline := time.Now().Add(2 * time.Minute)
	for progress.Load() < size/4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second)
	old := c.ActiveNameNode()
	killed := time.Now()
	c.KillNameNodeAt(old)
	next, ok := c.WaitActive(30*time.Second, old)
	took := time.Since(killed)
	if !ok {
		t.Fatal("no new active within 30 s")
	}
	// Serving means answering a client call, not just saying so: a client
	// of the new active alone (the failover client's own backoff is not
	// the NameNode's).
	direct, err := hdfs.New(hdfs.Options{Addr: c.NameNodeAddrAt(next), User: c.Superuser()})
	if err != nil {
		t.Fatal(err)
	}
	for {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := direct.Stat(sctx, "/mix")
		cancel()
		if err == nil {
			break
		}
		if time.Since(killed) > 30*time.Second {
			t.Fatalf("the new active does not serve: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	served := time.Since(killed)
	direct.Close()
	cl := c.Client(c.Superuser())
	if _, err := cl.Stat(ctx, "/mix"); err != nil {
		t.Fatal(err)
	}
	t.Logf("kill -9 of %s at %d/%d bytes: %s active after %v, serving after %v",
		testcluster.NameNodeID(old), progress.Load(), size, testcluster.NameNodeID(next), took.Round(time.Millisecond), served.Round(time.Millisecond))
	fmt.Printf("HA failover: new active %s serving %v after kill -9 of %s\n", testcluster.NameNodeID(next), served.Round(time.Millisecond), testcluster.NameNodeID(old))
	if served > 5*time.Second {
		t.Errorf("new active served after %v, want within 5 s", served)
	}

	res := <-bigDone
	time.Sleep(2 * time.Second) // operations after the failover
	close(stop)
	wg.Wait()
	total := 0
	for _, m := range mixed {
		if m.err != nil {
			t.Error(m.err)
		}
		total += m.ops
	}
	t.Logf("%d acknowledged mixed operations", total)
	for _, m := range mixed {
		if err := m.verify(ctx); err != nil {
			t.Errorf("client %d: %v", m.id, err)
		}
	}
	if res.err != nil {
		t.Fatalf("big file: %v", res.err)
	}
	sum, n, err := fileSum(ctx, cl, "/big")
	if err != nil || n != size || sum != res.sum {
		t.Fatalf("big file reads back %d bytes (err %v), sum match %v; want %d bytes", n, err, sum == res.sum, size)
	}
	lw.check(t)

	// The killed member comes back as a standby and catches up.
	c.StartNameNodeAt(old)
	d := waitSameNamespace(t, c, 30*time.Second)
	t.Logf("all three members at txid %d, namespace %s", d.AppliedTxID, d.SHA256[:12])
	if st := c.ServiceState(old, 2*time.Second); st != "standby" {
		t.Errorf("restarted %s is %q, want standby", testcluster.NameNodeID(old), st)
	}
}

// TestHAPartitionActive is issue 14's second check: the active NameNode,
// cut off from the other two (network namespaces), stops acknowledging
// within the election timeout and clients fail over; after the heal it
// rejoins as a follower and catches up; no acknowledged write is lost and
// the members' namespaces end up identical.
func TestHAPartitionActive(t *testing.T) {
	if testing.Short() {
		t.Skip("network namespaces")
	}
	c := testcluster.NewProcess(t, testcluster.Config{NameNodes: 3, DataNodes: 1, Hosts: true})
	c.WaitSafeModeOff()
	ctx := context.Background()
	cl := c.Client(c.Superuser())
	var acked []string
	mkdir := func(p string) error {
		octx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		err := cl.Mkdir(octx, p, 0o755)
		if err == nil {
			acked = append(acked, p)
		}
		return err
	}
	for i := 0; i < 20; i++ {
		if err := mkdir(fmt.Sprintf("/before%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	lw := startLinWorkload(t, c, "/lin", 10*time.Second)
	time.Sleep(time.Second)
	old := c.ActiveNameNode()
	var others []string
	for i := 0; i < c.NumNameNodes(); i++ {
		if i != old {
			others = append(others, testcluster.NameNodeHostAt(i))
		}
	}
	cut := time.Now()
	c.Partition([]string{testcluster.NameNodeHostAt(old)}, others)
	// The old active must stop saying it is active within the election
	// timeout (1 s heartbeat timeout, 500 ms lease, plus polling).
	stepped := time.Duration(-1)
	for time.Since(cut) < 10*time.Second {
		if c.ServiceState(old, 500*time.Millisecond) != "active" {
			stepped = time.Since(cut)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if stepped < 0 || stepped > 3*time.Second {
		t.Errorf("partitioned active stepped down after %v, want within 3 s", stepped)
	}
	next, ok := c.WaitActive(20*time.Second, old)
	if !ok {
		t.Fatal("no new active on the majority side")
	}
	t.Logf("partitioned %s stepped down after %v; %s active after %v", testcluster.NameNodeID(old), stepped.Round(time.Millisecond), testcluster.NameNodeID(next), time.Since(cut).Round(time.Millisecond))
	for i := 0; i < 20; i++ {
		if err := mkdir(fmt.Sprintf("/during%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	c.Heal()
	for i := 0; i < 20; i++ {
		if err := mkdir(fmt.Sprintf("/after%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	lw.check(t)
	d := waitSameNamespace(t, c, 30*time.Second)
	t.Logf("after the heal all members at txid %d, namespace %s", d.AppliedTxID, d.SHA256[:12])
	if st := c.ServiceState(old, 2*time.Second); st == "active" && old != c.ActiveNameNode() {
		t.Errorf("old active %s still says active", testcluster.NameNodeID(old))
	}
	for _, p := range acked {
		if _, err := cl.Stat(ctx, p); err != nil {
			t.Errorf("acknowledged %s: %v", p, err)
		}
	}
}

// TestHAAdmin drives haadmin through the real binary: states, a
// failover to a named member, health checks.
func TestHAAdmin(t *testing.T) {
	if testing.Short() {
		t.Skip("3 NameNodes")
	}
	c := testcluster.NewProcess(t, testcluster.Config{NameNodes: 3})
	old := c.ActiveNameNode()
	out, errOut, code := c.Run(c.Superuser(), "haadmin", "-getAllServiceState")
	if code != 0 || bytes.Count([]byte(out), []byte("active")) != 1 || bytes.Count([]byte(out), []byte("standby")) != 2 {
		t.Fatalf("-getAllServiceState: %d\n%s%s", code, out, errOut)
	}
	target := (old + 1) % 3
	out, errOut, code = c.Run(c.Superuser(), "haadmin", "-failover", testcluster.NameNodeID(old), testcluster.NameNodeID(target))
	if code != 0 || !bytes.Contains([]byte(out), []byte("successful")) {
		t.Fatalf("-failover: %d\n%s%s", code, out, errOut)
	}
	if got := c.ActiveNameNode(); got != target {
		t.Fatalf("active after -failover is %s, want %s", testcluster.NameNodeID(got), testcluster.NameNodeID(target))
	}
	out, _, code = c.Run(c.Superuser(), "haadmin", "-getServiceState", testcluster.NameNodeID(old))
	if code != 0 || string(bytes.TrimSpace([]byte(out))) != "standby" {
		t.Fatalf("-getServiceState %s: %d %q", testcluster.NameNodeID(old), code, out)
	}
	// The active's status shows its role, term and its peers' lag.
	resp, err := http.Get("http://" + c.NameNodeHTTPAddrAt(target) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		HA *namenode.HAStats `json:"ha"`
	}
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if st.HA == nil || st.HA.State != "active" || st.HA.Term == 0 || st.HA.CommitIndex == 0 || len(st.HA.Peers) != 2 || len(st.HA.Members) != 3 {
		t.Fatalf("active's /status HA = %+v", st.HA)
	}
	for _, p := range st.HA.Peers {
		if p.State != "standby" || p.Lag < 0 || p.Lag > 10 {
			t.Errorf("peer %+v", p)
		}
	}
	resp, err = http.Get("http://" + c.NameNodeHTTPAddrAt(target) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"strata_namenode_ha_state 1", "strata_namenode_ha_term", "strata_namenode_ha_commit_index", `strata_namenode_ha_peer_lag{peer="` + testcluster.NameNodeID((target+1)%3) + `"}`} {
		if !bytes.Contains(metrics, []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// WebHDFS: a standby refuses with StandbyException, the active serves.
	for i := 0; i < 3; i++ {
		resp, err := http.Get("http://" + c.NameNodeHTTPAddrAt(i) + "/webhdfs/v1/?op=GETFILESTATUS&user.name=" + c.Superuser())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		standby := bytes.Contains(body, []byte("StandbyException"))
		if i == target && (resp.StatusCode != 200 || standby) || i != target && (resp.StatusCode != 403 || !standby) {
			t.Errorf("WebHDFS on %s (active %v): %d %s", testcluster.NameNodeID(i), i == target, resp.StatusCode, body)
		}
	}
	for i := 0; i < 3; i++ {
		if _, errOut, code := c.Run(c.Superuser(), "haadmin", "-checkHealth", testcluster.NameNodeID(i)); code != 0 {
			t.Errorf("-checkHealth %s: %d %s", testcluster.NameNodeID(i), code, errOut)
		}
	}
	// A non-superuser cannot move leadership.
	if _, _, code := c.Run("mallory", "haadmin", "-failover", testcluster.NameNodeID(target), testcluster.NameNodeID(old)); code == 0 {
		t.Error("mallory's -failover succeeded")
	}
	c.KillNameNodeAt(target)
	if _, errOut, code := c.Run(c.Superuser(), "haadmin", "-checkHealth", testcluster.NameNodeID(target)); code == 0 {
		t.Errorf("-checkHealth of a killed NameNode succeeded: %s", errOut)
	}
	out, _, _ = c.Run(c.Superuser(), "dfs", "-mkdir", "/after-failover")
	if _, errOut, code := c.Run(c.Superuser(), "dfs", "-test", "-d", "/after-failover"); code != 0 {
		t.Errorf("dfs after killing the active: %d %s %s", code, out, errOut)
	}
}

// TestHAGoHDFS: an existing HDFS client, colinmarc/hdfs configured only
// through HADOOP_CONF_DIR with the nameservice's keys, keeps working
// across a kill -9 of the active NameNode.
func TestHAGoHDFS(t *testing.T) {
	if testing.Short() {
		t.Skip("3 NameNodes")
	}
	c := testcluster.NewProcess(t, testcluster.Config{NameNodes: 3, DataNodes: 1, Conf: map[string]string{"dfs.replication": "1"}})
	c.WaitSafeModeOff()
	dir := t.TempDir()
	var props bytes.Buffer
	props.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
	cc := c.ClientConf()
	for _, k := range cc.Keys() {
		fmt.Fprintf(&props, "  <property><name>%s</name><value>%s</value></property>\n", k, cc.Get(k))
	}
	props.WriteString("</configuration>\n")
	for _, f := range []string{"core-site.xml", "hdfs-site.xml"} {
		if err := os.WriteFile(filepath.Join(dir, f), props.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HADOOP_CONF_DIR", dir)
	hc, err := hadoopconf.LoadFromEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	opts := gohdfs.ClientOptionsFromConf(hc)
	if len(opts.Addresses) != 3 {
		t.Fatalf("colinmarc/hdfs found NameNodes %v in HADOOP_CONF_DIR", opts.Addresses)
	}
	opts.User = c.Superuser()
	gc, err := gohdfs.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	write := func(p, content string) {
		t.Helper()
		w, err := gc.Create(p)
		if err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
		if _, err := io.WriteString(w, content); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("close %s: %v", p, err)
		}
	}
	if err := gc.MkdirAll("/go/before", 0o755); err != nil {
		t.Fatal(err)
	}
	write("/go/before/f", "written before the failover")
	old := c.ActiveNameNode()
	c.KillNameNodeAt(old)
	start := time.Now()
	// colinmarc/hdfs fails over on StandbyException and on a failed
	// write of a request, but hands a broken reply (EOF from the killed
	// active) to the caller, and "no available namenodes" while every
	// member answered standby in the last 5 s (no election finished yet):
	// its callers retry, as this one does, for at most 15 s.
	for attempt := 1; ; attempt++ {
		err = gc.MkdirAll("/go/after", 0o755)
		if err == nil {
			break
		}
		if time.Since(start) > 15*time.Second {
			t.Fatalf("mkdir after the failover: %v", err)
		}
		t.Logf("attempt %d after the kill: %v; retrying", attempt, err)
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("colinmarc/hdfs mkdir answered %v after kill -9 of the active", time.Since(start).Round(time.Millisecond))
	write("/go/after/f", "written after the failover")
	for p, want := range map[string]string{"/go/before/f": "written before the failover", "/go/after/f": "written after the failover"} {
		b, err := gc.ReadFile(p)
		if err != nil || string(b) != want {
			t.Errorf("read %s = %q, %v; want %q", p, b, err, want)
		}
	}
}

// TestHAMembership changes the group through the binary: a fourth
// NameNode is bootstrapped, started and added with haadmin -addNameNode,
// catches up, and a member is removed with -removeNameNode; the group
// goes on serving.
func TestHAMembership(t *testing.T) {
	if testing.Short() {
		t.Skip("4 NameNodes")
	}
	c := testcluster.NewProcess(t, testcluster.Config{NameNodes: 3})
	c.ActiveNameNode()
	cl := c.Client(c.Superuser())
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		if err := cl.Mkdir(ctx, fmt.Sprintf("/m%d", i), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rpc4, http4 := testcluster.FreePort(t), testcluster.FreePort(t)
	ids := "nn1,nn2,nn3,nn4"
	extra := []string{
		"-D", "dfs.ha.namenodes.ns1=" + ids,
		"-D", "dfs.namenode.rpc-address.ns1.nn4=" + rpc4,
		"-D", "dfs.namenode.http-address.ns1.nn4=" + http4,
	}
	args := func(more ...string) []string {
		return c.NameNodeArgsAt(3, append(append([]string(nil), extra...), more...)...)
	}
	if out, err := exec.Command(c.Binary(), args("namenode", "-bootstrapStandby")...).CombinedOutput(); err != nil {
		t.Fatalf("bootstrapStandby nn4: %v\n%s", err, out)
	}
	nn4 := exec.Command(c.Binary(), args("namenode")...)
	var log4 testcluster.SyncBuffer
	nn4.Stdout, nn4.Stderr = &log4, &log4
	if err := nn4.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		nn4.Process.Kill()
		nn4.Wait()
		if t.Failed() {
			t.Logf("nn4 log:\n%s", log4.String())
		}
	})
	out, errOut, code := c.Run(c.Superuser(), "haadmin", "-addNameNode", "nn4", rpc4)
	if code != 0 {
		t.Fatalf("-addNameNode: %d %s %s", code, out, errOut)
	}
	out, _, _ = c.Run(c.Superuser(), "haadmin", "-getGroup")
	if !bytes.Contains([]byte(out), []byte("nn4")) {
		t.Fatalf("-getGroup after -addNameNode:\n%s", out)
	}
	if err := cl.Mkdir(ctx, "/after-add", 0o755); err != nil {
		t.Fatal(err)
	}
	// nn4 catches up: same namespace as the active.
	active := c.ActiveNameNode()
	deadline := time.Now().Add(20 * time.Second)
	for {
		a, err1 := digestOf(c.NameNodeHTTPAddrAt(active))
		d, err2 := digestOf(http4)
		if err1 == nil && err2 == nil && a == d {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nn4 did not catch up: active %+v, nn4 %+v (%v %v)", a, d, err1, err2)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Remove a standby; the other three go on.
	gone := (active + 1) % 3
	out, errOut, code = c.Run(c.Superuser(), "haadmin", "-removeNameNode", testcluster.NameNodeID(gone))
	if code != 0 {
		t.Fatalf("-removeNameNode: %d %s %s", code, out, errOut)
	}
	c.KillNameNodeAt(gone)
	out, _, _ = c.Run(c.Superuser(), "haadmin", "-getGroup")
	if bytes.Contains([]byte(out), []byte(testcluster.NameNodeID(gone)+" ")) {
		t.Errorf("-getGroup still lists %s:\n%s", testcluster.NameNodeID(gone), out)
	}
	if err := cl.Mkdir(ctx, "/after-remove", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, code := c.Run("mallory", "haadmin", "-removeNameNode", "nn4"); code == 0 {
		t.Error("mallory's -removeNameNode succeeded")
	}
}

// TestHAMapReduceAcrossFailover: a TeraSort on the JobTracker and
// TaskTrackers of an HA nameservice survives kill -9 of the active
// NameNode while it runs (the daemons and tasks reach hdfs://ns1 through
// the failover client), and its output validates.
func TestHAMapReduceAcrossFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("3 NameNodes, 2 DataNodes, a JobTracker and 2 TaskTrackers")
	}
	c := testcluster.NewProcess(t, testcluster.Config{NameNodes: 3, DataNodes: 2, MapReduce: true, Conf: map[string]string{"dfs.replication": "2"}})
	c.WaitSafeModeOff()
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code := c.Run(c.Superuser(), args...)
		if code != 0 {
			t.Fatalf("strata %v: exit %d\n%s\n%s", args, code, out, errOut)
		}
		return out + errOut
	}
	run("-D", "mapreduce.job.maps=2", "examples", "teragen", "2000000", "/tera/in")
	done := make(chan string, 1)
	go func() {
		out, errOut, code := c.Run(c.Superuser(), "-D", "mapreduce.job.reduces=2", "examples", "terasort", "/tera/in", "/tera/out")
		done <- fmt.Sprintf("exit %d\n%s\n%s", code, out, errOut)
	}()
	// Kill the active as soon as the job runs (a TeraSort of 200 MB takes
	// a few seconds here).
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if out, _, _ := c.Run(c.Superuser(), "job", "-list"); strings.Contains(out, "RUNNING") {
			break
		}
	}
	old := c.ActiveNameNode()
	c.KillNameNodeAt(old)
	select {
	case res := <-done:
		t.Fatalf("terasort ended before the kill, which tests nothing: %s", res)
	default:
	}
	if _, ok := c.WaitActive(30*time.Second, old); !ok {
		t.Fatal("no new active")
	}
	res := <-done
	if !strings.HasPrefix(res, "exit 0") {
		t.Fatalf("terasort across the failover: %s", res)
	}
	run("examples", "teravalidate", "/tera/out", "/tera/report")
	if out := run("dfs", "-cat", "/tera/report/part-r-00000"); strings.Contains(out, "error") || !strings.Contains(out, "checksum") {
		t.Errorf("teravalidate report:\n%s", out)
	}
}
