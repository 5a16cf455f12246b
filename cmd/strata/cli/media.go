package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/experiment"
	"github.com/stratafs/strata/internal/media"
)

func init() {
	register(command{name: "media", summary: "emulated storage media: media presets | media bench [-preset P,...] [-dir D] [-size S] [-time T] [-runs N] | media stats DIR", run: runMedia})
}

const mediaUsage = `Usage: strata media presets
       strata media bench [-preset P[,P...]] [-dir D] [-size S] [-time T] [-runs N]
       strata media stats DIR`

func runMedia(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, mediaUsage)
		return 2
	}
	switch args[0] {
	case "presets":
		return mediaPresets(env)
	case "bench":
		return mediaBench(ctx, env, args[1:])
	case "stats":
		if len(args) != 2 {
			fmt.Fprintln(env.Stderr, mediaUsage)
			return 2
		}
		st, err := media.ReadStats(args[1])
		if err != nil {
			fmt.Fprintf(env.Stderr, "media: %v\n", err)
			return 1
		}
		fmt.Fprintf(env.Stdout, "requests\t%d\nseeks\t%d\nread bytes\t%d\nwritten bytes\t%d\nbusy\t%v\n",
			st.Requests, st.Seeks, st.ReadBytes, st.WriteBytes, st.Busy)
		return 0
	default:
		fmt.Fprintf(env.Stderr, "media: unknown subcommand %q\n%s\n", args[0], mediaUsage)
		return 2
	}
}

// mediaPresets prints the presets, with this configuration's overrides.
func mediaPresets(env *Env) int {
	ps, reqBytes, err := media.ResolvePresets(env.Conf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "media: %v\n", err)
		return 1
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "preset\tread MB/s\twrite MB/s\tlatency\tseek\tqueue depth\trandom 4 KiB IOPS QD1\tat queue depth")
	for _, p := range ps {
		q := p.Params
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%v\t%d\t%s\t%s\n", p.Name, figure(q.ReadMBps), figure(q.WriteMBps), q.Latency, q.Seek, q.QueueDepth,
			figure(q.RandomIOPS(media.BenchRandBytes, 1)), figure(q.RandomIOPS(media.BenchRandBytes, q.QueueDepth)))
	}
	tw.Flush()
	fmt.Fprintf(env.Stdout, "request size %d bytes (%s)\n", reqBytes, media.KeyRequestBytes)
	return 0
}

// mediaBench measures presets against their models.
func mediaBench(ctx context.Context, env *Env, args []string) int {
	fl := flag.NewFlagSet("media bench", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	preset := fl.String("preset", "hdd-7200,sata-ssd,nvme,ram", "presets to measure, comma-separated")
	dir := fl.String("dir", defaultBenchDir(), "directory for the test files (tmpfs keeps the machine's own disk out of the figures)")
	size := fl.String("size", "256m", "test file size (k/m/g suffixes)")
	dur := fl.Duration("time", 2*time.Second, "how long each measurement runs")
	runs := fl.Int("runs", 3, "runs per preset; the best figure of each measurement is shown")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "media bench: unexpected argument %q\n", fl.Arg(0))
		return 2
	}
	if *runs < 1 || *dur <= 0 {
		fmt.Fprintln(env.Stderr, "media bench: -runs and -time must be positive")
		return 2
	}
	n, err := conf.ParseBytes(*size)
	if err != nil {
		fmt.Fprintf(env.Stderr, "media bench: -size: %v\n", err)
		return 2
	}
	ps, reqBytes, err := media.ResolvePresets(env.Conf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "media bench: %v\n", err)
		return 1
	}
	var chosen []media.Preset
	for _, name := range strings.Split(*preset, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(ps, func(p media.Preset) bool { return p.Name == name })
		if i < 0 {
			fmt.Fprintf(env.Stderr, "media bench: unknown preset %q\n", name)
			return 2
		}
		chosen = append(chosen, ps[i])
	}
	host, _ := os.Hostname()
	fmt.Fprintf(env.Stdout, "strata media bench: %s, %d CPUs (%s/%s), dir %s, file %d bytes, %v per measurement, best of %d runs, requests of up to %d bytes\n",
		host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, *dir, n, *dur, *runs, reqBytes)
	if l := experiment.LoadAverage(); l != "" {
		// Emulated time is wall-clock time: a busy machine makes the
		// figures low.
		fmt.Fprintf(env.Stdout, "load average at the start: %s\n", l)
	}
	cfg := media.BenchConfig{Dir: *dir, Size: n, Duration: *dur, RequestBytes: reqBytes}
	var results []media.BenchResult
	for _, p := range chosen {
		var best media.BenchResult
		for run := range *runs {
			fmt.Fprintf(env.Stderr, "media bench: measuring %s (run %d of %d)\n", p.Name, run+1, *runs)
			r, err := media.Bench(ctx, p.Name, p.Params, cfg)
			if err != nil {
				fmt.Fprintf(env.Stderr, "media bench: %s: %v\n", p.Name, err)
				return 1
			}
			best = r.Best(best)
		}
		results = append(results, best)
	}
	failed := printBench(env.Stdout, results)
	if l := experiment.LoadAverage(); l != "" {
		fmt.Fprintf(env.Stdout, "load average at the end: %s\n", l)
	}
	if failed {
		fmt.Fprintln(env.Stdout, "some measurements are more than 10% off their model")
		return 1
	}
	return 0
}

// printBench prints results as a table and reports whether any
// measurement is more than 10% off its model.
func printBench(w io.Writer, results []media.BenchResult) bool {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "preset\tmeasure\tmodel\tmeasured\terror\t")
	failed := false
	for _, r := range results {
		rows := []struct {
			name       string
			want, have float64
		}{
			{"seq write MB/s", r.WantSeqWriteMBps, r.SeqWriteMBps},
			{"seq read MB/s", r.WantSeqReadMBps, r.SeqReadMBps},
			{"rand 4K read IOPS QD1", r.WantRandIOPS1, r.RandIOPS1},
		}
		if r.QueueDepth > 1 {
			rows = append(rows, struct {
				name       string
				want, have float64
			}{fmt.Sprintf("rand 4K read IOPS QD%d", r.QueueDepth), r.WantRandIOPSQD, r.RandIOPSQD})
		}
		for _, row := range rows {
			errText := "-"
			if row.want > 0 {
				e := (row.have - row.want) / row.want * 100
				errText = fmt.Sprintf("%+.1f%%", e)
				if e > 10 || e < -10 {
					failed = true
					errText += " !"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", r.Preset, row.name, figure(row.want), figure(row.have), errText)
		}
	}
	tw.Flush()
	return failed
}

// figure prints a rate; 0 is unlimited.
func figure(v float64) string {
	switch {
	case v == 0:
		return "unlimited"
	case v >= 1000:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.1f", v)
	}
}

// defaultBenchDir is /dev/shm where it exists (memory, so that only the
// model shapes the figures), else the temporary directory.
func defaultBenchDir() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}
