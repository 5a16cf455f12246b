package testcluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Host names of the network hosts of a cluster with Config.Hosts, as
// Partition takes them: the NameNode's host and the test process's (the
// root network namespace, where clients run); see also DataNodeHost,
// JobTrackerHost and TaskTrackerHost.
const (
	NameNodeHost = "nn"
	ClientHost   = "client"
)

// DataNodeHost is the network host name of DataNode i with Config.Hosts:
// node i, where TaskTracker i runs too.
func DataNodeHost(i int) string { return fmt.Sprintf("dn%d", i) }

// JobTrackerHost is the network host of the JobTracker with Config.Hosts
// and Config.MapReduce.
const JobTrackerHost = "jt"

// TaskTrackerHost is the network host of TaskTracker i with Config.Hosts
// in a cluster of dataNodes DataNodes: DataNodeHost(i), the node it
// shares with DataNode i, or "tt<i>", a host of its own, for trackers
// beyond the DataNodes.
func TaskTrackerHost(i, dataNodes int) string {
	if i < dataNodes {
		return DataNodeHost(i)
	}
	return fmt.Sprintf("tt%d", i)
}

// netHost is one network namespace ("host") on the cluster's bridge.
type netHost struct {
	ns   string // network namespace name ("" for the client: the root namespace)
	veth string // the bridge end of its veth pair, in the root namespace
	ip   string
}

// network is a cluster's private network: a bridge in the root namespace
// whose address is the test process's (ClientHost), and one namespace per
// daemon host, each with a veth pair into the bridge, its own 10.x.y.z
// address, its loopback and no other route. Nothing in it can reach
// anything but the cluster's own addresses.
type network struct {
	t      testing.TB
	id     string // unique: names the bridge, veths and namespaces
	bridge string
	prefix string // "10.a.b."
	hosts  map[string]*netHost
	cuts   map[[2]string]bool // host pairs partitioned (both directions)
}

var (
	netMu      sync.Mutex
	netSubnets = map[string]bool{}
	netSwept   bool
)

// ip runs the ip command (in namespace ns unless ""), failing the test on
// error.
func (n *network) ip(ns string, args ...string) {
	n.t.Helper()
	if err := runIP(ns, args...); err != nil {
		n.t.Fatalf("testcluster: network: %v", err)
	}
}

func runIP(ns string, args ...string) error {
	if ns != "" {
		args = append([]string{"-n", ns}, args...)
	}
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// netnsPrefix starts the names of every namespace the harness makes:
// strata-<pid>-<id>-<host>, so a later run can remove what a killed test
// binary left behind (its pid no longer runs).
const netnsPrefix = "strata-"

// sweepStaleNetworks deletes the namespaces and bridges of test binaries
// that no longer run (killed before their cleanup ran). Once per process.
func sweepStaleNetworks() {
	if netSwept {
		return
	}
	netSwept = true
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		parts := strings.SplitN(strings.TrimPrefix(name, netnsPrefix), "-", 3)
		if !strings.HasPrefix(name, netnsPrefix) || len(parts) != 3 {
			continue
		}
		pid, err := strconv.Atoi(parts[0])
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) == nil || pid == os.Getpid() {
			continue
		}
		runIP("", "netns", "del", name)
		runIP("", "link", "del", "stb"+parts[1])
		os.RemoveAll(filepath.Join(netnsEtc, name))
	}
}

// newNetwork makes a cluster's bridge and registers its removal (and that
// of every host added later) with t.Cleanup; it skips the test when the
// machine cannot (not root, no ip netns).
func newNetwork(t testing.TB) *network {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("testcluster: Config.Hosts needs root (network namespaces)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("testcluster: Config.Hosts needs the ip command (iproute2)")
	}
	netMu.Lock()
	sweepStaleNetworks()
	b := make([]byte, 5)
	var id, prefix string
	routes, _ := exec.Command("ip", "-4", "route", "show", "table", "all").Output()
	for tries := 0; ; tries++ {
		rand.Read(b)
		id = hex.EncodeToString(b[:3])
		prefix = fmt.Sprintf("10.%d.%d.", 64+int(b[3])%128, b[4])
		if !netSubnets[prefix] && !strings.Contains(string(routes), prefix) {
			break
		}
		if tries > 100 {
			netMu.Unlock()
			t.Fatal("testcluster: network: no free 10.x.y.0/24 subnet")
		}
	}
	netSubnets[prefix] = true
	netMu.Unlock()
	n := &network{t: t, id: id, bridge: "stb" + id, prefix: prefix, hosts: map[string]*netHost{}, cuts: map[[2]string]bool{}}
	// Probe: a namespace that cannot be made skips the test.
	probe := fmt.Sprintf("%s%d-%s-probe", netnsPrefix, os.Getpid(), id)
	if err := runIP("", "netns", "add", probe); err != nil {
		t.Skipf("testcluster: Config.Hosts needs network namespaces: %v", err)
	}
	runIP("", "netns", "del", probe)
	t.Cleanup(n.close)
	n.ip("", "link", "add", n.bridge, "type", "bridge")
	n.ip("", "addr", "add", prefix+"1/24", "dev", n.bridge)
	n.ip("", "link", "set", n.bridge, "up")
	n.hosts[ClientHost] = &netHost{ip: prefix + "1"}
	return n
}

// addHost makes host's namespace with address prefix+octet, its loopback
// up, and a veth pair into the bridge.
func (n *network) addHost(name string, octet int) *netHost {
	n.t.Helper()
	if h := n.hosts[name]; h != nil {
		return h
	}
	h := &netHost{
		ns:   fmt.Sprintf("%s%d-%s-%s", netnsPrefix, os.Getpid(), n.id, name),
		veth: fmt.Sprintf("st%s%d", n.id, len(n.hosts)),
		ip:   n.prefix + strconv.Itoa(octet),
	}
	n.hosts[name] = h
	peer := h.veth + "p"
	n.ip("", "netns", "add", h.ns)
	n.ip("", "link", "add", h.veth, "type", "veth", "peer", "name", peer)
	n.ip("", "link", "set", peer, "netns", h.ns)
	n.ip("", "link", "set", h.veth, "master", n.bridge, "up")
	n.ip(h.ns, "link", "set", "lo", "up")
	n.ip(h.ns, "link", "set", peer, "name", "eth0")
	n.ip(h.ns, "addr", "add", h.ip+"/24", "dev", "eth0")
	n.ip(h.ns, "link", "set", "eth0", "up")
	n.writeHostsFiles()
	return h
}

// netnsEtc is where ip netns exec finds a namespace's own /etc files: it
// bind-mounts /etc/netns/<ns>/hosts over /etc/hosts for the program it
// runs.
const netnsEtc = "/etc/netns"

// writeHostsFiles gives every namespace a hosts file naming every host of
// the cluster (nn, jt, dn0, tt0, ..., client), as a cluster's DNS would:
// daemons and clients in the namespaces resolve each other by name
// (dfs.datanode.hostname=dn0 with the use.datanode.hostname keys). The
// files are rewritten in place, so daemons already running see hosts
// added later (a bind mount follows the inode, not the name).
func (n *network) writeHostsFiles() {
	n.t.Helper()
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n")
	names := make([]string, 0, len(n.hosts))
	for name := range n.hosts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&b, "%s\t%s\n", n.hosts[name].ip, name)
	}
	for _, h := range n.hosts {
		if h.ns == "" {
			continue
		}
		dir := filepath.Join(netnsEtc, h.ns)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			n.t.Fatalf("testcluster: network: %v", err)
		}
		f, err := os.OpenFile(filepath.Join(dir, "hosts"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err == nil {
			_, err = f.WriteString(b.String())
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			n.t.Fatalf("testcluster: network: hosts file: %v", err)
		}
	}
}

// wrap is the command prefix that runs a program in host's namespace.
func (n *network) wrap(name string) []string {
	return []string{"ip", "netns", "exec", n.hosts[name].ns}
}

func (n *network) host(name string) *netHost {
	n.t.Helper()
	h := n.hosts[name]
	if h == nil {
		n.t.Fatalf("testcluster: no network host %q", name)
	}
	return h
}

// cut makes a and b unreachable from each other: each gets an
// "unreachable" route to the other's address, so new connections fail
// with "no route to host" and established ones stall, as across a broken
// link with ICMP.
func (n *network) cut(a, b string) {
	n.t.Helper()
	ha, hb := n.host(a), n.host(b)
	if a == b || n.cuts[[2]string{a, b}] {
		return
	}
	n.ip(ha.ns, "route", "replace", "unreachable", hb.ip+"/32")
	n.ip(hb.ns, "route", "replace", "unreachable", ha.ip+"/32")
	n.cuts[[2]string{a, b}], n.cuts[[2]string{b, a}] = true, true
}

// heal removes every cut.
func (n *network) heal() {
	n.t.Helper()
	for k := range n.cuts {
		ha, hb := n.hosts[k[0]], n.hosts[k[1]]
		runIP(ha.ns, "route", "del", "unreachable", hb.ip+"/32")
		delete(n.cuts, k)
	}
}

// close deletes the namespaces (their veth ends go with them, and the
// bridge ends with those) and the bridge, whatever state the test left.
// The processes in them are killed first (Processes.Close runs before:
// it was registered later).
func (n *network) close() {
	for _, h := range n.hosts {
		if h.ns != "" {
			runIP("", "netns", "del", h.ns)
			os.RemoveAll(filepath.Join(netnsEtc, h.ns))
		}
		if h.veth != "" {
			runIP("", "link", "del", h.veth) // normally gone with its peer already
		}
	}
	for k := range n.cuts {
		if n.hosts[k[0]].ns == "" {
			runIP("", "route", "del", "unreachable", n.hosts[k[1]].ip+"/32")
		}
	}
	runIP("", "link", "del", n.bridge)
	netMu.Lock()
	delete(netSubnets, n.prefix)
	netMu.Unlock()
}

// Partition cuts every host of a off from every host of b (both
// directions), with Config.Hosts: host names are NameNodeHost,
// DataNodeHost(i) (also TaskTracker i's), JobTrackerHost,
// TaskTrackerHost(i, n) and ClientHost (this test process and its
// clients). Hosts within a group, and hosts in neither, still
// reach each other. New connections across the cut fail at once ("no
// route to host"); established ones stall until their peers' timeouts.
// Heal undoes every Partition.
func (p *Processes) Partition(a, b []string) {
	p.t.Helper()
	if p.net == nil {
		p.t.Fatal("testcluster: Partition needs Config.Hosts")
	}
	for _, x := range a {
		for _, y := range b {
			p.net.cut(x, y)
		}
	}
}

// Heal reconnects every host Partition cut apart.
func (p *Processes) Heal() {
	p.t.Helper()
	if p.net == nil {
		p.t.Fatal("testcluster: Heal needs Config.Hosts")
	}
	p.net.heal()
}

// HostCommand is a strata client command (ClientArgs, then args) run on
// host, not yet started: in its network namespace with Config.Hosts,
// where the cluster's host names resolve (nn, jt, dn<i>, tt<i>); on
// ClientHost, or without Hosts, the same as Command.
func (p *Processes) HostCommand(host string, args ...string) *exec.Cmd {
	cmd := p.Command(args...)
	if p.net == nil || host == ClientHost {
		return cmd
	}
	w := p.net.wrap(host)
	return exec.Command(w[0], append(append(w[1:len(w):len(w)], cmd.Path), cmd.Args[1:]...)...)
}

// HostAddr is the IP address of a network host (NameNodeHost,
// DataNodeHost(i), JobTrackerHost, TaskTrackerHost(i, n), ClientHost)
// with Config.Hosts, "" without.
func (p *Processes) HostAddr(host string) string {
	if p.net == nil || p.net.hosts[host] == nil {
		return ""
	}
	return p.net.hosts[host].ip
}

// MountTmpfs mounts a tmpfs of size bytes on dir (made if missing) and
// unmounts it at cleanup: a small disk that fills up. It needs root; the
// test is skipped without.
func MountTmpfs(t testing.TB, dir string, size int64) {
	t.Helper()
	t.Cleanup(mountTmpfs(t, dir, size))
}

// mountTmpfs mounts a tmpfs and returns its unmount.
func mountTmpfs(t testing.TB, dir string, size int64) func() {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("testcluster: a tmpfs of a given size needs root (mount -t tmpfs)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0755", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("testcluster: cannot mount a tmpfs on %s: %v: %s", dir, err, strings.TrimSpace(string(out)))
	}
	return func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Logf("testcluster: unmounting %s: %v: %s", dir, err, out)
		}
	}
}

// Shape limits a host's link (any host but ClientHost, with
// Config.Hosts) to bitsPerSecond in each direction with tc tbf on both
// ends of its veth pair; 0 removes the limit. Heal does not touch it.
func (p *Processes) Shape(host string, bitsPerSecond int64) {
	p.t.Helper()
	if p.net == nil {
		p.t.Fatal("testcluster: Shape needs Config.Hosts")
	}
	h := p.net.host(host)
	if h.ns == "" {
		p.t.Fatal("testcluster: Shape: the client host has no link of its own; shape the other end")
	}
	for _, end := range []struct{ ns, dev string }{{h.ns, "eth0"}, {"", h.veth}} {
		args := []string{"qdisc", "del", "dev", end.dev, "root"}
		if bitsPerSecond > 0 {
			// A burst of at least one MTU-sized packet per 10 ms tick.
			burst := max(bitsPerSecond/8/100, 16<<10)
			args = []string{"qdisc", "replace", "dev", end.dev, "root", "tbf",
				"rate", fmt.Sprintf("%dbit", bitsPerSecond), "burst", strconv.FormatInt(burst, 10), "latency", "500ms"}
		}
		if end.ns != "" {
			args = append([]string{"-n", end.ns}, args...)
		}
		out, err := exec.Command("tc", args...).CombinedOutput()
		if err != nil && bitsPerSecond > 0 {
			p.t.Fatalf("testcluster: tc %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
}
