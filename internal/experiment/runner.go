package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	_ "github.com/stratafs/strata/hdfs" // hdfs:// for the jobs' client side
	"github.com/stratafs/strata/internal/dfsio"
	"github.com/stratafs/strata/internal/examples"
	"github.com/stratafs/strata/internal/localcluster"
	"github.com/stratafs/strata/internal/localcluster/trackers"
	"github.com/stratafs/strata/internal/media"
)

// Defaults of an experiment.
const (
	// DefaultRows is TeraGen's default size: 5,000,000 rows, 500 MB.
	DefaultRows = 5_000_000
	// DefaultDataNodes is the default number of nodes.
	DefaultDataNodes = 3
	// DefaultYears is the paper's lifetime.
	DefaultYears = 3
	// DefaultKWhPrice is the electricity price in dollars per kWh (US
	// commercial average, 2014, EIA).
	DefaultKWhPrice = 0.1075
	// DefaultDFSIOTotal is the bytes each TestDFSIO run writes or reads
	// in all, split over its files (the second paper's 240 GB, scaled).
	DefaultDFSIOTotal = 480 << 20
	// Paper's slots per hardware thread: 12 map and 6 reduce slots on a
	// DataNode with 12 threads.
	paperMapSlotsPerThread, paperReduceSlotsPerThread = 1.0, 0.5
	// paperDataPerSortMB is the paper's data per reduce task over its
	// shuffle buffer: 1 TB over 36 reduce slots, ≈ 28 GB each, against
	// 0.70 of a 512 MB child heap, ≈ 358 MB — about 80.
	paperDataPerSortMB = 80
	// HeartbeatMillis is the clusters' TaskTracker heartbeat interval
	// unless the configuration sets one.
	HeartbeatMillis = 200
)

// DefaultProfiles are the paper's three configurations, baseline first.
var DefaultProfiles = []string{"all-hdd", "ssd-intermediate", "all-ssd"}

// DefaultDFSIOFiles and DefaultDFSIOReplications are the second paper's
// sweep.
var (
	DefaultDFSIOFiles        = []int{1, 3, 6, 12, 48}
	DefaultDFSIOReplications = []int{3, 2}
)

// ScaledSlots are the paper's slot counts (one map slot per hardware
// thread, one reduce slot per two) scaled to cpus threads shared by nodes
// TaskTrackers; at least one of each per node.
func ScaledSlots(cpus, nodes int) (maps, reduces int) {
	if nodes < 1 {
		nodes = 1
	}
	maps = int(float64(cpus)*paperMapSlotsPerThread/float64(nodes) + 0.5)
	reduces = int(float64(cpus)*paperReduceSlotsPerThread/float64(nodes) + 0.5)
	return max(maps, 1), max(reduces, 1)
}

// ScaledSortMB is the map-side sort buffer (mapreduce.task.io.sort.mb)
// that gives a map task reading mapBytes the paper's ratio of data to sort
// memory (paperDataPerSortMB), at least 1 MiB. The paper's 1 TB sort
// pushed most intermediate data through on-disk spills and multi-pass
// merges; with the default 100 MiB buffer the maps of a sort of a few
// hundred MB would spill once or twice and merge little.
func ScaledSortMB(mapBytes int64) int {
	return max(1, int(float64(mapBytes)/(1<<20)/paperDataPerSortMB+0.5))
}

// TeraSortMB is the sort buffer strata experiment gives the jobs of a
// TeraSort of rows on maps map slots with blocks of blockSize:
// ScaledSortMB of one TeraSort map's input.
func TeraSortMB(rows uint64, maps int, blockSize int64) int {
	return ScaledSortMB(terasortMapBytes(rows, maps, blockSize))
}

// terasortMapBytes is the input of one TeraSort map: a TeraGen file
// (rows over maps files) or a block of it, whichever is smaller.
func terasortMapBytes(rows uint64, maps int, blockSize int64) int64 {
	file := int64(rows) * 100 / int64(max(maps, 1))
	if blockSize > 0 {
		return min(file, blockSize)
	}
	return file
}

// Options configure an experiment.
type Options struct {
	// Profiles run in order; the first is the baseline.
	Profiles []*Profile
	// Rows is TeraGen's row count (100 bytes each); 0 skips the TeraSort
	// part.
	Rows        uint64
	Repetitions int
	// Validate runs TeraValidate after each TeraSort.
	Validate bool
	// DataNodes per cluster, each with a TaskTracker with MapSlots and
	// ReduceSlots (ScaledSlots if 0).
	DataNodes             int
	MapSlots, ReduceSlots int
	// SortMB is mapreduce.task.io.sort.mb for the jobs; 0 means
	// ScaledSortMB unless the configuration sets it.
	SortMB int
	// Media applies the profiles' device presets (strata.media.dirs);
	// without it every device is a plain directory.
	Media bool
	// WorkDir holds each profile's cluster (WorkDir/<profile>), created
	// fresh and removed afterwards unless Keep.
	WorkDir string
	Keep    bool
	// LogDir receives the daemons' log and each job's console.
	LogDir string
	// Conf is the base configuration.
	Conf *conf.Configuration
	// Executable runs the tasks (default this program).
	Executable string
	// Years and KWhPrice feed the cost tables.
	Years, KWhPrice float64
	// DFSIOFiles, if not empty, runs TestDFSIO write and read with each
	// file count at each of DFSIOReplications, DFSIOTotal bytes a run.
	DFSIOFiles        []int
	DFSIOReplications []int
	DFSIOTotal        int64
	Progress          *Progress

	// acct measures the running profile's steps (accounting.go).
	acct *accountant
	// Hosts runs each profile's daemons as processes on hosts of their
	// own, with the profile's link.mbps and node.cpus (hosts.go); needs
	// root (HostsAvailable).
	Hosts bool
	// AfterProfile, if set, runs on each profile's cluster after its
	// TeraSort and TestDFSIO steps, env being the jobs' environment (the
	// second paper's jobs and gateways, paper2.go).
	AfterProfile func(ctx context.Context, o *Options, p *Profile, env fs.Env) error
}

func (o *Options) setDefaults() error {
	if len(o.Profiles) == 0 {
		return errors.New("experiment: no profiles")
	}
	if o.Repetitions < 1 {
		o.Repetitions = 1
	}
	if o.DataNodes < 1 {
		o.DataNodes = DefaultDataNodes
	}
	m, r := ScaledSlots(runtime.NumCPU(), o.DataNodes)
	if o.MapSlots < 1 {
		o.MapSlots = m
	}
	if o.ReduceSlots < 1 {
		o.ReduceSlots = r
	}
	if o.Years == 0 {
		o.Years = DefaultYears
	}
	if o.Conf == nil {
		o.Conf = conf.New()
	}
	if o.Rows > 0 {
		// The cost tables' inputs are checked now, not after the runs.
		in := make([]CostInput, len(o.Profiles))
		for i, p := range o.Profiles {
			in[i] = CostInput{Name: p.Name, Runtime: 1, Price: p.Price, Watts: p.Watts}
		}
		if _, err := TCO(in, o.Years, o.KWhPrice); err != nil {
			return fmt.Errorf("experiment: %w", err)
		}
	}
	if len(o.DFSIOFiles) > 0 {
		if len(o.DFSIOReplications) == 0 {
			o.DFSIOReplications = DefaultDFSIOReplications
		}
		if o.DFSIOTotal <= 0 {
			o.DFSIOTotal = DefaultDFSIOTotal
		}
		for _, n := range o.DFSIOFiles {
			if n < 1 || int64(n) > o.DFSIOTotal {
				return fmt.Errorf("experiment: TestDFSIO file count %d out of range [1, %d]", n, o.DFSIOTotal)
			}
		}
		for _, r := range o.DFSIOReplications {
			if r < 1 || r > o.DataNodes {
				return fmt.Errorf("experiment: TestDFSIO replication %d needs at least %d DataNodes (have %d)", r, r, o.DataNodes)
			}
		}
	}
	if o.SortMB == 0 && o.Rows > 0 && !o.Conf.IsSet("mapreduce.task.io.sort.mb") {
		bs, err := o.Conf.GetBytes("dfs.blocksize")
		if err != nil {
			return fmt.Errorf("experiment: %w", err)
		}
		o.SortMB = TeraSortMB(o.Rows, o.MapSlots*o.DataNodes, bs)
	}
	if o.Rows == 0 && len(o.DFSIOFiles) == 0 && o.AfterProfile == nil {
		return errors.New("experiment: nothing to run (no TeraGen rows and no TestDFSIO files)")
	}
	if o.WorkDir == "" || o.LogDir == "" {
		return errors.New("experiment: no work or log directory")
	}
	return nil
}

// Run runs the experiment: for each profile a fresh cluster laid out as
// the profile says, TeraGen + TeraSort (+ TeraValidate) Repetitions
// times, then the TestDFSIO sweep; and computes the cost tables from the
// mean runtimes. Media emulation is off again when it returns.
func Run(ctx context.Context, o Options) (*Results, error) {
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
	res := &Results{Date: time.Now().UTC(), Host: host, CPUs: runtime.NumCPU(), LoadAverage: LoadAverage(),
		Rows: o.Rows, Repetitions: o.Repetitions, DataNodes: o.DataNodes, MapSlots: o.MapSlots, ReduceSlots: o.ReduceSlots, SortMB: o.SortMB,
		Media: o.Media, Years: o.Years, KWhPrice: o.KWhPrice}
	res.MemoryBytes, res.Kernel, res.Hosts = MemTotal(), Kernel(), o.Hosts
	defer media.Install(nil)
	for i, p := range o.Profiles {
		o.Progress.Logf("[%d/%d] %s: %s", i+1, len(o.Profiles), p.Name, p.Description)
		pr, dr, err := runProfile(ctx, &o, p)
		if err != nil {
			return nil, fmt.Errorf("experiment: profile %s: %w", p.Name, err)
		}
		res.Profiles = append(res.Profiles, pr)
		res.DFSIO = append(res.DFSIO, dr...)
	}
	if o.Rows > 0 {
		if err := res.computeCosts(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// LoadAverage is the first three fields of /proc/loadavg, "" where there
// is none.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func runProfile(ctx context.Context, o *Options, p *Profile) (pr ProfileResult, dr []DFSIOResult, err error) {
	pr = ProfileResult{Name: p.Name, Description: p.Description, Price: p.Price, Watts: p.Watts, PaperSpeedup: p.PaperSpeedup, Layout: p.layout()}
	dir, err := filepath.Abs(filepath.Join(o.WorkDir, p.Name))
	if err != nil {
		return pr, nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return pr, nil, err
	}
	if !o.Keep {
		defer os.RemoveAll(dir)
	}
	c := o.Conf.Clone()
	// The clusters are private and take free ports, whatever a config
	// dir says: other clusters may run on this machine.
	for _, k := range []string{"dfs.namenode.rpc-address", "dfs.namenode.http-address", "mapreduce.jobtracker.address"} {
		c.Set(k, "127.0.0.1:0")
	}
	c.Unset("dfs.datanode.address")
	if !c.IsSet("mapreduce.jobtracker.heartbeat.interval") {
		// Small jobs must not be dominated by waiting for heartbeats.
		c.Set("mapreduce.jobtracker.heartbeat.interval", strconv.Itoa(HeartbeatMillis))
	}
	for _, kv := range p.Conf {
		c.Set(kv[0], kv[1])
	}
	// Every device directory exists before the table names it; each
	// node's device is its own (its DataNode and its TaskTracker's
	// children share it).
	for i := 0; i < o.DataNodes; i++ {
		for _, d := range p.Devices {
			if err := os.MkdirAll(filepath.Join(localcluster.NodeDir(dir, i), d.Name), 0o755); err != nil {
				return pr, nil, err
			}
		}
	}
	dirs := ""
	if o.Media && p.Emulated() {
		dirs = p.MediaDirs(dir, o.DataNodes)
		pr.Media = describeMedia(p)
	}
	c.Set(media.KeyDirs, dirs)
	if err := media.Configure(c); err != nil {
		return pr, nil, err
	}
	logf, err := os.Create(filepath.Join(o.LogDir, p.Name+"-daemons.log"))
	if err != nil {
		return pr, nil, err
	}
	defer logf.Close()
	var cl cluster
	if o.Hosts {
		cl, err = startHosts(o, p, dir, c)
	} else {
		cl, err = localcluster.Start(localcluster.Config{Conf: c, Dir: dir, DataNodes: o.DataNodes,
			Layout: func(i int) localcluster.Node { return p.Node(dir, i) }, MapReduce: trackers.Start, DefaultJobTracker: "127.0.0.1:0",
			MapSlots: o.MapSlots, ReduceSlots: o.ReduceSlots, Executable: o.Executable,
			Logger: slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	}
	if err != nil {
		return pr, nil, err
	}
	defer func() {
		if cerr := cl.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	err = cl.WaitReady(wctx)
	cancel()
	if err != nil {
		return pr, nil, err
	}
	jc := cl.ClientConf(c)
	if !jc.IsSet("dfs.replication") {
		jc.Set("dfs.replication", strconv.Itoa(min(3, o.DataNodes)))
	}
	if o.SortMB > 0 {
		jc.Set("mapreduce.task.io.sort.mb", strconv.Itoa(o.SortMB))
	}
	if !jc.IsSet("mapreduce.job.maps") {
		jc.Set("mapreduce.job.maps", strconv.Itoa(o.MapSlots*o.DataNodes))
	}
	if !jc.IsSet("mapreduce.job.reduces") {
		jc.Set("mapreduce.job.reduces", strconv.Itoa(o.ReduceSlots*o.DataNodes))
	}
	env := fs.Env{Conf: jc, User: fs.CurrentUser()}
	if p.StoragePolicy != "" {
		for _, d := range []string{"/experiment", dfsio.DefaultBaseDir} {
			if err := setPolicy(ctx, env, d, p.StoragePolicy); err != nil {
				return pr, nil, err
			}
		}
	}
	o.acct = &accountant{cl: cl, dir: dir, p: p, nodes: o.DataNodes, env: env}
	defer func() { o.acct = nil }()
	if o.Rows > 0 {
		for rep := 1; rep <= o.Repetitions; rep++ {
			run, err := runTera(ctx, o, p, env, rep)
			if err != nil {
				return pr, nil, err
			}
			pr.Runs = append(pr.Runs, run)
		}
		pr.summarize()
	}
	for _, r := range o.DFSIOReplications {
		for _, n := range o.DFSIOFiles {
			res, err := runDFSIO(ctx, o, p, env, r, n)
			if err != nil {
				return pr, nil, err
			}
			dr = append(dr, res...)
		}
	}
	if o.AfterProfile != nil {
		if err := o.AfterProfile(ctx, o, p, env); err != nil {
			return pr, nil, err
		}
	}
	return pr, dr, nil
}

func describeMedia(p *Profile) string {
	s := ""
	for _, d := range p.Devices {
		if s != "" {
			s += ", "
		}
		s += d.Name + "=" + d.Preset
	}
	return s
}

type policySetter interface {
	SetStoragePolicy(ctx context.Context, p, policy string) error
}

// setPolicy creates dir and sets its storage policy.
func setPolicy(ctx context.Context, env fs.Env, dir, policy string) error {
	fsys, p, err := fs.Resolve(ctx, dir, env)
	if err != nil {
		return err
	}
	defer fsys.Close()
	ps, ok := fsys.(policySetter)
	if !ok {
		return fmt.Errorf("storage.policy: %s has no storage policies", fs.Qualify(fsys, p))
	}
	if err := fsys.Mkdirs(ctx, p, 0o755); err != nil {
		return err
	}
	if err := ps.SetStoragePolicy(ctx, p, policy); err != nil {
		return fmt.Errorf("storage.policy %s on %s: %w", policy, dir, err)
	}
	return nil
}

// timed runs fn as a phase of the progress display, with its console
// in the log file name, and returns its wall time in seconds.
func timed(o *Options, phase, logName string, fn func(out io.Writer) error) (float64, error) {
	f, err := os.Create(filepath.Join(o.LogDir, logName))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	o.Progress.Begin(phase)
	start := time.Now()
	err = fn(&jobConsole{log: f, prog: o.Progress})
	secs := time.Since(start).Seconds()
	if err != nil {
		o.Progress.End("failed (see " + f.Name() + ")")
		return 0, err
	}
	o.Progress.End(fmt.Sprintf("%.2f s", secs))
	return secs, nil
}

// runTera runs TeraGen, TeraSort and TeraValidate once under
// /experiment/r<rep> and removes the data.
func runTera(ctx context.Context, o *Options, p *Profile, env fs.Env, rep int) (RunResult, error) {
	var run RunResult
	base := fmt.Sprintf("/experiment/r%d", rep)
	steps := []struct {
		name string
		args []string
		to   *float64
	}{
		{"teragen", []string{strconv.FormatUint(o.Rows, 10), base + "/in"}, &run.TeraGen},
		{"terasort", []string{base + "/in", base + "/out"}, &run.TeraSort},
		{"teravalidate", []string{base + "/out", base + "/report"}, &run.TeraValidate},
	}
	if !o.Validate {
		steps = steps[:2]
	}
	for _, s := range steps {
		cmd, ok := examples.Lookup(s.name)
		if !ok {
			return run, fmt.Errorf("no example %s", s.name)
		}
		before := o.acct.begin(ctx)
		secs, err := timed(o, fmt.Sprintf("  %s rep %d/%d %s", p.Name, rep, o.Repetitions, s.name),
			fmt.Sprintf("%s-r%d-%s.log", p.Name, rep, s.name),
			func(out io.Writer) error { return cmd.Run(ctx, env, s.args, out) })
		if err != nil {
			before.abandon()
			return run, fmt.Errorf("%s: %w", s.name, err)
		}
		*s.to = secs
		run.Jobs = append(run.Jobs, o.acct.end(ctx, before, s.name, secs, stepInput(s.name, o.Rows), env.Conf))
	}
	return run, removeTree(ctx, env, base)
}

func removeTree(ctx context.Context, env fs.Env, dir string) error {
	fsys, p, err := fs.Resolve(ctx, dir, env)
	if err != nil {
		return err
	}
	defer fsys.Close()
	if err := fsys.Delete(ctx, p, true); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// runDFSIO runs TestDFSIO -write then -read with n files at replication
// r, DFSIOTotal bytes in all.
func runDFSIO(ctx context.Context, o *Options, p *Profile, env fs.Env, r, n int) ([]DFSIOResult, error) {
	c := env.Conf.Clone()
	c.Set("dfs.replication", strconv.Itoa(r))
	denv := fs.Env{Conf: c, User: env.User}
	size := o.DFSIOTotal / int64(n)
	var out []DFSIOResult
	for _, typ := range []dfsio.TestType{dfsio.Write, dfsio.Read} {
		opts := dfsio.Options{Type: typ, NrFiles: n, FileSize: size, BufferSize: 1_000_000,
			ResFile: filepath.Join(o.LogDir, "TestDFSIO_results.log")}
		var rep *dfsio.Report
		before := o.acct.begin(ctx)
		secs, err := timed(o, fmt.Sprintf("  %s TestDFSIO -%s -nrFiles %d -fileSize %sMB (replication %d)", p.Name, typ, n, trimFloat(float64(size)/dfsio.Mega), r),
			fmt.Sprintf("%s-dfsio-%s-r%d-n%d.log", p.Name, typ, r, n),
			func(w io.Writer) error {
				var err error
				rep, err = dfsio.Run(ctx, denv, opts, w, w)
				return err
			})
		if err != nil {
			before.abandon()
			return nil, fmt.Errorf("TestDFSIO %s: %w", typ, err)
		}
		input := int64(0)
		if typ == dfsio.Read {
			input = size * int64(n)
		}
		ja := o.acct.end(ctx, before, "dfsio-"+typ.String(), secs, input, c)
		mb := float64(rep.Stats.Size) / float64(dfsio.Mega)
		agg := 0.0
		if s := rep.ExecTime.Seconds(); s > 0 {
			agg = mb / s
		}
		out = append(out, DFSIOResult{Profile: p.Name, Op: typ.String(), Replication: r, Files: n, FileSizeMB: float64(size) / float64(dfsio.Mega),
			Throughput: float64(rep.Throughput()), AvgIORate: rep.AverageRate(), ExecTime: rep.ExecTime.Seconds(), Aggregate: agg, Accounting: &ja})
	}
	return out, nil
}
