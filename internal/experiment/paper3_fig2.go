package experiment

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Fig2Options configure Figure 2: TestDFSIO on the blade's three
// storage configurations with 1..MaxMappers mappers per node, each
// writing then reading FileBytes, at replication 3 (or the DataNodes'),
// once per DataNode write mode in IO.
type Fig2Options struct {
	FileBytes  int64
	MaxMappers int
	// IO are the DataNodes' write modes, a cluster each: "buffered"
	// (through the page cache) and "direct" (O_DIRECT,
	// strata.datanode.direct-io.write, as the paper's DataNodes wrote).
	// Empty means both.
	IO []string
}

// Fig2IO are Figure 2's DataNode write modes, in the order they run.
var Fig2IO = []string{"buffered", "direct"}

// fig2Refused is the DataNode's warning when a volume refuses O_DIRECT
// (package fsdataset): its writes were buffered after all.
const fig2Refused = "direct I/O refused"

// fig2Profiles are Figure 2's hardware configurations of the Amdahl
// blade: one Spinpoint F1, RAID0 over the two, the Vertex SSD.
var fig2Profiles = []struct{ name, preset string }{
	{"blade-hdd", "spinpoint-f1"},
	{"blade-raid0", "raid0-2-spinpoint-f1"},
	{"blade-ssd", "vertex"},
}

// Fig2Row is one TestDFSIO run of Figure 2.
type Fig2Row struct {
	Config string `json:"config"`
	Preset string `json:"preset"`
	// IO is the DataNodes' write mode, buffered or direct ("" in
	// results of before it was measured: buffered). Reads are buffered
	// in both.
	IO string `json:"io,omitempty"`
	// Refused is set when a volume refused O_DIRECT: the "direct"
	// cluster's writes went through the page cache.
	Refused bool    `json:"direct_refused,omitempty"`
	Op      string  `json:"op"`
	Mappers int     `json:"mappers_per_node"`
	PerNode float64 `json:"per_node_mb_s"`
	DFSIOResult
}

// runFig2 runs Figure 2 on a fresh cluster per configuration.
func runFig2(ctx context.Context, po *Paper3Options) ([]Fig2Row, error) {
	f := po.Fig2
	if f.FileBytes <= 0 {
		f.FileBytes = 32 << 20
	}
	if f.MaxMappers < 1 {
		f.MaxMappers = 3
	}
	if len(f.IO) == 0 {
		f.IO = Fig2IO
	}
	for _, m := range f.IO {
		if !slices.Contains(Fig2IO, m) {
			return nil, fmt.Errorf("figure 2: unknown write mode %q (want %s)", m, strings.Join(Fig2IO, ", "))
		}
	}
	var rows []Fig2Row
	for _, cfg := range fig2Profiles {
		for _, mode := range f.IO {
			rs, err := runFig2Cluster(ctx, po, f, cfg.name, cfg.preset, mode)
			if err != nil {
				return nil, fmt.Errorf("figure 2: %s, %s writes: %w", cfg.name, mode, err)
			}
			rows = append(rows, rs...)
		}
	}
	return rows, nil
}

// runFig2Cluster runs Figure 2's TestDFSIO on a fresh cluster of one
// configuration whose DataNodes write in mode.
func runFig2Cluster(ctx context.Context, po *Paper3Options, f Fig2Options, name, preset, mode string) ([]Fig2Row, error) {
	// The profile's name is the cluster's, with the mode: its job and
	// (with -hosts) daemon logs are files of their own.
	text := fmt.Sprintf("name = %s-%s\ndevice.d = %s\nhdfs.volumes = [DISK]d\nmapred.local.dir = d\nlink.mbps = 1000\nnode.cpus = 0.25\n", name, mode, preset)
	if mode == "direct" {
		text += "conf.strata.datanode.direct-io.write = true\n"
	}
	p, err := ParseProfile(strings.NewReader(text), "figure 2")
	if err != nil {
		return nil, err
	}
	po.Progress.Logf("Figure 2: %s (%s), %s DataNode writes, TestDFSIO with 1–%d mappers per node", name, preset, mode, f.MaxMappers)
	o := po.clusterOptions()
	o.MapSlots = max(o.MapSlots, f.MaxMappers)
	logPath := filepath.Join(o.LogDir, p.Name+"-daemons.log")
	rows, err := func() (rows []Fig2Row, err error) {
		dir, err := filepath.Abs(filepath.Join(o.WorkDir, p.Name))
		if err != nil {
			return nil, err
		}
		os.RemoveAll(dir)
		if !o.Keep {
			defer os.RemoveAll(dir)
		}
		logf, err := os.Create(logPath)
		if err != nil {
			return nil, err
		}
		defer logf.Close()
		cl, env, err := startCluster(ctx, o, p, dir, logf)
		if err != nil {
			return nil, err
		}
		defer func() {
			if cerr := cl.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}()
		r := min(3, o.DataNodes)
		for m := 1; m <= f.MaxMappers; m++ {
			n := m * o.DataNodes
			o.DFSIOTotal = int64(n) * f.FileBytes
			res, err := runDFSIO(ctx, o, p, env, r, n)
			if err != nil {
				return nil, err
			}
			for _, d := range res {
				rows = append(rows, Fig2Row{Config: name, Preset: preset, IO: mode, Op: d.Op, Mappers: m,
					PerNode: d.Aggregate / float64(o.DataNodes), DFSIOResult: d})
			}
		}
		return rows, nil
	}()
	if err != nil || mode != "direct" {
		return rows, err
	}
	// The DataNodes log (at warn, the daemons' level) when a volume
	// refuses O_DIRECT; their writes were buffered then. In one process
	// the log is logPath; with -hosts each daemon's is <profile>-<daemon>.log.
	logs, _ := filepath.Glob(filepath.Join(o.LogDir, p.Name+"-*.log"))
	for _, l := range logs {
		if b, err := os.ReadFile(l); err == nil && bytes.Contains(b, []byte(fig2Refused)) {
			po.Progress.Logf("Figure 2: %s: a volume refused O_DIRECT (%s); its \"direct\" writes were buffered", p.Name, l)
			for i := range rows {
				rows[i].Refused = true
			}
			break
		}
	}
	return rows, nil
}

// io is the row's DataNode write mode.
func (row Fig2Row) io() string {
	if row.IO == "" {
		return "buffered"
	}
	return row.IO
}

// fig2Table is Figure 2 with the paper's stated figure beside the
// direct writes, and each direct row over its buffered twin.
func (r *Paper3Results) fig2Table() Paper3Table {
	t := Paper3Table{Title: "Figure 2: TestDFSIO per node (replication 3), 1–3 mappers per node, DataNodes writing buffered and direct (O_DIRECT)",
		Header: []string{"config", "op", "DataNode writes", "mappers", "strata MB/s per node", "paper MB/s per node", "strata/paper", "direct/buffered", "TestDFSIO throughput MB/s"},
		file:   "paper3-figure2.csv"}
	buffered := map[string]float64{}
	key := func(row Fig2Row) string { return fmt.Sprintf("%s|%s|%d", row.Config, row.Op, row.Mappers) }
	for _, row := range r.Fig2 {
		if row.io() == "buffered" {
			buffered[key(row)] = row.PerNode
		}
	}
	refused := false
	for _, row := range r.Fig2 {
		io, paper, over := row.io(), 0.0, 0.0
		if io == "direct" {
			if row.Op == "write" {
				paper = paper3.HDFSDirectWriteMBps
			}
			over = ratio2(row.PerNode, buffered[key(row)])
		}
		if row.Refused {
			io, refused = "direct (refused: buffered)", true
		}
		t.Rows = append(t.Rows, []string{row.Config, row.Op, io, fmt.Sprint(row.Mappers), p3cell(row.PerNode, 1), p3cell(paper, 0),
			p3cell(ratio2(row.PerNode, paper), 2), p3cell(over, 2), p3cell(row.Throughput, 1)})
	}
	t.Note = "The paper's write figure (\"about 75MB/s\", any configuration) is with its DataNodes' direct I/O: it stands beside the direct writes " +
		"(strata.datanode.direct-io.write = true: full 1 MiB buffers with O_DIRECT, a block's tail through the page cache). Reads are buffered in both modes. " +
		"The paper's read figures (local vs remote) are not stated in the seed text; here every node holds a replica of every block " +
		"(replication 3 on 3 nodes), so the reads are local."
	if refused {
		t.Note += " \"refused\": a volume's file system refused O_DIRECT, so those writes were buffered."
	}
	return t
}

func (r *Paper3Results) fig2Chart() namedChart {
	ch := &Chart{Title: "Figure 2: TestDFSIO per node, DataNodes writing buffered and direct", YLabel: "MB/s per node"}
	idx := map[string]int{}
	group := func(row Fig2Row) string { return fmt.Sprintf("%s %s %s", row.Config, row.Op, row.io()) }
	for _, row := range r.Fig2 {
		g := group(row)
		if _, ok := idx[g]; !ok {
			idx[g] = len(ch.Groups)
			ch.Groups = append(ch.Groups, g)
		}
		for len(ch.Series) < row.Mappers {
			ch.Series = append(ch.Series, fmt.Sprintf("%d mappers", len(ch.Series)+1))
		}
	}
	ch.Values = make([][]float64, len(ch.Series))
	for s := range ch.Values {
		ch.Values[s] = nanSlice(len(ch.Groups))
	}
	for _, row := range r.Fig2 {
		ch.Values[row.Mappers-1][idx[group(row)]] = row.PerNode
	}
	return namedChart{file: "paper3-figure2.svg", chart: ch}
}
