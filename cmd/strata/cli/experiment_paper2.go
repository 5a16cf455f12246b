package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stratafs/strata/internal/dfsio"
	"github.com/stratafs/strata/internal/examples"
	"github.com/stratafs/strata/internal/experiment"
)

const experimentPaper2Usage = `Usage: strata experiment dfsio-paper [flags]

The second paper's tables (the HDFS & MapReduce heterogeneous storage
white paper): on an embedded cluster per profile (the paper's SATA
cluster first, its SSD cluster second), TestDFSIO write and read over the
file counts at each replication (its Figures 1-4), TeraGen, TeraSort,
TeraValidate, wordcount and a shuffle-only job at each replication
(Figures 5-6), and one file written into HDFS by -put, a FUSE mount and
the NFSv3 gateway. Prints each table with the paper's values beside
strata's; writes results.json, a CSV per table and SVG charts to the
output directory.

Flags:
`

// runExperimentDFSIOPaper is `strata experiment dfsio-paper`.
func runExperimentDFSIOPaper(ctx context.Context, env *Env, args []string) int {
	fl := flag.NewFlagSet("experiment dfsio-paper", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	fl.Usage = func() {
		fmt.Fprint(env.Stderr, experimentPaper2Usage)
		fl.PrintDefaults()
	}
	profiles := fl.String("profiles", strings.Join(experiment.DefaultPaper2Profiles, ","), "the paper's SATA and SSD clusters: built-in profile names or .profile files")
	out := fl.String("out", "experiment-paper2", "output directory for results, charts and job logs")
	datanodes := fl.Int("datanodes", experiment.DefaultPaper2DataNodes, "DataNodes (each with a TaskTracker) per cluster")
	mapSlots := fl.Int("map-slots", 0, "map slots per TaskTracker (default: 1 per hardware thread, scaled to this machine)")
	reduceSlots := fl.Int("reduce-slots", 0, "reduce slots per TaskTracker (default: 1 per 2 threads, scaled)")
	useMedia := fl.Bool("media", true, "emulate the profiles' devices (false: plain directories)")
	keep := fl.Bool("keep", false, "keep the clusters' storage under OUT/work")
	files := fl.String("files", joinInts(experiment.DefaultDFSIOFiles), "TestDFSIO file counts")
	reps := fl.String("replication", joinInts(experiment.DefaultDFSIOReplications), "replication factors of TestDFSIO and of the jobs")
	total := fl.String("dfsio-total", mib(experiment.DefaultPaper2DFSIOTotal), "bytes each TestDFSIO run writes or reads, split over its files (paper: 240 GB)")
	rows := fl.String("rows", strconv.Itoa(experiment.DefaultPaper2Rows/1000)+"k", "TeraGen rows of 100 bytes (k, m, b suffixes; 0 skips the tera jobs)")
	text := fl.String("wordcount-size", mib(experiment.DefaultPaper2TextBytes), "random text wordcount counts (0 skips it)")
	shuffle := fl.String("shuffle-size", mib(experiment.DefaultPaper2Shuffle), "random text the shuffle-only job moves (0 skips it)")
	gateway := fl.String("gateway-size", mib(experiment.DefaultPaper2Gateway), "file written by put, FUSE and NFS (paper: 10 GB; 0 skips them)")
	hosts := fl.Bool("hosts", false, "run every daemon as a process on a host of its own (needs root, else loopback in one process)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	fail := experimentFail(env, "experiment dfsio-paper")
	if fl.NArg() > 0 {
		return fail(2, "unexpected argument %q", fl.Arg(0))
	}
	po := experiment.Paper2Options{Options: experiment.Options{DataNodes: *datanodes, MapSlots: *mapSlots, ReduceSlots: *reduceSlots,
		Media: *useMedia, Keep: *keep, Conf: env.Conf, WorkDir: filepath.Join(*out, "work"), LogDir: filepath.Join(*out, "logs"),
		Progress: experiment.NewProgress(env.Stderr)}}
	var err error
	if po.Profiles, err = experiment.LoadProfiles(*profiles); err != nil {
		return fail(2, "%v", err)
	}
	if po.DFSIOFiles, err = parseInts(*files); err != nil {
		return fail(2, "-files: %v", err)
	}
	if po.DFSIOReplications, err = parseInts(*reps); err != nil {
		return fail(2, "-replication: %v", err)
	}
	if po.DFSIOTotal, err = dfsio.ParseSize(*total); err != nil {
		return fail(2, "-dfsio-total: %v", err)
	}
	if po.TeraRows, err = examples.ParseRows(*rows); err != nil {
		return fail(2, "-rows: bad number of rows %q", *rows)
	}
	for _, s := range []struct {
		name, v string
		to      *int64
	}{{"-wordcount-size", *text, &po.TextBytes}, {"-shuffle-size", *shuffle, &po.ShuffleBytes}, {"-gateway-size", *gateway, &po.GatewayBytes}} {
		if s.v == "0" {
			continue
		}
		if *s.to, err = dfsio.ParseSize(s.v); err != nil {
			return fail(2, "%s: %v", s.name, err)
		}
	}
	po.Hosts = *hosts
	if po.Hosts {
		if err := experiment.HostsAvailable(); err != nil {
			fmt.Fprintf(env.Stderr, "experiment dfsio-paper: -hosts: %v; running every profile on loopback in one process instead\n", err)
			po.Hosts = false
		}
	}
	res, err := experiment.RunPaper2(ctx, po)
	if err != nil {
		return fail(1, "%s (job logs in %s)", strings.TrimPrefix(err.Error(), "experiment: "), po.LogDir)
	}
	res.Command = "strata experiment dfsio-paper " + strings.Join(args, " ")
	host, _ := os.Hostname()
	fmt.Fprintf(env.Stdout, "\n%s on %s: %d CPUs, %d DataNodes with %d map and %d reduce slots each, load %s\n\n",
		res.Command, host, res.CPUs, res.DataNodes, res.MapSlots, res.ReduceSlots, res.LoadAverage)
	res.PrintPaper2(env.Stdout)
	written, err := res.WriteFiles(*out)
	if err != nil {
		return fail(1, "%v", err)
	}
	more, err := res.WritePaper2Files(*out)
	if err != nil {
		return fail(1, "%v", err)
	}
	// WriteFiles' report came before the second paper's files: again,
	// linking them.
	report, err := experiment.RegenerateReport(*out)
	if err != nil {
		return fail(1, "%v", err)
	}
	printResultFiles(env, *out, append(written, more...), po.LogDir)
	if !*keep {
		os.Remove(po.WorkDir)
	}
	showReport(env, report, false)
	return 0
}

// mib is n bytes as a TestDFSIO size in MB (MiB).
func mib(n int64) string { return strconv.FormatInt(n>>20, 10) + "MB" }
