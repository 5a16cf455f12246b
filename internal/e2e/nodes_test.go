package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/testcluster"
)

// DataNode i binds 127.0.0.(10+i): hosts files and rack mappings name
// nodes by address, as on real hosts.
func loopbackIP(i int) string { return fmt.Sprintf("127.0.0.%d", 10+i) }

func nodesClient(t *testing.T, c *testcluster.Processes, repl int) *hdfs.Client {
	t.Helper()
	cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: "root", BlockSize: 1 << 20, Replication: repl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func patterned(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + seed*7 + i>>9)
	}
	return b
}

func writeFile(ctx context.Context, cl *hdfs.Client, p string, data []byte) error {
	w, err := cl.CreateFile(ctx, p, fs.CreateOptions{CreateParent: true})
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

func readFile(ctx context.Context, cl *hdfs.Client, p string) ([]byte, error) {
	f, err := cl.OpenFile(ctx, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// nodeStatus is the "Decommission Status" of the DataNode at addr in a
// dfsadmin -report.
func nodeStatus(report, addr string) string {
	i := strings.Index(report, "Name: "+addr+" ")
	if i < 0 {
		return ""
	}
	m := regexp.MustCompile(`Decommission Status : (.*)`).FindStringSubmatch(report[i:])
	if m == nil {
		return ""
	}
	return m[1]
}

// TestDecommissionUnderLoad excludes a DataNode (dfs.hosts.exclude,
// host:port form) while clients write and read, runs dfsadmin
// -refreshNodes, and checks that the node ends Decommissioned, that
// nothing written or read was lost, and that every block has its
// replication on the other nodes.
func TestDecommissionUnderLoad(t *testing.T) {
	dir := t.TempDir()
	exclude := filepath.Join(dir, "dfs.exclude")
	if err := os.WriteFile(exclude, []byte("# nodes to decommission\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 5, DataNodeIP: loopbackIP,
		Conf: map[string]string{"dfs.hosts.exclude": exclude}})
	ctx := ctxT(t)
	cl := nodesClient(t, c, 3)
	files := map[string][]byte{}
	for i := 0; i < 4; i++ {
		p := fmt.Sprintf("/before/f%d", i)
		files[p] = patterned(3<<20+1234*i, i)
		if err := writeFile(ctx, cl, p, files[p]); err != nil {
			t.Fatal(err)
		}
	}
	for p := range files {
		c.WaitReplicated(p, 3, 30*time.Second)
	}

	// The workload: one writer of new files, one reader of the old ones.
	var mu sync.Mutex
	written := map[string][]byte{}
	stop := make(chan struct{})
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			p := fmt.Sprintf("/during/f%d", i)
			data := patterned(1<<20+4321*(i%5), 100+i)
			if err := writeFile(ctx, cl, p, data); err != nil {
				errs <- fmt.Errorf("write %s: %w", p, err)
				return
			}
			mu.Lock()
			written[p] = data
			mu.Unlock()
		}
	}()
	go func() {
		defer wg.Done()
		for {
			for p, want := range files {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				got, err := readFile(ctx, cl, p)
				if err != nil || !bytes.Equal(got, want) {
					errs <- fmt.Errorf("read %s during decommission: %d bytes, %v", p, len(got), err)
					return
				}
			}
		}
	}()

	victim := c.DataNodeAddr(0)
	time.Sleep(300 * time.Millisecond) // let the workload get going
	if err := os.WriteFile(exclude, []byte("# nodes to decommission\n"+victim+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := c.Run(c.Superuser(), "dfsadmin", "-refreshNodes")
	if code != 0 || strings.TrimSpace(out) != "Refresh nodes successful" {
		t.Fatalf("refreshNodes: exit %d %q %q", code, out, errOut)
	}
	if _, errOut, code := c.Run("bob", "dfsadmin", "-refreshNodes"); code == 0 || !strings.Contains(errOut, "Superuser privilege is required") {
		t.Errorf("refreshNodes by a non-superuser: exit %d %q", code, errOut)
	}
	sawProgress := false
	report := ""
	c.WaitFor(victim+" Decommissioned", 90*time.Second, func() bool {
		report, _, _ = c.Run(c.Superuser(), "dfsadmin", "-report")
		st := nodeStatus(report, victim)
		sawProgress = sawProgress || st == "Decommission in progress"
		return st == "Decommissioned"
	})
	close(stop)
	wg.Wait()
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("saw Decommission in progress: %v", sawProgress)
	if !strings.Contains(report, "Live datanodes (5):") {
		t.Errorf("report does not list the decommissioned node as live:\n%s", report)
	}
	for i := 1; i < 5; i++ {
		if st := nodeStatus(report, c.DataNodeAddr(i)); st != "Normal" {
			t.Errorf("node %d status %q, want Normal", i, st)
		}
	}
	out, _, _ = c.Run(c.Superuser(), "dfsadmin", "-report", "-decommissioning")
	if !strings.Contains(out, "Decommissioning datanodes (0):") || strings.Contains(out, "Live datanodes") {
		t.Errorf("report -decommissioning:\n%s", out)
	}

	// Nothing lost; every block fully replicated without the victim.
	mu.Lock()
	for p, d := range written {
		files[p] = d
	}
	mu.Unlock()
	if len(written) == 0 {
		t.Fatal("the writer wrote nothing during the decommission")
	}
	for p, want := range files {
		got, err := readFile(ctx, cl, p)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read %s after decommission: %d bytes, %v", p, len(got), err)
		}
		c.WaitFor(p+" replicated off "+victim, 30*time.Second, func() bool {
			locs, err := cl.BlockLocations(ctx, p)
			if err != nil {
				return false
			}
			for _, l := range locs {
				n := 0
				for _, h := range l.Hosts {
					if h != victim {
						n++
					}
				}
				if n < 3 {
					return false
				}
			}
			return true
		})
	}
	// The new files never went to the leaving node once it was excluded,
	// and the old replicas on it are still readable (it serves reads
	// last).
	locs, err := cl.BlockLocations(ctx, "/before/f0")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range locs {
		for j, h := range l.Hosts {
			if h == victim && j != len(l.Hosts)-1 {
				t.Errorf("block %d: decommissioned node listed before in-service ones: %v", l.BlockID, l.Hosts)
			}
		}
	}
}

// TestDisallowedDataNode: with dfs.hosts set, a DataNode not listed is
// refused registration (DisallowedDatanodeException).
func TestDisallowedDataNode(t *testing.T) {
	dir := t.TempDir()
	include := filepath.Join(dir, "dfs.include")
	os.WriteFile(include, []byte(loopbackIP(0)+"\n"+loopbackIP(1)+"\n"), 0o644)
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 2, DataNodeIP: loopbackIP,
		Conf: map[string]string{"dfs.hosts": include}})
	c.AddDataNode() // 127.0.0.12: not included
	time.Sleep(time.Second)
	if n := c.LiveDataNodes(); n != 2 {
		t.Fatalf("%d live DataNodes, want the 2 included", n)
	}
	c.WaitFor("DisallowedDatanodeException in the DataNode's log", 10*time.Second, func() bool {
		log := c.DataNodeProcess(2).Log()
		return strings.Contains(log, "DisallowedDatanodeException") && strings.Contains(log, "not in the include-list")
	})
}

func rackOfAddr(addr string, racks map[string]string) string {
	ip, _, _ := strings.Cut(addr, ":")
	return racks[ip]
}

// TestTwoRackPlacement: with a TableMapping of two racks, every block of
// a replication-3 file spans both, and dfsadmin -printTopology shows the
// racks.
func TestTwoRackPlacement(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "topology.table")
	racks := map[string]string{loopbackIP(0): "/r1", loopbackIP(1): "/r1", loopbackIP(2): "/r2", loopbackIP(3): "/r2"}
	var sb strings.Builder
	for ip, r := range racks {
		fmt.Fprintf(&sb, "%s %s\n", ip, r)
	}
	sb.WriteString("# the test's client\n127.0.0.1 /r2\n")
	os.WriteFile(table, []byte(sb.String()), 0o644)
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 4, DataNodeIP: loopbackIP, Conf: map[string]string{
		"net.topology.node.switch.mapping.impl": "org.apache.hadoop.net.TableMapping",
		"net.topology.table.file.name":          table,
	}})
	ctx := ctxT(t)
	cl := nodesClient(t, c, 3)
	data := patterned(8<<20+99, 3)
	if err := writeFile(ctx, cl, "/racks", data); err != nil {
		t.Fatal(err)
	}
	c.WaitReplicated("/racks", 3, 30*time.Second)
	locs, err := cl.BlockLocations(ctx, "/racks")
	if err != nil || len(locs) != 9 {
		t.Fatalf("%d blocks, %v", len(locs), err)
	}
	for _, l := range locs {
		seen := map[string]int{}
		for _, h := range l.Hosts {
			seen[rackOfAddr(h, racks)]++
		}
		if len(seen) != 2 {
			t.Errorf("block %d on %v: one rack only", l.BlockID, l.Hosts)
		}
		// The client is on /r2 (the table says so): its rack's replicas
		// are listed first.
		for j := 1; j < len(l.Hosts); j++ {
			if rackOfAddr(l.Hosts[j], racks) == "/r2" && rackOfAddr(l.Hosts[j-1], racks) == "/r1" {
				t.Errorf("block %d: %v lists an off-rack replica before a local-rack one", l.BlockID, l.Hosts)
			}
		}
	}
	out, _, code := c.Run(c.Superuser(), "dfsadmin", "-printTopology")
	if code != 0 {
		t.Fatalf("printTopology: exit %d", code)
	}
	var want strings.Builder
	for _, r := range []string{"/r1", "/r2"} {
		fmt.Fprintf(&want, "Rack: %s\n", r)
		for i := 0; i < 4; i++ {
			if racks[loopbackIP(i)] == r {
				fmt.Fprintf(&want, "   %s (%s)\n", c.DataNodeAddr(i), loopbackIP(i))
			}
		}
		want.WriteString("\n")
	}
	if out != want.String() {
		t.Errorf("printTopology:\n%s\nwant:\n%s", out, want.String())
	}
	report, _, _ := c.Run(c.Superuser(), "dfsadmin", "-report", "-live")
	if !strings.Contains(report, "Rack: /r2") {
		t.Errorf("report -live names no rack:\n%s", report)
	}
}

// TestRackMisreplicationRepaired: blocks written while every DataNode
// was on one rack (by a topology script) get a replica on the second
// rack once nodes join it, and keep their replication.
func TestRackMisreplicationRepaired(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "topology.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nfor a in \"$@\"; do case $a in "+loopbackIP(0)+"|"+loopbackIP(1)+") echo /r1;; *) echo /r2;; esac; done\n"), 0o755)
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 2, DataNodeIP: loopbackIP, Conf: map[string]string{
		"net.topology.script.file.name": script,
	}})
	ctx := ctxT(t)
	cl := nodesClient(t, c, 2)
	data := patterned(4<<20, 9)
	if err := writeFile(ctx, cl, "/onerack", data); err != nil {
		t.Fatal(err)
	}
	c.WaitReplicated("/onerack", 2, 30*time.Second)
	c.AddDataNode()
	c.AddDataNode()
	racks := map[string]string{loopbackIP(0): "/r1", loopbackIP(1): "/r1", loopbackIP(2): "/r2", loopbackIP(3): "/r2"}
	c.WaitFor("every block on both racks with 2 replicas", 60*time.Second, func() bool {
		locs, err := cl.BlockLocations(ctx, "/onerack")
		if err != nil {
			return false
		}
		for _, l := range locs {
			seen := map[string]bool{}
			for _, h := range l.Hosts {
				seen[rackOfAddr(h, racks)] = true
			}
			if len(l.Hosts) != 2 || len(seen) != 2 {
				return false
			}
		}
		return true
	})
	got, err := readFile(ctx, cl, "/onerack")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
}

// TestBalancer writes with one DataNode, adds two empty ones, and runs
// `strata balancer` while a client writes: it must exit 0 with every
// node's utilisation within the threshold of the mean, each block still
// at its replication (the moved replicas' sources deleted), and every
// file intact.
func TestBalancer(t *testing.T) {
	const volume = 48 << 20
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1, DataNodeIP: loopbackIP,
		Volumes:    []storage.Type{storage.Disk},
		VolumeSize: func(i, v int) int64 { return volume },
		// Block tokens on, as strata local has them: the balancer mints
		// its REPLACE_BLOCK tokens from getBlockKeys.
		Conf: map[string]string{"dfs.datanode.balance.bandwidthPerSec": "20m", "dfs.block.access.token.enable": "true"},
	})
	ctx := ctxT(t)
	cl := nodesClient(t, c, 1)
	files := map[string][]byte{}
	for i := 0; i < 3; i++ {
		p := fmt.Sprintf("/data/f%d", i)
		files[p] = patterned(8<<20, 40+i)
		if err := writeFile(ctx, cl, p, files[p]); err != nil {
			t.Fatal(err)
		}
	}
	c.AddDataNode()
	c.AddDataNode()
	time.Sleep(500 * time.Millisecond) // a heartbeat with the new nodes' figures

	// A writer running alongside the balancer.
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 4; i++ {
			p := fmt.Sprintf("/during/f%d", i)
			d := patterned(256<<10, 70+i)
			if err := writeFile(ctx, cl, p, d); err != nil {
				done <- err
				return
			}
			files[p] = d
		}
		done <- nil
	}()
	// The balancer waits 2 heartbeats and a replication interval between
	// iterations: the cluster's.
	fast := []string{"-D", "dfs.heartbeat.interval=100ms", "-D", "dfs.namenode.redundancy.interval.seconds=200ms", "-D", "dfs.balancer.getBlocks.min-block-size=1024"}
	out, errOut, code := c.Run(c.Superuser(), append([]string{"balancer", "-threshold", "10"}, fast...)...)
	if err := <-done; err != nil {
		t.Fatalf("write during balancing: %v", err)
	}
	if code != 0 || !strings.Contains(out, "The cluster is balanced. Exiting...") ||
		!strings.Contains(out, "Time Stamp               Iteration#  Bytes Already Moved  Bytes Left To Move  Bytes Being Moved") {
		t.Fatalf("balancer: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	t.Logf("balancer:\n%s\nstderr:\n%s", out, errOut)

	// Utilisation within 10 points of the mean, as the NameNode sees it.
	var rep hdfspb.GetDatanodeStorageReportResponseProto
	if err := cl.Call(ctx, "getDatanodeStorageReport", &hdfspb.GetDatanodeStorageReportRequestProto{Type: hdfspb.DatanodeReportTypeProto_LIVE.Enum()}, &rep); err != nil {
		t.Fatal(err)
	}
	var used, capacity float64
	utils := map[string]float64{}
	for _, r := range rep.GetDatanodeStorageReports() {
		var u, cp float64
		for _, s := range r.GetStorageReports() {
			u += float64(s.GetDfsUsed())
			cp += float64(s.GetCapacity())
		}
		used += u
		capacity += cp
		utils[r.GetDatanodeInfo().GetId().GetIpAddr()] = u * 100 / cp
	}
	mean := used * 100 / capacity
	for ip, u := range utils {
		if u > mean+10 || u < mean-10 {
			t.Errorf("node %s at %.1f%%, mean %.1f%%", ip, u, mean)
		}
	}
	if len(utils) != 3 {
		t.Fatalf("%d live nodes", len(utils))
	}
	// The moves' sources were deleted: replication 1 everywhere, and
	// everything reads back.
	for p, want := range files {
		c.WaitReplicated(p, 1, 30*time.Second)
		locs, err := cl.BlockLocations(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range locs {
			if len(l.Hosts) != 1 {
				c.WaitFor(fmt.Sprintf("block %d of %s back at one replica", l.BlockID, p), 30*time.Second, func() bool {
					ls, err := cl.BlockLocations(ctx, p)
					if err != nil {
						return false
					}
					for _, x := range ls {
						if len(x.Hosts) != 1 {
							return false
						}
					}
					return true
				})
				break
			}
		}
		got, err := readFile(ctx, cl, p)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read %s after balancing: %d bytes, %v", p, len(got), err)
		}
	}
	// A second run finds the cluster balanced at once.
	out, _, code = c.Run(c.Superuser(), append([]string{"balancer", "-threshold", "10"}, fast...)...)
	if code != 0 || !strings.Contains(out, "The cluster is balanced. Exiting...") {
		t.Errorf("second balancer run: exit %d\n%s", code, out)
	}
}

// TestMaintenanceMode uses the JSON hosts file (CombinedHostFileManager):
// a node put IN_MAINTENANCE goes Entering Maintenance → In Maintenance,
// is listed by dfsadmin -report -inmaintenance, may then stop without
// its blocks being copied (dfs.namenode.maintenance.replication.min
// live replicas remain), and returns to service when listed NORMAL.
func TestMaintenanceMode(t *testing.T) {
	dir := t.TempDir()
	hosts := filepath.Join(dir, "dfs.hosts.json")
	write := func(maint int) {
		var es []string
		for i := 0; i < 4; i++ {
			e := fmt.Sprintf(`{"hostName": %q}`, loopbackIP(i))
			if i == maint {
				e = fmt.Sprintf(`{"hostName": %q, "adminState": "IN_MAINTENANCE", "maintenanceExpireTimeInMS": %d}`,
					loopbackIP(i), time.Now().Add(time.Hour).UnixMilli())
			}
			es = append(es, e)
		}
		if err := os.WriteFile(hosts, []byte("["+strings.Join(es, ",\n")+"]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(-1)
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 4, DataNodeIP: loopbackIP, Conf: map[string]string{
		"dfs.namenode.hosts.provider.classname": "org.apache.hadoop.hdfs.server.blockmanagement.CombinedHostFileManager",
		"dfs.hosts":                             hosts,
	}})
	ctx := ctxT(t)
	cl := nodesClient(t, c, 2)
	data := patterned(3<<20, 5)
	if err := writeFile(ctx, cl, "/m", data); err != nil {
		t.Fatal(err)
	}
	c.WaitReplicated("/m", 2, 30*time.Second)
	write(0)
	if out, _, code := c.Run(c.Superuser(), "dfsadmin", "-refreshNodes"); code != 0 {
		t.Fatalf("refreshNodes: %d %s", code, out)
	}
	node := c.DataNodeAddr(0)
	c.WaitFor(node+" In maintenance", 30*time.Second, func() bool {
		out, _, _ := c.Run(c.Superuser(), "dfsadmin", "-report", "-inmaintenance")
		return strings.Contains(out, "In maintenance datanodes (1):") && nodeStatus(out, node) == "In maintenance"
	})
	// Down for maintenance: no block falls below the minimum, and none is
	// copied to make up for it.
	before, _ := cl.BlockLocations(ctx, "/m")
	c.StopDataNode(0)
	c.WaitFor(node+" dead", 60*time.Second, func() bool {
		out, _, _ := c.Run(c.Superuser(), "dfsadmin", "-report", "-dead")
		return strings.Contains(out, "Name: "+node+" ")
	})
	// Ten replication passes (dfs.namenode.redundancy.interval.seconds
	// 200ms) in which a dead node's blocks would be copied.
	time.Sleep(2 * time.Second)
	got, err := readFile(ctx, cl, "/m")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read with a node in maintenance down: %d bytes, %v", len(got), err)
	}
	after, _ := cl.BlockLocations(ctx, "/m")
	for i, l := range after {
		if len(l.Hosts) == 0 {
			t.Fatalf("block %d unreadable", l.BlockID)
		}
		was := 0
		for _, h := range before[i].Hosts {
			if h != node {
				was++
			}
		}
		if len(l.Hosts) > was {
			t.Errorf("block %d re-replicated while its node was in maintenance: %v -> %v", l.BlockID, before[i].Hosts, l.Hosts)
		}
	}
	// Back: in service again.
	c.StartDataNode(0)
	write(-1)
	c.Run(c.Superuser(), "dfsadmin", "-refreshNodes")
	c.WaitFor(node+" Normal", 30*time.Second, func() bool {
		out, _, _ := c.Run(c.Superuser(), "dfsadmin", "-report", "-live")
		return nodeStatus(out, node) == "Normal"
	})
	c.WaitReplicated("/m", 2, 30*time.Second)
}

// TestHADecommission: dfsadmin -refreshNodes reaches every NameNode of
// an HA nameservice, so a node excluded before a failover is still being
// decommissioned (and ends Decommissioned) under the new active.
func TestHADecommission(t *testing.T) {
	if testing.Short() {
		t.Skip("3 NameNodes")
	}
	dir := t.TempDir()
	exclude := filepath.Join(dir, "dfs.exclude")
	os.WriteFile(exclude, nil, 0o644)
	c := testcluster.NewProcess(t, testcluster.Config{NameNodes: 3, DataNodes: 4, DataNodeIP: loopbackIP,
		Conf: map[string]string{"dfs.hosts.exclude": exclude, "dfs.replication": "2"}})
	c.WaitSafeModeOff()
	ctx := ctxT(t)
	cl := c.Client(c.Superuser())
	data := patterned(3<<20, 11)
	if err := writeFile(ctx, cl, "/ha", data); err != nil {
		t.Fatal(err)
	}
	c.WaitReplicated("/ha", 2, 30*time.Second)
	victim := c.DataNodeAddr(0)
	os.WriteFile(exclude, []byte(loopbackIP(0)+"\n"), 0o644)
	out, errOut, code := c.Run(c.Superuser(), "dfsadmin", "-refreshNodes")
	if code != 0 || strings.Count(out, "Refresh nodes successful for ") != 3 {
		t.Fatalf("refreshNodes: exit %d\n%s%s", code, out, errOut)
	}
	old := c.ActiveNameNode()
	target := (old + 1) % 3
	if out, errOut, code := c.Run(c.Superuser(), "haadmin", "-failover", testcluster.NameNodeID(old), testcluster.NameNodeID(target)); code != 0 {
		t.Fatalf("failover: %d\n%s%s", code, out, errOut)
	}
	c.WaitFor(victim+" Decommissioned under the new active", 60*time.Second, func() bool {
		out, _, _ := c.Run(c.Superuser(), "dfsadmin", "-report")
		return nodeStatus(out, victim) == "Decommissioned"
	})
	got, err := readFile(ctx, cl, "/ha")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read after decommission and failover: %d bytes, %v", len(got), err)
	}
}
