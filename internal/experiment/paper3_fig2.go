package experiment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Fig2Options configure Figure 2: TestDFSIO on the blade's three
// storage configurations with 1..MaxMappers mappers per node, each
// writing then reading FileBytes, at replication 3 (or the DataNodes').
type Fig2Options struct {
	FileBytes  int64
	MaxMappers int
}

// fig2Profiles are Figure 2's hardware configurations of the Amdahl
// blade: one Spinpoint F1, RAID0 over the two, the Vertex SSD.
var fig2Profiles = []struct{ name, preset string }{
	{"blade-hdd", "spinpoint-f1"},
	{"blade-raid0", "raid0-2-spinpoint-f1"},
	{"blade-ssd", "vertex"},
}

// Fig2Row is one TestDFSIO run of Figure 2.
type Fig2Row struct {
	Config  string  `json:"config"`
	Preset  string  `json:"preset"`
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
	var rows []Fig2Row
	for _, cfg := range fig2Profiles {
		p, err := ParseProfile(strings.NewReader(fmt.Sprintf(
			"name = %s\ndevice.d = %s\nhdfs.volumes = [DISK]d\nmapred.local.dir = d\nlink.mbps = 1000\nnode.cpus = 0.25\n", cfg.name, cfg.preset)), "figure 2")
		if err != nil {
			return nil, err
		}
		po.Progress.Logf("Figure 2: %s (%s), TestDFSIO with 1–%d mappers per node", cfg.name, cfg.preset, f.MaxMappers)
		o := po.clusterOptions()
		o.MapSlots = max(o.MapSlots, f.MaxMappers)
		rs, err := func() (rows []Fig2Row, err error) {
			dir, err := filepath.Abs(filepath.Join(o.WorkDir, cfg.name))
			if err != nil {
				return nil, err
			}
			os.RemoveAll(dir)
			if !o.Keep {
				defer os.RemoveAll(dir)
			}
			logf, err := os.Create(filepath.Join(o.LogDir, cfg.name+"-daemons.log"))
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
					rows = append(rows, Fig2Row{Config: cfg.name, Preset: cfg.preset, Op: d.Op, Mappers: m,
						PerNode: d.Aggregate / float64(o.DataNodes), DFSIOResult: d})
				}
			}
			return rows, nil
		}()
		if err != nil {
			return nil, fmt.Errorf("figure 2: %s: %w", cfg.name, err)
		}
		rows = append(rows, rs...)
	}
	return rows, nil
}

// fig2Table is Figure 2 with the paper's stated figures beside.
func (r *Paper3Results) fig2Table() Paper3Table {
	t := Paper3Table{Title: "Figure 2: TestDFSIO per node (buffered writes; replication 3), 1–3 mappers per node",
		Header: []string{"config", "op", "mappers", "strata MB/s per node", "paper MB/s per node", "strata/paper", "TestDFSIO throughput MB/s"}, file: "paper3-figure2.csv"}
	for _, row := range r.Fig2 {
		paper := 0.0
		if row.Op == "write" {
			paper = paper3.HDFSDirectWriteMBps
		}
		t.Rows = append(t.Rows, []string{row.Config, row.Op, fmt.Sprint(row.Mappers), p3cell(row.PerNode, 1), p3cell(paper, 0),
			p3cell(ratio2(row.PerNode, paper), 2), p3cell(row.Throughput, 1)})
	}
	t.Note = "The paper's write figure is with its DataNodes' direct I/O (\"about 75MB/s\", any configuration); strata's DataNode has no " +
		"O_DIRECT option, so its writes are buffered. Its read figures (local vs remote) are not stated in the seed text; here every node " +
		"holds a replica of every block (replication 3 on 3 nodes), so the reads are local."
	return t
}

func (r *Paper3Results) fig2Chart() namedChart {
	ch := &Chart{Title: "Figure 2: TestDFSIO per node", YLabel: "MB/s per node"}
	idx := map[string]int{}
	for _, row := range r.Fig2 {
		g := fmt.Sprintf("%s %s", row.Config, row.Op)
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
		ch.Values[row.Mappers-1][idx[fmt.Sprintf("%s %s", row.Config, row.Op)]] = row.PerNode
	}
	return namedChart{file: "paper3-figure2.svg", chart: ch}
}
