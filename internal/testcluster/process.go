package testcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/storage"
)

// Process is one daemon of a Processes cluster: a `strata` process, its
// command line and its output.
type Process struct {
	name string
	t    testing.TB
	bin  string
	args []string
	wrap []string // runs bin in its network namespace (Config.Hosts)

	cmd  *exec.Cmd
	log  *SyncBuffer
	done chan struct{}
	err  error // the exit status, once done is closed
	past []string
}

// SyncBuffer collects a command's output while it runs; safe for the
// command's writes and the test's reads at once.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Args is the process's command line after the binary.
func (p *Process) Args() []string { return append([]string(nil), p.args...) }

// Log is the output (stdout and stderr) of the current or last run.
func (p *Process) Log() string {
	if p.log == nil {
		return ""
	}
	return p.log.String()
}

// Logs is the output of every run so far, oldest first.
func (p *Process) Logs() string {
	return strings.Join(append(append([]string(nil), p.past...), p.Log()), "")
}

// Running says whether the process runs.
func (p *Process) Running() bool {
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Pid is the running process's id, 0 when none runs.
func (p *Process) Pid() int {
	if !p.Running() {
		return 0
	}
	return p.cmd.Process.Pid
}

func (p *Process) start() {
	p.t.Helper()
	if p.Running() {
		return
	}
	if p.log != nil {
		p.past = append(p.past, p.log.String())
	}
	p.log = &SyncBuffer{}
	if len(p.wrap) > 0 {
		p.cmd = exec.Command(p.wrap[0], append(append(p.wrap[1:len(p.wrap):len(p.wrap)], p.bin), p.args...)...)
	} else {
		p.cmd = exec.Command(p.bin, p.args...)
	}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("testcluster: starting %s: %v", p.name, err)
	}
	done := make(chan struct{})
	p.done = done
	cmd := p.cmd
	go func() {
		p.err = cmd.Wait()
		close(done)
	}()
}

// kill sends SIGKILL and waits for the process to end.
func (p *Process) kill() {
	if !p.Running() {
		return
	}
	p.cmd.Process.Kill()
	<-p.done
}

// stop sends SIGINT and waits up to 30 s for a clean exit; a non-zero
// exit fails the test.
func (p *Process) stop() {
	p.t.Helper()
	if !p.Running() {
		return
	}
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
		if p.err != nil {
			p.t.Errorf("testcluster: %s exited with %v; log:\n%s", p.name, p.err, p.Log())
		}
	case <-time.After(30 * time.Second):
		p.kill()
		p.t.Fatalf("testcluster: %s did not stop on SIGINT", p.name)
	}
}

// waitLog waits until re matches the process's log and returns the
// submatches; it fails the test if the process exits first or 20 s pass.
func (p *Process) waitLog(re *regexp.Regexp) []string {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := re.FindStringSubmatch(p.Log()); m != nil {
			return m
		}
		if !p.Running() || time.Now().After(deadline) {
			p.t.Fatalf("testcluster: %s did not start; log:\n%s", p.name, p.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitListening waits until addr accepts connections.
func (p *Process) waitListening(addr string) {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return
		}
		if !p.Running() || time.Now().After(deadline) {
			p.t.Fatalf("testcluster: %s did not start listening on %s; log:\n%s", p.name, addr, p.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Processes is the process implementation of Harness: every daemon is a
// `strata` process (the binary Binary builds), configured with -D
// options, so kill -9 and restarts are real. Close (registered with
// t.Cleanup) kills what still runs and, if the test failed, logs every
// daemon's output.
type Processes struct {
	t    testing.TB
	cfg  Config
	bin  string
	dir  string
	opts []string // -D options every daemon gets

	rpc, http string
	nn        *Process
	ha        *procHA // with Config.NameNodes > 1 (process_ha.go)
	dns       []*procDataNode
	jt        *Process
	jtAddr    string
	tts       []*Process
	net       *network   // with Config.Hosts
	cpu       *cpuGroups // with Config.HostCPU
	unmount   []func()   // Config.VolumeSize's tmpfs, after the processes end
}

type procDataNode struct {
	p          *Process
	dir        string
	vols       []string
	dataDirs   string   // dfs.datanode.data.dir
	extra      []string // -D options of Config.DataNodeConf
	xfer, http string
	httpBind   string // dfs.datanode.http.address
}

var (
	dnServingRE = regexp.MustCompile(`datanode: serving.*xfer=(\S+) http=(\S*)`)
	ttServingRE = regexp.MustCompile(`tasktracker: serving`)
)

// NewProcess builds (once) and runs a cluster of strata processes: a
// NameNode formatted with `strata namenode -format`, cfg.DataNodes
// DataNodes and, with cfg.MapReduce, a JobTracker and cfg.TaskTrackers
// TaskTrackers; with cfg.NoHDFS, MapReduce alone. The test binary must run
// under RunMain. Config.NameNode and Config.DataNode cannot apply to a
// process: setting them fails the test; use Config.Conf.
func NewProcess(t testing.TB, cfg Config) *Processes {
	t.Helper()
	if cfg.NameNode != nil || cfg.DataNode != nil {
		t.Fatal("testcluster: Config.NameNode and Config.DataNode apply in process only; use Config.Conf")
	}
	if cfg.Hosts && cfg.NoHDFS {
		t.Fatal("testcluster: Config.Hosts places HDFS daemons; it needs HDFS")
	}
	p := &Processes{t: t, cfg: cfg, bin: Binary(t), dir: t.TempDir()}
	settings := map[string]string{}
	for k, v := range Settings {
		settings[k] = v
	}
	if cfg.NameDirSize > 0 {
		MountTmpfs(t, p.NameDir(), cfg.NameDirSize)
	}
	if cfg.Hosts {
		// Registered before p.Close, so it runs after the processes are
		// killed.
		p.net = newNetwork(t)
	}
	if cfg.HostCPU != nil {
		p.cpu = newCPUGroups(t) // likewise
	}
	if cfg.NameNodes > 1 {
		p.setupHA(settings)
	} else if cfg.Hosts {
		nn := p.net.addHost(NameNodeHost, 2)
		p.rpc, p.http = nn.IP+":8020", nn.IP+":9870"
		settings["fs.defaultFS"] = "hdfs://" + p.rpc
		settings["dfs.namenode.rpc-address"] = p.rpc
	} else if !cfg.NoHDFS {
		p.rpc, p.http = FreePort(t), FreePort(t)
		settings["fs.defaultFS"] = "hdfs://" + p.rpc
		settings["dfs.namenode.rpc-address"] = p.rpc
	}
	if cfg.MapReduce {
		p.jtAddr = FreePort(t)
		if p.net != nil {
			p.jtAddr = p.net.addHost(JobTrackerHost, 3).IP + ":8021"
		}
		for k, v := range MapReduceSettings {
			settings[k] = v
		}
		settings["mapreduce.jobtracker.address"] = p.jtAddr
		settings["mapreduce.jobtracker.http.address"] = "127.0.0.1:0" // the web UI; many clusters run at once
		if p.net != nil {
			settings["mapreduce.jobtracker.http.address"] = strings.Split(p.jtAddr, ":")[0] + ":50030"
		}
		settings["mapreduce.jobhistory.done-dir"] = filepath.Join(p.dir, "history")
	}
	for k, v := range cfg.Conf {
		settings[k] = v
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p.opts = append(p.opts, "-D", k+"="+settings[k])
	}
	t.Cleanup(p.Close)
	if cfg.NameNodes > 1 {
		p.startHA()
		for i := 0; i < cfg.DataNodes; i++ {
			p.AddDataNode()
		}
		if cfg.DataNodes > 0 {
			p.WaitDataNodes(cfg.DataNodes)
		}
	} else if !cfg.NoHDFS {
		p.nn = p.newProcess("namenode", p.NameNodeArgs("namenode"))
		p.nn.wrap = p.hostWrap(NameNodeHost)
		out, err := exec.Command(p.bin, p.NameNodeArgs("namenode", "-format")...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "successfully formatted") {
			t.Fatalf("testcluster: namenode -format: %v\n%s", err, out)
		}
		p.StartNameNode()
		for i := 0; i < cfg.DataNodes; i++ {
			p.AddDataNode()
		}
		if cfg.DataNodes > 0 {
			p.WaitDataNodes(cfg.DataNodes)
		}
	}
	if cfg.MapReduce {
		p.jt = p.newProcess("jobtracker", append(append([]string(nil), p.opts...), "jobtracker"))
		p.jt.wrap = p.hostWrap(JobTrackerHost)
		p.StartJobTracker()
		n := cfg.TaskTrackers
		if n == 0 {
			n = max(1, cfg.DataNodes)
		}
		for i := 0; i < n; i++ {
			local := filepath.Join(p.dir, fmt.Sprintf("dn%d", i), "mapred-local")
			httpAddr := "127.0.0.1:0"
			if p.net != nil {
				// Hadoop's default: every port on the host's own (wildcard)
				// address; the tracker advertises its namespace's address.
				httpAddr = "0.0.0.0:50060"
			}
			args := append(append([]string(nil), p.opts...), "-D", "mapreduce.tasktracker.http.address="+httpAddr,
				"-D", "mapreduce.cluster.local.dir="+local, "tasktracker")
			tt := p.newProcess(fmt.Sprintf("tasktracker %d", i), args)
			h := p.TrackerHost(i)
			if p.net != nil {
				octet := 10 + i
				if h != DataNodeHost(i) {
					octet = 100 + i
				}
				p.net.addHost(h, octet)
			}
			tt.wrap = p.hostWrap(h)
			p.tts = append(p.tts, tt)
			p.StartTaskTracker(i)
		}
	}
	return p
}

// hostWrap is the command prefix that runs a daemon on host: in its
// cgroup with Config.HostCPU, in its network namespace with Config.Hosts.
func (p *Processes) hostWrap(host string) []string {
	var w []string
	if p.cpu != nil {
		if cpus := p.cfg.HostCPU(host); cpus > 0 {
			w = p.cpu.wrap(host, cpus)
		}
	}
	if p.net != nil {
		w = append(w, p.net.wrap(host)...)
	}
	return w
}

// TrackerHost is the host TaskTracker i runs on: TaskTrackerHost(i,
// DataNodes), or "tt<i>" for every tracker with Config.TrackerHosts.
func (p *Processes) TrackerHost(i int) string {
	if p.cfg.TrackerHosts {
		return fmt.Sprintf("tt%d", i)
	}
	return TaskTrackerHost(i, p.cfg.DataNodes)
}

func (p *Processes) newProcess(name string, args []string) *Process {
	return &Process{name: name, t: p.t, bin: p.bin, args: args}
}

// FreePort returns a loopback address with a port that was free a moment
// ago. It picks below Linux's ephemeral range (32768-60999), at random:
// a port the kernel handed out for ":0" would be handed out again to the
// many outgoing connections and listeners of parallel tests before the
// daemon binds it, and two daemons then collide.
// It never returns the same address twice in one test binary: a probed
// port is free again at once, and two daemons of one cluster must not
// both be given it.
func FreePort(t testing.TB) string {
	t.Helper()
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		if _, taken := handedOut.LoadOrStore(addr, true); taken {
			continue
		}
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			return addr
		}
	}
	t.Fatal("testcluster: no free port in 20000-31999")
	return ""
}

// handedOut is every address FreePort has returned.
var handedOut sync.Map

// Binary is the strata binary the daemons run.
func (p *Processes) Binary() string { return p.bin }

// NameNodeArgs is the command line of a NameNode process on this
// cluster's storage and addresses, followed by extra (e.g. "namenode",
// "-recover"): for running the NameNode's own commands.
func (p *Processes) NameNodeArgs(extra ...string) []string {
	args := []string{
		"-D", "dfs.namenode.name.dir=" + p.NameDir(),
		"-D", "dfs.namenode.http-address=" + p.http,
	}
	return append(append(args, p.opts...), extra...)
}

// ClientArgs are the generic options that point a strata command at the
// cluster: -fs and, with MapReduce, the JobTracker and its history.
func (p *Processes) ClientArgs() []string {
	var args []string
	if p.ha != nil {
		args = append(args, p.ha.clientArgs()...)
	} else if !p.cfg.NoHDFS {
		args = append(args, "-fs", p.URI(), "-D", "dfs.namenode.http-address="+p.http)
	}
	if p.cfg.MapReduce {
		args = append(args, "-D", "mapreduce.framework.name=classic", "-D", "mapreduce.jobtracker.address="+p.jtAddr,
			"-D", "mapreduce.jobhistory.done-dir="+filepath.Join(p.dir, "history"))
	}
	return args
}

// Command is a strata client command against the cluster (ClientArgs,
// then args), not yet started.
func (p *Processes) Command(args ...string) *exec.Cmd {
	return exec.Command(p.bin, append(p.ClientArgs(), args...)...)
}

// Run runs a strata client command as user (HADOOP_USER_NAME) and returns
// its stdout, stderr and exit code.
func (p *Processes) Run(user string, args ...string) (string, string, int) {
	p.t.Helper()
	cmd := p.Command(args...)
	cmd.Env = append(os.Environ(), "HADOOP_USER_NAME="+user)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// NameNodeProcess is the NameNode's process.
func (p *Processes) NameNodeProcess() *Process { return p.nn }

// DataNodeProcess is DataNode i's process.
func (p *Processes) DataNodeProcess(i int) *Process { return p.dns[i].p }

// JobTrackerProcess is the JobTracker's process.
func (p *Processes) JobTrackerProcess() *Process { return p.jt }

// TaskTrackerProcess is TaskTracker i's process.
func (p *Processes) TaskTrackerProcess(i int) *Process { return p.tts[i] }

// Addr is the NameNode's RPC address.
func (p *Processes) Addr() string { return p.rpc }

// URI is hdfs://<addr>.
func (p *Processes) URI() string {
	if p.ha != nil {
		return "hdfs://" + Nameservice
	}
	return "hdfs://" + p.rpc
}

// Dir is the cluster's root directory.
func (p *Processes) Dir() string { return p.dir }

// NameDir is the NameNode's name directory, <dir>/name.
func (p *Processes) NameDir() string { return filepath.Join(p.dir, "name") }

// Superuser is the user running the processes, whom the NameNode takes
// as superuser (HADOOP_USER_NAME if set, as for the NameNode).
func (p *Processes) Superuser() string {
	if u := os.Getenv("HADOOP_USER_NAME"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
}

// Client returns a strata HDFS client acting as user, closed at cleanup.
func (p *Processes) Client(user string) *hdfs.Client {
	p.t.Helper()
	cl, err := hdfs.New(p.clientOptions(user))
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { cl.Close() })
	return cl
}

// ClientConf is a client configuration for the cluster.
func (p *Processes) ClientConf() *conf.Configuration {
	c := conf.New()
	if p.ha != nil {
		for k, v := range p.ha.conf {
			c.Set(k, v)
		}
	} else if !p.cfg.NoHDFS {
		c.Set("fs.defaultFS", p.URI())
	}
	if p.cfg.MapReduce {
		c.Set("mapreduce.framework.name", "classic")
		c.Set("mapreduce.jobtracker.address", p.jtAddr)
	}
	return c
}

// LiveDataNodes is how many DataNodes the NameNode counts live (-1 when
// it does not answer).
func (p *Processes) LiveDataNodes() int {
	cl, err := hdfs.New(p.clientOptions(p.Superuser()))
	if err != nil {
		return -1
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := cl.LiveDataNodes(ctx)
	if err != nil {
		return -1
	}
	return n
}

// StopNameNode stops the NameNode with SIGINT: it saves a checkpoint.
func (p *Processes) StopNameNode() {
	p.t.Helper()
	if p.ha != nil {
		p.ha.procs[p.ActiveNameNode()].stop()
		return
	}
	p.nn.stop()
}

// KillNameNode kills the NameNode with SIGKILL: no checkpoint, the edit
// log as the last fsync left it.
func (p *Processes) KillNameNode() {
	p.t.Helper()
	if p.ha != nil {
		p.ha.procs[p.ActiveNameNode()].kill()
		return
	}
	p.nn.kill()
}

// StartNameNode starts the NameNode and waits until its RPC port answers.
func (p *Processes) StartNameNode() {
	p.t.Helper()
	if p.ha != nil {
		for i := range p.ha.procs {
			p.StartNameNodeAt(i)
		}
		return
	}
	p.nn.start()
	p.nn.waitListening(p.rpc)
}

// RestartNameNode stops the NameNode cleanly and starts it again.
func (p *Processes) RestartNameNode() {
	p.t.Helper()
	p.StopNameNode()
	p.StartNameNode()
}

// AddDataNode starts one more DataNode process and returns its index.
func (p *Processes) AddDataNode() int {
	p.t.Helper()
	i := len(p.dns)
	d := &procDataNode{dir: filepath.Join(p.dir, fmt.Sprintf("dn%d", i)), xfer: "127.0.0.1:0", httpBind: "127.0.0.1:0"}
	if p.cfg.DataNodeIP != nil {
		ip := p.cfg.DataNodeIP(i)
		d.xfer, d.httpBind = ip+":0", ip+":0"
	}
	var spec []string
	for j, ty := range p.cfg.volumeTypes() {
		v := volumeDir(p.dir, i, j, ty)
		if p.cfg.VolumeSize != nil && p.cfg.VolumeSize(i, j) > 0 {
			p.unmount = append(p.unmount, mountTmpfs(p.t, v, p.cfg.VolumeSize(i, j)))
		}
		d.vols = append(d.vols, v)
		spec = append(spec, fmt.Sprintf("[%s]%s", ty, v))
	}
	d.dataDirs = strings.Join(spec, ",")
	if p.cfg.DataNodeConf != nil {
		extra := p.cfg.DataNodeConf(i, append([]string(nil), d.vols...))
		keys := make([]string, 0, len(extra))
		for k := range extra {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			d.extra = append(d.extra, "-D", k+"="+extra[k])
		}
	}
	d.p = p.newProcess(fmt.Sprintf("datanode %d", i), nil)
	if p.net != nil {
		h := p.net.addHost(DataNodeHost(i), 10+i)
		d.xfer, d.httpBind = h.IP+":9866", h.IP+":9864"
	}
	d.p.wrap = p.hostWrap(DataNodeHost(i))
	p.dns = append(p.dns, d)
	p.dnArgs(d)
	p.StartDataNode(i)
	return i
}

// dnArgs sets a DataNode's command line for its transfer address.
func (p *Processes) dnArgs(d *procDataNode) {
	args := append(append([]string(nil), p.opts...), d.extra...)
	d.p.args = append(args,
		"-D", "dfs.datanode.data.dir="+d.dataDirs,
		"-D", "dfs.datanode.address="+d.xfer,
		"-D", "dfs.datanode.http.address="+d.httpBind)
	if p.ha == nil && p.http != "" {
		// The NameNode's web UI may upload to the DataNode (CORS).
		d.p.args = append(d.p.args, "-D", "dfs.namenode.http-address="+p.http)
	}
	d.p.args = append(d.p.args, "datanode")
}

// NumDataNodes is the number of DataNodes ever added.
func (p *Processes) NumDataNodes() int { return len(p.dns) }

// StopDataNode stops DataNode i with SIGINT.
func (p *Processes) StopDataNode(i int) { p.t.Helper(); p.dns[i].p.stop() }

// KillDataNode kills DataNode i with SIGKILL.
func (p *Processes) KillDataNode(i int) { p.dns[i].p.kill() }

// StartDataNode starts DataNode i and waits until it serves; after its
// first start it binds the transfer address it had.
func (p *Processes) StartDataNode(i int) {
	p.t.Helper()
	d := p.dns[i]
	d.p.start()
	m := d.p.waitLog(dnServingRE)
	if strings.HasSuffix(d.xfer, ":0") {
		d.xfer = m[1]
		p.dnArgs(d)
	}
	d.http = m[2]
}

// RestartDataNode stops DataNode i and starts it again.
func (p *Processes) RestartDataNode(i int) {
	p.t.Helper()
	p.StopDataNode(i)
	p.StartDataNode(i)
}

// DataNodeAddr is DataNode i's transfer address.
func (p *Processes) DataNodeAddr(i int) string { return p.dns[i].xfer }

// DataNodeByAddr is the index of the DataNode at a transfer address, or -1.
func (p *Processes) DataNodeByAddr(addr string) int {
	for i, d := range p.dns {
		if d.xfer == addr {
			return i
		}
	}
	return -1
}

// DataNodeStatus fetches running DataNode i's /status page.
func (p *Processes) DataNodeStatus(i int) datanode.Status {
	p.t.Helper()
	var st datanode.Status
	hc := http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get("http://" + p.dns[i].http + "/status")
	if err != nil {
		p.t.Fatalf("testcluster: datanode %d status: %v", i, err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		p.t.Fatalf("testcluster: datanode %d status: %v", i, err)
	}
	return st
}

// Host is node i's host as its DataNode and TaskTracker advertise it:
// with Config.Hosts its address (HostAddr(DataNodeHost(i))), else the
// address they bind, 127.0.0.1.
func (p *Processes) Host(i int) string {
	if a := p.HostAddr(DataNodeHost(i)); a != "" {
		return a
	}
	if p.cfg.DataNodeIP != nil {
		return p.cfg.DataNodeIP(i)
	}
	return "127.0.0.1"
}

// JobTrackerAddr is the JobTracker's address, "" without MapReduce.
func (p *Processes) JobTrackerAddr() string { return p.jtAddr }

// NumTaskTrackers is the number of TaskTrackers.
func (p *Processes) NumTaskTrackers() int { return len(p.tts) }

// StopJobTracker stops the JobTracker with SIGINT.
func (p *Processes) StopJobTracker() { p.t.Helper(); p.jt.stop() }

// KillJobTracker kills the JobTracker with SIGKILL.
func (p *Processes) KillJobTracker() { p.jt.kill() }

// StartJobTracker starts the JobTracker and waits until it listens.
func (p *Processes) StartJobTracker() {
	p.t.Helper()
	p.jt.start()
	p.jt.waitListening(p.jtAddr)
}

// StopTaskTracker stops TaskTracker i with SIGINT.
func (p *Processes) StopTaskTracker(i int) { p.t.Helper(); p.tts[i].stop() }

// KillTaskTracker kills TaskTracker i with SIGKILL; its attempts, in
// their own process group or not, lose their parent.
func (p *Processes) KillTaskTracker(i int) { p.tts[i].kill() }

// StartTaskTracker starts TaskTracker i and waits until it serves.
func (p *Processes) StartTaskTracker(i int) {
	p.t.Helper()
	p.tts[i].start()
	p.tts[i].waitLog(ttServingRE)
}

// VolumeDir is the directory of DataNode i's volume v.
func (p *Processes) VolumeDir(i, v int) string { return p.dns[i].vols[v] }

// ReplicaFile returns the path of DataNode i's data file for blockID, or
// "" when it has none.
func (p *Processes) ReplicaFile(i int, blockID uint64) string {
	return replicaFile(p.dns[i].dir, blockID)
}

// CorruptReplica flips one byte of DataNode i's replica of blockID.
func (p *Processes) CorruptReplica(i int, blockID uint64, off int64) {
	p.t.Helper()
	f := p.ReplicaFile(i, blockID)
	if f == "" {
		p.t.Fatalf("testcluster: datanode %d has no replica of blk_%d", i, blockID)
	}
	corruptFile(p.t, f, off)
}

// FailVolume replaces DataNode i's volume v by a file; the DataNode finds
// it at its next periodic volume check (30 s) or when it restarts.
func (p *Processes) FailVolume(i, v int) { p.t.Helper(); breakVolume(p.t, p.VolumeDir(i, v)) }

// WaitFor polls cond until it holds or the timeout passes.
func (p *Processes) WaitFor(what string, timeout time.Duration, cond func() bool) {
	p.t.Helper()
	waitFor(p.t, what, timeout, cond)
}

// WaitDataNodes waits until at least n DataNodes are live.
func (p *Processes) WaitDataNodes(n int) {
	p.t.Helper()
	p.WaitFor(fmt.Sprintf("%d live datanodes", n), 30*time.Second, func() bool { return p.LiveDataNodes() >= n })
}

// BlockReplicas lists, for each block of p, the storage types of its good
// replicas.
func (p *Processes) BlockReplicas(path string) [][]storage.Type {
	p.t.Helper()
	return blockReplicas(p.t, p.Client(p.Superuser()), path)
}

// WaitReplicated waits until every block of path has n good replicas.
func (p *Processes) WaitReplicated(path string, n int, timeout time.Duration) {
	p.t.Helper()
	waitReplicated(p.t, p, path, n, timeout)
}

// Close kills every process still running (TaskTrackers, JobTracker,
// DataNodes, NameNode) and, if the test failed or STRATA_TEST_LOG is set,
// logs their output. Safe to call twice.
func (p *Processes) Close() {
	var all []*Process
	all = append(all, p.tts...)
	if p.jt != nil {
		all = append(all, p.jt)
	}
	for _, d := range p.dns {
		all = append(all, d.p)
	}
	if p.ha != nil {
		all = append(all, p.ha.procs...)
	} else if p.nn != nil {
		all = append(all, p.nn)
	}
	for _, pr := range all {
		pr.kill()
		if (p.t.Failed() || os.Getenv("STRATA_TEST_LOG") != "") && pr.log != nil {
			p.t.Logf("%s log:\n%s", pr.name, pr.Logs())
			pr.past, pr.log = nil, nil
		}
	}
	for _, u := range p.unmount {
		u()
	}
	p.unmount = nil
}

// WaitSafeModeOff waits until the NameNode has left safe mode.
func (p *Processes) WaitSafeModeOff() { p.t.Helper(); waitSafeModeOff(p.t, p) }

// NameNodeHTTPAddr is the NameNode's HTTP address (web UI, /status,
// /fsck, WebHDFS), "" without HDFS.
func (p *Processes) NameNodeHTTPAddr() string { return p.http }

// DataNodeHTTPAddr is running DataNode i's HTTP address (/status,
// WebHDFS), as its last start logged it.
func (p *Processes) DataNodeHTTPAddr(i int) string { return p.dns[i].http }
