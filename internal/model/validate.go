package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stratafs/strata/internal/experiment"
)

// Case is one emulated cluster run of the validation: a profile and the
// experiment's flags. The first case is the calibration.
type Case struct {
	Name, Description string
	// Profile is the profile file's text (docs/format/profile.md).
	Profile string
	// Runs are `strata experiment` subcommands with their flags, each a
	// run on the case's cluster (the profile and the output directory
	// come from the validation).
	Runs [][]string
	// NeedsHosts: the case differs in link rate or CPU share, which only
	// hosts (network namespaces, cgroups) give.
	NeedsHosts bool
}

// ProfileName is the name its profile gives.
func (c Case) ProfileName() string {
	for _, l := range strings.Split(c.Profile, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && strings.TrimSpace(k) == "name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// WriteProfile writes the case's profile into dir and returns its path.
func (c Case) WriteProfile(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, c.Name+".profile")
	return path, os.WriteFile(path, []byte(c.Profile), 0o644)
}

const (
	hddProfile = "device.hdd = hdd-7200\nhdfs.volumes = [DISK]hdd\nmapred.local.dir = hdd\n"
	ssdProfile = "device.ssd = sata-ssd\nhdfs.volumes = [DISK]ssd\nmapred.local.dir = ssd\n"
)

// ValidationCases are the calibration (TeraGen, TeraSort, TeraValidate
// of 100 MB, wordcount and a shuffle-only job over 48 MB of text, a
// TestDFSIO write and read of 96 MB in 3 files, on three all-HDD nodes)
// and runs that each change one thing:
// the data (10x), the nodes (6), the devices (an SSD for intermediate
// data, all SSD, two HDDs per node), the link (100 Mbit/s) and the CPU
// (a quarter CPU per node).
func ValidationCases() []Case {
	// strata experiment dfsio-paper's jobs at replication 3: TeraGen,
	// TeraSort, TeraValidate of rows, wordcount and the shuffle-only job
	// over half as many bytes of text, TestDFSIO writing and reading as
	// many bytes in 3 files; then the Zones applications (experiment
	// amdahl's Table 3 part) on a catalogue of 200,000 objects. The model
	// scales every job with the data, so the 10x case runs no Zones: its
	// neighbour pairs do not grow in proportion to the catalogue.
	jobs := func(rows, nodes string, mb int) []string {
		return []string{"dfsio-paper", "-rows", rows, "-datanodes", nodes, "-replication", "3",
			"-files", "3", "-dfsio-total", fmt.Sprintf("%dMB", 2*mb),
			"-wordcount-size", fmt.Sprintf("%dMB", mb), "-shuffle-size", fmt.Sprintf("%dMB", mb), "-gateway-size", "0"}
	}
	zones := func(nodes string) []string {
		return []string{"amdahl", "-parts", "table3", "-objects", "200k", "-theta", "15,30", "-stats-max", "30", "-datanodes", nodes}
	}
	base := [][]string{jobs("1m", "3", 48), zones("3")}
	return []Case{
		{Name: "calibration", Description: "all HDD, 3 nodes, 100 MB", Profile: "name = hdd\n" + hddProfile, Runs: base},
		{Name: "data-10x", Description: "all HDD, 3 nodes, 1 GB", Profile: "name = hdd\n" + hddProfile, Runs: [][]string{jobs("10m", "3", 480)}},
		{Name: "nodes-6", Description: "all HDD, 6 nodes, 100 MB", Profile: "name = hdd\n" + hddProfile, Runs: [][]string{jobs("1m", "6", 48), zones("6")}},
		{Name: "ssd-inter", Description: "HDFS on HDD, intermediate data on a SATA SSD", Runs: base,
			Profile: "name = hdd-ssd\ndevice.hdd = hdd-7200\ndevice.ssd = sata-ssd\nhdfs.volumes = [DISK]hdd\nmapred.local.dir = ssd\n"},
		{Name: "all-ssd", Description: "HDFS and intermediate data on a SATA SSD", Profile: "name = ssd\n" + ssdProfile, Runs: base},
		{Name: "jbod", Description: "two HDDs per node, each an HDFS volume and a local dir", Runs: base,
			Profile: "name = jbod\ndevice.hdd1 = hdd-7200\ndevice.hdd2 = hdd-7200\nhdfs.volumes = [DISK]hdd1,[DISK]hdd2\nmapred.local.dir = hdd1,hdd2\n"},
		{Name: "link-100", Description: "all HDD, links shaped to 100 Mbit/s", Profile: "name = hdd-100m\n" + hddProfile + "link.mbps = 100\n", Runs: base, NeedsHosts: true},
		{Name: "cpu-quarter", Description: "all SSD, a quarter CPU per node", Profile: "name = ssd-cpu\n" + ssdProfile + "node.cpus = 0.25\n", Runs: base, NeedsHosts: true},
	}
}

// Validation is the comparison of every case's prediction with its run.
type Validation struct {
	Workload *Workload
	Cases    []CaseResult
}

// CaseResult is one case: each job predicted and measured.
type CaseResult struct {
	Name, Description string
	Cluster           *Cluster
	Jobs              []JobCompare
	// Error is why the case's run failed (its jobs are then missing).
	Error string `json:",omitempty"`
}

// JobCompare is one job of a case.
type JobCompare struct {
	Job                 string
	Predicted, Measured Phases
	Bounds              map[string]string
	// Repeats are the measured totals of every repeat, when the case ran
	// more than once (Measured is the phases of the one Validate picked).
	Repeats []float64 `json:",omitempty"`
}

// Validate runs cases[0], calibrates on it, then runs every case
// (the calibration's own prediction included, as a check of the fit) and
// predicts it from the calibration and the case's cluster as measured.
// run gives, for each of a case's Runs, its repeats' results; a case's
// jobs are measured on the repeat of each job whose time is the median
// (MedianRun), the calibration's too, though its demands come from its
// repeats of least CPU (CalibrateRepeats).
func Validate(cases []Case, run func(Case) ([][]*experiment.Results, error)) (*Validation, error) {
	if len(cases) == 0 {
		return nil, errors.New("model: no cases")
	}
	v := &Validation{}
	for i, c := range cases {
		reps, err := run(c)
		var runs []*experiment.Results
		for _, rr := range reps {
			if err != nil {
				break
			}
			var m *experiment.Results
			if m, err = MedianRun(rr, ByTime); err == nil {
				runs = append(runs, m)
			}
		}
		if err == nil && (len(runs) == 0 || len(runs[0].Profiles) == 0) {
			err = fmt.Errorf("model: case %s: no profile in the results", c.Name)
		}
		if err != nil && i > 0 {
			// A failed run is a result too: the table shows it.
			v.Cases = append(v.Cases, CaseResult{Name: c.Name, Description: c.Description, Error: err.Error()})
			continue
		}
		if err != nil {
			return nil, err
		}
		pr := &runs[0].Profiles[0]
		if i == 0 {
			if v.Workload, err = CalibrateRepeats(reps, pr.Name); err != nil {
				return nil, err
			}
		}
		cl, err := ClusterOf(runs[0], pr)
		if err != nil {
			return nil, err
		}
		p, err := Predict(v.Workload, cl, experiment.DefaultYears, experiment.DefaultKWhPrice)
		if err != nil {
			return nil, err
		}
		totals := repeatTotals(reps)
		cr := CaseResult{Name: c.Name, Description: c.Description, Cluster: cl}
		for _, r := range runs {
			if len(r.Profiles) == 0 {
				continue
			}
			for _, ja := range ProfileJobs(r, &r.Profiles[0]) {
				for _, jp := range p.Jobs {
					if jp.Name == ja.Step {
						cr.Jobs = append(cr.Jobs, JobCompare{Job: ja.Step, Predicted: jp.Phases, Measured: Measured(&ja),
							Bounds: jp.Bounds, Repeats: totals[ja.Step]})
					}
				}
			}
		}
		v.Cases = append(v.Cases, cr)
	}
	return v, nil
}

// repeatTotals are each job's measured totals in every repeat, when
// there are several.
func repeatTotals(reps [][]*experiment.Results) map[string][]float64 {
	out := map[string][]float64{}
	for _, rr := range reps {
		if len(rr) < 2 {
			continue
		}
		for _, r := range rr {
			if len(r.Profiles) == 0 {
				continue
			}
			for _, ja := range ProfileJobs(r, &r.Profiles[0]) {
				out[ja.Step] = append(out[ja.Step], Measured(&ja).Total())
			}
		}
	}
	return out
}

// relErr is |predicted − measured| / measured.
func relErr(p, m float64) float64 {
	if m <= 0 {
		return math.NaN()
	}
	return math.Abs(p-m) / m
}

// Summary counts the held-out jobs (all cases but the calibration)
// whose total came within 20% of the measurement and gives the median
// error of their phases that took at least a tenth of the job's
// measured time (smaller ones are dominated by timing noise).
func (v *Validation) Summary() (within, jobs int, medianPhase float64, phases int) {
	var errs []float64
	for _, c := range v.Cases[1:] {
		for _, j := range c.Jobs {
			jobs++
			if relErr(j.Predicted.Total(), j.Measured.Total()) <= 0.2 {
				within++
			}
			for _, ph := range []string{PhaseMap, PhaseShuffle, PhaseReduce} {
				if m := j.Measured.Get(ph); m >= 0.1*j.Measured.Total() {
					errs = append(errs, relErr(j.Predicted.Get(ph), m))
				}
			}
		}
	}
	sort.Float64s(errs)
	if n := len(errs); n > 0 {
		medianPhase = errs[n/2]
		if n%2 == 0 {
			medianPhase = (errs[n/2-1] + errs[n/2]) / 2
		}
	}
	return within, jobs, medianPhase, len(errs)
}

// Print prints one row per case and job: each phase predicted / measured,
// the totals and their error, and the summary.
func (v *Validation) Print(w io.Writer) {
	tw := newTable(w)
	repeated := false
	for _, c := range v.Cases {
		for _, j := range c.Jobs {
			repeated = repeated || len(j.Repeats) > 1
		}
	}
	head := "case\tjob\tmap (s)\tshuffle (s)\treduce (s)\toverhead (s)\ttotal predicted\ttotal measured\terror\tmap bound\t"
	if repeated {
		head += "repeats (s)\t"
	}
	fmt.Fprintln(tw, head)
	pm := func(p, m float64) string { return fmt.Sprintf("%.2f / %.2f", p, m) }
	spread := 0 // held-out jobs whose repeats differ by more than 20%
	for ci, c := range v.Cases {
		for _, j := range c.Jobs {
			pct := math.Round(100 * (j.Predicted.Total() - j.Measured.Total()) / j.Measured.Total())
			if pct == 0 {
				pct = 0 // not -0: an exact fit is +0%
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%+.0f%%\t%s\t", c.Name, j.Job,
				pm(j.Predicted.Map, j.Measured.Map), pm(j.Predicted.Shuffle, j.Measured.Shuffle),
				pm(j.Predicted.Reduce, j.Measured.Reduce), pm(j.Predicted.Overhead, j.Measured.Overhead),
				j.Predicted.Total(), j.Measured.Total(), pct, j.Bounds[PhaseMap])
			if repeated && len(j.Repeats) > 0 {
				lo, hi := slices.Min(j.Repeats), slices.Max(j.Repeats)
				fmt.Fprintf(tw, "%.2f–%.2f\t", lo, hi)
				if ci > 0 && hi > 1.2*lo {
					spread++
				}
			}
			fmt.Fprintln(tw)
		}
	}
	tw.Flush()
	for _, c := range v.Cases {
		if c.Error != "" {
			fmt.Fprintf(w, "%s: the run failed: %s\n", c.Name, c.Error)
		}
	}
	within, jobs, med, n := v.Summary()
	fmt.Fprintf(w, "Held-out jobs within 20%% of the measured total: %d of %d; median error of their %d phases of at least 10%% of a job: %.0f%% (phases: predicted / measured)\n",
		within, jobs, n, 100*med)
	var per []string
	for _, c := range v.Cases[1:] {
		if len(c.Jobs) == 0 {
			continue // not run (-cases, or absent from -from's directory)
		}
		ok := 0
		for _, j := range c.Jobs {
			if relErr(j.Predicted.Total(), j.Measured.Total()) <= 0.2 {
				ok++
			}
		}
		per = append(per, fmt.Sprintf("%s %d of %d", c.Name, ok, len(c.Jobs)))
	}
	if len(per) > 0 {
		fmt.Fprintf(w, "By case: %s\n", strings.Join(per, ", "))
	}
	if repeated {
		fmt.Fprintf(w, "Measured: each job's median repeat; %d of the %d held-out jobs' repeats differ by more than 20%% from one another\n", spread, jobs)
	}
}

// WriteJSON writes v as indented JSON.
func (v *Validation) WriteJSON(out io.Writer) error {
	e := json.NewEncoder(out)
	e.SetIndent("", "  ")
	return e.Encode(v)
}
