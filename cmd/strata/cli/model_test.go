package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runMain(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Main(args, nil, &out, &errb); code != 0 {
		t.Fatalf("strata %s: exit %d: %s%s", strings.Join(args, " "), code, errb.String(), out.String())
	}
	return out.String()
}

// TestModelCommands: calibrate from a real run's results.json, then
// predict, advise and papers on built-in clusters, and validate from a
// directory of runs (the calibration's own run as a case, which must
// come out exact).
func TestModelCommands(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join("..", "..", "..", "internal", "model", "testdata", "calibration-results.json")
	zones := filepath.Join("..", "..", "..", "internal", "model", "testdata", "zones-paper3.json")
	w := filepath.Join(dir, "workload.json")
	out := runMain(t, "model", "calibrate", "-results", res+","+zones, "-o", w)
	for _, want := range []string{"teragen", "terasort", "files:teragen", "neighbors-30", "Workload in"} {
		if !strings.Contains(out, want) {
			t.Errorf("calibrate output lacks %q:\n%s", want, out)
		}
	}
	out = runMain(t, "model", "predict", "-workload", w, "-cluster", "calibration,sandisk-all-hdd", "-data", "10g")
	if !strings.Contains(out, "device hdd") || !strings.Contains(out, "runs a day") || !strings.Contains(out, "10.74 GB") {
		t.Errorf("predict:\n%s", out)
	}
	out = runMain(t, "model", "advise", "-workload", w, "-clusters", "sandisk-all-hdd,sandisk-ssd-intermediate,sandisk-all-ssd")
	if !strings.Contains(out, "Cheapest per run: sandisk-all-ssd") || !strings.Contains(out, "sandisk-ssd-intermediate against sandisk-all-hdd") {
		t.Errorf("advise:\n%s", out)
	}
	out = runMain(t, "model", "papers", "-workload", w)
	for _, want := range []string{"4202 /", "7386 /", "paper2-12hdd", "neighbors-30", "7.7x", "3.4x"} {
		if !strings.Contains(out, want) {
			t.Errorf("papers output lacks %q:\n%s", want, out)
		}
	}
	runs := filepath.Join(dir, "runs", "calibration", "dfsio-paper")
	if err := os.MkdirAll(runs, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runs, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out = runMain(t, "model", "validate", "-from", filepath.Join(dir, "runs"), "-cases", "none", "-out", filepath.Join(dir, "v"))
	if !strings.Contains(out, "calibration      terasort") || !strings.Contains(out, "+0%") {
		t.Errorf("validate:\n%s", out)
	}
	for _, f := range []string{"validation.json", "workload.json"} {
		if _, err := os.Stat(filepath.Join(dir, "v", f)); err != nil {
			t.Error(err)
		}
	}
	runMain(t, "model", "predict", "-workload", filepath.Join(dir, "v", "workload.json"), "-cluster", "sandisk-all-hdd")
	// A second repeat of the same run: the table gives each job's repeats.
	if err := os.MkdirAll(runs+".2", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runs+".2", "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out = runMain(t, "model", "validate", "-from", filepath.Join(dir, "runs"), "-cases", "none", "-out", filepath.Join(dir, "v"))
	if !strings.Contains(out, "repeats (s)") || !strings.Contains(out, "6.95–6.95") {
		t.Errorf("validate of two repeats:\n%s", out)
	}
	var errb bytes.Buffer
	if code := Main([]string{"model", "predict", "-workload", w, "-cluster", "no-such"}, nil, &bytes.Buffer{}, &errb); code == 0 || !strings.Contains(errb.String(), "no built-in cluster") {
		t.Errorf("unknown cluster: exit %d, %s", code, errb.String())
	}
}
