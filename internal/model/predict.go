package model

import (
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/stratafs/strata/internal/experiment"
	"github.com/stratafs/strata/internal/media"
)

// shape is how a job's tasks fall on a cluster: counts, waves, how many
// run at once on a node and the share of the job's task work the
// busiest node does.
type shape struct {
	nodes              int
	maps, reduces      int
	mapWaves, redWaves int
	mapK, redK         int
	mapShare, redShare float64
	mapsNode           float64 // maps on the busiest node
	d                  float64
	// The maps' intermediate files: the spill arithmetic's for this shape.
	mapFiles spillFiles
	// HDFS writes' bytes per request and seek share for this data.
	hdfsWriteRequest, hdfsWriteSeek float64
}

func (j *Job) shape(cl *Cluster, d float64, maps, reduces int) shape {
	n := cl.Nodes
	s := shape{nodes: n, maps: maps, reduces: reduces, d: d}
	per := func(tasks, slots int) (waves, k int, share, onNode float64) {
		if tasks == 0 {
			return 0, 0, 0, 0
		}
		onNode = math.Ceil(float64(tasks) / float64(n))
		waves = int(math.Ceil(onNode / float64(slots)))
		k = min(slots, int(onNode))
		return waves, k, onNode / float64(tasks), onNode
	}
	s.mapWaves, s.mapK, s.mapShare, s.mapsNode = per(maps, cl.MapSlots)
	s.redWaves, s.redK, s.redShare, _ = per(reduces, cl.ReduceSlots)
	s.mapFiles = j.Spill.files(j.MapFileWrite, j.MapFileRead, d, maps, j.sortMBOn(cl), j.Bytes, j.Maps)
	x := 1.0
	if j.Bytes > 0 {
		x = d / j.Bytes
	}
	s.hdfsWriteRequest, s.hdfsWriteSeek = j.hdfsWriteAt(x)
	return s
}

func (s shape) waves(phase string) int {
	switch phase {
	case PhaseMap:
		return s.mapWaves
	case PhaseReduce:
		return s.redWaves
	}
	if s.reduces > 0 {
		return 1
	}
	return 0
}

// load is one node's demand during a phase.
type load struct {
	cpu, taskCPU  float64 // node CPU seconds; one task's, for its lower bound
	waves, k      int
	parts         map[string][]part // per device: what streams carry its bytes
	netOut, netIn float64
	split         float64 // bytes of one task's input (or output) file
	// fileThreads and hdfsThreads are how many independent threads do
	// the node's intermediate and HDFS I/O at once: its tasks (each
	// spills and merges in turn) or the shuffle's servers; the DataNode's
	// readers for its tasks and receivers of replicas. A node's devices
	// serve one role in parallel only as far as that many threads keep
	// them busy.
	fileThreads, hdfsThreads float64
	// fileRequest and fileSeek are the factors on the job's bytes per
	// request and seek share of intermediate data (the maps' spills and
	// merges in this shape; 1 in the other phases).
	fileRequest, fileSeek float64
	// fresh is whether the phase's CPU work starts on nodes that were
	// idle (the maps, after the job's setup), so that a CPU quota's first
	// period is unspent; the shuffle and the reduces continue the maps'
	// work at the quota's steady rate.
	fresh bool
	// startCPU is the node's CPU seconds of the first maps' start-ups,
	// run before the phase's work in the same burst.
	startCPU float64
	// hdfsWriteRequest and hdfsWriteSeek are HDFS writes' bytes per
	// request and seek share (the shape's; 0: the job's).
	hdfsWriteRequest, hdfsWriteSeek float64
}

func newLoad() *load {
	return &load{parts: map[string][]part{}, fileRequest: 1, fileSeek: 1}
}

// part is some of a device's bytes, read or written, HDFS's or
// intermediate data's, and the streams carrying them.
type part struct {
	bytes, streams float64
	write, file    bool
	// atOnce is how many streams read this part's bytes at once on its
	// device when known (addOwnReads; 0: the device's streams decide).
	atOnce float64
}

// streams is how many sequential streams use device dev at once,
// counting only the parts that carry at least 5% of its bytes (a few
// bytes of a job's bookkeeping do not make a lone reader interleaved).
func (L *load) streams(dev string) float64 {
	var total, n float64
	for _, p := range L.parts[dev] {
		total += p.bytes
	}
	for _, p := range L.parts[dev] {
		if p.bytes >= 0.05*total {
			n += p.streams
		}
	}
	return n
}

// add puts bytes and the streams carrying them on devs (HDFS's or
// intermediate data, reads or writes): evenly, but
// the busiest of them takes ceil(units/len(devs)) of units whole pieces
// (a JBOD node's blocks go to its disks in turn; few blocks do not divide
// evenly).
func (L *load) add(devs []string, file, write bool, bytes, streams, units float64) {
	if bytes <= 0 {
		return
	}
	n := float64(len(devs))
	busiest := 1 / n
	if units >= 1 && len(devs) > 1 {
		busiest = math.Ceil(units/n) / units
	}
	for i, d := range devs {
		share := busiest
		if i > 0 {
			share = (1 - busiest) / (n - 1)
		}
		if share <= 0 {
			continue
		}
		L.parts[d] = append(L.parts[d], part{bytes: bytes * share, streams: math.Max(streams*share, 1), write: write, file: file})
	}
}

// busiestReplicas is the expected largest number of replicas one of n
// nodes receives from the others' writes when b blocks, own of them this
// node's, each send r-1 replicas to distinct other nodes chosen at
// random (Hadoop's default placement on one rack): a node holds a
// replica of each block it did not write with probability (r-1)/(n-1),
// and the busiest of n such binomial counts sets the phase's time.
func busiestReplicas(b, own, r float64, n int) float64 {
	if r <= 1 || n < 2 {
		return 0
	}
	return busiestOf(math.Round(b-own), math.Min(1, (r-1)/float64(n-1)), n)
}

// busiestForwards is the expected largest number of the others' b-own
// blocks one of n nodes forwards in their pipelines: a node that is
// neither a block's writer nor its pipeline's last forwards it, which a
// node that did not write it is with probability (r-2)/(n-1).
func busiestForwards(b, own, r float64, n int) float64 {
	if r <= 2 || n < 2 {
		return 0
	}
	return busiestOf(math.Round(b-own), math.Min(1, (r-2)/float64(n-1)), n)
}

// busiestOf is the expected largest of n binomial(m, p) counts.
func busiestOf(m, p float64, n int) float64 {
	if m <= 0 || p <= 0 {
		return 0
	}
	if p >= 1 || m > 5000 {
		// Exact, or a spread negligible against the mean.
		return m*p + math.Sqrt(2*m*p*(1-p)*math.Log(float64(n)))
	}
	// E[max] = sum over k >= 0 of P(max > k) = 1 - F(k)^n.
	var e, cdf float64
	pk := math.Pow(1-p, m)
	for k := 0; k < int(m); k++ {
		cdf += pk
		e += 1 - math.Pow(math.Min(cdf, 1), float64(n))
		pk *= (m - float64(k)) / float64(k+1) * p / (1 - p)
	}
	return e
}

// load is the busiest node's demand in phase.
func (s shape) load(cl *Cluster, phase string, j *Job) *load {
	d, n := s.d, float64(s.nodes)
	repl := float64(cl.Replication)
	if j.WriteReplication > 0 {
		repl = float64(min(j.WriteReplication, cl.Nodes))
	}
	block := float64(cl.BlockSize)
	// hdfsWrite puts a phase's HDFS writes of w bytes in all, share of
	// them by this node's tasks, on its volumes: its own first replicas
	// and the busiest node's share of the others' (random placement), in
	// blocks: each task's output is its own file, so its blocks are
	// ceil(its bytes / the block size), of their mean size.
	// It returns what the phase's replica pipelines send out of the node
	// and into it: one copy of each of its own blocks, one of each block
	// it forwards, and each replica it receives.
	hdfsWrite := func(L *load, w, share float64, tasks int, wf float64) (out, in float64) {
		if w <= 0 || tasks == 0 {
			return 0, 0
		}
		perTask := math.Max(1, math.Ceil(w/float64(tasks)/block-1e-9))
		unit := w / float64(tasks) / perTask
		blocks := perTask * float64(tasks)
		own := math.Ceil(share*float64(tasks)-1e-9) * perTask
		other := busiestReplicas(blocks, own, repl, s.nodes)
		k := float64(L.k)
		L.add(cl.Volumes, false, true, (own+other)*unit*wf, k*repl, own+other)
		if repl > 1 {
			out = (own + busiestForwards(blocks, own, repl, s.nodes)) * unit
		}
		return out, other * unit
	}
	rf, wf := j.ReadFactor, j.WriteFactor
	if rf == 0 {
		rf = 1
	}
	if wf == 0 {
		wf = 1
	}
	L := newLoad()
	L.hdfsWriteRequest, L.hdfsWriteSeek = s.hdfsWriteRequest, s.hdfsWriteSeek
	// What part of the shuffle overlaps the maps: all but the last wave's.
	tail := 0.0
	if s.reduces > 0 && s.mapWaves > 0 {
		tail = 1 / float64(s.mapWaves)
	}
	shuffle := j.ShuffleBytes * d
	remote := (n - 1) / n
	var moved float64
	switch phase {
	case PhaseMap:
		L.waves, L.k, L.fresh = s.mapWaves, s.mapK, true
		L.startCPU = j.TaskStartCPU * float64(L.k)
		L.fileThreads = float64(L.k)
		L.hdfsThreads = float64(L.k) * (boolf(j.MapHDFSRead > 0) + repl*boolf(j.MapHDFSWrite > 0))
		L.fileRequest, L.fileSeek = s.mapFiles.perRequest, s.mapFiles.seekShare
		k := float64(L.k)
		share := s.mapShare
		if s.maps > 0 {
			L.split = d / float64(s.maps)
		}
		hr, hw := j.MapHDFSRead*d, j.MapHDFSWrite*d
		local := j.DataLocal
		if j.ownReads() && s.maps > 0 {
			local = L.addOwnReads(cl.Volumes, min(s.maps, s.nodes*s.mapK), s.nodes, s.mapK, cl.Replication, hr/float64(s.maps)*rf, s.mapWaves)
		} else {
			L.add(cl.Volumes, false, false, hr*share*rf, k, math.Ceil(s.mapsNode*math.Max(1, L.split/block)))
		}
		wOut, wIn := hdfsWrite(L, hw, share, s.maps, wf)
		// Spills and their merge: a writer and the merge's readers.
		L.add(cl.LocalDirs, true, false, (s.mapFiles.r*d*share+shuffle*(1-tail)/n)*rf, 2*k, 0)
		L.add(cl.LocalDirs, true, true, (s.mapFiles.w*d*share+j.ReduceFileWrite*d*(1-tail)*s.redShare)*wf, k, 0)
		other := hr*share*(1-local) + shuffle*(1-tail)/n*remote
		L.netOut, L.netIn = wOut+other, wIn+other
		L.cpu = j.MapCPU * d * share
		if s.maps > 0 {
			L.taskCPU = j.MapCPU * d / float64(s.maps)
		}
		moved = hr*share + hw*repl/n + shuffle*(1-tail)/n
	case PhaseShuffle:
		if s.reduces == 0 {
			return L
		}
		L.waves, L.k = 1, s.redK
		L.fileThreads = float64(s.reduces)
		// Every reduce fetches from every node: many readers at once.
		L.add(cl.LocalDirs, true, false, shuffle*tail/n*rf, float64(s.reduces), 0)
		L.add(cl.LocalDirs, true, true, j.ReduceFileWrite*d*tail*s.redShare*wf, float64(L.k), 0)
		L.netIn = shuffle * tail * s.redShare * remote
		L.netOut = shuffle * tail / n * remote
		L.cpu = j.ReduceCPU * d * j.ShuffleCPUShare * s.redShare * tail
		moved = shuffle * tail / n
	case PhaseReduce:
		if s.reduces == 0 {
			return L
		}
		L.waves, L.k = s.redWaves, s.redK
		L.fileThreads = float64(L.k)
		L.hdfsThreads = float64(L.k) * (boolf(j.ReduceHDFSRead > 0) + repl*boolf(j.ReduceHDFSWrite > 0))
		k := float64(L.k)
		share := s.redShare
		L.split = d / float64(s.reduces)
		hw := j.ReduceHDFSWrite * d
		L.add(cl.Volumes, false, false, j.ReduceHDFSRead*d*share*rf, k, 0)
		L.netOut, L.netIn = hdfsWrite(L, hw, share, s.reduces, wf)
		L.add(cl.LocalDirs, true, false, j.ReduceFileRead*d*share*rf, 2*k, 0)
		L.cpu = j.ReduceCPU * d * (1 - j.ShuffleCPUShare) * share
		L.taskCPU = j.ReduceCPU * d * (1 - j.ShuffleCPUShare) / float64(s.reduces)
		moved = hw * repl / n
	}
	L.cpu += j.DaemonCPU * moved
	return L
}

// cores is the CPU the load's work can use on cl, in cores of the
// calibration machine: a task is one thread of work, the daemons' threads
// the node's other user of CPUs, so at most k+1 cores are busy.
func (L *load) cores(cl *Cluster) float64 {
	return min(cl.nodeCores(), float64(L.k+1)) * cl.Speed
}

// times are a load's resource times on cl: "cpu", "device <name>",
// "network".
func (L *load) times(cl *Cluster, j *Job) map[string]float64 {
	t := map[string]float64{}
	if L.waves == 0 {
		return t
	}
	cores := L.cores(cl)
	cpu := L.cpu / cores
	if L.fresh {
		// The maps' start-ups spent the first of the burst (startCPUOn).
		cpu = cl.cpuTime(L.startCPU+L.cpu, cores, L.k+1) - cl.cpuTime(L.startCPU, cores, L.k+1)
	}
	t["cpu"] = max(cpu, float64(L.waves)*L.taskCPU/cl.Speed)
	for _, dv := range cl.Devices {
		if len(L.parts[dv.Name]) == 0 {
			continue
		}
		t["device "+dv.Name] = deviceTime(dv.Params, L.parts[dv.Name], L.streams(dv.Name), L.split, L, j)
	}
	// A role's devices overlap only as far as its threads reach: a task
	// spilling to two disks uses them in turn. The busiest device's time
	// is at least its role's time on all of them shared by its threads.
	var busiest string
	var role [2]float64 // HDFS, intermediate
	var used [2]int
	for _, dv := range cl.Devices {
		k := "device " + dv.Name
		if _, ok := t[k]; !ok {
			continue
		}
		if busiest == "" || t[k] > t[busiest] {
			busiest = k
		}
		for r, file := range []bool{false, true} {
			var ps []part
			for _, p := range L.parts[dv.Name] {
				if p.file == file {
					ps = append(ps, p)
				}
			}
			if len(ps) > 0 {
				role[r] += deviceTime(dv.Params, ps, L.streams(dv.Name), L.split, L, j)
				used[r]++
			}
		}
	}
	for r, threads := range []float64{L.hdfsThreads, L.fileThreads} {
		if used[r] > 1 {
			if v := role[r] / math.Min(float64(used[r]), math.Max(1, threads)); v > t[busiest] {
				t[busiest] = v
			}
		}
	}
	if rate := cl.linkBytesPerSecond(); !math.IsInf(rate, 1) {
		t["network"] = max(L.netIn, L.netOut) / rate
	}
	return t
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// deviceTime is the media model's service time for r and w bytes in the
// job's requests, streams of them at once: the transfer channel
// serialises transfers, the queue's slots overlap latencies and seeks
// (internal/media, Params). A request seeks when it does not continue
// the device's previous one: with several streams interleaved that is
// the job's calibrated share of its requests; a single stream seeks only
// where it moves to another block, so its share falls as the blocks it
// reads grow (split, against the calibration's). Intermediate data's
// request size and seek share are the job's times L's factors.
func deviceTime(p media.Params, parts []part, streams, split float64, L *load, j *Job) float64 {
	var t float64
	lone := streams < 1.5 && split > 0 && j.SplitBytes > 0
	qd := math.Max(1, math.Min(float64(p.QueueDepth), math.Ceil(streams)))
	for _, pt := range parts {
		if bw := p.ReadMBps; !pt.write && bw > 0 {
			t += pt.bytes / (bw * 1e6)
		}
		if bw := p.WriteMBps; pt.write && bw > 0 {
			t += pt.bytes / (bw * 1e6)
		}
		perReq, seeks := j.HDFSRequest, j.HDFSSeek
		if pt.write && j.HDFSWriteRequest > 0 {
			perReq, seeks = j.HDFSWriteRequest, j.HDFSWriteSeek
			if L.hdfsWriteRequest > 0 {
				perReq, seeks = L.hdfsWriteRequest, L.hdfsWriteSeek
			}
		}
		if pt.file {
			perReq, seeks = j.FileRequest*L.fileRequest, math.Min(1, j.FileSeek*L.fileSeek)
		}
		if perReq <= 0 {
			perReq, seeks = j.BytesPerRequest, j.SeekFraction
		}
		switch {
		case pt.atOnce >= 2:
			seeks = 1 // streams taking turns: every request moves the head
		case (pt.atOnce >= 1 || lone) && split > 0 && j.SplitBytes > 0:
			seeks = math.Min(1, seeks*j.SplitBytes/split)
		}
		if per := p.Latency.Seconds() + seeks*p.Seek.Seconds()*(1-j.HiddenSeek); per > 0 && perReq > 0 {
			t += pt.bytes / perReq * per / qd
		}
	}
	return t
}

// times are the job's resource times in phase on cl.
func (s shape) times(cl *Cluster, phase string, j *Job) map[string]float64 {
	return s.load(cl, phase, j).times(cl, j)
}

// maxBackground is the largest share of a node's CPU the CPU per second
// of its daemons and waiting attempts may take: what waits cannot use
// more of the CPU than what works, and below 1 the phase's length is a
// contraction (phaseTime).
const maxBackground = 0.5

// timesOver is times with the daemons' and the running attempts' CPU
// per second over a phase of secs seconds added to the phase's CPU (at
// most maxBackground of the node's).
func (s shape) timesOver(cl *Cluster, phase string, j *Job, secs float64) map[string]float64 {
	L := s.load(cl, phase, j)
	if L.waves > 0 {
		rate := j.DaemonCPUPerSecond + j.TaskCPUPerSecond*float64(L.k)
		L.cpu += math.Min(rate, maxBackground*L.cores(cl)) * secs
	}
	return L.times(cl, j)
}

// phaseTime is a phase's predicted time and its resources' times: the
// CPU per second depends on the phase's length, so the length is found
// by iterating from the time without it. combine grows at most as fast
// as its CPU time, which grows by at most maxBackground per second of
// the phase: the iteration contracts.
func (s shape) phaseTime(cl *Cluster, phase string, j *Job, f Fit) (float64, map[string]float64) {
	t := s.times(cl, phase, j)
	v := f.combine(t, s.waves(phase))
	if j.DaemonCPUPerSecond <= 0 && j.TaskCPUPerSecond <= 0 {
		return v, t
	}
	for range 200 {
		t = s.timesOver(cl, phase, j, v)
		next := f.combine(t, s.waves(phase))
		if math.Abs(next-v) <= 1e-12*math.Max(v, 1) || math.IsNaN(next) {
			return next, t
		}
		v = next
	}
	return v, t
}

// JobPrediction is one job's predicted phases and what bounds them.
type JobPrediction struct {
	Name          string
	Bytes         float64
	Maps, Reduces int
	Phases        Phases
	Bounds        map[string]string             // phase -> resource
	Times         map[string]map[string]float64 // phase -> resource -> s
	CPUSeconds    float64                       // all nodes
	DeviceBusy    map[string]float64            // per device name, per node, s
	KWh           float64                       // energy of the job, 0 without power figures
	inTotal       bool                          // counts in the runtime
}

// Prediction is a workload's prediction on a cluster.
type Prediction struct {
	Cluster *Cluster
	Jobs    []JobPrediction
	// Runtime is the Total jobs' time; JobsPerDay 86,400 s over it.
	Runtime, JobsPerDay float64
	// Over Years at KWhPrice: jobs, dollars per job (price), energy per
	// job in kWh (0 if the cluster has no power figures) and its cost.
	Years, KWhPrice                   float64
	Jobs3y, CostPerJob, KWhPerJob     float64
	EnergyCostPerJob, TotalCostPerJob float64
}

// Predict predicts w on cl over years of use at kwhPrice $/kWh.
func Predict(w *Workload, cl *Cluster, years, kwhPrice float64) (*Prediction, error) {
	if err := cl.Validate(); err != nil {
		return nil, err
	}
	scale := 1.0
	if cl.DataBytes > 0 && w.Calibration.DataBytes > 0 {
		scale = float64(cl.DataBytes) / float64(w.Calibration.DataBytes)
	}
	p := &Prediction{Cluster: cl, Years: years, KWhPrice: kwhPrice}
	done := map[string]*JobPrediction{}
	power := experiment.DefaultPowerModel()
	var energyJ float64
	for k := range w.Jobs {
		j := &w.Jobs[k]
		d := j.Bytes * scale
		maps, reduces := j.tasks(cl, d, done)
		s := j.shape(cl, d, maps, reduces)
		jp := JobPrediction{Name: j.Name, Bytes: d, Maps: maps, Reduces: reduces,
			Bounds: map[string]string{}, Times: map[string]map[string]float64{}, DeviceBusy: map[string]float64{}}
		var mapWork float64 // the map phase after the maps' launch and start-up
		for _, ph := range []string{PhaseMap, PhaseShuffle, PhaseReduce} {
			f, ok := j.Fit[ph]
			if !ok {
				f = Fit{Scale: 1}
			}
			f = f.on(cl, j)
			v, t := s.phaseTime(cl, ph, j, f)
			jp.Times[ph] = t
			jp.Bounds[ph] = bound(t, f, s.waves(ph))
			switch ph {
			case PhaseMap:
				mapWork = v
				if start := w.launchSpread(cl, maps) + j.startOn(cl, s)*float64(s.mapWaves); start > 0 {
					if start > v {
						jp.Bounds[ph] = "task start"
					}
					v += start
				}
				jp.Phases.Map = v
			case PhaseShuffle:
				jp.Phases.Shuffle = v
			case PhaseReduce:
				jp.Phases.Reduce = v
			}
			for name, v := range t {
				if dev, ok := strings.CutPrefix(name, "device "); ok {
					jp.DeviceBusy[dev] += v
				}
			}
		}
		jp.CPUSeconds = (j.MapCPU+j.ReduceCPU)*d + j.TaskStartCPU*float64(maps)
		if j.TaskCPUPerSecond > 0 {
			// Each node's running attempts over their phases.
			maps, reds := min(s.maps, cl.Nodes*s.mapK), min(s.reduces, cl.Nodes*s.redK)
			jp.CPUSeconds += j.TaskCPUPerSecond * (float64(maps)*mapWork + float64(reds)*(jp.Phases.Shuffle+jp.Phases.Reduce))
		}
		for _, st := range j.ChainedStages {
			jp.CPUSeconds += st.CPU * float64(st.Tasks)
		}
		jp.Phases.Overhead = j.overheadOn(cl)
		jp.inTotal = slices.Contains(w.Total, j.Name)
		total := jp.Phases.Total()
		if cl.IdleW > 0 || cl.CPUW > 0 {
			jp.KWh = clusterWatts(cl, power, &jp, total) * total / 3.6e6
		}
		p.Jobs = append(p.Jobs, jp)
		done[j.Name] = &jp
		if jp.inTotal {
			p.Runtime += total
			energyJ += jp.KWh * 3.6e6
		}
	}
	if p.Runtime > 0 {
		p.JobsPerDay = 86400 / p.Runtime
		p.Jobs3y = p.JobsPerDay * 365 * years
		if p.Jobs3y > 0 {
			p.CostPerJob = cl.Price / p.Jobs3y
		}
	}
	if energyJ > 0 {
		p.KWhPerJob = energyJ / 3.6e6
		p.EnergyCostPerJob = p.KWhPerJob * kwhPrice
	}
	p.TotalCostPerJob = p.CostPerJob + p.EnergyCostPerJob
	return p, nil
}

// clusterWatts is the cluster's mean power over a job of secs: each
// node's idle power, its CPU power times its utilisation, and its
// devices' idle power plus the active increment for their busy share.
func clusterWatts(cl *Cluster, pm experiment.PowerModel, jp *JobPrediction, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	cores := cl.nodeCores() * cl.Speed
	util := math.Min(1, jp.CPUSeconds/float64(cl.Nodes)/(cores*secs))
	w := cl.IdleW + cl.CPUW*util
	for _, dv := range cl.Devices {
		dp, ok := pm.Device(dv.Preset)
		if !ok {
			continue
		}
		busy := math.Min(1, jp.DeviceBusy[dv.Name]/secs)
		w += dp.IdleW + (dp.ActiveW-dp.IdleW)*busy
	}
	return w * float64(cl.Nodes)
}

// tasks are the job's maps and reduces on cl for d bytes.
func (j *Job) tasks(cl *Cluster, d float64, done map[string]*JobPrediction) (maps, reduces int) {
	switch {
	case j.MapsRule == "fixed":
		maps = j.Maps
	case j.MapsRule == "slots":
		maps = cl.Nodes * cl.MapSlots
	case j.MapsRule == "slots:block" || j.MapsRule == "files:slots:block":
		maps = cappedShares(d, cl.Nodes*cl.MapSlots, cl.BlockSize)
	case j.MapsRule == "files:slots":
		maps = splits(d, cl.Nodes*cl.MapSlots, cl.BlockSize)
	case strings.HasPrefix(j.MapsRule, "files:"):
		files := 0
		if prev := done[strings.TrimPrefix(j.MapsRule, "files:")]; prev != nil {
			files = prev.Reduces
			if files == 0 {
				files = prev.Maps
			}
		}
		if files > 0 {
			maps = splits(d, files, cl.BlockSize)
		}
	}
	if maps == 0 {
		maps = max(1, int(math.Ceil(float64(j.Maps)*d/j.Bytes)))
	}
	reduces = j.Reduces
	if j.ReducesRule == "slots" {
		reduces = cl.Nodes * cl.ReduceSlots
	}
	return maps, reduces
}

// bound names what sets a phase's time: its largest resource, or
// "fixed" when the time no resource explains is larger.
func bound(t map[string]float64, f Fit, waves int) string {
	name, mx := "", 0.0
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if t[k] > mx {
			name, mx = k, t[k]
		}
	}
	if fixed := f.Fixed * float64(waves); fixed > f.Scale*mx || name == "" {
		if fixed == 0 {
			return "-"
		}
		return "fixed"
	}
	return name
}
