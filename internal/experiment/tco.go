package experiment

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// CostInput is one configuration of the cost arithmetic: the runtime of
// one job in seconds, the cluster's price and its power draw in watts.
type CostInput struct {
	Name    string
	Runtime float64
	Price   float64
	Watts   float64
}

// Cost is the SanDisk paper's cost arithmetic for one configuration
// (Tables 5 and 7) plus the energy per job.
type Cost struct {
	Name    string  `json:"name"`
	Runtime float64 `json:"runtime_s"`
	// Speedup is the first configuration's runtime over this one's.
	Speedup      float64 `json:"speedup"`
	JobsPerDay   float64 `json:"jobs_per_day"`
	JobsLifetime float64 `json:"jobs_lifetime"`
	Price        float64 `json:"price"`
	CostPerJob   float64 `json:"cost_per_job"`
	Watts        float64 `json:"watts"`
	// KWhPerJob is Watts × Runtime; EnergyCostPerJob that at the
	// electricity price.
	KWhPerJob        float64 `json:"kwh_per_job"`
	EnergyCostPerJob float64 `json:"energy_cost_per_job"`
}

// TCO computes, for each configuration, jobs per day (86400 / runtime),
// jobs over years of 365 days, the price per job over that lifetime, and
// the energy (and its cost at kwhPrice per kWh) of one job.
func TCO(in []CostInput, years, kwhPrice float64) ([]Cost, error) {
	if len(in) == 0 {
		return nil, errors.New("tco: no configurations")
	}
	if !(years > 0) || math.IsInf(years, 0) {
		return nil, fmt.Errorf("tco: lifetime must be a positive number of years, got %v", years)
	}
	if !(kwhPrice >= 0) || math.IsInf(kwhPrice, 0) {
		return nil, fmt.Errorf("tco: electricity price must be a non-negative number, got %v", kwhPrice)
	}
	out := make([]Cost, len(in))
	for i, c := range in {
		if !(c.Runtime > 0) || math.IsInf(c.Runtime, 0) {
			return nil, fmt.Errorf("tco: %s: runtime must be a positive number of seconds, got %v", c.Name, c.Runtime)
		}
		if !(c.Price >= 0) || !(c.Watts >= 0) || math.IsInf(c.Price, 0) || math.IsInf(c.Watts, 0) {
			return nil, fmt.Errorf("tco: %s: price and watts must be non-negative numbers", c.Name)
		}
		perDay := 86400 / c.Runtime
		life := perDay * 365 * years
		kwh := c.Watts * c.Runtime / 3.6e6
		out[i] = Cost{Name: c.Name, Runtime: c.Runtime, Speedup: in[0].Runtime / c.Runtime,
			JobsPerDay: perDay, JobsLifetime: life, Price: c.Price, CostPerJob: c.Price / life,
			Watts: c.Watts, KWhPerJob: kwh, EnergyCostPerJob: kwh * kwhPrice}
	}
	return out, nil
}

// PrintTCO prints Table 5 (jobs per day and over the lifetime) and Table
// 7 (cost per job) in the paper's shape, then the energy per job when any
// configuration has a power draw.
func PrintTCO(w io.Writer, costs []Cost, years, kwhPrice float64) {
	ys := trimFloat(years)
	fmt.Fprintf(w, "Jobs over %s years (Table 5)\n", ys)
	names := make([]string, len(costs))
	for i, c := range costs {
		names[i] = c.Name
	}
	col := nameColumn(names)
	tw := newTable(w)
	fmt.Fprintf(tw, "%s\truntime (s)\tjobs in 1 day\tjobs in %s years\t\n", col(configHeader), ys)
	for _, c := range costs {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t\n", col(c.Name), c.Runtime, c.JobsPerDay, c.JobsLifetime)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nCost per job over %s years (Table 7)\n", ys)
	tw = newTable(w)
	fmt.Fprintf(tw, "%s\tprice ($)\tjobs in %s years\t$/job\tvs %s\t\n", col(configHeader), ys, costs[0].Name)
	for _, c := range costs {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%s\t%s\t\n", col(c.Name), c.Price, c.JobsLifetime, money(c.CostPerJob), percentChange(c.CostPerJob, costs[0].CostPerJob))
	}
	tw.Flush()
	anyWatts := false
	for _, c := range costs {
		anyWatts = anyWatts || c.Watts > 0
	}
	if !anyWatts {
		return
	}
	fmt.Fprintf(w, "\nEnergy per job (electricity at $%s/kWh)\n", trimFloat(kwhPrice))
	tw = newTable(w)
	fmt.Fprintf(tw, "%s\twatts\tkWh/job\tenergy $/job\t$/job with energy\t\n", col(configHeader))
	for _, c := range costs {
		fmt.Fprintf(tw, "%s\t%.0f\t%.3g\t%s\t%s\t\n", col(c.Name), c.Watts, c.KWhPerJob, money(c.EnergyCostPerJob), money(c.CostPerJob+c.EnergyCostPerJob))
	}
	tw.Flush()
}

// newTable is a right-aligned table; its first column is padded by
// nameColumn so that it reads left-aligned.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
}

// nameColumn pads the first column's cells (the header "configuration"
// and names) to one width.
func nameColumn(names []string) func(s string) string {
	width := len(configHeader)
	for _, n := range names {
		width = max(width, len(n))
	}
	return func(s string) string { return fmt.Sprintf("%-*s", width, s) }
}

const configHeader = "configuration"

// percentChange is v relative to base as "-22%", "" for base itself.
func percentChange(v, base float64) string {
	if base == 0 || v == base {
		return "-"
	}
	return fmt.Sprintf("%+.0f%%", (v/base-1)*100)
}

// money prints dollars with cents, or with three significant digits
// below a dollar (the small jobs of a scaled-down experiment cost
// fractions of a cent).
func money(v float64) string {
	if v >= 0.995 || v == 0 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// trimFloat prints v without trailing zeros.
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.4f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
