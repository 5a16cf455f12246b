package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExperimentAmdahlIO runs `strata experiment amdahl` for Figure 1
// and Table 2 at a tiny size (no cluster: the benchmarks run in this
// process) and checks the printed tables and the files.
func TestExperimentAmdahlIO(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	code := Main([]string{"experiment", "amdahl", "-parts", "fig1,table2", "-fig1-mb", "1", "-fig1-files", "2",
		"-fig1-devices", "vertex,real disk", "-tcp-bytes", "16MB", "-link-mbps", "0", "-out", out}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, w := range []string{"Figure 1: sequential I/O, buffered vs direct", "Figure 1: direct over buffered",
		"Table 2: TCP throughput and CPU", "loopback", "343"} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, stdout.String())
		}
	}
	if abs, _ := filepath.Abs(filepath.Join(out, "index.html")); !strings.HasSuffix(stdout.String(), "Report: "+abs+"\n") {
		t.Errorf("output does not end with the report's path %s:\n%s", abs, stdout.String())
	}
	if b, _ := os.ReadFile(filepath.Join(out, "index.html")); !strings.Contains(string(b), `<section id="table2">`) || strings.Contains(string(b), `<section id="table3">`) {
		t.Errorf("the report lacks Table 2 or has Table 3")
	}
	if strings.Contains(stdout.String(), "Table 3") {
		t.Errorf("Table 3 printed though not asked for:\n%s", stdout.String())
	}
	for _, f := range []string{"paper3.json", "paper3-figure1.csv", "paper3-figure1-ratios.csv", "paper3-table2.csv", "paper3-figure1.svg", "paper3-table2.svg", "index.html"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestExperimentAmdahlErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-parts", "fig9"}, `unknown part "fig9"`},
		{[]string{"-node-power", "occ-node=watts:3"}, "unknown fields watts"},
		{[]string{"-device-power", "vertex"}, "want name="},
		{[]string{"-objects", "0"}, "-objects: bad number"},
		{[]string{"-tcp-bytes", "lots"}, "-tcp-bytes: bad size"},
		{[]string{"-parts", "fig2", "-fig2-io", "direct,sideways"}, `-fig2-io: unknown write mode "sideways"`},
		{[]string{"-theta", "15,-3"}, "-theta:"},
		{[]string{"-profiles", "nosuch"}, "nosuch"},
		{[]string{"-parts", "table3", "-profiles", "all-hdd"}, "no power model for profile all-hdd"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"experiment", "amdahl", "-out", filepath.Join(t.TempDir(), "o")}, tc.args...)
		if code := Main(args, nil, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
