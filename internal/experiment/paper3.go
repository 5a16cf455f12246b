package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/examples"
	"github.com/stratafs/strata/internal/localcluster"
	"github.com/stratafs/strata/internal/localcluster/trackers"
	"github.com/stratafs/strata/internal/media"
	"github.com/stratafs/strata/internal/zones"
)

// Paper3Options configure `strata experiment amdahl`: the third paper's
// Table 3 (the Zones applications on the Amdahl-blade and OCC
// profiles) and the energy comparison computed from its runs.
type Paper3Options struct {
	// Parts are what to run: "table3" (Table 3 and the energy
	// comparison), "fig1" (buffered vs direct I/O), "table2" (TCP); all
	// when empty.
	Parts []string
	// Fig1 configures Figure 1's benchmark (its Dir defaults to
	// WorkDir/fig1).
	Fig1 Fig1Options
	// Fig2 configures Figure 2's TestDFSIO runs.
	Fig2 Fig2Options
	// Table2 configures Table 2's TCP measurements.
	Table2 TCPOptions
	// Profiles run in order; the energy ratios are the last profile's
	// energy over the first's (default amdahl-blade, occ-node).
	Profiles []*Profile
	// Objects is the catalogue size; Thetas the Neighbour Searching radii
	// in arcseconds; StatsMax the Neighbour Statistics' largest bin.
	Objects  uint64
	Thetas   []float64
	StatsMax float64
	// Clustered generates a Neyman–Scott catalogue (the paper's sky is
	// clustered) rather than a uniform one.
	Clustered bool
	// Sigma is a clustered catalogue's scatter in arcseconds (0: zones'
	// default).
	Sigma     float64
	DataNodes int
	// Master counts a master node (the paper's clusters had one: nine
	// blades, four OCC nodes) at idle power in the energy.
	Master  bool
	Power   PowerModel
	Media   bool
	Hosts   bool
	WorkDir string
	LogDir  string
	Keep    bool
	Conf    *conf.Configuration
	// Executable runs the tasks (default this program).
	Executable string
	Progress   *Progress
}

// Paper3Step is one application run on one profile: its runtime, work,
// accounting and the energy the power model gives it.
type Paper3Step struct {
	Profile string `json:"profile"`
	// App is "neighbors" (Neighbour Searching) or "neighborstats".
	App   string  `json:"app"`
	Theta float64 `json:"theta_arcsec"`
	// Seconds is the wall time; Pairs the pairs found (counted).
	Seconds     float64 `json:"seconds"`
	Pairs       int64   `json:"pairs"`
	OutputBytes int64   `json:"output_bytes"`
	// CPUSeconds is the CPU time of the daemons and task children;
	// CPUUtil that over runtime × the CPUs the nodes had.
	CPUSeconds float64 `json:"cpu_s"`
	CPUUtil    float64 `json:"cpu_util"`
	// NodeCPUUtil is each DataNode host's own utilisation of its CPU
	// share, from its cgroup (with -hosts and node.cpus); when present
	// it, not CPUUtil, powers the nodes.
	NodeCPUUtil []float64 `json:"node_cpu_util,omitempty"`
	// NodeWatts is each DataNode's mean power under the model; Joules
	// the whole cluster's energy (with the master if counted).
	NodeWatts []float64     `json:"node_watts"`
	Joules    float64       `json:"joules"`
	Notes     []string      `json:"notes,omitempty"`
	Account   JobAccounting `json:"accounting"`
}

// Paper3Results is the outcome of `strata experiment amdahl`.
type Paper3Results struct {
	Command     string    `json:"command,omitempty"`
	Date        time.Time `json:"date"`
	Host        string    `json:"host"`
	CPUs        int       `json:"cpus"`
	LoadAverage string    `json:"load_average,omitempty"`
	Objects     uint64    `json:"objects"`
	DataNodes   int       `json:"datanodes"`
	Master      bool      `json:"master_counted"`
	Hosts       bool      `json:"hosts"`
	Profiles    []string  `json:"profiles"`
	// Devices are each profile's per-node device presets; Layouts the
	// profiles' whole layouts, and MapSlots, ReduceSlots and Media the
	// clusters' settings (what strata model calibrate reads).
	Devices     map[string][]string       `json:"devices,omitempty"`
	Layouts     map[string]*ProfileLayout `json:"layouts,omitempty"`
	MapSlots    int                       `json:"map_slots_per_node,omitempty"`
	ReduceSlots int                       `json:"reduce_slots_per_node,omitempty"`
	Media       bool                      `json:"media_emulation,omitempty"`
	Power       PowerModel                `json:"power_model"`
	Steps       []Paper3Step              `json:"steps,omitempty"`
	Fig1        []Fig1Row                 `json:"figure1,omitempty"`
	Table2      []TCPRow                  `json:"table2,omitempty"`
	Fig2        []Fig2Row                 `json:"figure2,omitempty"`
	// Skipped says why a part did not run (e.g. no network namespaces).
	Skipped []string `json:"skipped,omitempty"`
}

// part reports whether o runs the named part.
func (o *Paper3Options) part(name string) bool {
	if len(o.Parts) == 0 {
		return true
	}
	for _, p := range o.Parts {
		if p == name {
			return true
		}
	}
	return false
}

// Paper3Table is a printed table: a title, a header and rows of cells,
// the form the HTML report renders extra tables in.
type Paper3Table struct {
	Title  string     `json:"title"`
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
	// Note is printed under the table.
	Note string `json:"note,omitempty"`
	// file is the CSV file WriteFiles writes the table to.
	file string
}

func (o *Paper3Options) setDefaults() error {
	for _, p := range o.Parts {
		if p != "table3" && p != "fig1" && p != "table2" && p != "fig2" {
			return fmt.Errorf("experiment amdahl: unknown part %q (fig1, table2, fig2, table3)", p)
		}
	}
	if o.WorkDir == "" || o.LogDir == "" {
		return errors.New("experiment amdahl: no work or log directory")
	}
	if o.Fig1.Dir == "" {
		o.Fig1.Dir = filepath.Join(o.WorkDir, "fig1")
	}
	if len(o.Fig1.Devices) == 0 {
		o.Fig1.Devices = DefaultFig1Devices
	}
	if o.Fig1.FileBytes == 0 {
		o.Fig1.FileBytes = 32 << 20
	}
	if o.Fig1.Files == 0 {
		o.Fig1.Files = 4
	}
	if o.DataNodes < 1 {
		o.DataNodes = DefaultDataNodes
	}
	if o.Conf == nil {
		o.Conf = conf.New()
	}
	if !o.part("table3") {
		return nil
	}
	if len(o.Profiles) == 0 {
		return errors.New("experiment amdahl: no profiles")
	}
	if o.Objects == 0 {
		return errors.New("experiment amdahl: no catalogue objects")
	}
	if o.DataNodes < 1 {
		o.DataNodes = DefaultDataNodes
	}
	if o.StatsMax <= 0 {
		o.StatsMax = 60
	}
	for _, t := range o.Thetas {
		if !(t > 0 && t <= 3600) {
			return fmt.Errorf("experiment amdahl: θ = %g″ out of range (0, 3600]", t)
		}
	}
	if o.Conf == nil {
		o.Conf = conf.New()
	}
	if o.Power.Nodes == nil {
		o.Power = DefaultPowerModel()
	}
	for _, p := range o.Profiles {
		if _, ok := o.Power.Nodes[p.Name]; !ok {
			return fmt.Errorf("experiment amdahl: no power model for profile %s (give one with -node-power %s=idle:W,cpu:W)", p.Name, p.Name)
		}
		for _, d := range p.Devices {
			if _, ok := o.Power.Device(d.Preset); !ok && d.Preset != NoMedia {
				return fmt.Errorf("experiment amdahl: no power model for device preset %s of profile %s (give one with -device-power %s=idle:W,active:W)", d.Preset, p.Name, d.Preset)
			}
		}
	}
	if o.WorkDir == "" || o.LogDir == "" {
		return errors.New("experiment amdahl: no work or log directory")
	}
	return nil
}

// RunPaper3 runs, for each profile on a fresh cluster, SkyGen and then
// Neighbour Searching at each θ and Neighbour Statistics, each step
// accounted for and its energy computed from the power model.
func RunPaper3(ctx context.Context, o Paper3Options) (*Paper3Results, error) {
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.LogDir, 0o755); err != nil {
		return nil, err
	}
	unlock, err := lockWorkDir(o.WorkDir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	host, _ := os.Hostname()
	res := &Paper3Results{Date: time.Now().UTC(), Host: host, CPUs: runtime.NumCPU(), LoadAverage: LoadAverage(),
		Objects: o.Objects, DataNodes: o.DataNodes, Master: o.Master, Hosts: o.Hosts, Power: o.Power}
	defer media.Install(nil)
	if o.part("fig1") {
		o.Progress.Logf("Figure 1: buffered vs direct I/O, %d files of %s per operation", o.Fig1.Files, formatBytes(o.Fig1.FileBytes))
		rows, err := RunFig1(ctx, o.Fig1, o.Progress)
		if err != nil {
			return nil, fmt.Errorf("experiment amdahl: %w", err)
		}
		res.Fig1 = rows
	}
	if o.part("table2") {
		rows, skipped, err := RunTable2(ctx, o.Table2, o.Progress)
		if err != nil {
			return nil, fmt.Errorf("experiment amdahl: %w", err)
		}
		res.Table2, res.Skipped = rows, append(res.Skipped, skipped...)
	}
	if o.part("fig2") {
		rows, err := runFig2(ctx, &o)
		if err != nil {
			return nil, fmt.Errorf("experiment amdahl: %w", err)
		}
		res.Fig2 = rows
	}
	if !o.part("table3") {
		return res, nil
	}
	co := o.clusterOptions()
	res.MapSlots, res.ReduceSlots, res.Media = co.MapSlots, co.ReduceSlots, o.Media
	for i, p := range o.Profiles {
		res.Profiles = append(res.Profiles, p.Name)
		if res.Devices == nil {
			res.Devices, res.Layouts = map[string][]string{}, map[string]*ProfileLayout{}
		}
		res.Layouts[p.Name] = p.layout()
		for _, d := range p.Devices {
			res.Devices[p.Name] = append(res.Devices[p.Name], d.Preset)
		}
		o.Progress.Logf("[%d/%d] %s: %s", i+1, len(o.Profiles), p.Name, p.Description)
		steps, err := runPaper3Profile(ctx, &o, p)
		if err != nil {
			return nil, fmt.Errorf("experiment amdahl: profile %s: %w", p.Name, err)
		}
		res.Steps = append(res.Steps, steps...)
	}
	return res, nil
}

// clusterOptions are the Options the shared cluster code (runner.go's
// layout, hosts.go, the accountant) reads.
func (o *Paper3Options) clusterOptions() *Options {
	m, r := ScaledSlots(runtime.NumCPU(), o.DataNodes)
	return &Options{DataNodes: o.DataNodes, MapSlots: m, ReduceSlots: r, Media: o.Media, WorkDir: o.WorkDir, LogDir: o.LogDir,
		Keep: o.Keep, Conf: o.Conf, Executable: o.Executable, Progress: o.Progress, Hosts: o.Hosts}
}

// startCluster starts a profile's cluster as runProfile does and returns
// it with the jobs' environment.
func startCluster(ctx context.Context, o *Options, p *Profile, dir string, logf io.Writer) (cluster, fs.Env, error) {
	c := o.Conf.Clone()
	for _, k := range []string{"dfs.namenode.rpc-address", "dfs.namenode.http-address", "mapreduce.jobtracker.address"} {
		c.Set(k, "127.0.0.1:0")
	}
	c.Unset("dfs.datanode.address")
	if !c.IsSet("mapreduce.jobtracker.heartbeat.interval") {
		c.Set("mapreduce.jobtracker.heartbeat.interval", strconv.Itoa(HeartbeatMillis))
	}
	for _, kv := range p.Conf {
		c.Set(kv[0], kv[1])
	}
	for i := 0; i < o.DataNodes; i++ {
		for _, d := range p.Devices {
			if err := os.MkdirAll(filepath.Join(localcluster.NodeDir(dir, i), d.Name), 0o755); err != nil {
				return nil, fs.Env{}, err
			}
		}
	}
	dirs := ""
	if o.Media && p.Emulated() {
		dirs = p.MediaDirs(dir, o.DataNodes)
	}
	c.Set(media.KeyDirs, dirs)
	if err := media.Configure(c); err != nil {
		return nil, fs.Env{}, err
	}
	var cl cluster
	var err error
	if o.Hosts {
		cl, err = startHosts(o, p, dir, c)
	} else {
		cl, err = localcluster.Start(localcluster.Config{Conf: c, Dir: dir, DataNodes: o.DataNodes,
			Layout: func(i int) localcluster.Node { return p.Node(dir, i) }, MapReduce: trackers.Start, DefaultJobTracker: "127.0.0.1:0",
			MapSlots: o.MapSlots, ReduceSlots: o.ReduceSlots, Executable: o.Executable,
			Logger: slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	}
	if err != nil {
		return nil, fs.Env{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	err = cl.WaitReady(wctx)
	cancel()
	if err != nil {
		cl.Close()
		return nil, fs.Env{}, err
	}
	jc := cl.ClientConf(c)
	if !jc.IsSet("dfs.replication") {
		jc.Set("dfs.replication", strconv.Itoa(min(3, o.DataNodes)))
	}
	if !jc.IsSet("mapreduce.job.maps") {
		jc.Set("mapreduce.job.maps", strconv.Itoa(o.MapSlots*o.DataNodes))
	}
	if !jc.IsSet("mapreduce.job.reduces") {
		jc.Set("mapreduce.job.reduces", strconv.Itoa(o.ReduceSlots*o.DataNodes))
	}
	return cl, fs.Env{Conf: jc, User: fs.CurrentUser()}, nil
}

var workLine = regexp.MustCompile(`(?m)^Work: (\d+) `)

func runPaper3Profile(ctx context.Context, po *Paper3Options, p *Profile) (steps []Paper3Step, err error) {
	o := po.clusterOptions()
	dir, err := filepath.Abs(filepath.Join(o.WorkDir, p.Name))
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if !o.Keep {
		defer os.RemoveAll(dir)
	}
	logf, err := os.Create(filepath.Join(o.LogDir, p.Name+"-daemons.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cl, env, err := startCluster(ctx, o, p, dir, logf)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := cl.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	o.acct = &accountant{cl: cl, dir: dir, p: p, nodes: o.DataNodes, env: env}
	base := "/paper3"
	sky := base + "/sky"
	gen := env.Conf.Clone()
	gen.Set(zones.KeySkyGenSeed, "1")
	if po.Clustered {
		gen.Set(zones.KeySkyGenDistribution, "clustered")
		if po.Sigma > 0 {
			gen.Set(zones.KeySkyGenSigma, strconv.FormatFloat(po.Sigma, 'g', -1, 64))
		}
	}
	type step struct {
		app, cmd string
		theta    float64
		args     []string
		env      fs.Env
	}
	todo := []step{{app: "skygen", cmd: "skygen", args: []string{strconv.FormatUint(po.Objects, 10), sky}, env: fs.Env{Conf: gen, User: env.User}}}
	for _, t := range po.Thetas {
		c := env.Conf.Clone()
		c.Set(zones.KeyTheta, strconv.FormatFloat(t, 'g', -1, 64))
		todo = append(todo, step{app: "neighbors", cmd: "neighbors", theta: t, args: []string{sky, fmt.Sprintf("%s/pairs-%g", base, t)}, env: fs.Env{Conf: c, User: env.User}})
	}
	sc := env.Conf.Clone()
	sc.Set(zones.KeyMaxTheta, strconv.FormatFloat(po.StatsMax, 'g', -1, 64))
	todo = append(todo, step{app: "neighborstats", cmd: "neighborstats", theta: po.StatsMax, args: []string{sky, base + "/stats"}, env: fs.Env{Conf: sc, User: env.User}})
	for _, s := range todo {
		cmd, ok := examples.Lookup(s.cmd)
		if !ok {
			return nil, fmt.Errorf("no example %s", s.cmd)
		}
		var console bytes.Buffer
		cgBefore := hostsCPU(cl, o.DataNodes)
		before := o.acct.begin(ctx)
		label := fmt.Sprintf("  %s %s θ=%g″", p.Name, s.app, s.theta)
		if s.app == "skygen" {
			label = fmt.Sprintf("  %s skygen %d objects", p.Name, po.Objects)
		}
		secs, err := timed(o, label, fmt.Sprintf("%s-%s-%g.log", p.Name, s.app, s.theta),
			func(out io.Writer) error { return cmd.Run(ctx, s.env, s.args, io.MultiWriter(out, &console)) })
		if err != nil {
			before.abandon()
			return nil, fmt.Errorf("%s: %w", s.app, err)
		}
		ja := o.acct.end(ctx, before, s.app, secs, 0, s.env.Conf)
		if s.app == "skygen" {
			continue
		}
		st := Paper3Step{Profile: p.Name, App: s.app, Theta: s.theta, Seconds: secs, Account: ja,
			OutputBytes: ja.Counters["HDFS_BYTES_WRITTEN"]}
		if cgAfter := hostsCPU(cl, o.DataNodes); cgBefore != nil && cgAfter != nil && p.NodeCPUs > 0 && secs > 0 {
			for i := range cgAfter {
				st.NodeCPUUtil = append(st.NodeCPUUtil, clamp01((cgAfter[i]-cgBefore[i])/(secs*p.NodeCPUs)))
			}
		} else if po.Hosts {
			st.Notes = append(st.Notes, "the daemons run as processes on hosts without CPU cgroups (no node.cpus): only this process's CPU is counted")
		}
		if m := workLine.FindSubmatch(console.Bytes()); m != nil {
			st.Pairs, _ = strconv.ParseInt(string(m[1]), 10, 64)
		}
		po.energy(&st, p)
		steps = append(steps, st)
		if s.app == "neighbors" {
			// The pairs are not needed again; the space is (the 60″ output is the largest).
			if err := removeTree(ctx, env, s.args[1]); err != nil {
				return nil, err
			}
		}
	}
	return steps, removeTree(ctx, env, base)
}

// capacity is the CPUs the nodes had between them: each node's share
// with -hosts and node.cpus, else the machine's.
func (po *Paper3Options) capacity(p *Profile) float64 {
	if po.Hosts && p.NodeCPUs > 0 {
		return math.Min(float64(po.DataNodes)*p.NodeCPUs, float64(runtime.NumCPU()))
	}
	return float64(runtime.NumCPU())
}

// energy fills the step's CPU utilisation, per-node power and energy
// from its accounting and the power model.
func (po *Paper3Options) energy(st *Paper3Step, p *Profile) {
	ja := st.Account
	for _, d := range ja.Daemons {
		st.CPUSeconds += d.User + d.System
	}
	if ja.Children != nil {
		st.CPUSeconds += ja.Children.User + ja.Children.System
	}
	if st.Seconds <= 0 {
		return
	}
	st.CPUUtil = clamp01(st.CPUSeconds / (st.Seconds * po.capacity(p)))
	node := po.Power.Nodes[p.Name]
	busy := map[[2]string]float64{}
	for _, d := range ja.Devices {
		busy[[2]string{strconv.Itoa(d.Node), d.Device}] = d.Busy / st.Seconds
	}
	total := 0.0
	for i := 0; i < po.DataNodes; i++ {
		var devs []DeviceUse
		for _, d := range p.Devices {
			b, ok := busy[[2]string{strconv.Itoa(i), d.Name}]
			if !ok && d.Preset != NoMedia && po.Media {
				st.Notes = appendOnce(st.Notes, "no busy time for device "+d.Name+": counted idle")
			}
			devs = append(devs, DeviceUse{Preset: d.Preset, Busy: b})
		}
		util := st.CPUUtil
		if i < len(st.NodeCPUUtil) {
			util = st.NodeCPUUtil[i]
		}
		w, _ := po.Power.Watts(node, util, devs)
		st.NodeWatts = append(st.NodeWatts, w)
		total += w
	}
	if po.Master {
		var devs []DeviceUse
		for _, d := range p.Devices {
			devs = append(devs, DeviceUse{Preset: d.Preset})
		}
		w, _ := po.Power.Watts(node, 0, devs)
		total += w
	}
	st.Joules = total * st.Seconds
	if len(st.NodeCPUUtil) == 0 {
		st.Notes = appendOnce(st.Notes, "CPU utilisation is the whole cluster's CPU time over runtime × its CPUs, applied to every node alike")
	}
}

// hostsCPU is the CPU seconds each DataNode host's cgroup has used (its
// DataNode, TaskTracker and tasks), nil unless cl is a cluster of hosts
// with CPU shares.
func hostsCPU(cl cluster, nodes int) []float64 {
	h, ok := cl.(*hostsCluster)
	if !ok || h.cpu == nil {
		return nil
	}
	out := make([]float64, nodes)
	for i := range out {
		usage, _, ok := h.cpu.Stat(fmt.Sprintf("dn%d", i))
		if !ok {
			return nil
		}
		out[i] = float64(usage) / 1e6
	}
	return out
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// step returns the result of app at theta on profile, nil if none.
func (r *Paper3Results) step(profile, app string, theta float64) *Paper3Step {
	for i := range r.Steps {
		s := &r.Steps[i]
		if s.Profile == profile && s.App == app && s.Theta == theta {
			return s
		}
	}
	return nil
}

// rowKeys are the table's rows: Neighbour Searching per θ, then
// Neighbour Statistics.
func (r *Paper3Results) rowKeys() []Paper3Step {
	var keys []Paper3Step
	seen := map[[2]string]bool{}
	for _, s := range r.Steps {
		k := [2]string{s.App, strconv.FormatFloat(s.Theta, 'g', -1, 64)}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, Paper3Step{App: s.App, Theta: s.Theta})
		}
	}
	return keys
}

func appTitle(app string, theta float64) (string, string) {
	if app == "neighborstats" {
		return "Neighbor Statistics", fmt.Sprintf("1–%g″", theta)
	}
	return "Neighbor Searching", fmt.Sprintf("%g″", theta)
}

// paperEnergyRatio is the paper's blade-over-OCC efficiency for a row,
// 0 where the paper gives none.
func paperEnergyRatio(app string, theta float64) float64 {
	switch {
	case app == "neighborstats":
		return paper3.EnergyRatioStats
	case app == "neighbors" && theta == 30:
		return paper3.EnergyRatioSearch30
	}
	return 0
}

func p3cell(v float64, prec int) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// Tables returns the printed tables: Table 3 (runtimes), the energy per
// job, the energy ratios beside the paper's, and the power model.
func (r *Paper3Results) Tables() []Paper3Table {
	var ts []Paper3Table
	if len(r.Fig1) > 0 {
		ts = append(ts, r.fig1Tables()...)
	}
	if len(r.Table2) > 0 {
		ts = append(ts, r.table2Table())
	}
	if len(r.Fig2) > 0 {
		ts = append(ts, r.fig2Table())
	}
	if len(r.Steps) > 0 {
		ts = append(ts, r.table3Tables()...)
	}
	return ts
}

// table3Tables are Table 3, the energy per job, the energy ratios and
// the power model.
func (r *Paper3Results) table3Tables() []Paper3Table {
	first, last := "", ""
	if len(r.Profiles) > 0 {
		first, last = r.Profiles[0], r.Profiles[len(r.Profiles)-1]
	}
	t3 := Paper3Table{Title: "Table 3: running time in seconds (" + strconv.FormatUint(r.Objects, 10) + " objects)",
		Header: []string{"application", "θ"}}
	for _, p := range r.Profiles {
		t3.Header = append(t3.Header, p+" s", "paper s")
	}
	t3.Header = append(t3.Header, "pairs", "output/input", "paper", "strata "+last+"/"+first, "paper OCC/blade")
	for _, k := range r.rowKeys() {
		app, th := appTitle(k.App, k.Theta)
		row := []string{app, th}
		pairs, outIn := int64(0), 0.0
		for _, p := range r.Profiles {
			s := r.step(p, k.App, k.Theta)
			v := 0.0
			if s != nil {
				v, pairs = s.Seconds, s.Pairs
				outIn = ratio2(float64(s.OutputBytes), float64(r.Objects)*zones.RecordSize)
			}
			row = append(row, p3cell(v, 1), "n/a")
		}
		ratio := 0.0
		if a, b := r.step(first, k.App, k.Theta), r.step(last, k.App, k.Theta); a != nil && b != nil && first != last {
			ratio = ratio2(b.Seconds, a.Seconds)
		}
		pr := 0.0
		if e := paperEnergyRatio(k.App, k.Theta); e > 0 {
			pr = paper3RuntimeRatio(e)
		}
		paperOut := 0.0
		if k.App == "neighbors" && k.Theta == 60 {
			paperOut = paper3.Output60GB / paper3.InputGB
		}
		row = append(row, strconv.FormatInt(pairs, 10), p3cell(outIn, 2), p3cell(paperOut, 1), p3cell(ratio, 2), p3cell(pr, 2))
		t3.Rows = append(t3.Rows, row)
	}
	t3.Note = "The seed text does not state Table 3's runtimes; \"paper OCC/blade\" is the runtime ratio its energy ratios imply " +
		"(ratio × 9 blades × 40 W / (4 OCC nodes × 290 W)); output/input is HDFS bytes written over the catalogue's (the paper: 540 GB from 25 GB at 60″)."

	en := Paper3Table{Title: "Energy per job (power model: idle + CPU-proportional + per-device active/idle)",
		Header: []string{"application", "θ", "profile", "runtime s", "CPU util", "W per node", "nodes", "energy kJ", "pairs per J"}}
	for _, k := range r.rowKeys() {
		app, th := appTitle(k.App, k.Theta)
		for _, p := range r.Profiles {
			s := r.step(p, k.App, k.Theta)
			if s == nil {
				continue
			}
			mean := 0.0
			for _, w := range s.NodeWatts {
				mean += w / float64(len(s.NodeWatts))
			}
			nodes := strconv.Itoa(len(s.NodeWatts))
			if r.Master {
				nodes += "+1"
			}
			util := s.CPUUtil
			if len(s.NodeCPUUtil) > 0 {
				util = 0
				for _, u := range s.NodeCPUUtil {
					util += u / float64(len(s.NodeCPUUtil))
				}
			}
			en.Rows = append(en.Rows, []string{app, th, p, p3cell(s.Seconds, 1), fmt.Sprintf("%.0f%%", 100*util), p3cell(mean, 1), nodes,
				p3cell(s.Joules/1000, 2), p3cell(ratio2(float64(s.Pairs), s.Joules), 1)})
		}
	}
	en.Note = "CPU util: the cluster's CPU time over runtime × its CPUs (with -hosts and node.cpus: each node's cgroup over its share, the mean shown)."
	ra := Paper3Table{Title: "Energy efficiency: " + first + " over " + last + " (energy of " + last + " / energy of " + first + ")",
		Header: []string{"application", "θ", "strata", "paper", "strata/paper"}}
	for _, k := range r.rowKeys() {
		app, th := appTitle(k.App, k.Theta)
		a, b := r.step(first, k.App, k.Theta), r.step(last, k.App, k.Theta)
		if a == nil || b == nil || first == last {
			continue
		}
		v := ratio2(b.Joules, a.Joules)
		pe := paperEnergyRatio(k.App, k.Theta)
		ra.Rows = append(ra.Rows, []string{app, th, p3cell(v, 2), p3cell(pe, 1), p3cell(ratio2(v, pe), 2)})
	}
	pm := Paper3Table{Title: "Power model (W)", Header: []string{"profile", "idle", "CPU at 100%", "devices idle", "devices active", "full load", "paper full load"}}
	for _, p := range r.Profiles {
		n := r.Power.Nodes[p]
		di, da := r.profileDeviceWatts(p)
		paper := "n/a"
		switch {
		case strings.HasPrefix(p, "amdahl-blade"):
			paper = p3cell(paper3.BladeWatts, 0)
		case p == "occ-node":
			paper = p3cell(paper3.OCCWatts, 0)
		}
		pm.Rows = append(pm.Rows, []string{p, p3cell(n.IdleW, 1), p3cell(n.CPUW, 1), p3cell(di, 1), p3cell(da, 1), p3cell(n.IdleW+n.CPUW+da, 1), paper})
	}
	pm.Note = "Devices are the profile's emulated ones; the paper's nodes had 2 Spinpoint F1 + 1 Vertex (blade) and 1 Ultrastar A7K1000 (OCC)."
	t3.file, en.file, ra.file, pm.file = "paper3-table3.csv", "paper3-energy.csv", "paper3-energy-ratio.csv", "paper3-power-model.csv"
	return []Paper3Table{t3, en, ra, pm}
}

// profileDeviceWatts sums a profile's devices' idle and active power.
func (r *Paper3Results) profileDeviceWatts(profile string) (idle, active float64) {
	for _, preset := range r.Devices[profile] {
		if dp, ok := r.Power.Device(preset); ok {
			idle += dp.IdleW
			active += dp.ActiveW
		}
	}
	return idle, active
}

func ratio2(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// PrintTables prints the tables as aligned text.
func (r *Paper3Results) PrintTables(w io.Writer) {
	fmt.Fprintf(w, "Third paper (Hadoop in Low-Power Processors) on %s, %d CPUs, load %s", r.Host, r.CPUs, r.LoadAverage)
	if len(r.Steps) > 0 {
		fmt.Fprintf(w, "; %d DataNodes per cluster%s", r.DataNodes, map[bool]string{true: ", hosts", false: ", one process (loopback)"}[r.Hosts])
	}
	fmt.Fprintln(w)
	for _, t := range r.Tables() {
		fmt.Fprintln(w)
		PrintPaper3Table(w, t)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "\nSkipped: %s\n", s)
	}
}

// PrintPaper3Table prints t with its columns aligned.
func PrintPaper3Table(w io.Writer, t Paper3Table) {
	fmt.Fprintln(w, t.Title)
	widths := make([]int, len(t.Header))
	all := append([][]string{t.Header}, t.Rows...)
	for _, row := range all {
		for i, c := range row {
			if i < len(widths) {
				widths[i] = max(widths[i], len([]rune(c)))
			}
		}
	}
	for _, row := range all {
		var b strings.Builder
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := widths[i] - len([]rune(c))
			if i < 2 { // labels left, numbers right
				b.WriteString(c + strings.Repeat(" ", pad))
			} else {
				b.WriteString(strings.Repeat(" ", pad) + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	if t.Note != "" {
		fmt.Fprintln(w, t.Note)
	}
}

// WriteFiles writes paper3.json, one CSV per table, the charts
// (runtimes and energy per application) and the report (index.html) to
// dir.
func (r *Paper3Results) WriteFiles(dir string) ([]string, error) {
	fw, err := newFileWriter(dir)
	if err != nil {
		return nil, err
	}
	tables := r.Tables()
	fw.write("paper3.json", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			*Paper3Results
			Tables []Paper3Table `json:"tables"`
		}{r, tables})
	})
	for _, t := range tables {
		if t.file != "" {
			fw.write(t.file, func(w io.Writer) error { return writeCSV(w, append([][]string{t.Header}, t.Rows...)) })
		}
	}
	for _, ch := range r.charts() {
		fw.write(ch.file, ch.chart.WriteSVG)
	}
	// The report links the files above: it comes last.
	fw.write(ReportFile, func(w io.Writer) error { return r.WriteReport(w, ReportLinks(dir, fw.files)) })
	return fw.done()
}

func (r *Paper3Results) charts() []namedChart {
	cs := r.fig1Charts()
	if len(r.Table2) > 0 {
		cs = append(cs, r.table2Chart())
	}
	if len(r.Fig2) > 0 {
		cs = append(cs, r.fig2Chart())
	}
	if len(r.Steps) == 0 {
		return cs
	}
	keys := r.rowKeys()
	rt := &Chart{Title: "Table 3: running time per application", YLabel: "seconds", Series: r.Profiles}
	en := &Chart{Title: "Energy per job (power model)", YLabel: "kJ", Series: r.Profiles}
	for _, k := range keys {
		app, th := appTitle(k.App, k.Theta)
		g := strings.TrimPrefix(app, "Neighbor ") + " " + th
		rt.Groups = append(rt.Groups, g)
		en.Groups = append(en.Groups, g)
	}
	for _, p := range r.Profiles {
		var a, b []float64
		for _, k := range keys {
			if s := r.step(p, k.App, k.Theta); s != nil {
				a, b = append(a, s.Seconds), append(b, s.Joules/1000)
			} else {
				a, b = append(a, math.NaN()), append(b, math.NaN())
			}
		}
		rt.Values, en.Values = append(rt.Values, a), append(en.Values, b)
	}
	return append(cs, namedChart{file: "paper3-table3.svg", chart: rt}, namedChart{file: "paper3-energy.svg", chart: en})
}
