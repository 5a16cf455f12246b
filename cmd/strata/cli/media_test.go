package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/media"
)

func TestMediaPresets(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"-D", "strata.media.nvme.queue.depth=4", "media", "presets"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	rows := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = strings.Join(f[1:], " ")
		}
	}
	for name, want := range map[string]string{
		"hdd-7200": "175.0 175.0 0s 12.66ms 1 78.8 78.8",
		"sata-ssd": "550.0 520.0 92µs 0s 10 10056 100556",
		"nvme":     "3500 3300 51µs 0s 4 19168 76672", // the override applies
		"ram":      "unlimited unlimited 0s 0s 1 unlimited unlimited",
	} {
		if rows[name] != want {
			t.Errorf("%s: %q, want %q\n%s", name, rows[name], want, out.String())
		}
	}
	if code := Main([]string{"-D", "strata.media.nvme.speed=9", "media", "presets"}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "unknown key strata.media.nvme.speed") {
		t.Errorf("unknown media key: exit %d, %q", code, errb.String())
	}
}

func TestMediaBenchAndStats(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	// ram adds no cost, so its figures have no model to miss.
	if code := Main([]string{"media", "bench", "-preset", "ram", "-dir", dir, "-size", "1m", "-time", "10ms", "-runs", "1"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errb.String(), out.String())
	}
	for _, want := range []string{"ram", "seq write MB/s", "seq read MB/s", "rand 4K read IOPS QD1", "unlimited"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("bench output lacks %q:\n%s", want, out.String())
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("bench left %d entries in %s", len(ents), dir)
	}
	for _, args := range [][]string{{"media"}, {"media", "frob"}, {"media", "bench", "-preset", "floppy"}, {"media", "bench", "-runs", "0"}, {"media", "stats"}} {
		if code := Main(args, nil, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}

	// stats reads a device's counters.
	dev := t.TempDir()
	if err := media.Install(&media.Table{Devices: []media.Device{{Dir: dev, Preset: "x", Params: media.Params{WriteMBps: 1e6, QueueDepth: 1}}}}); err != nil {
		t.Fatal(err)
	}
	defer media.Install(nil)
	if err := media.WriteFile(filepath.Join(dev, "f"), make([]byte, 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := Main([]string{"media", "stats", dev}, nil, &out, &errb); code != 0 {
		t.Fatalf("stats: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "requests\t1\n") || !strings.Contains(out.String(), "written bytes\t5000\n") {
		t.Errorf("stats after one 5000-byte write:\n%s", out.String())
	}
}
