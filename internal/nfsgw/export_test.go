package nfsgw

// Waiters is how many WRITEs and COMMITs wait for a gap in the stream of
// inode id to fill.
func (g *Gateway) Waiters(id uint64) int {
	of := g.writes.lookup(id)
	if of == nil {
		return 0
	}
	of.mu.Lock()
	defer of.mu.Unlock()
	return of.waiters
}
