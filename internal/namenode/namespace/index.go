package namespace

// inodeIndex finds inodes by id. Ids are handed out in order from the
// root's (rootInodeID), so the ids in use are dense: the index keeps them
// in pages of indexPageSize slots, 8 bytes an id, where a map would cost
// 20 to 40 bytes an entry and a hash on every lookup. A page is freed
// when its last inode goes; ids outside the dense range (below the
// root's, or absurdly far above the last page, as only a corrupt image
// or log would have) go to a map.
type inodeIndex struct {
	pages  []*indexPage // page i holds ids rootInodeID + i*indexPageSize ...
	sparse map[uint64]*Inode
	n      int
}

const (
	indexPageBits = 10
	indexPageSize = 1 << indexPageBits
	// indexMaxPages bounds the page table (2^22 pages: 2^32 ids, a 32 MiB
	// table at most).
	indexMaxPages = 1 << 22
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

// get returns the inode with id, or nil.
func (x *inodeIndex) get(id uint64) *Inode {
	p, s, dense := indexSlot(id)
	if !dense {
		return x.sparse[id]
	}
	if p >= uint64(len(x.pages)) || x.pages[p] == nil {
		return nil
	}
	return x.pages[p].slots[s]
}

// put indexes n under id, replacing any inode there.
func (x *inodeIndex) put(id uint64, n *Inode) {
	p, s, dense := indexSlot(id)
	if !dense {
		if x.sparse == nil {
			x.sparse = map[uint64]*Inode{}
		}
		if _, ok := x.sparse[id]; !ok {
			x.n++
		}
		x.sparse[id] = n
		return
	}
	for uint64(len(x.pages)) <= p {
		x.pages = append(x.pages, nil)
	}
	pg := x.pages[p]
	if pg == nil {
		pg = &indexPage{}
		x.pages[p] = pg
	}
	if pg.slots[s] == nil {
		pg.used++
		x.n++
	}
	pg.slots[s] = n
}

// del drops id.
func (x *inodeIndex) del(id uint64) {
	p, s, dense := indexSlot(id)
	if !dense {
		if _, ok := x.sparse[id]; ok {
			delete(x.sparse, id)
			x.n--
		}
		return
	}
	if p >= uint64(len(x.pages)) || x.pages[p] == nil || x.pages[p].slots[s] == nil {
		return
	}
	pg := x.pages[p]
	pg.slots[s] = nil
	x.n--
	if pg.used--; pg.used == 0 {
		x.pages[p] = nil
	}
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
