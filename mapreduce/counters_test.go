package mapreduce

import (
	"sync"
	"testing"
)

func TestCounterHandles(t *testing.T) {
	c := NewCounters()
	k := c.Counter(GroupTask, MapInputRecords)
	if len(c.Groups()) != 0 {
		t.Fatal("a Counter nobody added to exists")
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				k.Add(1)
				c.Add(GroupTask, MapInputRecords, 1)
			}
		}()
	}
	wg.Wait()
	if got := c.Get(GroupTask, MapInputRecords); got != 8000 {
		t.Fatalf("got %d, want 8000", got)
	}
	c.Counter(GroupUser, "zero").Add(0)
	if g := c.Group(GroupUser); len(g) != 1 || g[0].Value != 0 {
		t.Fatalf("a counter added 0 to: %v", g)
	}
	c.Aggregate(GroupTask, PeakMapRSS, 5)
	c.Aggregate(GroupTask, PeakMapRSS, 3)
	c.Aggregate(GroupTask, PeakMapRSS, 9)
	if got := c.Get(GroupTask, PeakMapRSS); got != 9 {
		t.Fatalf("peak %d, want 9", got)
	}
}
