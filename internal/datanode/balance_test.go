package datanode

import (
	"testing"
	"time"
)

// TestThrottler: moving 4 periods' worth of bytes at the configured
// bandwidth takes about 3 periods of sleep, however they are chunked.
func TestThrottler(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var slept time.Duration
	th := newThrottler(1<<20, func() time.Time { return now }, func(d time.Duration) {
		slept += d
		now = now.Add(d)
	})
	perPeriod := int64(1<<20) * int64(throttlePeriod) / int64(time.Second)
	for sent := int64(0); sent < 4*perPeriod; sent += 64 << 10 {
		th.throttle(64 << 10)
	}
	if slept < 3*throttlePeriod-time.Millisecond || slept > 4*throttlePeriod {
		t.Fatalf("slept %v for 4 periods of data, want about %v", slept, 3*throttlePeriod)
	}
}

func TestBalancingSlots(t *testing.T) {
	b := newBalancing(1<<20, 2, time.Now)
	if !b.acquire() || !b.acquire() {
		t.Fatal("two slots refused")
	}
	if b.acquire() {
		t.Fatal("a third concurrent move accepted")
	}
	b.release()
	if !b.acquire() {
		t.Fatal("a released slot is not reusable")
	}
}
