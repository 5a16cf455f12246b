package model

import (
	"math"
	"testing"
)

// exactServed is servedReads by enumeration: every placement of each
// reader's r replicas and every choice of a remote holder, for small
// shapes.
func exactServed(readers, n, perNode, r int) (dist []float64, local float64) {
	var subsets [][]int
	var pick func(from int, cur []int)
	pick = func(from int, cur []int) {
		if len(cur) == r {
			subsets = append(subsets, append([]int(nil), cur...))
			return
		}
		for h := from; h < n; h++ {
			pick(h+1, append(cur, h))
		}
	}
	pick(0, nil)
	dist = make([]float64, readers+1)
	served := make([]int, n)
	var walk func(i int, p float64)
	walk = func(i int, p float64) {
		if i == readers {
			busiest := 0
			for _, c := range served {
				busiest = max(busiest, c)
			}
			dist[busiest] += p
			return
		}
		node := i / perNode
		for _, set := range subsets {
			q := p / float64(len(subsets))
			has := false
			for _, h := range set {
				has = has || h == node
			}
			if has {
				local += q / float64(readers)
				served[node]++
				walk(i+1, q)
				served[node]--
				continue
			}
			for _, h := range set {
				served[h]++
				walk(i+1, q/float64(r))
				served[h]--
			}
		}
	}
	walk(0, 1)
	return dist, local
}

// TestServedReads: the simulation agrees with the enumeration; with a
// replica on every node each reader reads its own.
func TestServedReads(t *testing.T) {
	for _, c := range []struct{ readers, n, perNode, r int }{{3, 6, 1, 3}, {3, 4, 1, 2}, {4, 6, 2, 3}, {2, 5, 1, 1}} {
		got, gotLocal := servedReads(c.readers, c.n, c.perNode, c.r)
		want, wantLocal := exactServed(c.readers, c.n, c.perNode, c.r)
		var gm, wm float64
		for l := range want {
			gm += float64(l) * got[l]
			wm += float64(l) * want[l]
		}
		if math.Abs(gm-wm) > 0.03 || math.Abs(gotLocal-wantLocal) > 0.03 {
			t.Errorf("%+v: busiest node serves %.3f reads, %.0f%% local; exactly %.3f, %.0f%%", c, gm, 100*gotLocal, wm, 100*wantLocal)
		}
	}
	dist, local := servedReads(6, 3, 2, 3)
	if local != 1 || dist[2] != 1 {
		t.Errorf("every node holding every file: %v, local %g", dist, local)
	}
	if a, _ := servedReads(3, 6, 1, 3); a[2] < 0.2 {
		t.Errorf("three readers on six nodes meet on one with chance %.2f", a[2])
	}
}

// TestOwnReadsMeet: TestDFSIO read, a reader per node, each reading a
// file of its own, takes longer on HDDs on four times the calibration's
// nodes than on the calibration's three of three replicas: there the
// readers most often meet on a node's disk and seek, here each reads
// its own node's replica.
func TestOwnReadsMeet(t *testing.T) {
	_, w := calibration(t)
	// The calibration's TeraValidate made a job of TestDFSIO read's
	// shape: a map per file, each reading its file whole.
	var j *Job
	for i := range w.Jobs {
		if w.Jobs[i].Name == "teravalidate" {
			v := w.Jobs[i]
			j = &v
		}
	}
	if j == nil {
		t.Fatal("no teravalidate in the calibration")
	}
	j.Name, j.MapsRule, j.MapHDFSRead = "dfsio-read", "fixed", 1
	if !j.ownReads() {
		t.Fatalf("%s: not a job of its own reads", j.Name)
	}
	perFile := j.Bytes / float64(j.Maps)
	devTime := func(cl *Cluster) float64 {
		s := j.shape(cl, perFile*float64(cl.Nodes), cl.Nodes, j.Reduces)
		t := s.times(cl, PhaseMap, j)
		var mx float64
		for k, v := range t {
			if k != "cpu" && k != "network" {
				mx = max(mx, v)
			}
		}
		return mx
	}
	cal := *w.Calibration
	big := cal
	big.Nodes = 4 * cal.Nodes
	if d, _ := servedReads(big.Nodes, big.Nodes, 1, cal.Replication); d[1] >= 0.5 {
		t.Fatalf("%d readers on %d nodes: the busiest serves one read with chance %.2f; the test wants them to meet", big.Nodes, big.Nodes, d[1])
	}
	small, large := devTime(&cal), devTime(&big)
	if large < 1.2*small {
		t.Errorf("%s on %d nodes: the busiest device %.3f s, on %d nodes %.3f s: want the meeting readers slower", j.Name, big.Nodes, large, cal.Nodes, small)
	}
}
