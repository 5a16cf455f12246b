package experiment

import (
	"math"
	"strings"
	"testing"
)

func TestTCOPaper(t *testing.T) {
	costs, err := TCO([]CostInput{{"all-hdd", 11589, 37561, 944}, {"ssd-intermediate", 7850, 43081, 962}, {"all-ssd", 4410.5, 46567, 896}}, 3, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	round := func(v float64) float64 { return math.Round(v*100) / 100 }
	want := [][4]float64{{7.46, 8163.60, 4.60, 1}, {11.01, 12051.97, 3.57, 1.48}, {19.59, 21450.63, 2.17, 2.63}}
	for i, c := range costs {
		if got := [4]float64{round(c.JobsPerDay), round(c.JobsLifetime), round(c.CostPerJob), round(c.Speedup)}; got != want[i] {
			t.Errorf("%s: %v, want %v", c.Name, got, want[i])
		}
	}
	// 944 W for 11589 s is 3.039 kWh.
	if math.Abs(costs[0].KWhPerJob-944*11589/3.6e6) > 1e-9 || math.Abs(costs[0].EnergyCostPerJob-costs[0].KWhPerJob*0.1) > 1e-9 {
		t.Errorf("energy %+v", costs[0])
	}
	for _, bad := range [][]CostInput{{{"x", 0, 1, 0}}, {{"x", -5, 1, 0}}, {{"x", 5, -1, 0}}, {{"x", math.NaN(), 1, 0}}, {{"x", 5, math.Inf(1), 0}}, {{"x", 5, 1, math.Inf(1)}}, nil} {
		if _, err := TCO(bad, 3, 0.1); err == nil {
			t.Errorf("TCO(%v) accepted", bad)
		}
	}
	if _, err := TCO([]CostInput{{"x", 5, 1, 0}}, 3, math.Inf(1)); err == nil {
		t.Error("an infinite electricity price accepted")
	}
	if _, err := TCO([]CostInput{{"x", 5, 1, 0}}, 0, 0.1); err == nil || !strings.Contains(err.Error(), "years") {
		t.Errorf("zero years: %v", err)
	}
}
