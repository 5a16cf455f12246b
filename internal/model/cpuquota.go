package model

import "math"

// A node whose cores are a CFS bandwidth quota (a container's CPU limit,
// or the emulated hosts' cgroups: node.cores CPUs as quota per period)
// does not run at a steady fraction of a core. It runs at full speed
// until the period's quota is used, then waits for the next period. A
// burst of work that starts with the quota unspent gets its first
// period's quota at once, so a phase of c CPU-seconds at share s ends
// up to a period sooner than c/s: for short phases (a quarter CPU, 100 ms
// periods, a 0.27 s phase) the steady rate over-predicts by about a
// third.

// quotaSamples is how many start offsets within a period QuotaTime
// averages over (a phase starts at no particular point of a period).
const quotaSamples = 64

// QuotaTime is the expected wall time of c CPU-seconds of work on a node
// limited to share cores by a quota renewed every period seconds, the
// work running at rate cores a second while the quota lasts and the
// quota unspent when it starts; the start's offset into its period is
// uniform. Without a period, or where the rate is no faster than the
// share, it is c/share.
func QuotaTime(c, share, rate, period float64) float64 {
	if c <= 0 || !(share > 0) {
		return 0
	}
	if !(period > 0) || rate <= share || math.IsInf(c, 0) {
		return c / share
	}
	quota := share * period
	var sum float64
	for i := range quotaSamples {
		// The first period has (period - offset) seconds left; each
		// later one a whole period. Work runs at rate until the
		// period's quota is spent.
		left := period * (1 - (float64(i)+0.5)/quotaSamples)
		rest, t := c, 0.0
		for rest > 0 {
			run := math.Min(quota, left*rate) // CPU-seconds this period
			if rest <= run {
				t += rest / rate
				break
			}
			rest -= run
			t += left
			left = period
			if n := math.Floor(rest/quota) - 1; n > 0 {
				// Whole periods at the quota.
				rest -= n * quota
				t += n * period
			}
		}
		sum += t
	}
	return sum / quotaSamples
}
