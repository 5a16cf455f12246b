package zones

// Search runs the neighbour search in memory, as the MapReduce jobs do it
// (Route for every object, then Pairs for every block), and calls fn with
// every pair of objects within θ once. It is the jobs' code without the
// shuffle, for tests and checks on catalogues that fit in memory.
func (g *Geometry) Search(objs []Object, fn func(a, b Object, chord2 float64) error) error {
	blocks := map[uint32][]Entry{}
	for _, o := range objs {
		if err := o.Check(); err != nil {
			return err
		}
		g.Route(o, func(b uint32, copy bool) error {
			blocks[b] = append(blocks[b], Entry{Object: o, Copy: copy})
			return nil
		})
	}
	for _, entries := range blocks {
		err := g.Pairs(entries, func(a, b int, chord2 float64) error {
			return fn(entries[a].Object, entries[b].Object, chord2)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// BruteForce calls fn with every pair of objects within theta degrees,
// comparing every object with every other: the O(N²) reference the tests
// hold the Zones code to. Its test is the jobs' (squared chord below
// ChordLimit), so the two agree exactly, also on pairs at θ to the last
// bit.
func BruteForce(objs []Object, theta float64, fn func(a, b Object, chord2 float64)) {
	limit := ChordLimit(theta)
	v := make([]Vector, len(objs))
	for i, o := range objs {
		v[i] = UnitVector(o.RA, o.Dec)
	}
	for i := range objs {
		for j := i + 1; j < len(objs); j++ {
			if d := Chord2(v[i], v[j]); d < limit {
				fn(objs[i], objs[j], d)
			}
		}
	}
}
