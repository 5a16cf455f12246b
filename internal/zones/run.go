package zones

import (
	"context"
	"fmt"
	"io"
	"math"
	"path"
	"strconv"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/mapreduce"
)

// skyArea is the area of the sphere in square degrees.
const skyArea = 4 * math.Pi / (deg * deg)

// textRecordBytes is the size of a text catalogue line Plan assumes when
// it estimates the number of objects ("123456 359.99... -12.34...").
const textRecordBytes = 48

// BlockSide is the default block side in degrees for about n objects
// (0: unknown), radius theta (degrees) and reducers reduce tasks: blocks
// of about perBlock objects, but at least 4 blocks per reducer (so that
// reducers get even shares) and at least 16θ on a side (so that border
// copies stay a small fraction of the objects).
func BlockSide(n int64, perBlock int64, reducers int, theta float64) float64 {
	side := math.Sqrt(skyArea / float64(4*max(reducers, 1)))
	if n > 0 && perBlock > 0 {
		side = min(side, math.Sqrt(skyArea*float64(perBlock)/float64(n)))
	}
	return min(180, max(side, 16*theta))
}

// Plan returns a copy of c with the block size set for the input when
// zones.block.height is not set, the Geometry it gives, and a line
// describing it.
func Plan(ctx context.Context, env fs.Env, c *conf.Configuration, inputs []string, thetaKey string) (*conf.Configuration, *Geometry, string, error) {
	c = c.Clone()
	g, err := GeometryFromConf(c, thetaKey)
	if err != nil {
		return nil, nil, "", err
	}
	in, _, err := inputFormat(c)
	if err != nil {
		return nil, nil, "", err
	}
	splits, err := in.Splits(ctx, env, c, inputs)
	if err != nil {
		return nil, nil, "", err
	}
	var bytes int64
	for _, s := range splits {
		bytes += s.Length
	}
	n := bytes / RecordSize
	if _, text := in.(mapreduce.TextInputFormat); text {
		n = bytes / textRecordBytes
	}
	if c.GetTrimmed(KeyBlockHeight) == "" {
		perBlock, err := c.GetInt(KeyBlockObjects)
		if err != nil || perBlock < 1 {
			return nil, nil, "", fmt.Errorf("zones: %s must be a positive number of objects", KeyBlockObjects)
		}
		side := BlockSide(n, perBlock, reduceTasks(c), g.Theta)
		c.Set(KeyBlockHeight, strconv.FormatFloat(side, 'g', 6, 64))
		if c.GetTrimmed(KeyBlockWidth) == "" {
			c.Set(KeyBlockWidth, strconv.FormatFloat(side, 'g', 6, 64))
		}
		if g, err = GeometryFromConf(c, thetaKey); err != nil {
			return nil, nil, "", err
		}
	}
	desc := fmt.Sprintf("INFO zones: θ = %g″; %d stripes of %.4g°, %d blocks for about %d objects (%d per block), zones of %.4g″",
		g.Theta*3600, g.Stripes(), g.StripeHeight, g.Blocks(), n, n/max(g.Blocks(), 1), g.ZoneHeight*3600)
	return c, g, desc, nil
}

func submit(ctx context.Context, env fs.Env, c *conf.Configuration, out io.Writer, name string, args []string) (*mapreduce.Result, error) {
	job, err := mapreduce.NewJob(name, args, c)
	if err != nil {
		return nil, err
	}
	return mapreduce.Submit(ctx, job, env, out)
}

// RunSkyGen is `strata examples skygen <num objects> <out>`.
func RunSkyGen(ctx context.Context, env fs.Env, args []string, out io.Writer) error {
	if len(args) != 2 {
		return &UsageError{SkyGenUsage}
	}
	start := time.Now()
	res, err := submit(ctx, env, env.Conf, out, SkyGenJob, args)
	if err != nil {
		return err
	}
	Report(out, env.Conf, res.Counters.Get(mapreduce.GroupTask, mapreduce.MapOutputRecords), "objects written", time.Since(start))
	return nil
}

// RunNeighbors is `strata examples neighbors <in>... <out>`: every pair
// of objects within zones.theta.
func RunNeighbors(ctx context.Context, env fs.Env, args []string, out io.Writer) error {
	if len(args) < 2 {
		return &UsageError{NeighborsUsage}
	}
	start := time.Now()
	c, _, desc, err := Plan(ctx, env, env.Conf, args[:len(args)-1], KeyTheta)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, desc)
	res, err := submit(ctx, env, c, out, NeighborsJob, args)
	if err != nil {
		return err
	}
	printSpills(out, res)
	Report(out, c, res.Counters.Get(CounterGroup, CounterPairs), "pairs found", time.Since(start))
	return nil
}

// RunNeighborStats is `strata examples neighborstats <in>... <out>`: the
// number of pairs in each 1″ bin up to zones.maxtheta, in two jobs — per
// block histograms into a temporary directory beside out, then their sum.
func RunNeighborStats(ctx context.Context, env fs.Env, args []string, out io.Writer) error {
	if len(args) < 2 {
		return &UsageError{NeighborStatsUsage}
	}
	start := time.Now()
	inputs, dst := args[:len(args)-1], args[len(args)-1]
	c, _, desc, err := Plan(ctx, env, env.Conf, inputs, KeyMaxTheta)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, desc)
	// Fail before the first step if the output exists.
	if err := mapreduce.CheckOutputDir(ctx, env, c, dst); err != nil {
		return err
	}
	tmp := fmt.Sprintf("neighborstats-temp-%d", time.Now().UnixNano())
	if dir := path.Dir(dst); dir != "." {
		tmp = path.Join(dir, tmp)
	}
	defer func() {
		if fsys, p, err := fs.Resolve(context.Background(), tmp, env); err == nil {
			fsys.Delete(context.Background(), p, true)
			fsys.Close()
		}
	}()
	res, err := submit(ctx, env, c, out, StatsBlocksJob, append(append([]string(nil), inputs...), tmp))
	if err != nil {
		return err
	}
	printSpills(out, res)
	if _, err := submit(ctx, env, c, out, StatsSumJob, []string{tmp, dst}); err != nil {
		return err
	}
	Report(out, c, res.Counters.Get(CounterGroup, CounterPairs), "pairs counted", time.Since(start))
	return nil
}

// printSpills prints the spills per map task of a job.
func printSpills(out io.Writer, res *mapreduce.Result) {
	maps := res.Counters.Get(mapreduce.GroupJob, mapreduce.LaunchedMaps)
	if maps > 0 {
		fmt.Fprintf(out, "INFO zones: %.2f spills per map (%d maps)\n",
			float64(res.Counters.Get(mapreduce.GroupTask, mapreduce.Spills))/float64(maps), maps)
	}
}

// Report prints the work line and the energy line of a run: n units of
// work (what names them) in elapsed, per second, and — when
// strata.power.watts gives this machine's power draw — the energy used
// (elapsed × watts) and the work per joule.
func Report(out io.Writer, c *conf.Configuration, n int64, what string, elapsed time.Duration) {
	secs := elapsed.Seconds()
	fmt.Fprintf(out, "Work: %d %s in %.1f s (%.4g per second)\n", n, what, secs, float64(n)/secs)
	s := c.GetTrimmed(KeyPowerWatts)
	if s == "" {
		fmt.Fprintf(out, "Energy: not estimated (set %s to this machine's power draw in watts)\n", KeyPowerWatts)
		return
	}
	watts, err := c.GetFloat(KeyPowerWatts)
	if err != nil || watts <= 0 {
		fmt.Fprintf(out, "Energy: not estimated (%s=%q is not a positive number of watts)\n", KeyPowerWatts, s)
		return
	}
	joules := watts * secs
	fmt.Fprintf(out, "Energy: %.3g kJ at %g W (%.4g %s per joule)\n", joules/1000, watts, float64(n)/joules, what)
}
