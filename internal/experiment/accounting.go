package experiment

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/localcluster"
	"github.com/stratafs/strata/internal/localcluster/trackers"
	"github.com/stratafs/strata/internal/media"
	"github.com/stratafs/strata/internal/procstat"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/spill"
	"github.com/stratafs/strata/mapreduce"
)

// JobAccounting is what one step of a run (TeraGen, TeraSort,
// TeraValidate, a TestDFSIO run) cost, besides its runtime: every
// attempt of its job, the job's counters, the CPU time of the daemons and
// of the task children, each emulated and real device's I/O, each node's
// intermediate-space peak and, on hosts, each host's link's bytes
// (docs/EXPERIMENTS.md, "Accounting").
type JobAccounting struct {
	Step    string  `json:"step"`
	JobID   string  `json:"job_id,omitempty"`
	Seconds float64 `json:"seconds"`
	// InputBytes is the step's input (TeraSort's and TeraValidate's: the
	// TeraGen output, 100 bytes a row).
	InputBytes int64 `json:"input_bytes,omitempty"`
	// BlockCapped says the step's data comes from a generator that gives
	// each map slot an equal share but no map more than a block (paper2's
	// text generators): the step's own maps when it is that generator,
	// its input files when it reads their output.
	BlockCapped bool `json:"generator_block_capped,omitempty"`
	// SortMB is the step's mapreduce.task.io.sort.mb: the map-side sort
	// buffer, whose size sets how often maps spill.
	SortMB int `json:"sort_mb,omitempty"`
	// Counters are the job's, by Hadoop's names (FILE_BYTES_READ,
	// SPILLED_RECORDS, CPU_MILLISECONDS, ...), built-in groups only.
	Counters map[string]int64 `json:"counters,omitempty"`
	Attempts []AttemptAccount `json:"attempts,omitempty"`
	Daemons  []DaemonCPU      `json:"daemons,omitempty"`
	Children *CPUSeconds      `json:"task_children_cpu,omitempty"`
	Devices  []DeviceAccount  `json:"devices,omitempty"`
	Disks    []DiskAccount    `json:"disks,omitempty"`
	Nodes    []NodeAccount    `json:"nodes,omitempty"`
	Links    []LinkAccount    `json:"links,omitempty"`
	// Chained are the step's other jobs when it ran more than one
	// (Neighbour Statistics: per-block histograms, then their sum), in
	// submission order; job_id, counters and attempts are the first
	// job's, the daemons', devices' and links' figures the whole step's.
	Chained []ChainedJob `json:"chained_jobs,omitempty"`
	Notes   []string     `json:"notes,omitempty"`
}

// ChainedJob is a job a step ran after its first.
type ChainedJob struct {
	ID      string `json:"job_id"`
	Name    string `json:"name,omitempty"`
	Maps    int    `json:"maps"`
	Reduces int    `json:"reduces"`
	// Seconds is its share of the step's time: from the previous job's
	// end (as the JobTracker recorded it) to its own, so it includes the
	// client noticing that end and submitting this job.
	Seconds float64 `json:"seconds"`
	// Attempts are its task attempts, timed from its own first start.
	Attempts []AttemptAccount `json:"attempts,omitempty"`
}

// LinkAccount is what crossed a host's link during the step (hostnet's
// counters on the bridge end of its veth pair): bytes are frames from
// the Ethernet header on, packets the kernel's (with segmentation
// offload, up to 64 KiB each).
type LinkAccount struct {
	Host       string `json:"host"`
	Role       string `json:"role"` // namenode, jobtracker, node <i>
	InBytes    uint64 `json:"in_bytes"`
	OutBytes   uint64 `json:"out_bytes"`
	InPackets  uint64 `json:"in_packets"`
	OutPackets uint64 `json:"out_packets"`
	// Mbps is the rate the link was shaped to (tc tbf, each direction);
	// 0 when unshaped.
	Mbps float64 `json:"shaped_mbps,omitempty"`
}

// CPUSeconds is CPU time in seconds.
type CPUSeconds struct {
	User   float64 `json:"user_s"`
	System float64 `json:"system_s"`
}

func cpuSeconds(c procstat.CPU) CPUSeconds {
	return CPUSeconds{User: c.User.Seconds(), System: c.System.Seconds()}
}

// AttemptAccount is one task attempt: times in seconds from the job's
// first attempt's start.
type AttemptAccount struct {
	ID      string `json:"attempt"`
	Task    string `json:"task"`
	Type    string `json:"type"` // map, reduce, cleanup
	Tracker string `json:"tracker,omitempty"`
	Node    string `json:"node,omitempty"`
	// Slot numbers the attempt's lane on its node for the timeline:
	// attempts of one node that overlap in time get different slots.
	Slot          int     `json:"slot"`
	State         string  `json:"state"`
	Start         float64 `json:"start_s"`
	End           float64 `json:"end_s"`
	MapFinish     float64 `json:"map_finish_s,omitempty"`
	ShuffleFinish float64 `json:"shuffle_finish_s,omitempty"`
	SortFinish    float64 `json:"sort_finish_s,omitempty"`
	// Ready is when the child began the attempt's own work (its process
	// started, its spec read), ReadyCPU the CPU seconds its start-up took
	// (0 for a reused child's later attempts).
	Ready    float64          `json:"ready_s,omitempty"`
	ReadyCPU float64          `json:"ready_cpu_s,omitempty"`
	CPU      CPUSeconds       `json:"cpu"`
	MaxRSS   int64            `json:"max_rss_bytes,omitempty"`
	Counters map[string]int64 `json:"counters,omitempty"`
}

// DaemonCPU is a daemon's (or a process's) CPU time during the step.
type DaemonCPU struct {
	Name string `json:"name"`
	CPUSeconds
}

// DeviceAccount is an emulated device's work during the step (package
// media's counters, every process's requests).
type DeviceAccount struct {
	Node       int     `json:"node"`
	Device     string  `json:"device"`
	Preset     string  `json:"preset"`
	ReadBytes  uint64  `json:"read_bytes"`
	WriteBytes uint64  `json:"write_bytes"`
	Requests   uint64  `json:"requests"`
	Seeks      uint64  `json:"seeks"`
	Busy       float64 `json:"busy_s"`
}

// DiskAccount is a real block device's work during the step
// (/proc/diskstats), for devices that did any.
type DiskAccount struct {
	Name       string  `json:"name"`
	ReadBytes  uint64  `json:"read_bytes"`
	WriteBytes uint64  `json:"write_bytes"`
	Requests   uint64  `json:"requests"`
	Busy       float64 `json:"busy_s"`
}

// NodeAccount is a node's intermediate data: the most space its
// TaskTracker's attempts' spills, map outputs and shuffled segments took
// at once, and that over the node's share of the input (the SanDisk
// paper's ≈ 60%).
type NodeAccount struct {
	Node             int     `json:"node"`
	Tracker          string  `json:"tracker,omitempty"`
	IntermediatePeak int64   `json:"intermediate_peak_bytes"`
	OfInput          float64 `json:"intermediate_peak_of_input,omitempty"`
}

// accountant measures the steps of a profile's runs on its cluster.
type accountant struct {
	cl    cluster // an in-process cluster or one of hosts (hosts.go)
	dir   string
	p     *Profile
	nodes int
	env   fs.Env
}

// stepStart is what was read before a step.
type stepStart struct {
	at       time.Time
	jobs     map[string]bool
	self     procstat.CPU
	children procstat.CPU
	devices  map[[2]string]media.Stats
	disks    map[string]procstat.DiskStat
	hosts    *hostsStep // a hosts' cluster's processes and links
}

func (a *accountant) trackers() *trackers.Trackers {
	if a == nil {
		return nil
	}
	lc, ok := a.cl.(*localcluster.Cluster) // hosts' TaskTrackers are processes, polled at their /metrics (hosts_accounting.go)
	if !ok {
		return nil
	}
	tr, _ := lc.MapReduce.(*trackers.Trackers)
	return tr
}

func (a *accountant) deviceDir(node int, dev string) string {
	return filepath.Join(localcluster.NodeDir(a.dir, node), dev)
}

// begin reads the counters a step's accounting is the difference of.
func (a *accountant) begin(ctx context.Context) *stepStart {
	s := &stepStart{at: time.Now(), devices: map[[2]string]media.Stats{}}
	if a == nil {
		return s
	}
	s.jobs = map[string]bool{}
	for _, j := range a.listJobs(ctx) {
		s.jobs[j.GetJobId()] = true
	}
	s.self, _ = procstat.Self()
	s.children, _ = procstat.Children()
	for i := 0; i < a.nodes; i++ {
		for _, d := range a.p.Devices {
			st, _ := media.ReadStats(a.deviceDir(i, d.Name))
			s.devices[[2]string{fmt.Sprint(i), d.Name}] = st
		}
	}
	s.disks, _ = procstat.DiskStats()
	if tr := a.trackers(); tr != nil {
		for _, tt := range tr.TaskTrackers {
			if tt != nil {
				tt.ResetIntermediatePeak()
			}
		}
	}
	if h, ok := a.cl.(*hostsCluster); ok {
		s.hosts = h.beginHosts()
	}
	return s
}

// abandon ends what begin started, for a step that failed.
func (s *stepStart) abandon() {
	if s.hosts != nil {
		s.hosts.poll.stop()
	}
}

func (a *accountant) listJobs(ctx context.Context) []*mrpb.JobStatus {
	addr := a.cl.JobTrackerAddr()
	if addr == "" {
		return nil
	}
	cl := ipc.NewClient(ipc.ClientConfig{Addr: addr, User: a.env.User, Protocol: mrpb.SubmissionProtocol})
	defer cl.Close()
	resp := &mrpb.ListJobsResponse{}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := cl.Call(cctx, "listJobs", &mrpb.ListJobsRequest{}, resp); err != nil {
		return nil
	}
	return resp.GetJobs()
}

// end accounts for the step that ran since s with the job configuration c.
func (a *accountant) end(ctx context.Context, s *stepStart, step string, secs float64, input int64, c *conf.Configuration) JobAccounting {
	ja := JobAccounting{Step: step, Seconds: secs, InputBytes: input, SortMB: sortMB(c)}
	if a == nil {
		return ja
	}
	self, err1 := procstat.Self()
	kids, err2 := procstat.Children()
	h, onHosts := a.cl.(*hostsCluster)
	if onHosts && s.hosts != nil {
		h.endHosts(s.hosts, &ja, self.Sub(s.self), input)
	} else if err1 == nil && err2 == nil {
		ja.Daemons = []DaemonCPU{{Name: "this process: NameNode, DataNodes, JobTracker, TaskTrackers and the job client", CPUSeconds: cpuSeconds(self.Sub(s.self))}}
		c := cpuSeconds(kids.Sub(s.children))
		ja.Children = &c
		ja.Notes = append(ja.Notes, "the daemons run in one process (getrusage RUSAGE_SELF); task_children_cpu is every reaped task child (RUSAGE_CHILDREN)")
	}
	for i := 0; i < a.nodes; i++ {
		for _, d := range a.p.Devices {
			st, err := media.ReadStats(a.deviceDir(i, d.Name))
			if err != nil || d.Preset == NoMedia {
				continue
			}
			b := s.devices[[2]string{fmt.Sprint(i), d.Name}]
			ja.Devices = append(ja.Devices, DeviceAccount{Node: i, Device: d.Name, Preset: d.Preset,
				ReadBytes: st.ReadBytes - b.ReadBytes, WriteBytes: st.WriteBytes - b.WriteBytes,
				Requests: st.Requests - b.Requests, Seeks: st.Seeks - b.Seeks, Busy: (st.Busy - b.Busy).Seconds()})
		}
	}
	if disks, err := procstat.DiskStats(); err == nil {
		for name, d := range disks {
			o, ok := s.disks[name]
			if !ok {
				continue
			}
			x := d.Sub(o)
			if x.Reads+x.Writes == 0 {
				continue
			}
			ja.Disks = append(ja.Disks, DiskAccount{Name: name, ReadBytes: x.ReadBytes, WriteBytes: x.WriteBytes, Requests: x.Reads + x.Writes, Busy: x.Busy.Seconds()})
		}
		sort.Slice(ja.Disks, func(i, j int) bool { return ja.Disks[i].Name < ja.Disks[j].Name })
	}
	if tr := a.trackers(); tr != nil {
		for i, tt := range tr.TaskTrackers {
			if tt == nil {
				continue
			}
			_, peak := tt.IntermediateBytes()
			n := NodeAccount{Node: i, Tracker: tt.Name(), IntermediatePeak: peak}
			if input > 0 {
				n.OfInput = float64(peak) / (float64(input) / float64(len(tr.TaskTrackers)))
			}
			ja.Nodes = append(ja.Nodes, n)
		}
	}
	// The step's jobs: those the JobTracker did not know before, in the
	// order they were submitted; the first is the step's job.
	var prevFinish int64
	for _, j := range a.listJobs(ctx) {
		if s.jobs[j.GetJobId()] {
			continue
		}
		if ja.JobID != "" {
			c := ChainedJob{ID: j.GetJobId(), Name: j.GetName(), Maps: int(j.GetMaps()), Reduces: int(j.GetReduces())}
			if f := j.GetFinishMs(); f > 0 && prevFinish > 0 {
				c.Seconds = max(0, float64(f-prevFinish)/1e3)
			}
			if f := j.GetFinishMs(); f > 0 {
				prevFinish = f
			}
			if reports, err := mapreduce.TaskReports(ctx, a.cl.ClientConf(a.env.Conf), a.env.User, c.ID); err == nil {
				c.Attempts = attemptAccounts(reports)
			} else {
				ja.Notes = append(ja.Notes, "no attempt reports of "+c.ID+": "+err.Error())
			}
			ja.Chained = append(ja.Chained, c)
			continue
		}
		prevFinish = j.GetFinishMs()
		ja.JobID = j.GetJobId()
		ja.Counters = map[string]int64{}
		for _, c := range j.GetCounters() {
			if c.GetGroup() == mapreduce.GroupUser {
				continue
			}
			ja.Counters[mapreduce.HadoopName(c.GetGroup(), c.GetName())] += c.GetValue()
		}
		reports, err := mapreduce.TaskReports(ctx, a.cl.ClientConf(a.env.Conf), a.env.User, ja.JobID)
		if err != nil {
			ja.Notes = append(ja.Notes, "no attempt reports: "+err.Error())
		}
		ja.Attempts = attemptAccounts(reports)
	}
	if onHosts {
		h.nodeTrackers(&ja)
	}
	return ja
}

// attemptAccounts converts reports, with times from the earliest start
// and a slot per node lane.
func attemptAccounts(reports []mapreduce.AttemptReport) []AttemptAccount {
	var t0 time.Time
	for _, r := range reports {
		if !r.Start.IsZero() && (t0.IsZero() || r.Start.Before(t0)) {
			t0 = r.Start
		}
	}
	rel := func(t time.Time) float64 {
		if t.IsZero() {
			return 0
		}
		return t.Sub(t0).Seconds()
	}
	sort.SliceStable(reports, func(i, j int) bool { return reports[i].Start.Before(reports[j].Start) })
	lanes := map[string][]float64{} // node → end of each lane's last attempt
	var out []AttemptAccount
	for _, r := range reports {
		a := AttemptAccount{ID: r.ID, Task: r.Task(), Type: map[byte]string{'m': "map", 'r': "reduce"}[r.Type], Tracker: r.Tracker, Node: r.Host,
			State: r.State, Start: rel(r.Start), End: rel(r.Finish),
			MapFinish: rel(r.Phases.MapFinish), ShuffleFinish: rel(r.Phases.ShuffleFinish), SortFinish: rel(r.Phases.SortFinish),
			Ready: rel(r.Phases.Ready), ReadyCPU: r.Phases.ReadyCPU.Seconds(),
			CPU: CPUSeconds{User: r.CPUUser.Seconds(), System: r.CPUSystem.Seconds()}, MaxRSS: r.MaxRSS, Counters: map[string]int64{}}
		if a.Type == "" {
			a.Type = "cleanup"
		}
		if r.Finish.IsZero() {
			a.End = a.Start
		}
		for _, g := range orEmpty(r.Counters).Groups() {
			for _, c := range r.Counters.Group(g) {
				a.Counters[mapreduce.HadoopName(g, c.Name)] += c.Value
			}
		}
		l := lanes[a.Node]
		a.Slot = len(l)
		for i, end := range l {
			if end <= a.Start {
				a.Slot = i
				break
			}
		}
		if a.Slot == len(l) {
			l = append(l, 0)
		}
		l[a.Slot] = a.End
		lanes[a.Node] = l
		out = append(out, a)
	}
	return out
}

// Phase names of the tables and the timeline.
const (
	phaseMap     = "map"
	phaseSpills  = "merge of spills"
	phaseShuffle = "shuffle"
	phaseMerge   = "merge"
	phaseReduce  = "reduce"
)

var phaseOrder = []string{phaseMap, phaseSpills, phaseShuffle, phaseMerge, phaseReduce}

// Phases are a finished attempt's phase lengths in seconds, by phase
// name (nil without phase times).
func (a *AttemptAccount) Phases() map[string]float64 {
	if a.State != "SUCCEEDED" {
		return nil
	}
	switch {
	case a.Type == "map" && a.MapFinish > 0:
		return map[string]float64{phaseMap: a.MapFinish - a.Start, phaseSpills: a.End - a.MapFinish}
	case a.Type == "reduce" && a.ShuffleFinish > 0 && a.SortFinish > 0:
		return map[string]float64{phaseShuffle: a.ShuffleFinish - a.Start, phaseMerge: a.SortFinish - a.ShuffleFinish, phaseReduce: a.End - a.SortFinish}
	}
	return nil
}

// MeanPhases is the mean length in seconds of each phase over the
// successful attempts that have it.
func (ja *JobAccounting) MeanPhases() map[string]float64 {
	sum, n := map[string]float64{}, map[string]int{}
	for i := range ja.Attempts {
		for k, v := range ja.Attempts[i].Phases() {
			sum[k] += v
			n[k]++
		}
	}
	out := map[string]float64{}
	for k, v := range sum {
		out[k] = v / float64(n[k])
	}
	return out
}

// stepInput is the bytes a step reads: TeraSort and TeraValidate read
// TeraGen's rows of 100 bytes; TeraGen reads nothing.
func stepInput(step string, rows uint64) int64 {
	if step == "teragen" {
		return 0
	}
	return int64(rows) * 100
}

// Job returns the run's accounting of step, or nil.
func (r *RunResult) Job(step string) *JobAccounting {
	for i := range r.Jobs {
		if r.Jobs[i].Step == step {
			return &r.Jobs[i]
		}
	}
	return nil
}

// orEmpty is c, or no counters for nil.
func orEmpty(c *mapreduce.Counters) *mapreduce.Counters {
	if c == nil {
		return mapreduce.NewCounters()
	}
	return c
}

// sortMB is c's mapreduce.task.io.sort.mb as the maps read it
// (spill.ConfigFrom), the default when unset or unreadable.
func sortMB(c *conf.Configuration) int {
	if c != nil {
		if cfg, err := spill.ConfigFrom(c); err == nil && cfg.SortBytes > 0 {
			return int(cfg.SortBytes >> 20)
		}
	}
	return spill.DefaultSortBytes >> 20
}
