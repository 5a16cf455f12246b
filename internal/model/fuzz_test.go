package model

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParseCluster: any cluster file either fails to parse or gives a
// cluster the calibration workload predicts on without a panic, with
// finite, non-negative times.
func FuzzParseCluster(f *testing.F) {
	for _, name := range BuiltinClusters() {
		b, err := builtinFS.ReadFile("clusters/" + name + ".cluster")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("name = a\nnodes = 1\nnode.cores = 0.01\ndevice.d = read=0,write=0,latency=0,seek=0,qd=1\nhdfs.volumes = d\nmapred.local.dir = d\ndfs.replication = 1\ndfs.blocksize = 1\ndata = 1\n")
	f.Add("name = q\nnodes = 3\nnode.cores = 0.01\nnode.cpu.quota.period = 1ms\ncpu.quota.shared = 0.01\ndevice.d = sata-ssd\nhdfs.volumes = d\nmapred.local.dir = d\ndata = 1t\n")
	res := mustCalibration(f)
	f.Fuzz(func(t *testing.T, text string) {
		c, err := ParseCluster(strings.NewReader(text), "fuzz")
		if err != nil {
			return
		}
		if c.Nodes > 1000 || c.BlockSize < 1<<20 && c.DataBytes > 1<<40 {
			return // valid, but a prediction of millions of blocks is slow, not wrong
		}
		p, err := Predict(res, c, 3, 0.1)
		if err != nil {
			return
		}
		for _, j := range p.Jobs {
			if v := j.Phases.Total(); !(v >= 0) || v > 1e18 {
				t.Fatalf("%s: total %v on %+v", j.Name, v, c)
			}
		}
	})
}

// FuzzReadWorkload: a damaged workload file is refused or predicts
// without a panic.
func FuzzReadWorkload(f *testing.F) {
	w := mustCalibration(f)
	var b bytes.Buffer
	if err := w.WriteJSON(&b); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte(`{"calibration":{"name":"a","nodes":1,"node_cores":1,"devices":[{"name":"d"}],"hdfs_volumes":["d"],"mapred_local_dir":["d"]},"jobs":[{"name":"x","maps":0,"bytes":0}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ReadWorkload(bytes.NewReader(data))
		if err != nil {
			return
		}
		if w.Calibration.Nodes > 1000 {
			return
		}
		Predict(w, w.Calibration, 3, 0.1)
	})
}

func mustCalibration(f *testing.F) *Workload {
	f.Helper()
	res, err := ReadRun("testdata/calibration-results.json")
	if err != nil {
		f.Fatal(err)
	}
	w, err := Calibrate(res, res.Profiles[0].Name)
	if err != nil {
		f.Fatal(err)
	}
	return w
}
