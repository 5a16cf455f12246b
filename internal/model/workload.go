package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/experiment"
	"github.com/stratafs/strata/internal/media"
)

// Workload is a calibrated workload: its jobs, in run order, with their
// demands per byte. docs/format/model-workload.md is its JSON form.
type Workload struct {
	// Source says where the calibration came from (the results' command).
	Source string `json:"source"`
	// Calibration is the cluster the run was measured on.
	Calibration *Cluster `json:"calibration"`
	Jobs        []Job    `json:"jobs"`
	// Total names the jobs whose times add up to the workload's runtime
	// (jobs per day, cost per job): TeraGen + TeraSort, as Table 4.
	Total []string `json:"total"`
	// LaunchFactor is how the spread of the jobs' first map starts
	// compares with independent heartbeats': the jobs' spreads summed
	// over the expected ranges of their trackers' heartbeat phases summed
	// (launchSpread). 0: no job started maps on several nodes.
	LaunchFactor float64 `json:"launch_factor,omitempty"`
}

// Job is one job's demands per byte of its data.
type Job struct {
	Name  string  `json:"name"`
	Bytes float64 `json:"bytes"` // the job's data at calibration

	// How many tasks: MapsRule is "slots" (one per map slot: a generator),
	// "slots:block" (a generator's equal shares per map slot, none more
	// than a block), "fixed" (Maps of them: TestDFSIO's one per file),
	// "files:slots" (one file per map slot written before the workload,
	// in blocks), "files:slots:block" (files a "slots:block" generator
	// wrote before the workload: a map each),
	// "files:<job>" (each of that job's output files cut into blocks:
	// its maps for TeraGen's output, its reduces otherwise), or "bytes"
	// (in proportion to the data). ReducesRule is "slots" or "fixed".
	MapsRule    string `json:"maps_rule"`
	ReducesRule string `json:"reduces_rule"`
	Maps        int    `json:"maps"`
	Reduces     int    `json:"reduces"`

	// Per byte of the job's data: CPU seconds of the tasks (user +
	// system, at the calibration machine's speed) and of the daemons per
	// byte they moved (DaemonCPU is per byte of HDFS and shuffle traffic).
	MapCPU    float64 `json:"map_cpu_s_per_byte"`
	ReduceCPU float64 `json:"reduce_cpu_s_per_byte"`
	DaemonCPU float64 `json:"daemon_cpu_s_per_moved_byte"`
	// DaemonCPUPerSecond is the daemons' CPU per node and second of the
	// job whatever it moves (timers, heartbeats, the waits of emulated
	// devices): the least any of the workload's jobs showed per second;
	// DaemonCPU is the rest, per byte.
	DaemonCPUPerSecond float64 `json:"daemon_cpu_s_per_node_s,omitempty"`
	// TaskCPUPerSecond is a running task's CPU per second whatever it
	// processes (its timers and progress reports, the waits of emulated
	// devices): the least any of the workload's jobs showed per task
	// second; MapCPU and ReduceCPU are the rest, per byte.
	TaskCPUPerSecond float64 `json:"task_cpu_s_per_task_s,omitempty"`
	// A map attempt's start-up, from its child process's start to the
	// attempt's own work (the runtime's initialisation, the spec read):
	// TaskStartCPU CPU seconds (not in MapCPU) and TaskStartWait seconds
	// beyond what that CPU took at calibration (startOn). Both are the
	// means of the job's maps; 0 from results without start-up times.
	TaskStartCPU  float64 `json:"task_start_cpu_s,omitempty"`
	TaskStartWait float64 `json:"task_start_wait_s,omitempty"`
	// LaunchSpread is, at calibration, the time from the job's first map
	// start to the last start of its first wave: the trackers heartbeat at
	// their own times and each starts its first maps on its next one. The
	// map phase's fit is of the time after it; a prediction has the
	// workload's expected spread instead (launchSpread).
	LaunchSpread float64 `json:"launch_spread_s,omitempty"`
	// The calibration's totals behind DaemonCPU: the daemons' CPU
	// seconds, the bytes they moved and the job's seconds; and behind
	// MapCPU and ReduceCPU: the attempts' CPU seconds and their run time.
	daemonSecs, movedBytes, jobSecs float64
	mapCPUSecs, redCPUSecs          float64
	mapTaskSecs, redTaskSecs        float64
	taskStart                       float64 // a map's mean start-up, s
	// Bytes per byte: HDFS read and written (before replication), FILE
	// (intermediate) read and written, and shuffled.
	MapHDFSRead     float64 `json:"map_hdfs_read"`
	MapHDFSWrite    float64 `json:"map_hdfs_write"`
	MapFileRead     float64 `json:"map_file_read"`
	MapFileWrite    float64 `json:"map_file_write"`
	ShuffleBytes    float64 `json:"shuffle"`
	ReduceHDFSRead  float64 `json:"reduce_hdfs_read"`
	ReduceHDFSWrite float64 `json:"reduce_hdfs_write"`
	ReduceFileRead  float64 `json:"reduce_file_read"`
	ReduceFileWrite float64 `json:"reduce_file_write"`
	// Replication of the job's HDFS writes: 0 means the cluster's
	// dfs.replication (TeraSort's output is written at 1).
	WriteReplication int `json:"write_replication"`
	// DataLocal is the fraction of its maps that read a local replica.
	DataLocal float64 `json:"data_local"`
	// The devices' accounting against the counters: measured bytes over
	// the bytes the counters explain (reads, writes), the bytes per
	// request and the fraction of requests that seek.
	ReadFactor      float64 `json:"read_factor"`
	WriteFactor     float64 `json:"write_factor"`
	BytesPerRequest float64 `json:"bytes_per_request"`
	SeekFraction    float64 `json:"seek_fraction"`
	// The same by role, HDFS blocks and intermediate (FILE) data: the
	// requests of a device both used split by what the workload's jobs
	// that wrote no intermediate data showed of HDFS's requests. HDFS's
	// reads and writes are apart (HDFSWrite*; 0: as the reads): a map's
	// reader streams its own split, while a node's replica receivers
	// interleave, so their seek shares differ several-fold.
	HDFSRequest      float64 `json:"hdfs_bytes_per_request"`
	HDFSSeek         float64 `json:"hdfs_seek_fraction"`
	HDFSWriteRequest float64 `json:"hdfs_write_bytes_per_request,omitempty"`
	HDFSWriteSeek    float64 `json:"hdfs_write_seek_fraction,omitempty"`
	// HDFSWriteExtra is the share of the calibration's HDFS write
	// requests beyond the device's whole extents of its bytes (the
	// emulated device's media.DefaultRequestBytes): the small files and
	// ends of files a job writes however much data it has, so that with
	// more data its requests grow more slowly than its bytes and the
	// requests that do not seek stay as many (hdfsWriteAt).
	HDFSWriteExtra float64 `json:"hdfs_write_extra_share,omitempty"`
	FileRequest    float64 `json:"file_bytes_per_request"`
	FileSeek       float64 `json:"file_seek_fraction"`
	// The devices' totals at calibration, and the HDFS bytes among them.
	DeviceBytes float64 `json:"device_bytes"`
	HDFSDevice  float64 `json:"device_hdfs_bytes"`
	// HDFSDeviceWrite is the written part of HDFSDevice.
	HDFSDeviceWrite float64 `json:"device_hdfs_write_bytes,omitempty"`
	Requests        float64 `json:"requests"`
	Seeks           float64 `json:"seeks"`
	// SplitBytes is a map's input at calibration (its blocks' size,
	// which sets how often a lone reader seeks).
	SplitBytes float64 `json:"split_bytes"`
	// HiddenSeek is the share of its devices' seek time that a job's map
	// phase did not show at calibration: a device-bound phase shorter
	// than its device's time, the difference taken from the seeks (a
	// stream's own work between requests overlaps them, as the
	// DataNode's readahead does) rather than from the whole phase (fitTo).
	HiddenSeek float64 `json:"hidden_seek,omitempty"`
	// Spill is the maps' output for the spill arithmetic that scales
	// MapFileRead and MapFileWrite (spill.go); nil: they stay per byte.
	Spill *Spill `json:"spill,omitempty"`
	// ShuffleCPUShare is the share of the reduces' CPU spent in their
	// shuffle (their shuffle time over their run time at calibration).
	ShuffleCPUShare float64 `json:"shuffle_cpu_share"`

	// Fits make the calibration run's phases come out as measured.
	Fit map[string]Fit `json:"fit"`
	// Overhead is the job's time outside the phases: at calibration, or
	// its median over the calibration's repeats when it had some.
	Overhead float64 `json:"overhead_s"`
	// The overhead in two parts: OverheadFixed, the lower quartile of
	// what the workload's jobs showed (of each its median over the
	// calibration's repeats, when it had some), and the rest, small synchronous work on the
	// HDFS devices (the job's setup, result and commit files), which
	// scales with their request time, OverheadRequest at calibration.
	OverheadFixed   float64 `json:"overhead_fixed_s,omitempty"`
	OverheadRequest float64 `json:"overhead_hdfs_request_s,omitempty"`
	// Chained counts the jobs the step ran after this one (its phases are
	// its first job's), which are in its Overhead. A chained job
	// (Neighbour Statistics' sum) is a few tiny tasks in stages — its
	// maps side by side, then its reduce, then its cleanup — alone on the
	// cluster: its time is what lies outside its attempts (submission,
	// scheduling, the client's polls: ChainedOutside, kept), its stages'
	// CPU (ChainedStages: each stage's mean attempt CPU, on as many nodes
	// as it had attempts) and the rest of its attempts' span,
	// ChainedSpanWait, their small synchronous HDFS work, which scales
	// with the HDFS request time as the overhead's rest does (chainedOn).
	// ChainedSeconds is their time at calibration. Workloads from results
	// without the chained jobs' attempts have none of these: each chained
	// job then added the fixed part of a job's overhead to OverheadFixed.
	Chained         int            `json:"chained_jobs,omitempty"`
	ChainedSeconds  float64        `json:"chained_s,omitempty"`
	ChainedOutside  float64        `json:"chained_outside_s,omitempty"`
	ChainedSpanWait float64        `json:"chained_span_wait_s,omitempty"`
	ChainedStages   []ChainedStage `json:"chained_stages,omitempty"`
}

// ChainedStage is one stage of a chained job: Tasks attempts side by side
// (each on a node of its own), of CPU seconds each on the mean.
type ChainedStage struct {
	Tasks int     `json:"tasks"`
	CPU   float64 `json:"cpu_s"`
}

// Fit combines a phase's resource times t: Scale × (max(t) + Alpha ×
// (sum(t) − max(t))) + Fixed × waves. Alpha 0 is perfect overlap of the
// resources, 1 none; Fixed is time no resource explains (task start,
// heartbeats), per wave of tasks. Of Fixed, FixedFloor is the least any
// of the workload's jobs showed in the phase (task start and end); the
// rest is taken as small synchronous HDFS work (creating and closing a
// task's output file) and scales with the HDFS request time, as the
// job's overhead does (overheadOn).
type Fit struct {
	Alpha      float64 `json:"alpha"`
	Scale      float64 `json:"scale"`
	Fixed      float64 `json:"fixed_s_per_wave"`
	FixedFloor float64 `json:"fixed_floor_s_per_wave,omitempty"`
}

// on is f on cl for job j: its Fixed beyond FixedFloor in proportion to
// cl's HDFS request time against the calibration's.
func (f Fit) on(cl *Cluster, j *Job) Fit {
	if j.OverheadRequest <= 0 || f.FixedFloor <= 0 || f.Fixed <= f.FixedFloor {
		return f // no floor: a workload from before the split keeps it all
	}
	f.Fixed = f.FixedFloor + (f.Fixed-f.FixedFloor)*j.requestRatio(cl)
	return f
}

// The phases of a job, as the user sees them.
const (
	PhaseMap     = "map"     // first map start to last map end
	PhaseShuffle = "shuffle" // last map end to the last reduce's shuffle end
	PhaseReduce  = "reduce"  // to the last reduce's end
)

// Phases are a job's measured or predicted times in seconds.
type Phases struct {
	Map, Shuffle, Reduce, Overhead float64
}

// Total is the job's time.
func (p Phases) Total() float64 { return p.Map + p.Shuffle + p.Reduce + p.Overhead }

// Get returns a phase by name.
func (p Phases) Get(name string) float64 {
	switch name {
	case PhaseMap:
		return p.Map
	case PhaseShuffle:
		return p.Shuffle
	case PhaseReduce:
		return p.Reduce
	}
	return p.Overhead
}

// Measured are a job's phases from its attempts: the map phase ends with
// the last map, the shuffle with the last reduce's shuffle (Hadoop's
// shuffleFinishTime), the reduce with the last reduce; the rest of the
// job's time (submission, setup, cleanup, the client's polling) is
// overhead.
func Measured(ja *experiment.JobAccounting) Phases {
	var mapEnd, shuffleEnd, reduceEnd float64
	for _, a := range ja.Attempts {
		if a.State != "SUCCEEDED" {
			continue
		}
		switch a.Type {
		case "map":
			mapEnd = max(mapEnd, a.End)
		case "reduce":
			shuffleEnd = max(shuffleEnd, a.ShuffleFinish)
			reduceEnd = max(reduceEnd, a.End)
		}
	}
	p := Phases{Map: mapEnd}
	if reduceEnd > 0 {
		p.Shuffle = max(0, shuffleEnd-mapEnd)
		p.Reduce = max(0, reduceEnd-max(mapEnd, shuffleEnd))
	}
	p.Overhead = max(0, ja.Seconds-p.Map-p.Shuffle-p.Reduce)
	return p
}

// ClusterOf describes the cluster an experiment profile ran on: nodes
// and slots from the results, devices from the profile's layout, the
// machine's cores shared by every node unless the run was on hosts with
// a CPU share per node.
func ClusterOf(res *experiment.Results, pr *experiment.ProfileResult) (*Cluster, error) {
	l := pr.Layout
	if l == nil || len(l.Devices) == 0 {
		return nil, fmt.Errorf("profile %s: results.json has no layout", pr.Name)
	}
	c := &Cluster{Name: pr.Name, Description: pr.Description, Nodes: res.DataNodes, Speed: 1,
		MapSlots: res.MapSlots, ReduceSlots: res.ReduceSlots, Replication: min(3, res.DataNodes),
		BlockSize: 128 << 20, DataBytes: int64(res.Rows) * 100, Price: pr.Price, HeartbeatMs: experiment.HeartbeatMillis}
	if res.Rows == 0 && res.Paper2 != nil {
		c.DataBytes = int64(res.Paper2.Rows) * 100
	}
	if res.Hosts && l.NodeCPUs > 0 {
		// The hosts' shares are CFS quotas on the machine's cores; results
		// from before the layout recorded the period used the kernel's
		// default, as strata's hosts do.
		period := l.NodeCPUPeriodMs
		if period <= 0 {
			period = defaultCFSPeriodMs
		}
		c.Cores, c.CPUPeriodMs, c.QuotaSharedCores = l.NodeCPUs, period, float64(res.CPUs)
	} else {
		c.SharedCores = float64(res.CPUs)
	}
	if res.Hosts {
		c.LinkMbps = l.LinkMbps
	}
	for _, kv := range l.Conf {
		switch kv[0] {
		case "dfs.blocksize":
			if b, err := conf.ParseBytes(kv[1]); err == nil && b > 0 {
				c.BlockSize = b
			}
		case "dfs.replication":
			if r, err := strconv.Atoi(kv[1]); err == nil && r > 0 {
				c.Replication = r
			}
		case "mapreduce.jobtracker.heartbeat.interval":
			if ms, err := strconv.Atoi(kv[1]); err == nil && ms > 0 {
				c.HeartbeatMs = ms
			}
		}
	}
	for _, d := range l.Devices {
		dev := Device{Name: d.Name, Preset: d.Preset}
		if res.Media {
			if p, ok := media.LookupPreset(d.Preset); ok {
				dev.Params = p.Params
			}
		}
		c.Devices = append(c.Devices, dev)
		if d.Volume != "" {
			c.Volumes = append(c.Volumes, d.Name)
		}
		if d.Intermediate {
			c.LocalDirs = append(c.LocalDirs, d.Name)
		}
	}
	return c, c.Validate()
}

// Calibrate derives a workload from the first run of profile in res.
func Calibrate(res *experiment.Results, profile string) (*Workload, error) {
	i := slices.IndexFunc(res.Profiles, func(p experiment.ProfileResult) bool { return p.Name == profile })
	if i < 0 {
		return nil, fmt.Errorf("model: no profile %q in the results", profile)
	}
	pr := &res.Profiles[i]
	if len(ProfileJobs(res, pr)) == 0 {
		return nil, fmt.Errorf("model: profile %s has no accounted run", profile)
	}
	cl, err := ClusterOf(res, pr)
	if err != nil {
		return nil, err
	}
	return calibrateSources(res.Command, cl, sourcesOf(cl, ProfileJobs(res, pr), nil))
}

// sourcesOf are jobs' sources on cl, leaving out those named in skip.
func sourcesOf(cl *Cluster, jobs []experiment.JobAccounting, skip map[string]bool) []source {
	var out []source
	for k := range jobs {
		if !skip[jobs[k].Step] {
			out = append(out, source{cl: cl, jobs: jobs[:k+1]})
		}
	}
	return out
}

// calibrateSources is the workload of srcs calibrated on cl.
func calibrateSources(command string, cl *Cluster, srcs []source) (*Workload, error) {
	w := &Workload{Source: command, Calibration: cl}
	jobs, err := calibrateAll(srcs)
	if err != nil {
		return nil, err
	}
	w.Jobs = jobs
	var spread, ranges float64
	for i, s := range srcs {
		if r := heartbeatRange(s.cl, jobs[i].Maps, heartbeatOn(s.cl, nil)); r > 0 {
			spread += jobs[i].LaunchSpread
			ranges += r
		}
	}
	if ranges > 0 {
		w.LaunchFactor = spread / ranges
	}
	for _, j := range jobs {
		if j.Name == "teragen" || j.Name == "terasort" {
			w.Total = append(w.Total, j.Name)
		}
	}
	if len(w.Total) == 0 {
		for _, j := range w.Jobs {
			w.Total = append(w.Total, j.Name)
		}
	}
	return w, nil
}

// ProfileJobs are a profile's accounted jobs in run order: its first
// run's TeraGen, TeraSort and TeraValidate, the second paper's five jobs
// (strata experiment dfsio-paper: TeraGen, TeraSort, TeraValidate,
// wordcount, shuffle; named <job>-r<replication> when it ran several),
// then its TestDFSIO runs, named dfsio-<write|read>-r<replication>-n<files>.
func ProfileJobs(res *experiment.Results, pr *experiment.ProfileResult) []experiment.JobAccounting {
	var out []experiment.JobAccounting
	if len(pr.Runs) > 0 {
		out = append(out, pr.Runs[0].Jobs...)
	}
	if res.Paper2 != nil {
		reps := map[int]bool{}
		for _, j := range res.Paper2.Jobs {
			if j.Profile == pr.Name {
				reps[j.Replication] = true
			}
		}
		for _, j := range res.Paper2.Jobs {
			if j.Profile != pr.Name || j.Accounting == nil {
				continue
			}
			ja := *j.Accounting
			ja.Step = j.Job
			if len(reps) > 1 {
				ja.Step = fmt.Sprintf("%s-r%d", j.Job, j.Replication)
			}
			out = append(out, ja)
		}
	}
	for _, d := range res.DFSIO {
		if d.Profile != pr.Name || d.Accounting == nil {
			continue
		}
		ja := *d.Accounting
		ja.Step = fmt.Sprintf("dfsio-%s-r%d-n%d", d.Op, d.Replication, d.Files)
		out = append(out, ja)
	}
	return out
}

// calibrateJob derives the last of jobs (the earlier ones are what ran
// before it, for its input files).
func calibrateJob(cl *Cluster, jobs []experiment.JobAccounting) (Job, error) {
	ja := &jobs[len(jobs)-1]
	c := ja.Counters
	j := Job{Name: ja.Step, Fit: map[string]Fit{}}
	var mapCPU, redCPU float64
	sum := map[string]map[string]float64{"map": {}, "reduce": {}}
	var redTime, redShuffle float64
	for _, a := range ja.Attempts {
		if a.State != "SUCCEEDED" || (a.Type != "map" && a.Type != "reduce") {
			continue
		}
		for _, k := range []string{"HDFS_BYTES_READ", "HDFS_BYTES_WRITTEN", "FILE_BYTES_READ", "FILE_BYTES_WRITTEN", "REDUCE_SHUFFLE_BYTES"} {
			sum[a.Type][k] += float64(a.Counters[k])
		}
		cpu := a.CPU.User + a.CPU.System
		if a.Type == "map" {
			j.Maps++
			start, startCPU := 0.0, 0.0
			if a.Ready >= a.Start && a.Ready <= a.End && a.Ready > 0 {
				start, startCPU = a.Ready-a.Start, min(a.ReadyCPU, cpu)
			}
			j.taskStart += start
			j.TaskStartCPU += startCPU
			mapCPU += cpu - startCPU
			j.mapTaskSecs += max(0, a.End-a.Start-start)
		} else {
			j.redTaskSecs += max(0, a.End-a.Start)
			j.Reduces++
			redCPU += cpu
			redTime += a.End - a.Start
			if a.ShuffleFinish > 0 {
				redShuffle += a.ShuffleFinish - a.Start
			}
		}
	}
	if j.Maps == 0 {
		return j, fmt.Errorf("model: job %s has no successful maps in its accounting", ja.Step)
	}
	j.taskStart /= float64(j.Maps)
	j.TaskStartCPU /= float64(j.Maps)
	if heartbeatRange(cl, j.Maps, 1) > 0 {
		// (Else no prediction has a spread either: it stays in the fit.)
		j.LaunchSpread = firstWaveSpread(ja.Attempts, cl.MapSlots)
	}
	// The job's data: its input, else what it read or wrote, else what
	// its maps produced (a job that generates and shuffles).
	d := float64(ja.InputBytes)
	if d <= 0 {
		d = float64(max(c["HDFS_BYTES_READ"], c["HDFS_BYTES_WRITTEN"]))
	}
	if d < float64(c["MAP_OUTPUT_BYTES"])/100 {
		d = float64(c["MAP_OUTPUT_BYTES"])
	}
	if d <= 0 {
		return j, fmt.Errorf("model: job %s has neither input nor output bytes", ja.Step)
	}
	j.Bytes = d
	m, r := sum["map"], sum["reduce"]
	j.MapCPU, j.ReduceCPU = mapCPU/d, redCPU/d
	j.mapCPUSecs, j.redCPUSecs = mapCPU, redCPU
	j.MapHDFSRead, j.MapHDFSWrite = m["HDFS_BYTES_READ"]/d, m["HDFS_BYTES_WRITTEN"]/d
	j.MapFileRead, j.MapFileWrite = m["FILE_BYTES_READ"]/d, m["FILE_BYTES_WRITTEN"]/d
	j.ReduceHDFSRead, j.ReduceHDFSWrite = r["HDFS_BYTES_READ"]/d, r["HDFS_BYTES_WRITTEN"]/d
	j.ReduceFileRead, j.ReduceFileWrite = r["FILE_BYTES_READ"]/d, r["FILE_BYTES_WRITTEN"]/d
	j.ShuffleBytes = r["REDUCE_SHUFFLE_BYTES"] / d
	if redTime > 0 {
		j.ShuffleCPUShare = redShuffle / redTime
	}
	if local := c["DATA_LOCAL_MAPS"]; j.MapHDFSRead > 0 {
		j.DataLocal = min(1, float64(local)/float64(j.Maps))
	} else {
		j.DataLocal = 1
	}

	// Devices: which replication the writes had, and how the measured
	// bytes compare with what the counters explain.
	var devR, devW, reqs, seeks float64
	for _, dv := range ja.Devices {
		devR += float64(dv.ReadBytes)
		devW += float64(dv.WriteBytes)
		reqs += float64(dv.Requests)
		seeks += float64(dv.Seeks)
	}
	hdfsW := (j.MapHDFSWrite + j.ReduceHDFSWrite) * d
	fileW := (j.MapFileWrite + j.ReduceFileWrite) * d
	repl := float64(cl.Replication)
	if devW > 0 && hdfsW > 0 {
		repl = math.Max(1, math.Round((devW-fileW)/hdfsW))
		if int(repl) != cl.Replication {
			j.WriteReplication = int(repl)
		}
	}
	countedR := (j.MapHDFSRead+j.ReduceHDFSRead+j.MapFileRead+j.ReduceFileRead+j.ShuffleBytes)*d + 0
	countedW := fileW + hdfsW*repl
	j.ReadFactor, j.WriteFactor = 1, 1
	if devR > 0 && countedR > 0 {
		j.ReadFactor = devR / countedR
	}
	if devW > 0 && countedW > 0 {
		j.WriteFactor = devW / countedW
	}
	j.BytesPerRequest = 1 << 20
	if reqs > 0 {
		j.BytesPerRequest = (devR + devW) / reqs
		j.SeekFraction = seeks / reqs
	}
	j.DeviceBytes, j.Requests, j.Seeks = devR+devW, reqs, seeks
	j.HDFSDeviceWrite = hdfsW * repl * j.WriteFactor
	j.HDFSDevice = (j.MapHDFSRead+j.ReduceHDFSRead)*d*j.ReadFactor + j.HDFSDeviceWrite
	j.HDFSRequest, j.HDFSSeek = j.BytesPerRequest, j.SeekFraction
	j.HDFSWriteRequest, j.HDFSWriteSeek = j.BytesPerRequest, j.SeekFraction
	j.FileRequest, j.FileSeek = j.BytesPerRequest, j.SeekFraction
	var moved float64
	moved = (j.MapHDFSRead+j.ReduceHDFSRead+j.ShuffleBytes)*d + hdfsW*repl
	daemon := nodeDaemonCPU(ja.Daemons)
	if moved > 0 {
		j.DaemonCPU = daemon / moved
	}
	j.daemonSecs, j.movedBytes, j.jobSecs = daemon, moved, ja.Seconds

	// Task counts and how they scale.
	j.MapsRule, j.ReducesRule = "bytes", "fixed"
	if strings.HasPrefix(j.Name, "dfsio-") {
		// TestDFSIO: a map per file, whatever the cluster.
		j.MapsRule = "fixed"
	} else if j.MapHDFSRead == 0 && j.Maps == cl.Nodes*cl.MapSlots {
		j.MapsRule = "slots"
		if ja.BlockCapped {
			j.MapsRule = "slots:block"
		}
	} else {
		for _, prev := range jobs[:len(jobs)-1] {
			files := 0
			for _, a := range prev.Attempts {
				if a.State == "SUCCEEDED" && a.Type == "reduce" {
					files++
				}
			}
			if files == 0 {
				for _, a := range prev.Attempts {
					if a.State == "SUCCEEDED" && a.Type == "map" {
						files++
					}
				}
			}
			// Its input is that job's output (within 5%), cut into blocks.
			out := float64(prev.Counters["HDFS_BYTES_WRITTEN"])
			if files > 0 && math.Abs(out-d) <= 0.05*d && splits(d, files, cl.BlockSize) == j.Maps {
				j.MapsRule = "files:" + prev.Step
			}
		}
	}
	if j.MapsRule == "bytes" && j.MapHDFSRead > 0 && splits(d, cl.Nodes*cl.MapSlots, cl.BlockSize) == j.Maps {
		// Input from a generator outside the workload that wrote a file
		// per map slot (randomtextwriter, skygen): its files, in blocks.
		j.MapsRule = "files:slots"
		if ja.BlockCapped {
			j.MapsRule = "files:slots:block"
		}
	}
	if j.Reduces == cl.Nodes*cl.ReduceSlots && j.MapsRule != "fixed" {
		j.ReducesRule = "slots"
	}

	j.SplitBytes = d / float64(j.Maps)
	j.Spill = spillOf(cl, ja, d, j.Maps)
	return j, nil
}

// fitTo sets j's fits: the model's resource times on the calibration
// cluster against the phases measured in ja, or the typical ones of
// typ when known.
func (j *Job) fitTo(cl *Cluster, ja *experiment.JobAccounting, typ *typicalRun) {
	meas := Measured(ja)
	if typ != nil {
		meas.Map, meas.Shuffle, meas.Reduce = typ.phases.Map, typ.phases.Shuffle, typ.phases.Reduce
		if heartbeatRange(cl, j.Maps, 1) > 0 {
			j.LaunchSpread = typ.launchSpread
		}
	}
	shape := j.shape(cl, j.Bytes, j.Maps, j.Reduces)
	j.TaskStartWait = max(0, j.taskStart-j.startCPUOn(cl, shape))
	for _, ph := range []string{PhaseMap, PhaseShuffle, PhaseReduce} {
		m := meas.Get(ph)
		if ph == PhaseMap {
			// The fit is of the maps' work: their launch and start-up
			// are apart.
			m = max(0, m-j.LaunchSpread-j.startOn(cl, shape)*float64(shape.mapWaves))
			j.HiddenSeek = hiddenSeek(j, m, func() map[string]float64 { return shape.timesOver(cl, ph, j, m) })
		}
		j.Fit[ph] = fit(shape.timesOver(cl, ph, j, m), m, shape.waves(ph))
	}
	j.Overhead = meas.Overhead
	j.Chained = len(ja.Chained)
	j.chainTo(cl, ja.Chained)
}

// hiddenSeek is the share of the seeks' time to hide so that a phase of
// measured seconds whose largest resource is a device takes no less
// than measured, at most all of it; 0 when another resource bounds
// the phase or the device's time is not above measured. times gives
// the phase's resource times with j as it is. On 2026-12-04's runs
// (mr9) TestDFSIO's 32 MiB reads took 0.34 s where their device's
// time was 0.51 s, 0.19 of it transfer and 0.32 seeks, and ten times
// the data took 2.19 s of 2.39: about half of each seek hidden in
// both, where a scale of the whole phase fitted at 32 MiB (0.64)
// made ten times the data 1.50 s.
func hiddenSeek(j *Job, measured float64, times func() map[string]float64) float64 {
	j.HiddenSeek = 0
	t := times()
	var dev string
	var other float64
	for k, v := range t {
		if strings.HasPrefix(k, "device ") {
			if dev == "" || v > t[dev] {
				dev = k
			}
		} else {
			other = max(other, v)
		}
	}
	if dev == "" || t[dev] <= max(measured, other) {
		return 0
	}
	j.HiddenSeek = 1
	noSeeks := times()[dev]
	j.HiddenSeek = 0
	seeks := t[dev] - noSeeks
	if seeks <= 0 {
		return 0
	}
	return min(1, (t[dev]-max(measured, other))/seeks)
}

// chainTo sets j's chained jobs from their accounting on cl: none when
// some has no attempts (older results).
func (j *Job) chainTo(cl *Cluster, chained []experiment.ChainedJob) {
	j.ChainedSeconds, j.ChainedOutside, j.ChainedSpanWait, j.ChainedStages = 0, 0, 0, nil
	var stages []ChainedStage
	var secs, outside, wait float64
	for _, c := range chained {
		first, last := math.Inf(1), math.Inf(-1)
		cpu := map[string]float64{}
		n := map[string]int{}
		for _, a := range c.Attempts {
			if a.State != "SUCCEEDED" {
				continue
			}
			first, last = math.Min(first, a.Start), math.Max(last, a.End)
			cpu[a.Type] += a.CPU.User + a.CPU.System
			n[a.Type]++
		}
		if last < first {
			return
		}
		var cpuTime float64
		for _, t := range []string{"map", "reduce", "cleanup"} {
			if n[t] > 0 {
				st := ChainedStage{Tasks: n[t], CPU: cpu[t] / float64(n[t])}
				stages = append(stages, st)
				cpuTime += st.on(cl)
			}
		}
		secs += c.Seconds
		outside += max(0, c.Seconds-(last-first))
		wait += max(0, min(c.Seconds, last-first)-cpuTime)
	}
	if len(stages) == 0 || secs > j.Overhead {
		return
	}
	j.ChainedSeconds, j.ChainedOutside, j.ChainedSpanWait, j.ChainedStages = secs, outside, wait, stages
}

// on is the stage's time on cl: its attempts' CPU on their nodes' cores
// (a shared pool serves all of them at once).
func (st ChainedStage) on(cl *Cluster) float64 {
	share := cl.Cores
	if cl.SharedCores > 0 {
		share = cl.SharedCores / float64(min(max(1, st.Tasks), cl.Nodes))
	}
	return st.CPU * math.Max(1, 1/share) / cl.Speed
}

// ownOverhead is the job's overhead without its chained jobs'.
func (j *Job) ownOverhead() float64 { return max(0, j.Overhead-j.ChainedSeconds) }

// chainedOn is the time of the job's chained jobs on cl: what lay
// outside their attempts, their stages' CPU on cl and the rest of their
// attempts' span in proportion to cl's HDFS request time.
func (j *Job) chainedOn(cl *Cluster) float64 {
	if j.ChainedSeconds <= 0 {
		return 0
	}
	t := j.ChainedOutside + j.ChainedSpanWait*j.requestRatio(cl)
	for _, st := range j.ChainedStages {
		t += st.on(cl)
	}
	return t
}

// requestRatio is cl's HDFS request time over the calibration's, at most
// 1 (a faster device does not make the rest of the work slower).
func (j *Job) requestRatio(cl *Cluster) float64 {
	if j.OverheadRequest <= 0 {
		return 1
	}
	return math.Min(1, cl.hdfsRequestTime()/j.OverheadRequest)
}

// firstWaveSpread is the time from the first successful map's start to
// the last start among the first wave's, the first trackers' slots' worth
// of maps on the nodes that ran any.
func firstWaveSpread(as []experiment.AttemptAccount, slots int) float64 {
	var starts []float64
	nodes := map[string]bool{}
	for _, a := range as {
		if a.State == "SUCCEEDED" && a.Type == "map" {
			starts = append(starts, a.Start)
			nodes[a.Node] = true
		}
	}
	if len(nodes) < 2 {
		return 0
	}
	slices.Sort(starts)
	first := starts[:min(len(starts), len(nodes)*max(1, slots))]
	return first[len(first)-1] - first[0]
}

// heartbeatRange is the expected time between the first and the last of
// the heartbeats that start a job's first wave of maps on cl: each of
// the N trackers heartbeats at a uniformly random phase of the interval
// H, the first n = ⌈maps / map slots⌉ of them (at most N) to heartbeat
// take the maps, and the n-th of N uniform phases comes (n−1)/(N+1) × H
// after the first.
func heartbeatRange(cl *Cluster, maps int, heartbeat float64) float64 {
	slots := max(1, cl.MapSlots)
	n := min(cl.Nodes, (maps+slots-1)/slots)
	if n < 2 {
		return 0
	}
	return heartbeat * float64(n-1) / float64(cl.Nodes+1)
}

// heartbeatOn is cl's heartbeat interval in seconds: its own, else the
// calibration's, else strata experiment's.
func heartbeatOn(cl, cal *Cluster) float64 {
	for _, c := range []*Cluster{cl, cal} {
		if c != nil && c.HeartbeatMs > 0 {
			return float64(c.HeartbeatMs) / 1000
		}
	}
	return float64(experiment.HeartbeatMillis) / 1000
}

// launchSpread is the expected spread of a job's first map starts on cl:
// the heartbeats' range, times what the workload showed of it.
func (w *Workload) launchSpread(cl *Cluster, maps int) float64 {
	return w.LaunchFactor * heartbeatRange(cl, maps, heartbeatOn(cl, w.Calibration))
}

// startCPUOn is the time a map's start-up CPU takes on cl: slower by the
// cores' speed, and where more children start at once on a node (its
// map slots' worth, as a wave begins) than it has cores — on two cores
// shared by six nodes, six children start on two cores.
// Under a CPU quota the start-ups of a wave's first maps run in the
// quota's burst (cpuTime).
func (j *Job) startCPUOn(cl *Cluster, s shape) float64 {
	if j.TaskStartCPU <= 0 || s.mapK == 0 {
		return 0
	}
	if cl.quota() {
		// As the map phase's CPU (load.times), whose burst this begins.
		k := float64(s.mapK)
		return cl.cpuTime(j.TaskStartCPU*k, min(cl.nodeCores(), k+1)*cl.Speed, s.mapK+1)
	}
	return j.TaskStartCPU * math.Max(1, float64(s.mapK)/cl.nodeCores()) / cl.Speed
}

// startOn is a map's start-up on cl, from its child's start to its work:
// the wait calibration saw beyond the start-up's CPU, and that CPU's time
// on cl.
func (j *Job) startOn(cl *Cluster, s shape) float64 {
	return j.TaskStartWait + j.startCPUOn(cl, s)
}

// source is one accounted job and what ran before it, on a cluster.
type source struct {
	cl   *Cluster
	jobs []experiment.JobAccounting // the job last
	// typical is the job's typical run (medians over its repeats) when
	// known, which the fit aims at; nil: the job of jobs.
	typical *typicalRun
}

// typicalRun is a job over its repeats: each phase its median, and the
// median spread of its first maps' starts. A job's demands come from one
// repeat, the one the machine disturbed least (LeastRun); its phases'
// times are noisy draws (a sub-second job's map phase 0.19 s in one
// repeat, 0.32 and 0.34 s in the others), and a fit to the least
// disturbed one predicts the job's best case, not its typical one.
type typicalRun struct {
	phases       Phases
	launchSpread float64
}

// calibrateAll derives every source's job, splits the devices' requests
// by role, then fits each job to its measured phases.
func calibrateAll(srcs []source) ([]Job, error) {
	jobs := make([]Job, len(srcs))
	for i, s := range srcs {
		j, err := calibrateJob(s.cl, s.jobs)
		if err != nil {
			return nil, err
		}
		jobs[i] = j
	}
	splitRoles(jobs)
	background(jobs, srcs)
	for i, s := range srcs {
		jobs[i].fitTo(s.cl, &s.jobs[len(s.jobs)-1], s.typical)
		if t := s.typical; t != nil && t.phases.Overhead >= jobs[i].ChainedSeconds {
			jobs[i].Overhead = t.phases.Overhead
		}
	}
	// The fixed part is the workload's lower quartile, not its least: the
	// least is one job's luckiest draw of a noisy part (the client's
	// polls, the trackers' heartbeats), 0.12 s in mr7's calibration where
	// its jobs on SSDs, whose request time leaves them little else, took
	// 0.15-0.20 s (mr8).
	own := make([]float64, 0, len(jobs))
	for _, j := range jobs {
		own = append(own, j.ownOverhead()/float64(1+j.unaccountedChains()))
	}
	fixed := lowerQuartile(own)
	for i, s := range srcs {
		if t := s.cl.hdfsRequestTime(); t > 0 && len(own) > 0 {
			jobs[i].OverheadFixed, jobs[i].OverheadRequest = fixed*float64(1+jobs[i].unaccountedChains()), t
		}
	}
	// Each phase's least time per wave that no resource explained.
	for _, ph := range []string{PhaseMap, PhaseShuffle, PhaseReduce} {
		floor := math.Inf(1)
		for _, j := range jobs {
			if f := j.Fit[ph].Fixed; f > 0 {
				floor = math.Min(floor, f)
			}
		}
		if math.IsInf(floor, 1) {
			continue
		}
		for i := range jobs {
			if f, ok := jobs[i].Fit[ph]; ok && f.Fixed > 0 {
				f.FixedFloor = floor
				jobs[i].Fit[ph] = f
			}
		}
	}
	return jobs, nil
}

// unaccountedChains is how many of the job's chained jobs are in its own
// overhead (from results without their attempts).
func (j *Job) unaccountedChains() int {
	if j.ChainedSeconds > 0 {
		return 0
	}
	return j.Chained
}

// overheadOn is the job's overhead on cl: the fixed part, the rest of its
// own in proportion to cl's HDFS request time, and its chained jobs'.
func (j *Job) overheadOn(cl *Cluster) float64 {
	own := j.ownOverhead()
	if j.OverheadRequest > 0 && own > j.OverheadFixed {
		own = j.OverheadFixed + (own-j.OverheadFixed)*j.requestRatio(cl)
	}
	return own + j.chainedOn(cl)
}

// background splits each job's daemon CPU into a part per second and
// node, and its attempts' CPU into a part per attempt-second, each the
// same for every job (the least per second any job showed), and the rest
// of each per byte (moved by the daemons; of the job's data for the
// attempts). Daemons and task children use CPU while a job waits: a job
// that runs longer on slower devices is not one that costs more per byte
// (the same TeraSort map: 0.36 CPU s in 4.0 s on the HDDs, 0.19–0.25 in
// 0.4 s on SSDs), which per byte alone would carry to every cluster.
func background(jobs []Job, srcs []source) {
	daemon := leastRate(len(jobs), func(i int) (float64, float64) {
		return jobs[i].daemonSecs, jobs[i].jobSecs * float64(srcs[i].cl.Nodes)
	})
	task := leastRate(len(jobs), func(i int) (float64, float64) {
		return jobs[i].mapCPUSecs + jobs[i].redCPUSecs, jobs[i].mapTaskSecs + jobs[i].redTaskSecs
	})
	for i := range jobs {
		j := &jobs[i]
		if daemon > 0 {
			j.DaemonCPUPerSecond = daemon
			if j.movedBytes > 0 {
				j.DaemonCPU = math.Max(0, j.daemonSecs-daemon*j.jobSecs*float64(srcs[i].cl.Nodes)) / j.movedBytes
			}
		}
		if task > 0 && j.Bytes > 0 {
			j.TaskCPUPerSecond = task
			j.MapCPU = math.Max(0, j.mapCPUSecs-task*j.mapTaskSecs) / j.Bytes
			j.ReduceCPU = math.Max(0, j.redCPUSecs-task*j.redTaskSecs) / j.Bytes
		}
	}
}

// leastRate is the least num/den of n jobs' (at(i)) with den > 0, or 0
// when there is none or it is not positive.
func leastRate(n int, at func(i int) (num, den float64)) float64 {
	rate := math.Inf(1)
	for i := range n {
		if num, den := at(i); den > 0 {
			rate = math.Min(rate, num/den)
		}
	}
	if math.IsInf(rate, 1) || rate <= 0 {
		return 0
	}
	return rate
}

// nodeDaemonCPU is the CPU seconds of the nodes' daemons: their
// DataNodes and TaskTrackers where the run had a line per daemon (on
// hosts), leaving out the NameNode, the JobTracker and the job client,
// which run on machines of their own; all of it where the daemons shared
// one process.
func nodeDaemonCPU(ds []experiment.DaemonCPU) float64 {
	var all, nodes float64
	split := false
	for _, dc := range ds {
		all += dc.User + dc.System
		if strings.HasPrefix(dc.Name, "datanode ") || strings.HasPrefix(dc.Name, "tasktracker ") {
			nodes += dc.User + dc.System
			split = true
		}
	}
	if split {
		return nodes
	}
	return all
}

// hdfsOnly reports whether a job moved (almost) no intermediate data.
func (j *Job) hdfsOnly() bool {
	return j.MapFileRead+j.MapFileWrite+j.ReduceFileRead+j.ReduceFileWrite+j.ShuffleBytes < 0.05
}

// splitRoles gives each job its HDFS and intermediate requests: HDFS's
// bytes per request and seek share are those of the workload's jobs that
// moved no intermediate data (their devices served HDFS alone), its
// reads' from those that (almost) only read and its writes' from those
// that only wrote, where there are such jobs; a job with intermediate
// data on the same devices gets the rest of its requests and seeks for
// its intermediate bytes. A workload without such jobs, or a job whose
// remainder is implausible, keeps one figure for both.
func splitRoles(jobs []Job) {
	var all, rd, wr pool
	for i := range jobs {
		j := &jobs[i]
		if !j.hdfsOnly() || j.Requests <= 0 || j.DeviceBytes <= 0 {
			continue
		}
		all.add(*j)
		switch w := j.HDFSDeviceWrite / j.DeviceBytes; {
		case w <= 0.1:
			rd.add(*j)
		case w >= 0.9:
			wr.add(*j)
			j.HDFSWriteExtra = extraShare(j.Requests, j.DeviceBytes)
		}
	}
	if all.reqs == 0 || all.bytes == 0 {
		return
	}
	rReq, rSeek := all.figures()
	wReq, wSeek := rReq, rSeek
	if rd.reqs > 0 && wr.reqs > 0 {
		rReq, rSeek = rd.figures()
		wReq, wSeek = wr.figures()
	}
	for i := range jobs {
		j := &jobs[i]
		if j.hdfsOnly() || j.Requests == 0 {
			continue
		}
		written := math.Min(j.HDFSDeviceWrite, j.HDFSDevice)
		rReqs, wReqs := (j.HDFSDevice-written)/rReq, written/wReq
		hReqs, hSeeks := rReqs+wReqs, rReqs*rSeek+wReqs*wSeek
		fBytes, fReqs := j.DeviceBytes-j.HDFSDevice, j.Requests-hReqs
		if fBytes <= 0 || fReqs < 0.1*j.Requests {
			continue
		}
		j.HDFSRequest, j.HDFSSeek = rReq, rSeek
		j.HDFSWriteRequest, j.HDFSWriteSeek = wReq, wSeek
		if wr.reqs > 0 {
			j.HDFSWriteExtra = extraShare(wr.reqs, wr.bytes)
		}
		j.FileRequest = fBytes / fReqs
		j.FileSeek = math.Min(1, math.Max(0, (j.Seeks-hSeeks)/fReqs))
	}
}

// defaultCFSPeriodMs is the kernel's default CFS period, which
// strata's hosts give their CPU quotas in.
const defaultCFSPeriodMs = 100

// extraShare is the share of reqs requests for bytes beyond the
// device's whole extents of them.
func extraShare(reqs, bytes float64) float64 {
	if reqs <= 0 {
		return 0
	}
	return math.Max(0, reqs-bytes/media.DefaultRequestBytes) / reqs
}

// hdfsWriteAt is the job's HDFS write bytes per request and seek share
// with x times its calibration's data: its requests a share
// HDFSWriteExtra fixed and the rest growing with the bytes, its
// requests that do not seek as many as at calibration. At x = 1 they
// are the calibration's.
func (j *Job) hdfsWriteAt(x float64) (perReq, seekShare float64) {
	perReq, seekShare = j.HDFSWriteRequest, j.HDFSWriteSeek
	f := j.HDFSWriteExtra
	if !(f > 0 && f < 1) || !(x > 0) || math.IsInf(x, 0) || perReq <= 0 {
		return perReq, seekShare
	}
	reqs := (1-f)*x + f // requests over the calibration's
	return perReq * x / reqs, math.Min(1, math.Max(0, 1-(1-seekShare)/reqs))
}

// pool sums jobs' device bytes, requests and seeks.
type pool struct{ bytes, reqs, seeks float64 }

func (p *pool) add(j Job) {
	p.bytes += j.DeviceBytes
	p.reqs += j.Requests
	p.seeks += j.Seeks
}

// figures are the pool's bytes per request and seek share.
func (p pool) figures() (perReq, seekShare float64) {
	return p.bytes / p.reqs, p.seeks / p.reqs
}

// cappedShares is how many maps a generator that gives each of slots an
// equal share of d bytes, but none more than a block, runs (and how many
// files it writes).
func cappedShares(d float64, slots int, block int64) int {
	per := math.Ceil(d / float64(max(slots, 1)))
	if block > 0 {
		per = math.Min(per, float64(block))
	}
	return max(1, int(math.Ceil(d/max(per, 1)-1e-9)))
}

// splits is how many map inputs files of d bytes in all make: each file
// cut into blocks.
func splits(d float64, files int, block int64) int {
	per := d / float64(files)
	return files * max(1, int(math.Ceil(per/float64(block)-1e-9)))
}

// fit solves measured = Scale × (max + Alpha × (sum − max)) + Fixed ×
// waves for one of its unknowns: Alpha when the measurement lies between
// perfect overlap and none, Fixed when above no overlap, Scale when below
// perfect overlap.
func fit(t map[string]float64, measured float64, waves int) Fit {
	mx, sum := maxSum(t)
	f := Fit{Scale: 1}
	switch {
	case measured <= 0 || sum <= 0:
		if waves > 0 {
			f.Fixed = max(0, measured) / float64(waves)
		}
	case measured >= sum:
		f.Alpha = 1
		f.Fixed = (measured - sum) / float64(max(waves, 1))
	case measured >= mx:
		if sum > mx {
			f.Alpha = (measured - mx) / (sum - mx)
		}
	default:
		f.Scale = measured / mx
	}
	return f
}

// Combine applies the fit to resource times.
func (f Fit) combine(t map[string]float64, waves int) float64 {
	mx, sum := maxSum(t)
	return f.Scale*(mx+f.Alpha*(sum-mx)) + f.Fixed*float64(waves)
}

// maxSum are the largest and the sum of a phase's resource kinds: the
// CPU, the network and the devices, whose time is the busiest device's
// (a node's devices work in parallel, so they overlap one another
// fully).
func maxSum(t map[string]float64) (mx, sum float64) {
	var dev float64
	for k, v := range t {
		if strings.HasPrefix(k, "device ") {
			dev = max(dev, v)
			continue
		}
		mx = max(mx, v)
		sum += v
	}
	return max(mx, dev), sum + dev
}

// WriteJSON writes w as indented JSON.
func (w *Workload) WriteJSON(out io.Writer) error {
	e := json.NewEncoder(out)
	e.SetIndent("", "  ")
	return e.Encode(w)
}

// maxWorkloadFile bounds a workload file.
const maxWorkloadFile = 16 << 20

// ReadWorkload reads a workload written by WriteJSON.
func ReadWorkload(r io.Reader) (*Workload, error) {
	var w Workload
	if err := json.NewDecoder(io.LimitReader(r, maxWorkloadFile)).Decode(&w); err != nil {
		return nil, fmt.Errorf("model: workload: %w", err)
	}
	if w.Calibration == nil || len(w.Jobs) == 0 {
		return nil, errors.New("model: workload: no calibration cluster or no jobs")
	}
	if err := w.Calibration.Validate(); err != nil {
		return nil, fmt.Errorf("model: workload: calibration cluster: %w", err)
	}
	return &w, nil
}
