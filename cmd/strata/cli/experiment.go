package cli

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stratafs/strata/internal/dfsio"
	"github.com/stratafs/strata/internal/examples"
	"github.com/stratafs/strata/internal/experiment"
)

func init() {
	register(command{name: "experiment", summary: "TeraSort (and TestDFSIO) per storage profile on embedded clusters; the papers' tables and charts", run: runExperiment})
}

const experimentUsage = `Usage: strata experiment [dfsio | dfsio-paper | amdahl] [flags]

Builds an embedded cluster per storage profile, runs TeraGen + TeraSort
(+ TeraValidate) on each, and prints runtimes, speed-ups, jobs per day,
cost and energy per job; writes results.json, CSV files, SVG charts and a
report of them all (index.html, readable offline) to the output directory.
"strata experiment dfsio" runs only the TestDFSIO sweep; "strata experiment
dfsio-paper -h" the second paper's tables, "strata experiment amdahl -h" the
third paper's; "strata experiment -report DIR" writes DIR/index.html again
from DIR/results.json. Built-in profiles: %s.

Flags:
`

// runExperiment is `strata experiment`.
func runExperiment(ctx context.Context, env *Env, args []string) int {
	if len(args) > 0 && args[0] == "amdahl" {
		return runExperimentAmdahl(ctx, env, args[1:])
	}
	if len(args) > 0 && args[0] == "dfsio-paper" {
		return runExperimentDFSIOPaper(ctx, env, args[1:])
	}
	dfsioOnly := len(args) > 0 && args[0] == "dfsio"
	if dfsioOnly {
		args = args[1:]
	}
	fl := flag.NewFlagSet("experiment", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	fl.Usage = func() {
		fmt.Fprintf(env.Stderr, experimentUsage, strings.Join(experiment.BuiltinProfiles(), ", "))
		fl.PrintDefaults()
	}
	profiles := fl.String("profiles", strings.Join(experiment.DefaultProfiles, ","), "storage profiles to compare, the baseline first: built-in names or .profile files")
	rows := fl.String("rows", strconv.Itoa(experiment.DefaultRows/1_000_000)+"m", "TeraGen rows of 100 bytes (k, m, b suffixes)")
	reps := fl.Int("reps", 1, "repetitions per profile (runtimes are their means)")
	validate := fl.Bool("validate", true, "run TeraValidate after each TeraSort")
	out := fl.String("out", "experiment-results", "output directory for results, charts and job logs")
	datanodes := fl.Int("datanodes", experiment.DefaultDataNodes, "DataNodes (each with a TaskTracker) per cluster")
	mapSlots := fl.Int("map-slots", 0, "map slots per TaskTracker (default: the paper's 1 per hardware thread, scaled to this machine)")
	reduceSlots := fl.Int("reduce-slots", 0, "reduce slots per TaskTracker (default: the paper's 1 per 2 threads, scaled)")
	sortMB := fl.Int("sort-mb", 0, "mapreduce.task.io.sort.mb for the jobs (default: scaled so each map has the paper's data-to-sort-memory ratio)")
	useMedia := fl.Bool("media", true, "emulate the profiles' devices (false: plain directories)")
	keep := fl.Bool("keep", false, "keep the clusters' storage under OUT/work")
	years := fl.Float64("years", experiment.DefaultYears, "lifetime for jobs and cost per job")
	kwh := fl.Float64("kwh-price", experiment.DefaultKWhPrice, "electricity price in $ per kWh")
	prices := fl.String("price", "", "cluster prices in $, one per profile (default: each profile's price)")
	watts := fl.String("watts", "", "cluster power in W, one per profile (default: each profile's watts)")
	doDFSIO := fl.Bool("dfsio", false, "also run the TestDFSIO sweep")
	dfsioFiles := fl.String("dfsio-files", joinInts(experiment.DefaultDFSIOFiles), "TestDFSIO file counts")
	dfsioReps := fl.String("dfsio-replication", joinInts(experiment.DefaultDFSIOReplications), "TestDFSIO replication factors")
	dfsioTotal := fl.String("dfsio-total", "480MB", "bytes each TestDFSIO run writes or reads, split over its files")
	list := fl.Bool("list", false, "list the built-in profiles and exit")
	hosts := fl.Bool("hosts", false, "run every daemon as a process on a host of its own (a network namespace), links shaped to each profile's link.mbps and nodes capped at its node.cpus; needs root, else loopback in one process")
	report := fl.String("report", "", "only write DIR/index.html again from DIR/results.json (no run)")
	open := fl.Bool("open", false, "open the report (index.html) in a browser at the end (xdg-open)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	fail := experimentFail(env, "experiment")
	if fl.NArg() > 0 {
		return fail(2, "unexpected argument %q", fl.Arg(0))
	}
	if *report != "" {
		path, err := experiment.RegenerateReport(*report)
		if err != nil {
			return fail(1, "-report: %v", err)
		}
		showReport(env, path, *open)
		return 0
	}
	if *list {
		for _, n := range experiment.BuiltinProfiles() {
			p, err := experiment.LoadProfile(n)
			if err != nil {
				return fail(1, "%v", err)
			}
			fmt.Fprintf(env.Stdout, "%-18s %s\n", p.Name, p.Description)
		}
		return 0
	}
	if !(*years > 0) {
		// Options treat 0 as "the default"; on the command line it is a mistake.
		return fail(2, "-years: lifetime must be a positive number of years, got %v", *years)
	}
	o := experiment.Options{Repetitions: *reps, Validate: *validate, DataNodes: *datanodes, MapSlots: *mapSlots,
		ReduceSlots: *reduceSlots, SortMB: *sortMB, Media: *useMedia, Keep: *keep, Conf: env.Conf, Years: *years, KWhPrice: *kwh,
		WorkDir: filepath.Join(*out, "work"), LogDir: filepath.Join(*out, "logs"), Progress: experiment.NewProgress(env.Stderr)}
	var err error
	if o.Profiles, err = experiment.LoadProfiles(*profiles); err != nil {
		return fail(2, "%v", err)
	}
	if !dfsioOnly {
		if o.Rows, err = examples.ParseRows(*rows); err != nil || o.Rows == 0 {
			return fail(2, "-rows: bad number of rows %q", *rows)
		}
	}
	o.Hosts = *hosts
	if o.Hosts {
		if err := experiment.HostsAvailable(); err != nil {
			fmt.Fprintf(env.Stderr, "experiment: -hosts: %v; running every profile on loopback in one process instead\n", err)
			o.Hosts = false
		}
	}
	if !o.Hosts {
		for _, p := range o.Profiles {
			if p.NodeCPUs > 0 || p.LinkMbps > 0 {
				fmt.Fprintf(env.Stderr, "experiment: profile %s: node.cpus and link.mbps apply only with -hosts; ignored\n", p.Name)
			}
		}
	}
	if err := setEach(o.Profiles, *prices, "-price", "profiles", func(p *experiment.Profile, v float64) { p.Price = v }); err != nil {
		return fail(2, "%v", err)
	}
	if err := setEach(o.Profiles, *watts, "-watts", "profiles", func(p *experiment.Profile, v float64) { p.Watts = v }); err != nil {
		return fail(2, "%v", err)
	}
	if *doDFSIO || dfsioOnly {
		if o.DFSIOFiles, err = parseInts(*dfsioFiles); err != nil {
			return fail(2, "-dfsio-files: %v", err)
		}
		if o.DFSIOReplications, err = parseInts(*dfsioReps); err != nil {
			return fail(2, "-dfsio-replication: %v", err)
		}
		if o.DFSIOTotal, err = dfsio.ParseSize(*dfsioTotal); err != nil {
			return fail(2, "-dfsio-total: %v", err)
		}
	}
	res, err := experiment.Run(ctx, o)
	if err != nil {
		return fail(1, "%s (job logs in %s)", strings.TrimPrefix(err.Error(), "experiment: "), o.LogDir)
	}
	res.Command = "strata experiment " + strings.Join(args, " ")
	if dfsioOnly {
		res.Command = "strata experiment dfsio " + strings.Join(args, " ")
	}
	fmt.Fprintln(env.Stdout)
	res.PrintTables(env.Stdout)
	files, err := res.WriteFiles(*out)
	if err != nil {
		return fail(1, "%v", err)
	}
	printResultFiles(env, *out, files, o.LogDir)
	if !*keep {
		os.Remove(o.WorkDir)
	}
	showReport(env, filepath.Join(*out, experiment.ReportFile), *open)
	return 0
}

// experimentFail returns a function that prints an error prefixed with
// the command's name and returns code, the exit status.
func experimentFail(env *Env, name string) func(code int, format string, a ...any) int {
	return func(code int, format string, a ...any) int {
		fmt.Fprintf(env.Stderr, name+": "+format+"\n", a...)
		return code
	}
}

// printResultFiles lists the files an experiment wrote into out and
// where its job logs are.
func printResultFiles(env *Env, out string, files []string, logDir string) {
	fmt.Fprintf(env.Stdout, "\nResults in %s:", out)
	for _, f := range files {
		fmt.Fprintf(env.Stdout, " %s", filepath.Base(f))
	}
	fmt.Fprintf(env.Stdout, " (job logs in %s)\n", logDir)
}

// showReport prints the report's path and, with open, hands it to
// xdg-open without waiting for the browser.
func showReport(env *Env, path string, open bool) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	fmt.Fprintf(env.Stdout, "Report: %s\n", path)
	if !open {
		return
	}
	bin, err := exec.LookPath("xdg-open")
	if err != nil {
		fmt.Fprintf(env.Stderr, "experiment: -open: no xdg-open here; open %s in a browser\n", path)
		return
	}
	cmd := exec.Command(bin, path)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(env.Stderr, "experiment: -open: %v; open %s in a browser\n", err, path)
		return
	}
	go cmd.Wait()
}

// setEach sets one value per item from a comma-separated list of
// numbers; an empty list changes nothing.
func setEach[T any](items []T, list, flagName, what string, set func(T, float64)) error {
	if list == "" {
		return nil
	}
	vs, err := parseFloats(list)
	if err != nil {
		return fmt.Errorf("%s: %v", flagName, err)
	}
	if len(vs) != len(items) {
		return fmt.Errorf("%s: %d values for %d %s", flagName, len(vs), len(items), what)
	}
	for i, it := range items {
		set(it, vs[i])
	}
	return nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a non-negative number", f)
		}
		out = append(out, v)
	}
	return out, nil
}
