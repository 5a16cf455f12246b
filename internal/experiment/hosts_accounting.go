package experiment

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/hostnet"
	"github.com/stratafs/strata/internal/procstat"
)

// Accounting of a hosts' cluster (hosts.go): its daemons are processes of
// their own, so their CPU time is each one's /proc/<pid>/stat, the task
// children's the TaskTrackers' reaped children's (the same file's cutime
// and cstime, what a TaskTracker exports at /metrics as
// strata_tasktracker_children_cpu_*); each host's link counts what went
// into and out of it (hostnet.Link); and each TaskTracker's intermediate
// space is polled at its /metrics over the step.

// Bounds on what is read of a TaskTracker's /metrics: its few dozen
// metrics are a few kB; the reply comes over the network and is not
// trusted.
const (
	metricsLimit   = 1 << 20
	metricsTimeout = 2 * time.Second
	// metricsEvery is how often the step's intermediate space is polled:
	// the TaskTracker's own measurement interval.
	metricsEvery = 100 * time.Millisecond
)

// Names of the TaskTracker's metrics that the poll reads.
const (
	metricIntermediate     = "strata_tasktracker_intermediate_bytes"
	metricIntermediatePeak = "strata_tasktracker_intermediate_peak_bytes"
)

// hostsTTHTTPPort is the TaskTrackers' web UI port on their hosts.
const hostsTTHTTPPort = "50060"

// procCPU is a daemon process's CPU time and its reaped children's.
type procCPU struct {
	self, children procstat.CPU
	ok             bool
}

// hostsStep is what begin read of a hosts' cluster: each process's CPU
// time, each host's link counters, and the poll of the TaskTrackers'
// intermediate space that runs until end.
type hostsStep struct {
	cpu   []procCPU // by h.procs' index
	links map[string]hostnet.LinkCounters
	poll  *peakPoll
}

func (h *hostsCluster) readCPU() []procCPU {
	out := make([]procCPU, len(h.procs))
	for i, pr := range h.procs {
		self, kids, err := procstat.PIDAndChildren(pr.cmd.Process.Pid)
		out[i] = procCPU{self: self, children: kids, ok: err == nil}
	}
	return out
}

// linkHosts are the hosts with links, in start order, and their roles.
func (h *hostsCluster) linkHosts() (hosts, roles []string) {
	hosts, roles = []string{"nn", "jt"}, []string{"namenode", "jobtracker"}
	for i := 0; i < h.nodes; i++ {
		hosts, roles = append(hosts, fmt.Sprintf("dn%d", i)), append(roles, fmt.Sprintf("node %d", i))
	}
	return hosts, roles
}

func (h *hostsCluster) readLinks() map[string]hostnet.LinkCounters {
	out := map[string]hostnet.LinkCounters{}
	hosts, _ := h.linkHosts()
	for _, name := range hosts {
		if c, err := h.net.Link(name); err == nil {
			out[name] = c
		}
	}
	return out
}

// beginHosts reads h's processes and links and starts polling its
// TaskTrackers.
func (h *hostsCluster) beginHosts() *hostsStep {
	s := &hostsStep{cpu: h.readCPU(), links: h.readLinks()}
	urls := make([]string, h.nodes)
	for i := range urls {
		if host := h.net.Host(fmt.Sprintf("dn%d", i)); host != nil {
			urls[i] = "http://" + host.IP + ":" + hostsTTHTTPPort + "/metrics"
		}
	}
	s.poll = startPeakPoll(urls, metricsEvery)
	return s
}

// endHosts fills ja's daemons, task children, links and nodes from what
// changed since s; input is the step's input bytes.
func (h *hostsCluster) endHosts(s *hostsStep, ja *JobAccounting, self procstat.CPU, input int64) {
	peaks := s.poll.stop()
	now := h.readCPU()
	ja.Daemons = []DaemonCPU{{Name: "this process: the job client", CPUSeconds: cpuSeconds(self)}}
	var kids procstat.CPU
	missing := 0
	for i, pr := range h.procs {
		if i >= len(s.cpu) || !s.cpu[i].ok || !now[i].ok {
			missing++
			continue
		}
		ja.Daemons = append(ja.Daemons, DaemonCPU{Name: pr.label, CPUSeconds: cpuSeconds(now[i].self.Sub(s.cpu[i].self))})
		if strings.HasPrefix(pr.label, "tasktracker") {
			d := now[i].children.Sub(s.cpu[i].children)
			kids.User, kids.System = kids.User+d.User, kids.System+d.System
		}
	}
	c := cpuSeconds(kids)
	ja.Children = &c
	ja.Notes = append(ja.Notes, "each daemon is a process on a host of its own: daemons[] are the job client's getrusage(RUSAGE_SELF) and each daemon's /proc/<pid>/stat utime and stime; "+
		"task_children_cpu is the TaskTrackers' reaped children's (cutime and cstime)")
	if missing > 0 {
		ja.Notes = append(ja.Notes, fmt.Sprintf("%d daemon process(es) could not be read in /proc: not in daemons[]", missing))
	}

	links := h.readLinks()
	hosts, roles := h.linkHosts()
	for i, name := range hosts {
		a, ok1 := s.links[name]
		b, ok2 := links[name]
		if !ok1 || !ok2 {
			continue
		}
		d := b.Sub(a)
		ja.Links = append(ja.Links, LinkAccount{Host: name, Role: roles[i], InBytes: d.InBytes, OutBytes: d.OutBytes,
			InPackets: d.InPackets, OutPackets: d.OutPackets, Mbps: float64(h.net.Rate(name)) / 1e6})
	}
	ja.Notes = append(ja.Notes, "links[] are each host's veth pair, counted on its bridge end (in: into the host); "+
		"the job client is on the bridge itself, has no link, and its traffic is counted on the other end's")
	if len(ja.Links) < len(hosts) {
		ja.Notes = append(ja.Notes, fmt.Sprintf("%d of %d links could not be read", len(hosts)-len(ja.Links), len(hosts)))
	}

	for i, p := range peaks {
		if p.polls == 0 {
			ja.Notes = append(ja.Notes, fmt.Sprintf("node %d: no reply from its TaskTracker's /metrics (%v): no intermediate peak", i, p.err))
			continue
		}
		n := NodeAccount{Node: i, IntermediatePeak: p.peak}
		if input > 0 {
			n.OfInput = float64(p.peak) / (float64(input) / float64(h.nodes))
		}
		ja.Nodes = append(ja.Nodes, n)
	}
	ja.Notes = append(ja.Notes, fmt.Sprintf("nodes[]: each TaskTracker's %s polled every %v over the step, and its %s when that rose during the step", metricIntermediate, metricsEvery, metricIntermediatePeak))
}

// nodeTrackers sets each node's tracker name from the attempts that ran
// on its host's address (a TaskTracker is tracker_<address>:<port>).
func (h *hostsCluster) nodeTrackers(ja *JobAccounting) {
	for i := range ja.Nodes {
		host := h.net.Host(fmt.Sprintf("dn%d", ja.Nodes[i].Node))
		if host == nil {
			continue
		}
		for _, a := range ja.Attempts {
			if strings.HasPrefix(a.Tracker, "tracker_"+host.IP+":") {
				ja.Nodes[i].Tracker = a.Tracker
				break
			}
		}
	}
}

// nodePeak is one TaskTracker's intermediate space over a step.
type nodePeak struct {
	peak  int64
	polls int
	err   error // the last failed poll's
	// base is the TaskTracker's own peak (since its start) at the first
	// poll: a value of it above base was reached during the step.
	base int64
}

// peakPoll polls TaskTrackers' /metrics for their intermediate space
// until stop.
type peakPoll struct {
	urls   []string
	client *http.Client
	mu     sync.Mutex
	nodes  []nodePeak
	quit   chan struct{}
	done   chan struct{}
}

// startPeakPoll polls each of urls (a TaskTracker's /metrics; "" for
// none) once now and then every interval.
func startPeakPoll(urls []string, every time.Duration) *peakPoll {
	p := &peakPoll{urls: urls, client: &http.Client{Timeout: metricsTimeout}, nodes: make([]nodePeak, len(urls)),
		quit: make(chan struct{}), done: make(chan struct{})}
	p.pollAll()
	go func() {
		defer close(p.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				return
			case <-t.C:
				p.pollAll()
			}
		}
	}()
	return p
}

// stop ends the polling after one last poll and returns each node's
// peak.
func (p *peakPoll) stop() []nodePeak {
	close(p.quit)
	<-p.done
	p.pollAll()
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]nodePeak(nil), p.nodes...)
}

func (p *peakPoll) pollAll() {
	var wg sync.WaitGroup
	for i, u := range p.urls {
		if u == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := p.fetch(u)
			p.mu.Lock()
			defer p.mu.Unlock()
			n := &p.nodes[i]
			if err != nil {
				n.err = err
				return
			}
			n.observe(m)
		}()
	}
	wg.Wait()
}

// observe takes one poll's metrics into n.
func (n *nodePeak) observe(m map[string]float64) {
	now, peak := int64(m[metricIntermediate]), int64(m[metricIntermediatePeak])
	if n.polls == 0 {
		n.base = peak
	}
	n.polls++
	n.peak = max(n.peak, now)
	if peak > n.base {
		// The TaskTracker measures every 100 ms and as each attempt
		// ends; a rise of its peak is a value between two polls.
		n.peak = max(n.peak, peak)
	}
}

func (p *peakPoll) fetch(url string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), metricsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	defer io.Copy(io.Discard, io.LimitReader(resp.Body, metricsLimit))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return parseMetrics(io.LimitReader(resp.Body, metricsLimit), metricIntermediate, metricIntermediatePeak)
}

// parseMetrics reads the samples of the unlabelled metrics names from
// Prometheus text exposition: "name value" lines, comments skipped. Each
// name must appear, with a finite non-negative value; lines longer than
// 64 kB are an error.
func parseMetrics(r io.Reader, names ...string) (map[string]float64, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || !want[f[0]] {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil || !(v >= 0 && v <= 1<<62) { // NaN and infinities too
			return nil, fmt.Errorf("metrics: %s: bad value %q", f[0], f[1])
		}
		out[f[0]] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("metrics: no %s", n)
		}
	}
	return out, nil
}
