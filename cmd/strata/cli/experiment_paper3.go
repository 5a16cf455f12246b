package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stratafs/strata/internal/dfsio"
	"github.com/stratafs/strata/internal/examples"
	"github.com/stratafs/strata/internal/experiment"
)

const experimentAmdahlUsage = `Usage: strata experiment amdahl [flags]

The third paper's ("Hadoop in Low-Power Processors") Figure 1 (buffered
vs direct sequential I/O: throughput, process and kworker CPU, on
emulated HDD, SSD, RAID0 and the real disk, dd beside), Table 2 (TCP
throughput and sender/receiver CPU on loopback and, with root, between
two network namespaces), Figure 2 (TestDFSIO per node with 1-3 mappers
on the blade's HDD, RAID0 and SSD, DataNodes writing buffered and
direct), and Table 3 and the energy comparison: on a fresh cluster per profile (default amdahl-blade, then
occ-node), SkyGen writes a catalogue, Neighbour Searching runs at each
-theta and Neighbour Statistics up to -stats-max; each run's CPU time and
device busy time feed a per-node power model (idle + CPU-proportional +
per-device active/idle watts) for the energy per job and the blades'
efficiency over the OCC nodes beside the paper's 7.7x and 3.4x. Prints
the tables with the paper's values beside strata's and writes
paper3.json, CSV files, SVG charts and a report of them all (index.html)
to -out (docs/EXPERIMENTS.md).

Flags:
`

// runExperimentAmdahl is `strata experiment amdahl`.
func runExperimentAmdahl(ctx context.Context, env *Env, args []string) int {
	fl := flag.NewFlagSet("experiment amdahl", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	fl.Usage = func() {
		fmt.Fprint(env.Stderr, experimentAmdahlUsage)
		fl.PrintDefaults()
	}
	profiles := fl.String("profiles", "amdahl-blade,occ-node", "profiles to compare, the low-power one first: built-in names or .profile files")
	objects := fl.String("objects", "200k", "catalogue objects (k, m, b suffixes)")
	thetas := fl.String("theta", "15,30,60", "Neighbour Searching radii in arcseconds")
	statsMax := fl.Float64("stats-max", 60, "Neighbour Statistics' largest bin in arcseconds")
	clustered := fl.Bool("clustered", true, "a clustered (Neyman-Scott) catalogue, as real skies are; false: uniform")
	sigma := fl.Float64("sigma", 20, "a clustered catalogue's scatter around its centres in arcseconds")
	datanodes := fl.Int("datanodes", experiment.DefaultDataNodes, "DataNodes (each with a TaskTracker) per cluster")
	master := fl.Bool("master", true, "count a master node at idle power in each cluster's energy, as the paper's clusters had")
	useMedia := fl.Bool("media", true, "emulate the profiles' devices (false: plain directories)")
	hosts := fl.Bool("hosts", false, "run every daemon on a host of its own (network namespace) with the profiles' link.mbps and node.cpus; needs root, else loopback in one process")
	out := fl.String("out", "experiment-amdahl", "output directory for results, charts and job logs")
	keep := fl.Bool("keep", false, "keep the clusters' storage under OUT/work")
	parts := fl.String("parts", "fig1,table2,fig2,table3", "what to run: fig1 (buffered vs direct I/O), table2 (TCP), fig2 (TestDFSIO, 1-3 mappers per node), table3 (Table 3 and energy)")
	fig2MB := fl.Int("fig2-mb", 32, "Figure 2: MiB each TestDFSIO mapper writes and reads (the paper's 3 GB)")
	fig2IO := fl.String("fig2-io", strings.Join(experiment.Fig2IO, ","), "Figure 2: DataNode write modes, a cluster each: buffered, direct (O_DIRECT, as the paper's)")
	fig1MB := fl.Int("fig1-mb", 32, "Figure 1: MiB per file (the paper's 64)")
	fig1Files := fl.Int("fig1-files", 4, "Figure 1: files per operation (the paper's 100)")
	fig1Devices := fl.String("fig1-devices", strings.Join(experiment.DefaultFig1Devices, ","), "Figure 1: media presets and/or \""+experiment.RealDisk+"\"")
	dd := fl.Bool("dd", true, "Figure 1: run dd beside the real disk's measurements")
	tcpBytes := fl.String("tcp-bytes", "1GB", "Table 2: bytes sent per measurement (MB, GB: TestDFSIO's sizes)")
	linkMbps := fl.Float64("link-mbps", 1000, "Table 2: also measure between two hosts over a link shaped by tc tbf to this rate (0: not)")
	var nodePower, devicePower multiFlag
	fl.Var(&nodePower, "node-power", "override a profile's node power, e.g. amdahl-blade=idle:16,cpu:8 (repeatable)")
	fl.Var(&devicePower, "device-power", "override a device preset's power, e.g. vertex=idle:0.5,active:2 (repeatable; raid0-<n>-<p> is n times p)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	fail := experimentFail(env, "experiment amdahl")
	if fl.NArg() > 0 {
		return fail(2, "unexpected argument %q", fl.Arg(0))
	}
	n, err := examples.ParseRows(*objects)
	if err != nil || n == 0 {
		return fail(2, "-objects: bad number %q", *objects)
	}
	tb, err := dfsio.ParseSize(*tcpBytes)
	if err != nil || tb <= 0 {
		return fail(2, "-tcp-bytes: bad size %q", *tcpBytes)
	}
	if *fig1MB < 1 || *fig1Files < 1 {
		return fail(2, "-fig1-mb and -fig1-files must be positive")
	}
	for _, m := range splitComma(*fig2IO) {
		if !slices.Contains(experiment.Fig2IO, m) {
			return fail(2, "-fig2-io: unknown write mode %q (want %s)", m, strings.Join(experiment.Fig2IO, ", "))
		}
	}
	ths, err := parseFloats(*thetas)
	if err != nil {
		return fail(2, "-theta: %v", err)
	}
	o := experiment.Paper3Options{Objects: n, Thetas: ths, StatsMax: *statsMax, Clustered: *clustered, Sigma: *sigma, DataNodes: *datanodes,
		Master: *master, Media: *useMedia, Keep: *keep, Conf: env.Conf, Power: experiment.DefaultPowerModel(),
		Parts: splitComma(*parts), Fig1: experiment.Fig1Options{FileBytes: int64(*fig1MB) << 20, Files: *fig1Files, Devices: splitComma(*fig1Devices), DD: *dd},
		Table2: experiment.TCPOptions{Bytes: tb, LinkMbps: *linkMbps}, Fig2: experiment.Fig2Options{FileBytes: int64(*fig2MB) << 20, IO: splitComma(*fig2IO)},
		WorkDir: filepath.Join(*out, "work"), LogDir: filepath.Join(*out, "logs"), Progress: experiment.NewProgress(env.Stderr)}
	for _, s := range nodePower {
		if err := o.Power.Set("node", s); err != nil {
			return fail(2, "-node-power: %v", err)
		}
	}
	for _, s := range devicePower {
		if err := o.Power.Set("device", s); err != nil {
			return fail(2, "-device-power: %v", err)
		}
	}
	if o.Profiles, err = experiment.LoadProfiles(*profiles); err != nil {
		return fail(2, "%v", err)
	}
	o.Hosts = *hosts
	if o.Hosts {
		if err := experiment.HostsAvailable(); err != nil {
			fmt.Fprintf(env.Stderr, "experiment amdahl: -hosts: %v; running every profile on loopback in one process instead (node.cpus and link.mbps ignored)\n", err)
			o.Hosts = false
		}
	}
	res, err := experiment.RunPaper3(ctx, o)
	if err != nil {
		return fail(1, "%s (job logs in %s)", strings.TrimPrefix(err.Error(), "experiment amdahl: "), o.LogDir)
	}
	res.Command = "strata experiment amdahl " + strings.Join(args, " ")
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
	showReport(env, filepath.Join(*out, experiment.ReportFile), false)
	return 0
}

func splitComma(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
