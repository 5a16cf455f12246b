package experiment

// The third paper's published values ("Hadoop in Low-Power Processors",
// Zheng, Szalay and Terzis; the seed text in the project's shared
// seeds). Only the numbers its text states are here: the seed text does
// not carry the numeric contents of Table 2, Table 3 or Figures 1–2, so
// where a figure or a table cell is not stated, strata's tables print
// "n/a" in the paper's column rather than a guess.
var paper3 = struct {
	// Section 5 and the abstract: power at full load.
	BladeWatts, OCCWatts float64
	// Section 3 and 5: cluster sizes, the master included (nine blades,
	// four OCC nodes).
	BladeNodes, OCCNodes int
	// Section 5 / abstract: energy efficiency, blades over OCC, for
	// Neighbour Searching at θ = 30″ and for Neighbour Statistics.
	EnergyRatioSearch30, EnergyRatioStats float64
	// Section 2.1: input and the θ = 60″ output of Neighbour Searching.
	InputGB, Output60GB float64
	RecordBytes         int
	// Table 3's rows: Neighbour Searching at these θ (arcseconds); the
	// OCC cluster ran only 15″ and 30″ (no space for the 60″ output).
	Thetas    []float64
	OCCThetas []float64
	// Table 2 (text): the best local (same-node) TCP rate; the memory
	// copy rate and bandwidth it is compared with.
	LocalTCPMBps, MemCopyGBps, MemBandwidthGBps float64
	// Figure 2(a) (text): HDFS write per node with direct I/O; TestDFSIO
	// wrote 3 GB per mapper at replication 3.
	HDFSDirectWriteMBps float64
	DFSIOFileGB         float64
	// Section 5 (text): the OCC nodes' TestDFSIO and local-disk rates.
	OCCDFSIOReadMBps, OCCDFSIOWriteMBps float64
	OCCDiskReadMBps, OCCDiskWriteMBps   float64
	// Figure 1's benchmark: 64 MB per file, 100 files, one thread.
	Fig1FileMB, Fig1Files int
}{
	BladeWatts: 40, OCCWatts: 290,
	BladeNodes: 9, OCCNodes: 4,
	EnergyRatioSearch30: 7.7, EnergyRatioStats: 3.4,
	InputGB: 25, Output60GB: 540, RecordBytes: 57,
	Thetas: []float64{15, 30, 60}, OCCThetas: []float64{15, 30},
	LocalTCPMBps: 343, MemCopyGBps: 1.3, MemBandwidthGBps: 2.6,
	HDFSDirectWriteMBps: 75, DFSIOFileGB: 3,
	OCCDFSIOReadMBps: 65, OCCDFSIOWriteMBps: 15,
	OCCDiskReadMBps: 70, OCCDiskWriteMBps: 50,
	Fig1FileMB: 64, Fig1Files: 100,
}

// paper3RuntimeRatio is the OCC-over-blade runtime ratio the paper's
// energy ratio implies: efficiency = (T_occ · N_occ · W_occ) /
// (T_blade · N_blade · W_blade), so T_occ/T_blade = ratio · N_blade ·
// W_blade / (N_occ · W_occ). Table 3's own runtimes are not in the seed
// text; this is what they must have been in proportion.
func paper3RuntimeRatio(energyRatio float64) float64 {
	return energyRatio * float64(paper3.BladeNodes) * paper3.BladeWatts / (float64(paper3.OCCNodes) * paper3.OCCWatts)
}
