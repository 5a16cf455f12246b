// Package hostnet places the daemons of a cluster on this machine on
// hosts of their own, as on the papers' clusters: a network namespace per
// host with its own address, joined by veth pairs to a bridge private to
// the cluster, each link optionally shaped with tc tbf (Network); and a
// CPU share per host, a cgroup whose CFS quota its processes and their
// children share (CPUGroups). Each link's counters (Link) are the
// bytes and packets into and out of its host.
//
// Invariants: nothing on a Network reaches beyond the cluster's own
// addresses (each namespace has its loopback, its eth0 on the bridge's
// /24 and no other route); every namespace, veth, bridge, hosts file and
// cgroup is named strata-<pid>-<id>-..., removed by Close, and removed by
// a later New of another process when <pid> no longer runs. Both need
// root; New and NewCPUGroups return an error wrapping ErrUnavailable when
// the machine cannot (not root, no ip netns, no cpu controller), which
// callers turn into a skipped test or a fallback to loopback.
//
// The test machines' kernel has tbf but no netem and no tc classifiers,
// and their image no iptables: partitions are "unreachable" routes.
package hostnet

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// ErrUnavailable is wrapped by the errors of New and NewCPUGroups when
// this machine cannot give hosts or CPU shares (as opposed to a failure
// while making them).
var ErrUnavailable = errors.New("hostnet: unavailable")

// ClientHost is the name of the root namespace's host: the bridge's own
// address, where the process that made the Network and its clients are.
const ClientHost = "client"

// Prefix starts the names of every namespace, cgroup and hosts-file
// directory made here: strata-<pid>-<id>-<host>.
const Prefix = "strata-"

// Host is one host of a Network.
type Host struct {
	Name string
	NS   string // network namespace ("" for ClientHost)
	Veth string // the bridge end of its veth pair, in the root namespace
	IP   string
}

// Network is a cluster's private network. Its methods are not safe for
// concurrent use.
type Network struct {
	id     string // unique: names the bridge, veths and namespaces
	bridge string
	prefix string // "10.a.b."
	hosts  map[string]*Host
	cuts   map[[2]string]bool // host pairs partitioned (both directions)
	rates  map[string]int64   // bits per second each shaped host's link was given
}

var (
	netMu      sync.Mutex
	netSubnets = map[string]bool{}
	netSwept   bool
)

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

// pidGone reports whether the pid in a strata-<pid>-... name no longer
// runs (and is not this process).
func pidGone(s string) bool {
	pid, err := strconv.Atoi(s)
	return err == nil && pid > 0 && pid != os.Getpid() && syscall.Kill(pid, 0) != nil
}

// sweepStaleNetworks deletes the namespaces, bridges and hosts files of
// processes that no longer run (killed before their Close). Once per
// process.
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
		parts := strings.SplitN(strings.TrimPrefix(name, Prefix), "-", 3)
		if !strings.HasPrefix(name, Prefix) || len(parts) != 3 || !pidGone(parts[0]) {
			continue
		}
		runIP("", "netns", "del", name)
		runIP("", "link", "del", "stb"+parts[1])
		os.RemoveAll(filepath.Join(netnsEtc, name))
	}
}

// Available reports why New would fail for want of root or ip netns, or
// nil.
func Available() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: hosts need root (network namespaces)", ErrUnavailable)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("%w: hosts need the ip command (iproute2)", ErrUnavailable)
	}
	return nil
}

// New makes a cluster's bridge, with ClientHost on its .1 address.
func New() (*Network, error) {
	if err := Available(); err != nil {
		return nil, err
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
			return nil, errors.New("hostnet: no free 10.x.y.0/24 subnet")
		}
	}
	netSubnets[prefix] = true
	netMu.Unlock()
	n := &Network{id: id, bridge: "stb" + id, prefix: prefix, hosts: map[string]*Host{}, cuts: map[[2]string]bool{}, rates: map[string]int64{}}
	// Probe: a namespace that cannot be made means none can.
	probe := fmt.Sprintf("%s%d-%s-probe", Prefix, os.Getpid(), id)
	if err := runIP("", "netns", "add", probe); err != nil {
		n.release()
		return nil, fmt.Errorf("%w: hosts need network namespaces: %v", ErrUnavailable, err)
	}
	runIP("", "netns", "del", probe)
	for _, args := range [][]string{
		{"link", "add", n.bridge, "type", "bridge"},
		{"addr", "add", prefix + "1/24", "dev", n.bridge},
		{"link", "set", n.bridge, "up"},
	} {
		if err := runIP("", args...); err != nil {
			n.Close()
			return nil, fmt.Errorf("hostnet: %w", err)
		}
	}
	n.hosts[ClientHost] = &Host{Name: ClientHost, IP: prefix + "1"}
	return n, nil
}

// AddHost makes host name's namespace with address <prefix>.octet (2 to
// 254), its loopback up, and a veth pair into the bridge; a host that
// exists is returned as it is.
func (n *Network) AddHost(name string, octet int) (*Host, error) {
	if h := n.hosts[name]; h != nil {
		return h, nil
	}
	if octet < 2 || octet > 254 {
		return nil, fmt.Errorf("hostnet: host %s: address octet %d out of range [2, 254]", name, octet)
	}
	h := &Host{
		Name: name,
		NS:   fmt.Sprintf("%s%d-%s-%s", Prefix, os.Getpid(), n.id, name),
		Veth: fmt.Sprintf("st%s%d", n.id, len(n.hosts)),
		IP:   n.prefix + strconv.Itoa(octet),
	}
	n.hosts[name] = h
	peer := h.Veth + "p"
	for _, c := range []struct {
		ns   string
		args []string
	}{
		{"", []string{"netns", "add", h.NS}},
		{"", []string{"link", "add", h.Veth, "type", "veth", "peer", "name", peer}},
		{"", []string{"link", "set", peer, "netns", h.NS}},
		{"", []string{"link", "set", h.Veth, "master", n.bridge, "up"}},
		{h.NS, []string{"link", "set", "lo", "up"}},
		{h.NS, []string{"link", "set", peer, "name", "eth0"}},
		{h.NS, []string{"addr", "add", h.IP + "/24", "dev", "eth0"}},
		{h.NS, []string{"link", "set", "eth0", "up"}},
	} {
		if err := runIP(c.ns, c.args...); err != nil {
			return nil, fmt.Errorf("hostnet: host %s: %w", name, err)
		}
	}
	if err := n.writeHostsFiles(); err != nil {
		return nil, err
	}
	return h, nil
}

// netnsEtc is where ip netns exec finds a namespace's own /etc files: it
// bind-mounts /etc/netns/<ns>/hosts over /etc/hosts for the program it
// runs.
const netnsEtc = "/etc/netns"

// writeHostsFiles gives every namespace a hosts file naming every host of
// the cluster, as a cluster's DNS would: daemons and clients in the
// namespaces resolve each other by name. The files are rewritten in
// place, so programs already running see hosts added later (a bind mount
// follows the inode, not the name).
func (n *Network) writeHostsFiles() error {
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n")
	names := make([]string, 0, len(n.hosts))
	for name := range n.hosts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&b, "%s\t%s\n", n.hosts[name].IP, name)
	}
	for _, h := range n.hosts {
		if h.NS == "" {
			continue
		}
		dir := filepath.Join(netnsEtc, h.NS)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("hostnet: hosts file: %w", err)
		}
		f, err := os.OpenFile(filepath.Join(dir, "hosts"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err == nil {
			_, err = f.WriteString(b.String())
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return fmt.Errorf("hostnet: hosts file: %w", err)
		}
	}
	return nil
}

// Host returns the host called name, nil if there is none.
func (n *Network) Host(name string) *Host { return n.hosts[name] }

// Wrap is the command prefix that runs a program on host name: ip netns
// exec in its namespace; nothing for ClientHost or an unknown host.
func (n *Network) Wrap(name string) []string {
	h := n.hosts[name]
	if h == nil || h.NS == "" {
		return nil
	}
	return []string{"ip", "netns", "exec", h.NS}
}

// Cut makes a and b unreachable from each other: each gets an
// "unreachable" route to the other's address, so new connections fail
// with "no route to host" and established ones stall, as across a broken
// link with ICMP.
func (n *Network) Cut(a, b string) error {
	ha, hb := n.hosts[a], n.hosts[b]
	if ha == nil || hb == nil {
		return fmt.Errorf("hostnet: no host %q or %q", a, b)
	}
	if a == b || n.cuts[[2]string{a, b}] {
		return nil
	}
	if err := runIP(ha.NS, "route", "replace", "unreachable", hb.IP+"/32"); err != nil {
		return fmt.Errorf("hostnet: %w", err)
	}
	if err := runIP(hb.NS, "route", "replace", "unreachable", ha.IP+"/32"); err != nil {
		return fmt.Errorf("hostnet: %w", err)
	}
	n.cuts[[2]string{a, b}], n.cuts[[2]string{b, a}] = true, true
	return nil
}

// Heal removes every cut.
func (n *Network) Heal() {
	for k := range n.cuts {
		ha, hb := n.hosts[k[0]], n.hosts[k[1]]
		runIP(ha.NS, "route", "del", "unreachable", hb.IP+"/32")
		delete(n.cuts, k)
	}
}

// Shape limits host name's link (any host but ClientHost) to
// bitsPerSecond in each direction with tc tbf on both ends of its veth
// pair; 0 removes the limit.
func (n *Network) Shape(name string, bitsPerSecond int64) error {
	h := n.hosts[name]
	if h == nil {
		return fmt.Errorf("hostnet: no host %q", name)
	}
	if h.NS == "" {
		return errors.New("hostnet: Shape: the client host has no link of its own; shape the other end")
	}
	for _, end := range []struct{ ns, dev string }{{h.NS, "eth0"}, {"", h.Veth}} {
		args := []string{"qdisc", "del", "dev", end.dev, "root"}
		if bitsPerSecond > 0 {
			// A bucket of at least 10 ms of the rate, and never below 16
			// KiB (a few MTU-sized frames), so the timer's granularity
			// does not cap the rate.
			burst := max(bitsPerSecond/8/100, 16<<10)
			args = []string{"qdisc", "replace", "dev", end.dev, "root", "tbf",
				"rate", fmt.Sprintf("%dbit", bitsPerSecond), "burst", strconv.FormatInt(burst, 10), "latency", "500ms"}
		}
		if end.ns != "" {
			args = append([]string{"-n", end.ns}, args...)
		}
		out, err := exec.Command("tc", args...).CombinedOutput()
		if err != nil && bitsPerSecond > 0 {
			return fmt.Errorf("hostnet: tc %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	if bitsPerSecond > 0 {
		n.rates[name] = bitsPerSecond
	} else {
		delete(n.rates, name)
	}
	return nil
}

// Close deletes the namespaces (their veth ends go with them, and the
// bridge ends with those), their hosts files and the bridge, whatever
// state they are in. Processes still running in a namespace keep it
// alive until they end: kill them first.
func (n *Network) Close() {
	for _, h := range n.hosts {
		if h.NS != "" {
			runIP("", "netns", "del", h.NS)
			os.RemoveAll(filepath.Join(netnsEtc, h.NS))
		}
		if h.Veth != "" {
			runIP("", "link", "del", h.Veth) // normally gone with its peer already
		}
	}
	for k := range n.cuts {
		if n.hosts[k[0]].NS == "" {
			runIP("", "route", "del", "unreachable", n.hosts[k[1]].IP+"/32")
		}
	}
	n.cuts = map[[2]string]bool{}
	runIP("", "link", "del", n.bridge)
	n.release()
}

func (n *Network) release() {
	netMu.Lock()
	delete(netSubnets, n.prefix)
	netMu.Unlock()
}
