package model

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// Budget bounds what Advise may recommend.
type Budget struct {
	// Dollars is the most a recommended cluster may cost; 0 is no limit.
	Dollars float64
	// Fill adds, for each candidate with a price, the same nodes as many
	// times as Dollars buys at the candidate's price per node (fewer
	// nodes for a candidate over the budget).
	Fill bool
}

// Advice is candidates ranked.
type Advice struct {
	Predictions []*Prediction // in the order given, filled ones after their candidate; the first is the baseline
	Budget      Budget
}

// WithNodes is c with n nodes: the same nodes, the price per node kept
// (the price is taken as the nodes' only: a cluster's master and switch
// are assumed to cost in proportion), the dataset unchanged.
func (c *Cluster) WithNodes(n int) *Cluster {
	out := *c
	out.Name = fmt.Sprintf("%s-%dnodes", c.Name, n)
	out.Description = fmt.Sprintf("%s, %d nodes instead of %d", c.Description, n, c.Nodes)
	out.Nodes = n
	out.Price = c.Price * float64(n) / float64(c.Nodes)
	if c.SharedCores > 0 {
		out.SharedCores = c.SharedCores * float64(n) / float64(c.Nodes)
	}
	if c.QuotaSharedCores > 0 {
		out.QuotaSharedCores = c.QuotaSharedCores * float64(n) / float64(c.Nodes)
	}
	return &out
}

// maxFillNodes bounds the clusters -fill makes.
const maxFillNodes = 100000

// filled is c with the most nodes dollars buy, nil when that is c's own
// node count, too few nodes for its replication, or c has no price.
func filled(c *Cluster, dollars float64) (*Cluster, error) {
	if c.Price <= 0 || dollars <= 0 {
		return nil, nil
	}
	n := math.Floor(dollars/(c.Price/float64(c.Nodes)) + 1e-9)
	if n > maxFillNodes {
		return nil, fmt.Errorf("$%.0f buys %.0f nodes of %s, more than the %d a filled cluster may have", dollars, n, c.Name, maxFillNodes)
	}
	if int(n) == c.Nodes || int(n) < max(1, c.Replication) {
		return nil, nil
	}
	return c.WithNodes(int(n)), nil
}

// Advise predicts w on every candidate, and with b.Fill on each
// candidate filled to the budget.
func Advise(w *Workload, candidates []*Cluster, years, kwhPrice float64, b Budget) (*Advice, error) {
	a := &Advice{Budget: b}
	var all []*Cluster
	for _, c := range candidates {
		all = append(all, c)
		if !b.Fill {
			continue
		}
		f, err := filled(c, b.Dollars)
		if err != nil {
			return nil, err
		}
		if f != nil {
			all = append(all, f)
		}
	}
	for _, c := range all {
		p, err := Predict(w, c, years, kwhPrice)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		a.Predictions = append(a.Predictions, p)
	}
	return a, nil
}

// Within reports whether p's cluster fits the budget: any cluster when
// there is none, else one with a price of at most it.
func (a *Advice) Within(p *Prediction) bool {
	return a.Budget.Dollars <= 0 || (p.Cluster.Price > 0 && p.Cluster.Price <= a.Budget.Dollars*(1+1e-9))
}

// Print ranks the candidates by cost per run and by runtime, then says
// for each what bounds its slowest job's longest phase and its speed-up
// over the baseline. Candidates over the budget are ranked too, but never
// recommended.
func (a *Advice) Print(w io.Writer) {
	if len(a.Predictions) == 0 {
		return
	}
	base := a.Predictions[0]
	byCost := append([]*Prediction(nil), a.Predictions...)
	// A cluster without a price costs nothing per run only on paper: last.
	sort.SliceStable(byCost, func(i, k int) bool {
		pi, pk := byCost[i].Cluster.Price > 0, byCost[k].Cluster.Price > 0
		if pi != pk {
			return pi
		}
		return byCost[i].TotalCostPerJob < byCost[k].TotalCostPerJob
	})
	tw := newTable(w)
	head := "rank\tcluster\truntime (s)\tspeed-up\tprice ($)\t$/run\tkWh/run\t$/run with energy\twhat bounds it\t"
	if a.Budget.Dollars > 0 {
		head += "budget\t"
	}
	fmt.Fprintln(tw, head)
	for i, p := range byCost {
		fmt.Fprintf(tw, "%d\t%s\t%.2f\t%.2fx\t%.0f\t%.5f\t%.4f\t%.5f\t%s\t", i+1, p.Cluster.Name, p.Runtime, base.Runtime/p.Runtime,
			p.Cluster.Price, p.CostPerJob, p.KWhPerJob, p.TotalCostPerJob, p.Dominant())
		if a.Budget.Dollars > 0 {
			verdict := map[bool]string{true: "within", false: "over"}[a.Within(p)]
			if p.Cluster.Price <= 0 {
				verdict = "no price"
			}
			fmt.Fprint(tw, verdict, "\t")
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	var cheap, fast *Prediction
	for _, p := range byCost {
		if a.Within(p) && cheap == nil { // priced first, and Within needs a price under a budget
			cheap = p
		}
		if a.Within(p) && (fast == nil || p.Runtime < fast.Runtime) {
			fast = p
		}
	}
	switch {
	case cheap == nil && cheapest(a.Predictions) == nil:
		fmt.Fprintf(w, "No candidate has a price to hold against the budget of $%.0f (price = in its cluster file).\n", a.Budget.Dollars)
	case cheap == nil:
		c := cheapest(a.Predictions)
		fmt.Fprintf(w, "No candidate costs $%.0f or less: the cheapest, %s, costs $%.0f.\n", a.Budget.Dollars, c.Cluster.Name, c.Cluster.Price)
	default:
		within := ""
		if a.Budget.Dollars > 0 {
			within = fmt.Sprintf("Within $%.0f: ", a.Budget.Dollars)
		}
		fmt.Fprintf(w, "%sCheapest per run: %s (%s). Fastest: %s, %.2fx the baseline %s.\n",
			within, cheap.Cluster.Name, cheap.Dominant(), fast.Cluster.Name, base.Runtime/fast.Runtime, base.Cluster.Name)
	}
	for _, p := range a.Predictions[1:] {
		fmt.Fprintf(w, "  %s against %s: %s\n", p.Cluster.Name, base.Cluster.Name, explain(base, p))
	}
}

// cheapest is the prediction of the cheapest cluster with a price, nil
// if none has one.
func cheapest(ps []*Prediction) *Prediction {
	var best *Prediction
	for _, p := range ps {
		if p.Cluster.Price > 0 && (best == nil || p.Cluster.Price < best.Cluster.Price) {
			best = p
		}
	}
	return best
}

// Dominant names the phase that takes longest in the workload's total
// and what bounds it, with its share of the runtime.
func (p *Prediction) Dominant() string {
	var best string
	var bt float64
	for _, j := range p.Jobs {
		if !j.inTotal {
			continue
		}
		for _, ph := range []string{PhaseMap, PhaseShuffle, PhaseReduce} {
			if v := j.Phases.Get(ph); v > bt {
				bt, best = v, fmt.Sprintf("%s %s phase, %s-bound", j.Name, ph, j.Bounds[ph])
			}
		}
	}
	if p.Runtime > 0 {
		best += fmt.Sprintf(", %.0f%% of the runtime", 100*bt/p.Runtime)
	}
	return best
}

// explain says how each total job's phases change from base to p and
// why: the bound in each.
func explain(base, p *Prediction) string {
	var parts []string
	for i, j := range p.Jobs {
		if !j.inTotal || i >= len(base.Jobs) {
			continue
		}
		b := base.Jobs[i]
		for _, ph := range []string{PhaseMap, PhaseShuffle, PhaseReduce} {
			bv, v := b.Phases.Get(ph), j.Phases.Get(ph)
			if bv < 0.05*base.Runtime || v <= 0 {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s %.2f -> %.2f s (%.1fx; %s-bound -> %s-bound)", j.Name, ph, bv, v, bv/v, b.Bounds[ph], j.Bounds[ph]))
		}
	}
	return fmt.Sprintf("%.2fx overall; ", base.Runtime/p.Runtime) + strings.Join(parts, "; ")
}
