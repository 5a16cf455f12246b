package model

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/stratafs/strata/internal/experiment"
)

// ReadRun reads an experiment's output: results.json (strata experiment,
// experiment dfsio-paper) or paper3.json (experiment amdahl, its Table 3
// runs), given as the file or its directory.
func ReadRun(path string) (*experiment.Results, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		for _, name := range []string{"results.json", "paper3.json"} {
			if _, err := os.Stat(filepath.Join(path, name)); err == nil {
				return ReadRun(filepath.Join(path, name))
			}
		}
		return nil, fmt.Errorf("model: %s has neither results.json nor paper3.json", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return nil, err
	}
	// experiment amdahl's output has its Zones runs as "steps".
	var kind struct {
		Steps json.RawMessage `json:"steps"`
	}
	if err := json.Unmarshal(b, &kind); err != nil {
		return nil, fmt.Errorf("model: %s: %w", path, err)
	}
	if kind.Steps == nil {
		var r experiment.Results
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("model: %s: %w", path, err)
		}
		if len(r.Profiles) == 0 {
			return nil, fmt.Errorf("model: %s: no profiles in the results", path)
		}
		return &r, nil
	}
	var p3 experiment.Paper3Results
	if err := json.Unmarshal(b, &p3); err != nil {
		return nil, fmt.Errorf("model: %s: %w", path, err)
	}
	return FromPaper3(&p3)
}

// FromPaper3 is the Table 3 part of `strata experiment amdahl` as Results:
// a profile per cluster with its layout, its Zones runs as jobs named
// neighbors-<θ> and neighborstats.
func FromPaper3(p3 *experiment.Paper3Results) (*experiment.Results, error) {
	if len(p3.Layouts) == 0 {
		return nil, errors.New("model: paper3.json has no profile layouts (a run of experiment amdahl -parts table3 from before they were recorded)")
	}
	res := &experiment.Results{Command: p3.Command, CPUs: p3.CPUs, DataNodes: p3.DataNodes, MapSlots: p3.MapSlots,
		ReduceSlots: p3.ReduceSlots, Media: p3.Media, Hosts: p3.Hosts}
	for _, name := range p3.Profiles {
		pr := experiment.ProfileResult{Name: name, Layout: p3.Layouts[name]}
		var run experiment.RunResult
		for _, s := range p3.Steps {
			if s.Profile != name {
				continue
			}
			ja := s.Account
			ja.Step = s.App
			if s.App == "neighbors" {
				ja.Step = "neighbors-" + strconv.FormatFloat(s.Theta, 'g', -1, 64)
			}
			run.Jobs = append(run.Jobs, ja)
		}
		pr.Runs = []experiment.RunResult{run}
		res.Profiles = append(res.Profiles, pr)
	}
	return res, nil
}

// CalibrateRuns calibrates on several runs of one cluster shape (a
// TeraSort run, a dfsio-paper run, a Zones run, ...): the first gives the
// calibration cluster, every one its jobs. profile names the profile in
// each ("" for the first's).
func CalibrateRuns(runs []*experiment.Results, profile string) (*Workload, error) {
	return calibrateRuns(runs, profile, nil)
}

// CalibrateRepeats is CalibrateRuns on the repeats of each run (reps[i]
// the repeats of one run): each job's demands are its repeat of least
// CPU (LeastRun), while the times its fit aims at — each phase, the
// overhead, the spread of its maps' launch — are their medians over its
// repeats (typicalRun). Times are noisy (the same TeraGen's overhead
// 0.10 to 0.26 s): the least of a few jobs' single draws, the fixed part
// of the overhead, is below what every job pays.
func CalibrateRepeats(reps [][]*experiment.Results, profile string) (*Workload, error) {
	if profile == "" && len(reps) > 0 && len(reps[0]) > 0 && len(reps[0][0].Profiles) > 0 {
		profile = reps[0][0].Profiles[0].Name
	}
	runs := make([]*experiment.Results, len(reps))
	phases := map[string][]Phases{}
	spreads := map[string][]float64{}
	from := map[string]int{} // the run whose job a step is
	for i, rr := range reps {
		var err error
		if runs[i], err = LeastRun(rr, ByCPU); err != nil {
			return nil, err
		}
		for _, r := range rr {
			k := slices.IndexFunc(r.Profiles, func(p experiment.ProfileResult) bool { return p.Name == profile })
			if k < 0 && len(r.Profiles) == 1 {
				k = 0
			}
			if k < 0 {
				continue
			}
			for _, ja := range ProfileJobs(r, &r.Profiles[k]) {
				if run, ok := from[ja.Step]; ok && run != i {
					continue // an earlier run's job, as in calibrateRuns
				}
				from[ja.Step] = i
				phases[ja.Step] = append(phases[ja.Step], Measured(&ja))
				spreads[ja.Step] = append(spreads[ja.Step], firstWaveSpread(ja.Attempts, r.MapSlots))
			}
		}
	}
	typical := map[string]*typicalRun{}
	for step, ps := range phases {
		at := func(get func(Phases) float64) float64 {
			v := make([]float64, len(ps))
			for k, p := range ps {
				v[k] = get(p)
			}
			return median(v)
		}
		typical[step] = &typicalRun{
			phases: Phases{
				Map:      at(func(p Phases) float64 { return p.Map }),
				Shuffle:  at(func(p Phases) float64 { return p.Shuffle }),
				Reduce:   at(func(p Phases) float64 { return p.Reduce }),
				Overhead: at(func(p Phases) float64 { return p.Overhead }),
			},
			launchSpread: median(spreads[step]),
		}
	}
	return calibrateRuns(runs, profile, typical)
}

// calibrateRuns is CalibrateRuns with each job's typical run by its step
// (none: the run's own).
func calibrateRuns(runs []*experiment.Results, profile string, typical map[string]*typicalRun) (*Workload, error) {
	if len(runs) == 0 {
		return nil, errors.New("model: no runs")
	}
	if profile == "" {
		if len(runs[0].Profiles) == 0 {
			return nil, errors.New("model: the first run has no profiles")
		}
		profile = runs[0].Profiles[0].Name
	}
	i := slices.IndexFunc(runs[0].Profiles, func(p experiment.ProfileResult) bool { return p.Name == profile })
	if i < 0 {
		return nil, fmt.Errorf("model: no profile %q in the results", profile)
	}
	cal, err := ClusterOf(runs[0], &runs[0].Profiles[i])
	if err != nil {
		return nil, err
	}
	command := runs[0].Command
	srcs := sourcesOf(cal, ProfileJobs(runs[0], &runs[0].Profiles[i]), nil)
	for _, r := range runs[1:] {
		i := slices.IndexFunc(r.Profiles, func(p experiment.ProfileResult) bool { return p.Name == profile })
		if i < 0 && len(r.Profiles) == 1 {
			i = 0 // a run of one profile is that cluster, whatever its name
		}
		if i < 0 {
			return nil, fmt.Errorf("model: no profile %q in %s", profile, r.Command)
		}
		cl, err := ClusterOf(r, &r.Profiles[i])
		if err != nil {
			return nil, err
		}
		if err := sameShape(cal, cl); err != nil {
			return nil, fmt.Errorf("model: %s: %w", r.Command, err)
		}
		seen := map[string]bool{}
		for _, s := range srcs {
			seen[s.jobs[len(s.jobs)-1].Step] = true
		}
		srcs = append(srcs, sourcesOf(cl, ProfileJobs(r, &r.Profiles[i]), seen)...)
		command += "; " + r.Command
	}
	if len(srcs) == 0 {
		return nil, fmt.Errorf("model: profile %s has no accounted run", profile)
	}
	for i := range srcs {
		if t, ok := typical[srcs[i].jobs[len(srcs[i].jobs)-1].Step]; ok {
			srcs[i].typical = t
		}
	}
	return calibrateSources(command, cal, srcs)
}

// sameShape reports how b differs from a in what sets a job's time.
func sameShape(a, b *Cluster) error {
	switch {
	case a.Nodes != b.Nodes:
		return fmt.Errorf("%d nodes, the calibration %d", b.Nodes, a.Nodes)
	case a.MapSlots != b.MapSlots || a.ReduceSlots != b.ReduceSlots:
		return fmt.Errorf("slots %d+%d, the calibration %d+%d", b.MapSlots, b.ReduceSlots, a.MapSlots, a.ReduceSlots)
	case a.Cores != b.Cores || a.SharedCores != b.SharedCores || a.CPUPeriodMs != b.CPUPeriodMs || a.LinkMbps != b.LinkMbps:
		return errors.New("other CPUs or links than the calibration's")
	case !slices.EqualFunc(a.Devices, b.Devices, func(x, y Device) bool { return x.Name == y.Name && x.Params == y.Params }):
		return errors.New("other devices than the calibration's")
	}
	return nil
}

// ByTime is a job's measured time; ByCPU the CPU its attempts and its
// nodes' daemons used.
func ByTime(ja *experiment.JobAccounting) float64 { return Measured(ja).Total() }

func ByCPU(ja *experiment.JobAccounting) float64 {
	cpu := nodeDaemonCPU(ja.Daemons)
	for _, a := range ja.Attempts {
		cpu += a.CPU.User + a.CPU.System
	}
	return cpu
}

// MedianRun is the repeats of one experiment run (the same command on the
// same cluster) as one run: a copy of the first in which every accounted
// job is the repeat of it whose figure by is the median (of an even
// number, the lower middle one). A job stays one run's accounting — its phases,
// counters and devices belong together — while a job that happened to
// place its few blocks badly in one repeat does not stand for the case.
// The result shares the repeats' accountings (read them, do not change
// them).
func MedianRun(reps []*experiment.Results, by func(*experiment.JobAccounting) float64) (*experiment.Results, error) {
	return pickRun(reps, by, func(n int) int { return (n - 1) / 2 })
}

// LeastRun is MedianRun with the repeat of least figure by: of CPU
// seconds, what the machine's interference (its page cache's varying
// cost, other processes) did not add.
func LeastRun(reps []*experiment.Results, by func(*experiment.JobAccounting) float64) (*experiment.Results, error) {
	return pickRun(reps, by, func(int) int { return 0 })
}

// pickRun is MedianRun with each job's repeat the pickAt(n)-th of its n
// repeats ordered by by.
func pickRun(reps []*experiment.Results, by func(*experiment.JobAccounting) float64, pickAt func(n int) int) (*experiment.Results, error) {
	if len(reps) == 0 {
		return nil, errors.New("model: no runs")
	}
	out := *reps[0]
	differ := fmt.Errorf("model: the repeats of %s ran different jobs", out.Command)
	for _, r := range reps[1:] {
		if !slices.EqualFunc(r.Profiles, out.Profiles, func(a, b experiment.ProfileResult) bool { return a.Name == b.Name }) ||
			!slices.EqualFunc(r.DFSIO, out.DFSIO, func(a, b experiment.DFSIOResult) bool {
				return a.Profile == b.Profile && a.Op == b.Op && a.Replication == b.Replication && a.Files == b.Files
			}) || (r.Paper2 == nil) != (out.Paper2 == nil) ||
			(r.Paper2 != nil && !slices.EqualFunc(r.Paper2.Jobs, out.Paper2.Jobs, func(a, b experiment.Paper2Job) bool {
				return a.Profile == b.Profile && a.Job == b.Job && a.Replication == b.Replication
			})) {
			return nil, differ
		}
	}
	// pick is the repeat of a job that pickAt picks; nil when no repeat
	// accounted it.
	pick := func(at func(r *experiment.Results) *experiment.JobAccounting) (*experiment.JobAccounting, error) {
		var all []*experiment.JobAccounting
		for _, r := range reps {
			if ja := at(r); ja != nil {
				if len(all) > 0 && ja.Step != all[0].Step {
					return nil, fmt.Errorf("model: the repeats of %s ran %s and %s in the same place", out.Command, all[0].Step, ja.Step)
				}
				all = append(all, ja)
			}
		}
		if len(all) == 0 {
			return nil, nil
		}
		if len(all) < len(reps) {
			return nil, fmt.Errorf("model: some repeats of %s did not account %s", out.Command, all[0].Step)
		}
		slices.SortStableFunc(all, func(a, b *experiment.JobAccounting) int { return cmp.Compare(by(a), by(b)) })
		return all[pickAt(len(all))], nil
	}
	out.Profiles = slices.Clone(out.Profiles)
	for p := range out.Profiles {
		pr := &out.Profiles[p]
		if len(pr.Runs) == 0 {
			continue
		}
		pr.Runs = slices.Clone(pr.Runs)
		pr.Runs[0].Jobs = slices.Clone(pr.Runs[0].Jobs)
		for i := range pr.Runs[0].Jobs {
			ja, err := pick(func(r *experiment.Results) *experiment.JobAccounting {
				if len(r.Profiles[p].Runs) == 0 || len(r.Profiles[p].Runs[0].Jobs) != len(pr.Runs[0].Jobs) {
					return nil
				}
				return &r.Profiles[p].Runs[0].Jobs[i]
			})
			if err != nil {
				return nil, err
			}
			if ja == nil {
				return nil, differ
			}
			pr.Runs[0].Jobs[i] = *ja
		}
	}
	if out.Paper2 != nil {
		p2 := *out.Paper2
		p2.Jobs = slices.Clone(p2.Jobs)
		for i := range p2.Jobs {
			ja, err := pick(func(r *experiment.Results) *experiment.JobAccounting { return r.Paper2.Jobs[i].Accounting })
			if err != nil {
				return nil, err
			}
			p2.Jobs[i].Accounting = ja
		}
		out.Paper2 = &p2
	}
	out.DFSIO = slices.Clone(out.DFSIO)
	for i := range out.DFSIO {
		ja, err := pick(func(r *experiment.Results) *experiment.JobAccounting { return r.DFSIO[i].Accounting })
		if err != nil {
			return nil, err
		}
		out.DFSIO[i].Accounting = ja
	}
	return &out, nil
}

// median of v (of an even number, the lower middle one, as MedianRun);
// v is sorted in place. 0 if v is empty.
func median(v []float64) float64 { return quantileDown(v, 1, 2) }

// lowerQuartile of v (the element a quarter of the way up, rounding
// down); v is sorted in place. 0 if v is empty.
func lowerQuartile(v []float64) float64 { return quantileDown(v, 1, 4) }

// quantileDown is the element num/den of the way up v, rounding down;
// v is sorted in place. 0 if v is empty.
func quantileDown(v []float64, num, den int) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[(len(v)-1)*num/den]
}
