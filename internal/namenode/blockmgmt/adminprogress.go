package blockmgmt

// AdminProgress is how far a DataNode decommissioning or entering
// maintenance has got: the figures of Hadoop's NameNodeInfo DecomNodes
// and EnteringMaintenanceNodes and its Datanodes page.
type AdminProgress struct {
	Node DatanodeInfo
	// UnderReplicated: blocks on the node without enough replicas on
	// in-service nodes elsewhere (what keeps it from finishing).
	UnderReplicated int
	// OnlyReplicas: blocks whose every live replica is on nodes leaving
	// service (Hadoop's decommissionOnlyReplicas, maintenanceOnlyReplicas).
	OnlyReplicas int
	// UnderReplicatedInOpenFiles: the under-replicated blocks of files
	// being written.
	UnderReplicatedInOpenFiles int
}

// AdminProgress reports every live node decommissioning or entering
// maintenance, by UUID. It walks those nodes' blocks, so it costs their
// replica count; nodes in service cost nothing.
func (m *Manager) AdminProgress() []AdminProgress {
	var out []AdminProgress
	for _, d := range m.sortedDatanodes() {
		if d.Dead || (d.AdminState != DecommissionInProgress && d.AdminState != EnteringMaintenance) {
			continue
		}
		p := AdminProgress{Node: d.Info()}
		for _, st := range d.Storages {
			for _, b := range st.Blocks {
				if m.sufficient(b) {
					continue
				}
				p.UnderReplicated++
				if live, _ := m.countReplicas(b); len(live) == 0 {
					p.OnlyReplicas++
				}
				if b.File != nil && b.File.IsUnderConstruction() {
					p.UnderReplicatedInOpenFiles++
				}
			}
		}
		out = append(out, p)
	}
	return out
}
