package blockmgmt

import (
	"sort"

	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/topology"
)

// Rack placement, as Hadoop's BlockPlacementPolicyDefault: the first
// replica of a new block on the writer's node when it is a DataNode (else
// anywhere), the second on another rack, the third on the second's rack,
// the rest anywhere; a copy of an existing block continues that sequence
// from the replicas it has. Each rule gives way (to the same rack, then
// anywhere) when no node satisfies it, so one rack means every replica on
// it. Storage types come first: the rack rules pick among storages of
// the wanted type, and a fallback type is tried only when no node at all
// has the wanted one.

// rackRule constrains where the next replica goes.
type rackRule struct {
	rack   string // "" : anywhere
	same   bool   // on rack (else off it)
	avoid  map[string]bool
	strict bool // no giving way
}

func (r rackRule) allows(d *Datanode) bool {
	if r.avoid != nil {
		return !r.avoid[d.rack()]
	}
	if r.rack == "" {
		return true
	}
	return (d.rack() == r.rack) == r.same
}

func (d *Datanode) rack() string {
	if d.Rack == "" {
		return topology.DefaultRack
	}
	return d.Rack
}

// nextRule is the rule for the replica after those on results.
func nextRule(results []*Datanode, writer *Datanode, creation bool) rackRule {
	switch len(results) {
	case 0:
		return rackRule{}
	case 1:
		return rackRule{rack: results[0].rack()}
	case 2:
		if results[0].rack() == results[1].rack() {
			return rackRule{rack: results[0].rack()}
		}
		if creation || writer == nil {
			return rackRule{rack: results[1].rack(), same: true}
		}
		return rackRule{rack: writer.rack(), same: true}
	}
	return rackRule{}
}

func (ds *datanodes) choose(p Placement) []*Storage {
	var out []*Storage
	used := map[string]bool{}
	for k, v := range p.Exclude {
		used[k] = v
	}
	fallbacks := p.Policy.ReplicationFallbacks
	if p.Creation {
		fallbacks = p.Policy.CreationFallbacks
	}
	results := append([]*Datanode(nil), p.Existing...)
	for i, want := range p.Types {
		rule := nextRule(results, p.Writer, p.Creation)
		if p.NewRack {
			rule = rackRule{avoid: map[string]bool{}, strict: true}
			for _, d := range results {
				rule.avoid[d.rack()] = true
			}
		}
		preferLocal := i == 0 && len(results) == 0
		candidates := append([]storage.Type{want}, fallbacks...)
		var pick *Storage
		for _, t := range candidates {
			if pick = ds.pick(t, used, p.Need, preferLocal, p.Local, rule); pick != nil {
				break
			}
			if rule.strict {
				continue
			}
			if rule.rack != "" && !rule.same {
				// Hadoop's chooseRemoteRack gives way to the local rack.
				if pick = ds.pick(t, used, p.Need, false, "", rackRule{rack: rule.rack, same: true}); pick != nil {
					break
				}
			}
			if pick = ds.pick(t, used, p.Need, preferLocal, p.Local, rackRule{}); pick != nil {
				break
			}
		}
		if pick == nil {
			continue
		}
		used[pick.DN.UUID] = true
		pick.scheduled += p.Need
		out = append(out, pick)
		results = append(results, pick.DN)
	}
	return out
}

func (ds *datanodes) pick(t storage.Type, used map[string]bool, need int64, preferLocal bool, local string, rule rackRule) *Storage {
	var all []*Storage
	for _, d := range ds.live() {
		if used[d.UUID] || d.AdminState != Normal || !rule.allows(d) {
			continue
		}
		for _, s := range d.SortedStorages() {
			if s.Failed || s.Type != t || s.Remaining-s.scheduled < need {
				continue
			}
			all = append(all, s)
		}
	}
	if len(all) == 0 {
		return nil
	}
	if preferLocal && local != "" {
		var locals []*Storage
		for _, s := range all {
			if s.DN.IP == local {
				locals = append(locals, s)
			}
		}
		if len(locals) > 0 {
			all = locals
		}
	}
	return all[ds.rng.IntN(len(all))]
}

// numRacks is the number of racks with an in-service DataNode (counted
// once per replication pass: see Replicate).
func (m *Manager) numRacks() int {
	if m.passRacks > 0 {
		return m.passRacks
	}
	racks := map[string]bool{}
	for _, d := range m.dns.byUUID {
		if d.InService() {
			racks[d.rack()] = true
		}
	}
	return len(racks)
}

// rackSatisfied is the default policy's verifyBlockPlacement: a block
// of replication 2 or more spans min(2, racks) racks.
func (m *Manager) rackSatisfied(want int, live []*Replica) bool {
	minRacks := min(2, m.numRacks(), want)
	if minRacks <= 1 {
		return true
	}
	racks := map[string]bool{}
	for _, r := range live {
		racks[r.Storage.DN.rack()] = true
	}
	return len(racks) >= minRacks
}

// adminRank orders replicas for readers: in-service nodes first, nodes
// on their way out next, nodes that are out last (Hadoop's
// decommissioned-last comparator).
func adminRank(d *Datanode) int {
	switch d.AdminState {
	case Normal:
		return 0
	case DecommissionInProgress, EnteringMaintenance:
		return 1
	}
	return 2
}

// sortByDistance orders locs for a reader at clientIP: by admin rank,
// then network distance (the reader's node, its rack, other racks),
// keeping the given (random) order among equals.
func (m *Manager) sortByDistance(locs []*Storage, clientIP string) {
	clientRack := ""
	if d := m.dns.byIP[clientIP]; d != nil && d.IP == clientIP {
		clientRack = d.rack()
	}
	if clientRack == "" && m.clientRack != nil {
		clientRack = m.clientRack(clientIP)
	}
	dist := func(d *Datanode) int {
		if d.IP == clientIP {
			return 0
		}
		if clientRack != "" && d.rack() == clientRack {
			return 2
		}
		return 4
	}
	sort.SliceStable(locs, func(i, j int) bool {
		a, b := locs[i].DN, locs[j].DN
		if ra, rb := adminRank(a), adminRank(b); ra != rb {
			return ra < rb
		}
		return dist(a) < dist(b)
	})
}

// excessOrder sorts the candidates for deletion of an over-replicated
// block as Hadoop's chooseReplicaToDelete: the policy's misplaced types
// first (isExtra), then the replica named by the delete hint when its
// removal keeps the rack spread, then replicas on racks holding more
// than one, least space remaining first.
func (m *Manager) excessOrder(b *Block, cands []*Replica, isExtra map[*Replica]bool) []*Replica {
	perRack := map[string]int{}
	for _, r := range cands {
		perRack[r.Storage.DN.rack()]++
	}
	hint := m.delHints[b.ID]
	key := func(r *Replica) int {
		k := 0
		if !isExtra[r] {
			k += 4
		}
		if hint == "" || r.Storage.DN.UUID != hint || perRack[r.Storage.DN.rack()] < 2 && len(perRack) <= 2 {
			k += 2
		}
		if perRack[r.Storage.DN.rack()] < 2 {
			k++
		}
		return k
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if ki, kj := key(cands[i]), key(cands[j]); ki != kj {
			return ki < kj
		}
		return cands[i].Storage.Remaining < cands[j].Storage.Remaining
	})
	return cands
}
