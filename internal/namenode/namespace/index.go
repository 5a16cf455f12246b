package namespace

// inodeIndex finds inodes by id. Ids are handed out in order from the
// root's (rootInodeID), so the ids in use are dense: the index keeps them
// in pages of indexPageSize slots, 8 bytes an id, where a map would cost
// 20 to 40 bytes an entry and a hash on every lookup. The page table costs
// 8 bytes per page of ids ever handed out (1/16 byte an id).
//
// Deletes thin pages out: new ids are above every page's, so a page whose
// inodes were mostly deleted would stay pinned, 1 KiB, by the few left. A
// page other than the last (where new ids go) with indexPageLow inodes or
// fewer — when a delete thins it or when it stops being the last — moves
// them to the map (demoted counts them per page) and is freed; puts into its
// range (replayed or loaded ids) go to the map too, until it holds twice
// indexPageLow of them, which then move back into a new page. So a page
// that deletes thinned holds more than indexPageLow inodes, under 128
// bytes of page an inode, or is the last. Ids outside
// the dense range (below the root's, or absurdly far above the last page,
// as only a corrupt image or log would have) go to the map too.
//
// Every id is in exactly one place: its page when the page exists, else
// the map.
type inodeIndex struct {
	pages   []*indexPage // page i holds ids rootInodeID + i*indexPageSize ...
	sparse  map[uint64]*Inode
	demoted map[uint64]int // page number -> its ids in sparse
	n       int
}

const (
	indexPageBits = 7
	indexPageSize = 1 << indexPageBits
	// indexPageLow is the occupancy at which a page moves its inodes
	// to the map: 8 map entries cost less than the 1 KiB page.
	indexPageLow = indexPageSize / 16
	// indexMaxPages bounds the page table (2^25 pages: 2^32 ids, a 256
	// MiB table at most).
	indexMaxPages = 1 << 25
)

type indexPage struct {
	slots [indexPageSize]*Inode
	used  int
}

// slot returns id's page number and slot, and whether id is in the dense
// range.
func indexSlot(id uint64) (page uint64, slot int, dense bool) {
	if id < rootInodeID {
		return 0, 0, false
	}
	off := id - rootInodeID
	page = off >> indexPageBits
	return page, int(off & (indexPageSize - 1)), page < indexMaxPages
}

// page returns page p, or nil.
func (x *inodeIndex) page(p uint64) *indexPage {
	if p >= uint64(len(x.pages)) {
		return nil
	}
	return x.pages[p]
}

// get returns the inode with id, or nil.
func (x *inodeIndex) get(id uint64) *Inode {
	p, s, dense := indexSlot(id)
	if dense {
		if pg := x.page(p); pg != nil {
			return pg.slots[s]
		}
	}
	return x.sparse[id] // nil when the map is
}

// put indexes n under id, replacing any inode there.
func (x *inodeIndex) put(id uint64, n *Inode) {
	p, s, dense := indexSlot(id)
	if !dense {
		x.putSparse(id, n)
		return
	}
	pg := x.page(p)
	if pg == nil {
		if d := x.demoted[p]; d > 0 && d < 2*indexPageLow {
			// A demoted page's range stays in the map until it
			// fills to twice the demotion point.
			if _, ok := x.sparse[id]; !ok {
				x.demoted[p]++
			}
			x.putSparse(id, n)
			return
		}
		pg = x.newPage(p)
	}
	if pg.slots[s] == nil {
		pg.used++
		x.n++
	}
	pg.slots[s] = n
}

func (x *inodeIndex) putSparse(id uint64, n *Inode) {
	if x.sparse == nil {
		x.sparse = map[uint64]*Inode{}
	}
	if _, ok := x.sparse[id]; !ok {
		x.n++
	}
	x.sparse[id] = n
}

// newPage adds page p, bringing back the ids of p a demotion moved to the
// map.
func (x *inodeIndex) newPage(p uint64) *indexPage {
	if last := len(x.pages) - 1; uint64(len(x.pages)) <= p && last >= 0 {
		// The last page stops being the one new ids go to.
		if old := x.pages[last]; old != nil && old.used <= indexPageLow {
			x.demote(uint64(last), old)
		}
	}
	for uint64(len(x.pages)) <= p {
		x.pages = append(x.pages, nil)
	}
	pg := &indexPage{}
	x.pages[p] = pg
	if x.demoted[p] > 0 {
		base := rootInodeID + p<<indexPageBits
		for s := range pg.slots {
			if n, ok := x.sparse[base+uint64(s)]; ok {
				pg.slots[s] = n
				pg.used++
				delete(x.sparse, base+uint64(s))
			}
		}
		delete(x.demoted, p)
	}
	return pg
}

// del drops id.
func (x *inodeIndex) del(id uint64) {
	p, s, dense := indexSlot(id)
	pg := x.page(p)
	if !dense || pg == nil {
		if _, ok := x.sparse[id]; ok {
			delete(x.sparse, id)
			x.n--
			if dense {
				if x.demoted[p]--; x.demoted[p] == 0 {
					delete(x.demoted, p)
				}
			}
		}
		return
	}
	if pg.slots[s] == nil {
		return
	}
	pg.slots[s] = nil
	x.n--
	// The last page, where new ids go, stays however thin: it would
	// only be made again.
	if pg.used--; pg.used <= indexPageLow && p+1 < uint64(len(x.pages)) {
		x.demote(p, pg)
	}
}

// demote moves page p's inodes to the map and frees the page.
func (x *inodeIndex) demote(p uint64, pg *indexPage) {
	x.pages[p] = nil
	if pg.used == 0 {
		return
	}
	if x.sparse == nil {
		x.sparse = map[uint64]*Inode{}
	}
	if x.demoted == nil {
		x.demoted = map[uint64]int{}
	}
	base := rootInodeID + p<<indexPageBits
	for s, n := range pg.slots {
		if n != nil {
			x.sparse[base+uint64(s)] = n
		}
	}
	x.demoted[p] = pg.used
}

// len is the number of inodes indexed.
func (x *inodeIndex) len() int { return x.n }

// each calls f for every inode, in no particular order.
func (x *inodeIndex) each(f func(*Inode)) {
	for _, pg := range x.pages {
		if pg == nil {
			continue
		}
		for _, n := range pg.slots {
			if n != nil {
				f(n)
			}
		}
	}
	for _, n := range x.sparse {
		f(n)
	}
}
