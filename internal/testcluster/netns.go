package testcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/hostnet"
)

// Host names of the network hosts of a cluster with Config.Hosts, as
// Partition takes them: the NameNode's host and the test process's (the
// root network namespace, where clients run); see also DataNodeHost,
// JobTrackerHost and TaskTrackerHost.
const (
	NameNodeHost = "nn"
	ClientHost   = hostnet.ClientHost
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

// network is a cluster's private network (hostnet.Network: a bridge in
// the root namespace whose address is the test process's, ClientHost,
// and one namespace per daemon host), failing the test on error.
type network struct {
	t testing.TB
	n *hostnet.Network
}

// newNetwork makes a cluster's bridge and registers its removal (and that
// of every host added later) with t.Cleanup; it skips the test when the
// machine cannot (not root, no ip netns).
func newNetwork(t testing.TB) *network {
	t.Helper()
	n, err := hostnet.New()
	if errors.Is(err, hostnet.ErrUnavailable) {
		t.Skipf("testcluster: Config.Hosts: %v", err)
	}
	if err != nil {
		t.Fatalf("testcluster: network: %v", err)
	}
	t.Cleanup(n.Close)
	return &network{t: t, n: n}
}

// addHost makes host's namespace with address prefix+octet.
func (n *network) addHost(name string, octet int) *hostnet.Host {
	n.t.Helper()
	h, err := n.n.AddHost(name, octet)
	if err != nil {
		n.t.Fatalf("testcluster: network: %v", err)
	}
	return h
}

// wrap is the command prefix that runs a program in host's namespace.
func (n *network) wrap(name string) []string { return n.n.Wrap(name) }

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
			if err := p.net.n.Cut(x, y); err != nil {
				p.t.Fatalf("testcluster: Partition: %v", err)
			}
		}
	}
}

// Heal reconnects every host Partition cut apart.
func (p *Processes) Heal() {
	p.t.Helper()
	if p.net == nil {
		p.t.Fatal("testcluster: Heal needs Config.Hosts")
	}
	p.net.n.Heal()
}

// HostCommand is a strata client command (ClientArgs, then args) run on
// host, not yet started: in its network namespace with Config.Hosts,
// where the cluster's host names resolve (nn, jt, dn<i>, tt<i>); on
// ClientHost, or without Hosts, the same as Command.
func (p *Processes) HostCommand(host string, args ...string) *exec.Cmd {
	p.t.Helper()
	cmd := p.Command(args...)
	if p.net == nil || host == ClientHost {
		return cmd
	}
	w := p.net.wrap(host)
	if w == nil {
		p.t.Fatalf("testcluster: HostCommand: no host %q", host)
	}
	return exec.Command(w[0], append(append(w[1:len(w):len(w)], cmd.Path), cmd.Args[1:]...)...)
}

// HostAddr is the IP address of a network host (NameNodeHost,
// DataNodeHost(i), JobTrackerHost, TaskTrackerHost(i, n), ClientHost)
// with Config.Hosts, "" without.
func (p *Processes) HostAddr(host string) string {
	if p.net == nil || p.net.n.Host(host) == nil {
		return ""
	}
	return p.net.n.Host(host).IP
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
	if err := p.net.n.Shape(host, bitsPerSecond); err != nil {
		p.t.Fatalf("testcluster: %v", err)
	}
}
