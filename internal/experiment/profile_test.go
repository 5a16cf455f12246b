package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/storage"
)

func TestBuiltinProfiles(t *testing.T) {
	names := BuiltinProfiles()
	for _, want := range []string{"all-hdd", "all-ssd", "one-ssd", "ram-intermediate", "ssd-intermediate"} {
		p, err := LoadProfile(want)
		if err != nil {
			t.Fatalf("%s: %v (built-in: %v)", want, err, names)
		}
		if p.Name != want {
			t.Errorf("profile %s is named %q", want, p.Name)
		}
	}
	ps, err := LoadProfiles(strings.Join(DefaultProfiles, ","))
	if err != nil {
		t.Fatal(err)
	}
	// The paper's layouts: where HDFS and the intermediate data live.
	want := map[string][2]string{
		"all-hdd":          {"hdd-7200", "hdd-7200"},
		"ssd-intermediate": {"hdd-7200", "sata-ssd"},
		"all-ssd":          {"sata-ssd", "sata-ssd"},
	}
	prices := map[string]float64{"all-hdd": 37561, "ssd-intermediate": 43081, "all-ssd": 46567}
	for _, p := range ps {
		preset := map[string]string{}
		for _, d := range p.Devices {
			preset[d.Name] = d.Preset
		}
		got := [2]string{preset[p.Volumes[0].Device], preset[p.LocalDirs[0]]}
		if got != want[p.Name] || len(p.Volumes) != 1 || len(p.LocalDirs) != 1 {
			t.Errorf("%s: HDFS on %s, intermediate data on %s; want %v", p.Name, got[0], got[1], want[p.Name])
		}
		if p.Price != prices[p.Name] {
			t.Errorf("%s: price %v, want the paper's %v", p.Name, p.Price, prices[p.Name])
		}
	}
	if ps[1].PaperSpeedup != 1.4 || ps[2].PaperSpeedup != 2.6 {
		t.Errorf("paper speed-ups %v %v, want 1.4 and 2.6", ps[1].PaperSpeedup, ps[2].PaperSpeedup)
	}
}

func TestProfileLayout(t *testing.T) {
	p, err := ParseProfile(strings.NewReader(`
# comment
name = mine
description = two volumes
device.hdd = hdd-7200
device.fast = nvme
device.plain = none
hdfs.volumes = [DISK]hdd, [ssd]fast
mapred.local.dir = plain,fast
storage.policy = ONE_SSD
conf.io.sort.mb = 50
price = 100.5
watts = 300
`), "mine.profile")
	if err != nil {
		t.Fatal(err)
	}
	if p.Volumes[1].Type != storage.SSD || p.StoragePolicy != "ONE_SSD" || p.Price != 100.5 || p.Watts != 300 ||
		len(p.Conf) != 1 || p.Conf[0] != [2]string{"io.sort.mb", "50"} {
		t.Fatalf("parsed %+v", p)
	}
	n := p.Node("/c", 1)
	if n.Volumes[0].Path != "/c/dn1/hdd/data" || n.Volumes[1].Path != "/c/dn1/fast/data" ||
		strings.Join(n.LocalDirs, ",") != "/c/dn1/plain/mapred-local,/c/dn1/fast/mapred-local" {
		t.Errorf("node layout %+v", n)
	}
	// Every node has its own devices; plain directories are not emulated.
	if got, want := p.MediaDirs("/c", 2), "/c/dn0/hdd=hdd-7200,/c/dn0/fast=nvme,/c/dn1/hdd=hdd-7200,/c/dn1/fast=nvme"; got != want {
		t.Errorf("media dirs %q, want %q", got, want)
	}
	if !p.Emulated() {
		t.Error("not emulated")
	}
}

func TestProfileErrors(t *testing.T) {
	base := "name = x\ndevice.d = hdd-7200\nhdfs.volumes = d\nmapred.local.dir = d\n"
	for _, tc := range []struct{ text, want string }{
		{"name = x\nnonsense line\n", "bad.profile:2: expected key = value"},
		{base + "colour = blue\n", `bad.profile:5: unknown key "colour"`},
		{base + "device.e = floppy\n", `unknown preset "floppy" (known: hdd-7200, sata-ssd, nvme, ram, sas-15k, cloudspeed-ssd, spinpoint-f1, vertex, none, raid0-<n>-<preset>)`},
		{base + "name = y\n", "bad.profile:5: name is already set on line 1"},
		{base + "price = -3\n", `price: "-3" is not a non-negative number`},
		{base + "watts = lots\n", `watts: "lots" is not a non-negative number`},
		{base + "price = Inf\n", `price: "Inf" is not a non-negative number`},
		{"name = x\ndevice.d = ram\nhdfs.volumes = [TAPE]d\nmapred.local.dir = d\n", "hdfs.volumes"},
		{"name = x\ndevice.d = ram\nhdfs.volumes = e\nmapred.local.dir = d\n", `hdfs.volumes: unknown device "e"`},
		{"name = x\ndevice.d = ram\nhdfs.volumes = d\nmapred.local.dir = f\n", `mapred.local.dir: unknown device "f"`},
		{"name = x\ndevice.d = ram\nmapred.local.dir = d\n", "no hdfs.volumes"},
		{"device.d = ram\nhdfs.volumes = d\nmapred.local.dir = d\n", "no name"},
		{"name = Bad Name\n", `name "Bad Name"`},
		{"name = x\ndevice.d = ram\nhdfs.volumes = d,d\nmapred.local.dir = d\n", "device d holds two volumes"},
		{"name = x\n" + strings.Repeat("#", 70<<10) + "\n", "line longer than 64 KiB"},
	} {
		_, err := ParseProfile(strings.NewReader(tc.text), "bad.profile")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to contain %q", tc.text, err, tc.want)
		}
	}
	if _, err := LoadProfile("no-such"); err == nil || !strings.Contains(err.Error(), "all-hdd") {
		t.Errorf("unknown built-in: %v", err)
	}
	if _, err := LoadProfiles("all-hdd,all-hdd"); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("duplicate: %v", err)
	}
	f := filepath.Join(t.TempDir(), "mine.profile")
	os.WriteFile(f, []byte(base), 0o644)
	if p, err := LoadProfile(f); err != nil || p.Name != "x" || p.Source != f {
		t.Errorf("from file: %+v %v", p, err)
	}
}
