package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/stratafs/strata/internal/experiment"
)

func init() {
	register(command{name: "tco", summary: "jobs per day, jobs over a lifetime, cost and energy per job from runtimes and prices", run: runTCO})
}

// runTCO is `strata tco`: the SanDisk paper's cost arithmetic (Tables 5
// and 7) plus energy per job, from flags or an experiment's results.json.
func runTCO(ctx context.Context, env *Env, args []string) int {
	fl := flag.NewFlagSet("tco", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	fl.Usage = func() {
		fmt.Fprintln(env.Stderr, "Usage: strata tco --names a,b,c --runtime r1,r2,r3 --price p1,p2,p3 [--years 3] [--watts w1,w2,w3] [--kwh-price X]\n       strata tco --from results.json [--years 3] [--kwh-price X]")
		fl.PrintDefaults()
	}
	names := fl.String("names", "", "configuration names, the baseline first")
	runtimes := fl.String("runtime", "", "runtime of one job in seconds, per configuration")
	prices := fl.String("price", "", "price of each configuration in $")
	watts := fl.String("watts", "", "power draw of each configuration in W (for energy per job)")
	years := fl.Float64("years", experiment.DefaultYears, "lifetime in years of 365 days")
	kwh := fl.Float64("kwh-price", experiment.DefaultKWhPrice, "electricity price in $ per kWh")
	from := fl.String("from", "", "an experiment's results.json (its mean totals, prices and watts)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "tco: "+format+"\n", a...)
		fl.Usage()
		return 2
	}
	if fl.NArg() > 0 {
		return fail("unexpected argument %q", fl.Arg(0))
	}
	var in []experiment.CostInput
	if *from != "" {
		if *names != "" || *runtimes != "" {
			return fail("--from replaces --names and --runtime")
		}
		r, err := experiment.ReadResults(*from)
		if err != nil {
			fmt.Fprintf(env.Stderr, "tco: %v\n", err)
			return 1
		}
		in = r.CostInputs()
	} else {
		if *names == "" || *runtimes == "" || *prices == "" {
			return fail("--names, --runtime and --price are required (or --from results.json)")
		}
		for _, n := range strings.Split(*names, ",") {
			in = append(in, experiment.CostInput{Name: strings.TrimSpace(n)})
		}
	}
	ptrs := make([]*experiment.CostInput, len(in))
	for i := range in {
		ptrs[i] = &in[i]
	}
	for _, f := range []struct {
		list, name string
		set        func(*experiment.CostInput, float64)
	}{
		{*runtimes, "--runtime", func(c *experiment.CostInput, v float64) { c.Runtime = v }},
		{*prices, "--price", func(c *experiment.CostInput, v float64) { c.Price = v }},
		{*watts, "--watts", func(c *experiment.CostInput, v float64) { c.Watts = v }},
	} {
		if err := setEach(ptrs, f.list, f.name, "configurations", f.set); err != nil {
			return fail("%v", err)
		}
	}
	costs, err := experiment.TCO(in, *years, *kwh)
	if err != nil {
		return fail("%s", strings.TrimPrefix(err.Error(), "tco: "))
	}
	experiment.PrintTCO(env.Stdout, costs, *years, *kwh)
	return 0
}
