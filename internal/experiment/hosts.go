package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/hostnet"
	"github.com/stratafs/strata/internal/localcluster"
)

// A profile's cluster with Options.Hosts: every daemon a `strata` process
// (Options.Executable) on a network host of its own (package hostnet) —
// the NameNode on "nn", the JobTracker on "jt", node i's DataNode and
// TaskTracker on "dn<i>" — each host's link shaped to the profile's
// link.mbps and each node's processes, tasks included, capped at its
// node.cpus. The experiment's own process is the cluster's client, on the
// bridge's address. Its storage is the in-process cluster's: node i's
// devices under <dir>/dn<i>, emulated alike (strata.media.dirs is passed
// to every daemon, which exports it to its tasks).

// cluster is what runProfile needs of a profile's cluster, whichever way
// it runs.
type cluster interface {
	WaitReady(ctx context.Context) error
	ClientConf(base *conf.Configuration) *conf.Configuration
	JobTrackerAddr() string
	Close() error
}

// HostsAvailable reports why Options.Hosts cannot run here (not root, no
// network namespaces), or nil; a profile with node.cpus also needs a
// cgroup cpu controller, which Run checks when it starts that profile.
func HostsAvailable() error { return hostnet.Available() }

// Fixed ports: every daemon has its host's address to itself.
const (
	hostsNNPort   = "8020"
	hostsNNHTTP   = "9870"
	hostsJTPort   = "8021"
	hostsNodeBase = 10 // node i's address octet is hostsNodeBase+i
)

// hostsCluster is a running cluster of daemon processes on hosts.
type hostsCluster struct {
	net    *hostnet.Network
	cpu    *hostnet.CPUGroups // nil without node.cpus
	procs  []*hostsProc
	nodes  int
	nnAddr string
	jtAddr string
	jtLog  string
}

type hostsProc struct {
	name  string
	label string // in the accounting: "namenode", "datanode dn0", ...
	cmd   *exec.Cmd
	log   *os.File
	done  chan struct{}
}

// startHosts starts p's cluster of o.DataNodes nodes on hosts; c is the
// profile's configuration (media table, p.Conf, the base).
func startHosts(o *Options, p *Profile, dir string, c *conf.Configuration) (cl *hostsCluster, err error) {
	exe := o.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	if o.DataNodes+hostsNodeBase > 254 {
		return nil, fmt.Errorf("experiment: -hosts: at most %d nodes", 254-hostsNodeBase)
	}
	n, err := hostnet.New()
	if err != nil {
		return nil, err
	}
	h := &hostsCluster{net: n, nodes: o.DataNodes}
	defer func() {
		if err != nil {
			h.Close()
		}
	}()
	if p.NodeCPUs > 0 {
		if h.cpu, err = hostnet.NewCPUGroups(); err != nil {
			return nil, fmt.Errorf("experiment: profile %s: node.cpus: %w", p.Name, err)
		}
	}
	add := func(name string, octet int) (*hostnet.Host, error) {
		host, err := n.AddHost(name, octet)
		if err == nil && p.LinkMbps > 0 {
			err = n.Shape(name, int64(p.LinkMbps*1e6))
		}
		return host, err
	}
	nn, err := add("nn", 2)
	if err != nil {
		return nil, err
	}
	jt, err := add("jt", 3)
	if err != nil {
		return nil, err
	}
	h.nnAddr, h.jtAddr = nn.IP+":"+hostsNNPort, jt.IP+":"+hostsJTPort

	// Every daemon gets the profile's configuration, then its addresses.
	base := c.Clone()
	if !base.IsSet("dfs.namenode.safemode.extension") {
		base.Set("dfs.namenode.safemode.extension", "0") // a fresh namespace
	}
	if !base.IsSet(localcluster.KeyBlockTokens) {
		base.Set(localcluster.KeyBlockTokens, "true") // as the in-process clusters
	}
	base.Set("fs.defaultFS", "hdfs://"+h.nnAddr)
	base.Set("dfs.namenode.rpc-address", h.nnAddr)
	base.Set("dfs.namenode.http-address", nn.IP+":"+hostsNNHTTP)
	base.Set("dfs.namenode.name.dir", filepath.Join(dir, "name"))
	base.Set("mapreduce.jobtracker.address", h.jtAddr)
	if o.MapSlots > 0 {
		base.Set("mapred.tasktracker.map.tasks.maximum", strconv.Itoa(o.MapSlots))
	}
	if o.ReduceSlots > 0 {
		base.Set("mapred.tasktracker.reduce.tasks.maximum", strconv.Itoa(o.ReduceSlots))
	}
	var opts []string
	for _, k := range base.Keys() {
		opts = append(opts, "-D", k+"="+base.Get(k))
	}
	with := func(extra ...string) []string { return append(append([]string(nil), opts...), extra...) }

	if out, err := exec.Command(exe, with("namenode", "-format")...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("experiment: namenode -format: %v: %s", err, strings.TrimSpace(string(out)))
	}
	if err := h.start(o, p, "namenode", "nn", exe, with("namenode")); err != nil {
		return nil, err
	}
	if err := h.start(o, p, "jobtracker", "jt", exe, with("jobtracker")); err != nil {
		return nil, err
	}
	h.jtLog = h.procs[len(h.procs)-1].log.Name()
	for i := 0; i < o.DataNodes; i++ {
		name := fmt.Sprintf("dn%d", i)
		host, err := add(name, hostsNodeBase+i)
		if err != nil {
			return nil, err
		}
		node := p.Node(dir, i)
		if err := h.start(o, p, "datanode-"+strconv.Itoa(i), name, exe, with(
			"-D", "dfs.datanode.data.dir="+localcluster.VolumeList(node.Volumes),
			"-D", "dfs.datanode.address="+host.IP+":9866",
			"-D", "dfs.datanode.http.address="+host.IP+":9864",
			"-D", "dfs.datanode.ipc.address="+host.IP+":9867",
			"datanode")); err != nil {
			return nil, err
		}
		if err := h.start(o, p, "tasktracker-"+strconv.Itoa(i), name, exe, with(
			"-D", "mapreduce.cluster.local.dir="+strings.Join(node.LocalDirs, ","),
			// Hadoop's default: the wildcard address; the tracker
			// advertises its host's (the address toward the JobTracker).
			"-D", "mapreduce.tasktracker.http.address=0.0.0.0:50060",
			"tasktracker")); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// start runs one daemon on host, its output in o.LogDir.
func (h *hostsCluster) start(o *Options, p *Profile, name, host, exe string, args []string) error {
	log, err := os.Create(filepath.Join(o.LogDir, p.Name+"-"+name+".log"))
	if err != nil {
		return err
	}
	var wrap []string
	if h.cpu != nil && strings.HasPrefix(host, "dn") {
		dirs, err := h.cpu.Group(host, p.NodeCPUs)
		if err != nil {
			log.Close()
			return fmt.Errorf("experiment: profile %s: node.cpus: %w", p.Name, err)
		}
		wrap = hostnet.Wrap(dirs)
	}
	wrap = append(wrap, h.net.Wrap(host)...)
	argv := append(append(wrap, exe), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("experiment: starting %s: %w", name, err)
	}
	label, _, _ := strings.Cut(name, "-")
	if strings.HasPrefix(host, "dn") {
		label += " " + host
	}
	pr := &hostsProc{name: name, label: label, cmd: cmd, log: log, done: make(chan struct{})}
	go func() { cmd.Wait(); close(pr.done) }()
	h.procs = append(h.procs, pr)
	return nil
}

// WaitReady waits until every DataNode is live, the NameNode is out of
// safe mode and every TaskTracker has joined the JobTracker; a daemon
// that exits fails it at once, naming its log.
func (h *hostsCluster) WaitReady(ctx context.Context) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var live, joined int
	safe := true
	for {
		for _, pr := range h.procs {
			select {
			case <-pr.done:
				return fmt.Errorf("experiment: %s exited (%v); see %s", pr.name, pr.cmd.ProcessState, pr.log.Name())
			default:
			}
		}
		if cl, err := hdfs.New(hdfs.Options{Addr: h.nnAddr}); err == nil {
			qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			live, _ = cl.LiveDataNodes(qctx)
			if on, err := cl.SafeMode(qctx, "get"); err == nil {
				safe = on
			}
			cancel()
			cl.Close()
		}
		if b, err := os.ReadFile(h.jtLog); err == nil {
			joined = strings.Count(string(b), "tasktracker joined")
		}
		if live >= h.nodes && !safe && joined >= h.nodes {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("experiment: waiting for the hosts' cluster (%d of %d DataNodes live, safe mode %v, %d of %d TaskTrackers joined): %w",
				live, h.nodes, safe, joined, h.nodes, ctx.Err())
		case <-t.C:
		}
	}
}

// ClientConf is base pointed at the cluster: its NameNode and JobTracker
// by their hosts' addresses, which the bridge reaches.
func (h *hostsCluster) ClientConf(base *conf.Configuration) *conf.Configuration {
	out := base.Clone()
	out.Set("fs.defaultFS", "hdfs://"+h.nnAddr)
	out.Set("dfs.namenode.rpc-address", h.nnAddr)
	out.Set("mapreduce.framework.name", "classic")
	out.Set("mapreduce.jobtracker.address", h.jtAddr)
	return out
}

// Close kills the daemons (the data is the experiment's to delete), then
// removes the cgroups (killing task processes left in them) and the
// network.
// JobTrackerAddr is the JobTracker's RPC address (the accountant lists
// jobs there).
func (h *hostsCluster) JobTrackerAddr() string { return h.jtAddr }

func (h *hostsCluster) Close() error {
	for _, pr := range h.procs {
		pr.cmd.Process.Kill()
	}
	var errs []error
	for _, pr := range h.procs {
		select {
		case <-pr.done:
		case <-time.After(10 * time.Second):
			errs = append(errs, fmt.Errorf("experiment: %s did not exit on SIGKILL", pr.name))
		}
		pr.log.Close()
	}
	h.procs = nil
	if h.cpu != nil {
		h.cpu.Close()
	}
	h.net.Close()
	return errors.Join(errs...)
}
