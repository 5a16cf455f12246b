package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/experiment"
	"github.com/stratafs/strata/internal/model"
)

func init() {
	register(command{name: "model", summary: "calibrate a workload, predict its job times, cost and energy on a described cluster, advise where flash pays", run: runModel})
}

const modelUsage = `Usage: strata model calibrate [-results DIR | experiment flags] [-profile NAME] [-o workload.json]
       strata model predict -workload FILE -cluster FILE|NAME[,...] [-data SIZE] [-replication N]
       strata model advise -workload FILE -clusters FILE|NAME,... [-data SIZE] [-budget DOLLARS [-fill]]
       strata model validate [-out DIR] [-cases NAME,...] [-repeat N] [-from DIR]
       strata model papers -workload FILE
       strata model clusters
calibrate derives a workload's demands per byte from an experiment run
(run now with the given experiment flags, or read from DIR/results.json);
predict and advise describe clusters in files (docs/format/model-cluster.md)
or by built-in name (strata model clusters); validate calibrates on one
emulated cluster and compares predictions with runs that differ from it.
docs/MODEL.md has the equations.
`

func runModel(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, modelUsage)
		return 2
	}
	switch args[0] {
	case "calibrate":
		return runModelCalibrate(ctx, env, args[1:])
	case "predict", "advise":
		return runModelPredict(env, args[0], args[1:])
	case "validate":
		return runModelValidate(ctx, env, args[1:])
	case "papers":
		fl := flag.NewFlagSet("model papers", flag.ContinueOnError)
		fl.SetOutput(env.Stderr)
		wpath := fl.String("workload", "workload.json", "a workload from strata model calibrate")
		years := fl.Float64("years", experiment.DefaultYears, "lifetime for runs and cost per run")
		kwh := fl.Float64("kwh-price", experiment.DefaultKWhPrice, "electricity price in $ per kWh")
		if err := fl.Parse(args[1:]); err != nil {
			return 2
		}
		w, err := readWorkload(*wpath)
		if err == nil {
			err = model.PrintPapers(env.Stdout, w, *years, *kwh)
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "model papers: %v\n", err)
			return 1
		}
		return 0
	case "clusters":
		for _, n := range model.BuiltinClusters() {
			c, _ := model.LoadCluster(n)
			fmt.Fprintf(env.Stdout, "%-28s %s\n", n, c.Description)
		}
		return 0
	}
	fmt.Fprintf(env.Stderr, "model: unknown subcommand %q\n", args[0])
	fmt.Fprint(env.Stderr, modelUsage)
	return 2
}

// runModelCalibrate is `strata model calibrate`: -results reads an
// experiment's results; otherwise the remaining flags run one
// (`strata experiment` flags) into -out first.
func runModelCalibrate(ctx context.Context, env *Env, args []string) int {
	fl := flag.NewFlagSet("model calibrate", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	results := fl.String("results", "", "experiments' output directories, results.json or paper3.json files of one cluster shape, comma-separated (no run)")
	profile := fl.String("profile", "", "the profile to calibrate on (default: the run's first)")
	out := fl.String("o", "workload.json", "where to write the workload")
	fl.Usage = func() {
		fmt.Fprint(env.Stderr, modelUsage)
		fl.PrintDefaults()
		fmt.Fprintln(env.Stderr, "Any other flags after -- are strata experiment's, e.g. -- -rows 1m -profiles all-hdd -hosts")
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	path := *results
	if path == "" {
		expArgs := fl.Args()
		dir := "model-calibration"
		for i, a := range expArgs {
			if (a == "-out" || a == "--out") && i+1 < len(expArgs) {
				dir = expArgs[i+1]
			}
		}
		if !hasFlag(expArgs, "out") {
			expArgs = append(expArgs, "-out", dir)
		}
		if rc := runExperiment(ctx, env, expArgs); rc != 0 {
			return rc
		}
		path = dir
	} else if fl.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "model calibrate: -results replaces the experiment flags (%s)\n", strings.Join(fl.Args(), " "))
		return 2
	}
	var runs []*experiment.Results
	for _, p := range strings.Split(path, ",") {
		r, err := model.ReadRun(strings.TrimSpace(p))
		if err != nil {
			fmt.Fprintf(env.Stderr, "model calibrate: %v\n", err)
			return 1
		}
		runs = append(runs, r)
	}
	w, err := model.CalibrateRuns(runs, *profile)
	if err != nil {
		fmt.Fprintf(env.Stderr, "model calibrate: %v\n", err)
		return 1
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintf(env.Stderr, "model calibrate: %v\n", err)
		return 1
	}
	if err := w.WriteJSON(f); err != nil {
		f.Close()
		fmt.Fprintf(env.Stderr, "model calibrate: %v\n", err)
		return 1
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(env.Stderr, "model calibrate: %v\n", err)
		return 1
	}
	model.PrintWorkload(env.Stdout, w)
	fmt.Fprintf(env.Stdout, "Workload in %s\n", *out)
	return 0
}

func readWorkload(path string) (*model.Workload, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return model.ReadWorkload(f)
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		a = strings.TrimLeft(a, "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

func runModelPredict(env *Env, sub string, args []string) int {
	fl := flag.NewFlagSet("model "+sub, flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	fl.Usage = func() { fmt.Fprint(env.Stderr, modelUsage); fl.PrintDefaults() }
	wpath := fl.String("workload", "workload.json", "a workload from strata model calibrate")
	clusters := fl.String("cluster", "", "cluster files or built-in names, comma-separated (\"calibration\": the workload's own)")
	fl.StringVar(clusters, "clusters", "", "the same as -cluster")
	data := fl.String("data", "", "the dataset (TeraGen's output), e.g. 1t (default: each cluster's data, else the calibration's)")
	repl := fl.Int("replication", 0, "dfs.replication (default: each cluster's)")
	years := fl.Float64("years", experiment.DefaultYears, "lifetime for runs and cost per run")
	kwh := fl.Float64("kwh-price", experiment.DefaultKWhPrice, "electricity price in $ per kWh")
	var budget model.Budget
	if sub == "advise" {
		fl.Float64Var(&budget.Dollars, "budget", 0, "advise: recommend only clusters of at most this price in $ (0: no limit)")
		fl.BoolVar(&budget.Fill, "fill", false, "advise, with -budget: also each candidate with as many of its nodes as the budget buys at its price per node")
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if budget.Dollars < 0 || math.IsNaN(budget.Dollars) || math.IsInf(budget.Dollars, 0) || (budget.Fill && budget.Dollars <= 0) {
		fmt.Fprintf(env.Stderr, "model advise: -budget wants a positive number of dollars (and -fill needs it)\n")
		return 2
	}
	fail := func(err error) int { fmt.Fprintf(env.Stderr, "model %s: %v\n", sub, err); return 1 }
	if *clusters == "" || fl.NArg() > 0 {
		fl.Usage()
		return 2
	}
	w, err := readWorkload(*wpath)
	if err != nil {
		return fail(err)
	}
	var cls []*model.Cluster
	for _, name := range strings.Split(*clusters, ",") {
		c, err := model.LoadCluster(strings.TrimSpace(name))
		if strings.TrimSpace(name) == "calibration" {
			cc := *w.Calibration
			c, err = &cc, nil
		}
		if err != nil {
			return fail(err)
		}
		if *data != "" {
			b, err := conf.ParseBytes(*data)
			if err != nil || b <= 0 {
				return fail(fmt.Errorf("-data %q: want a size such as 1t", *data))
			}
			c.DataBytes = b
		}
		if *repl > 0 {
			c.Replication = *repl
		}
		if err := c.Validate(); err != nil {
			return fail(fmt.Errorf("%s: %w", name, err))
		}
		cls = append(cls, c)
	}
	a, err := model.Advise(w, cls, *years, *kwh, budget)
	if err != nil {
		return fail(err)
	}
	for _, p := range a.Predictions {
		model.PrintPrediction(env.Stdout, p)
		fmt.Fprintln(env.Stdout)
	}
	if sub == "advise" {
		a.Print(env.Stdout)
	}
	return 0
}

// runModelValidate is `strata model validate`: the calibration run and
// the held-out runs of model.ValidationCases through `strata
// experiment`, each compared with its prediction.
func runModelValidate(ctx context.Context, env *Env, args []string) int {
	fl := flag.NewFlagSet("model validate", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	fl.Usage = func() { fmt.Fprint(env.Stderr, modelUsage); fl.PrintDefaults() }
	out := fl.String("out", "model-validation", "directory for the runs, their logs and validation.json (with -from: that directory)")
	cases := fl.String("cases", "", "the cases to run besides the calibration, comma-separated (default: all; -list)")
	list := fl.Bool("list", false, "list the cases and exit")
	calib := fl.String("calibration", "calibration", "the case to calibrate on (the others are predicted from it)")
	hosts := fl.Bool("hosts", true, "run on network-namespace hosts when possible (shaped links, CPU shares)")
	from := fl.String("from", "", "no runs: read each case's results from a directory an earlier validate wrote")
	repeat := fl.Int("repeat", 1, "run every case this many times (odd: of an even number the shorter middle one counts); every job is measured on its median-time repeat, the calibration's demands taken from its least-CPU one (-from reads the repeats there are)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *from != "" && !flagSet(fl, "out") {
		*out = *from // its validation.json re-predicted, beside its runs
	}
	if *repeat < 1 || *repeat > 20 {
		fmt.Fprintln(env.Stderr, "model validate: -repeat must be 1 to 20")
		return 2
	}
	all := model.ValidationCases()
	for i, c := range all {
		if c.Name == *calib {
			all = append(append([]model.Case{c}, all[:i]...), all[i+1:]...)
			break
		}
	}
	if all[0].Name != *calib {
		fmt.Fprintf(env.Stderr, "model validate: no case %q\n", *calib)
		return 2
	}
	if *list {
		for _, c := range all {
			fmt.Fprintf(env.Stdout, "%-16s %s\n", c.Name, c.Description)
		}
		return 0
	}
	useHosts := *hosts && *from == ""
	if useHosts {
		if err := experiment.HostsAvailable(); err != nil {
			fmt.Fprintf(env.Stdout, "model validate: no hosts (%v): every run on loopback in one process; the link and CPU-share cases are skipped\n", err)
			useHosts = false
		}
	}
	var run []model.Case
	want := map[string]bool{}
	for _, n := range strings.Split(*cases, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	for i, c := range all {
		if i > 0 && len(want) > 0 && !want[c.Name] {
			continue
		}
		if c.NeedsHosts && !useHosts {
			if _, err := os.Stat(filepath.Join(*from, c.Name)); *from == "" || err != nil {
				continue
			}
		}
		run = append(run, c)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(env.Stderr, "model validate: %v\n", err)
		return 1
	}
	// repDir is where a run's repeat goes: the first in <case>/<run>,
	// the others in <case>/<run>.<n>.
	repDir := func(base string, c model.Case, r []string, rep int) string {
		if rep == 0 {
			return filepath.Join(base, c.Name, r[0])
		}
		return filepath.Join(base, c.Name, fmt.Sprintf("%s.%d", r[0], rep+1))
	}
	failed := map[string]error{}
	if *from == "" {
		// A case's earlier runs go: a later -from must not mix in the
		// repeats of another validation.
		for _, c := range run {
			for _, r := range c.Runs {
				old, _ := filepath.Glob(filepath.Join(*out, c.Name, r[0]+".*"))
				for _, d := range append(old, filepath.Join(*out, c.Name, r[0])) {
					if err := os.RemoveAll(d); err != nil {
						fmt.Fprintf(env.Stderr, "model validate: %v\n", err)
						return 1
					}
				}
			}
		}
		// Every case's first repeat, then every case's second, ...: a
		// drift of the machine over the run (its page cache's cost
		// varies) does not fall on one case's repeats alone.
	repeats:
		for rep := 0; rep < *repeat; rep++ {
			for _, c := range run {
				if failed[c.Name] != nil {
					continue
				}
				failed[c.Name] = runValidateCase(ctx, env, c, *out, rep, useHosts, func(r []string) string { return repDir(*out, c, r, rep) })
				if failed[run[0].Name] != nil {
					break repeats // nothing to predict from
				}
			}
		}
	}
	runCase := func(c model.Case) ([][]*experiment.Results, error) {
		if err := failed[c.Name]; err != nil {
			return nil, err
		}
		base := *out
		if *from != "" {
			base = *from
		}
		var runs [][]*experiment.Results
		for _, r := range c.Runs {
			var reps []*experiment.Results
			for rep := 0; ; rep++ {
				rdir := repDir(base, c, r, rep)
				if _, err := os.Stat(rdir); (*from == "" && rep >= *repeat) || (*from != "" && err != nil) {
					break // -from reads the runs and repeats there are
				}
				res, err := model.ReadRun(rdir)
				if err != nil {
					return nil, err
				}
				reps = append(reps, res)
			}
			if len(reps) > 0 {
				runs = append(runs, reps)
			}
		}
		if len(runs) == 0 {
			return nil, fmt.Errorf("case %s: no runs in %s", c.Name, filepath.Join(base, c.Name))
		}
		return runs, nil
	}
	v, err := model.Validate(run, runCase)
	if err != nil {
		fmt.Fprintf(env.Stderr, "model validate: %v\n", err)
		return 1
	}
	v.Print(env.Stdout)
	f, err := os.Create(filepath.Join(*out, "validation.json"))
	if err == nil {
		err = v.WriteJSON(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "model validate: %v\n", err)
		return 1
	}
	// The calibration as a workload, for predict, advise and papers.
	if f, err = os.Create(filepath.Join(*out, "workload.json")); err == nil {
		err = v.Workload.WriteJSON(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "model validate: %v\n", err)
		return 1
	}
	fmt.Fprintf(env.Stdout, "Runs, validation.json and the calibration's workload.json in %s\n", *out)
	return 0
}

// runValidateCase runs one repeat of a case's experiments into dirOf's
// directories, each with its log in out.
func runValidateCase(ctx context.Context, env *Env, c model.Case, out string, rep int, hosts bool, dirOf func([]string) string) error {
	profile, err := c.WriteProfile(filepath.Join(out, c.Name))
	if err != nil {
		return err
	}
	for k, r := range c.Runs {
		eargs := append([]string{r[0], "-out", dirOf(r), "-profiles", profile}, r[1:]...)
		if r[0] == "amdahl" {
			// Its energy table wants a node power model; the validation
			// compares times only.
			eargs = append(eargs, "-node-power", c.ProfileName()+"=idle:100,cpu:100")
		}
		if hosts {
			eargs = append(eargs, "-hosts")
		}
		name := fmt.Sprintf("%s-%d.log", c.Name, k)
		if rep > 0 {
			name = fmt.Sprintf("%s-%d.%d.log", c.Name, k, rep+1)
		}
		logf, err := os.Create(filepath.Join(out, name))
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "  %s: strata experiment %s\n", c.Name, strings.Join(eargs, " "))
		rc := runExperiment(ctx, &Env{Conf: env.Conf, Stdin: env.Stdin, Stdout: logf, Stderr: io.MultiWriter(logf, env.Stderr)}, eargs)
		logf.Close()
		if rc != 0 {
			return fmt.Errorf("case %s: strata experiment %s failed (exit %d; %s)", c.Name, r[0], rc, logf.Name())
		}
	}
	return nil
}

// flagSet reports whether the command line set fl's flag name.
func flagSet(fl *flag.FlagSet, name string) bool {
	set := false
	fl.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
