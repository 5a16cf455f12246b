package experiment

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/localcluster"
	"github.com/stratafs/strata/internal/media"
)

// The papers' clusters as profiles: per node, the devices each role
// spreads over (JBOD: a volume or a local dir per device) and their
// presets.
func TestPaperProfiles(t *testing.T) {
	for _, tc := range []struct {
		name           string
		volumes, local []string // presets, in order
		speedup, price float64
	}{
		{"sandisk-hdd-jbod", []string{"hdd-7200", "hdd-7200"}, []string{"hdd-7200", "hdd-7200"}, 1.0, 37561},
		{"sandisk-hdd-ssd-jbod", []string{"hdd-7200", "hdd-7200"}, []string{"cloudspeed-ssd"}, 1.4, 43081},
		{"sandisk-ssd-jbod", []string{"cloudspeed-ssd", "cloudspeed-ssd"}, []string{"cloudspeed-ssd", "cloudspeed-ssd"}, 2.6, 46567},
		{"dfsio-12hdd", repeat("hdd-7200", 12), repeat("hdd-7200", 12), 0, 0},
		{"dfsio-ssd", []string{"sata-ssd"}, repeat("hdd-7200", 12), 0, 0},
		{"amdahl-blade", []string{"raid0-2-vertex"}, []string{"raid0-2-vertex"}, 0, 0},
		{"amdahl-blade-hdd", []string{"spinpoint-f1"}, []string{"spinpoint-f1"}, 0, 0},
		{"occ-node", []string{"sas-15k", "sas-15k"}, []string{"sas-15k", "sas-15k"}, 0, 0},
	} {
		p, err := LoadProfile(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		preset := map[string]string{}
		for _, d := range p.Devices {
			preset[d.Name] = d.Preset
		}
		var vols, local []string
		for _, v := range p.Volumes {
			vols = append(vols, preset[v.Device])
		}
		for _, d := range p.LocalDirs {
			local = append(local, preset[d])
		}
		if strings.Join(vols, ",") != strings.Join(tc.volumes, ",") || strings.Join(local, ",") != strings.Join(tc.local, ",") {
			t.Errorf("%s: volumes on %v, local dirs on %v; want %v and %v", tc.name, vols, local, tc.volumes, tc.local)
		}
		if p.PaperSpeedup != tc.speedup || p.Price != tc.price {
			t.Errorf("%s: paper speed-up %v, price %v; want %v, %v", tc.name, p.PaperSpeedup, p.Price, tc.speedup, tc.price)
		}
		// Every device of a node is a device of its own for the emulation.
		dirs := strings.Split(p.MediaDirs("/c", 2), ",")
		if len(dirs) != 2*len(p.Devices) {
			t.Errorf("%s: strata.media.dirs %v, want %d devices", tc.name, dirs, 2*len(p.Devices))
		}
		c := conf.New()
		c.Set(media.KeyDirs, p.MediaDirs("/c", 2))
		if _, err := media.Parse(c); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// A JBOD profile runs, and both of a node's disks serve it: the DataNode
// writes blocks to each volume and the tasks spill to each local dir, so
// each emulated device records written bytes.
func TestRunJBOD(t *testing.T) {
	p, err := LoadProfile("sandisk-hdd-jbod")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := conf.New()
	c.Set("dfs.namenode.fs-limits.min-block-size", "1024")
	c.Set("dfs.blocksize", "256k") // blocks on both volumes of each node
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var progress bytes.Buffer
	res, err := Run(ctx, Options{Profiles: []*Profile{p}, Rows: 20000, Repetitions: 1, DataNodes: 2,
		MapSlots: 2, ReduceSlots: 1, Media: true, Keep: true, WorkDir: filepath.Join(dir, "work"), LogDir: filepath.Join(dir, "logs"),
		Conf: c, Years: 3, KWhPrice: 0.1, Progress: NewProgress(&progress)})
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress.String())
	}
	if len(res.Profiles) != 1 || res.Profiles[0].TeraSort <= 0 {
		t.Fatalf("results %+v", res.Profiles)
	}
	for i := 0; i < 2; i++ {
		for _, d := range []string{"hdd0", "hdd1"} {
			st, err := media.ReadStats(filepath.Join(localcluster.NodeDir(filepath.Join(dir, "work", p.Name), i), d))
			if err != nil {
				t.Fatal(err)
			}
			if st.WriteBytes == 0 {
				t.Errorf("node %d's %s was never written (%+v): the JBOD does not spread over both disks", i, d, st)
			}
		}
	}
}

// node.cpus and link.mbps: parsed as numbers within their ranges.
func TestProfileHostKeys(t *testing.T) {
	base := "name = x\ndevice.d = none\nhdfs.volumes = d\nmapred.local.dir = d\n"
	p, err := ParseProfile(strings.NewReader(base+"node.cpus = 0.5\nlink.mbps = 10000\n"), "x")
	if err != nil || p.NodeCPUs != 0.5 || p.LinkMbps != 10000 {
		t.Fatalf("%+v, %v", p, err)
	}
	for _, bad := range []string{"node.cpus = 0", "node.cpus = 2000", "node.cpus = fast", "link.mbps = 0.01", "link.mbps = 1e7", "link.mbps = -1"} {
		if _, err := ParseProfile(strings.NewReader(base+bad+"\n"), "x"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
