package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTCOPaper: the SanDisk paper's runtimes and prices give its Table 5
// and Table 7.
func TestTCOPaper(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main([]string{"tco", "--names", "all-hdd,ssd-intermediate,all-ssd", "--runtime", "11589,7850,4410.5",
		"--price", "37561,43081,46567", "--years", "3"}, nil, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	rows := map[string][]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		f := strings.Fields(l)
		if len(f) > 0 {
			rows[f[0]] = append(rows[f[0]], strings.Join(f[1:], " "))
		}
	}
	want := map[string][]string{
		"all-hdd":          {"11589.00 7.46 8163.60", "37561.00 8163.60 4.60 -"},
		"ssd-intermediate": {"7850.00 11.01 12051.97", "43081.00 12051.97 3.57 -22%"},
		"all-ssd":          {"4410.50 19.59 21450.63", "46567.00 21450.63 2.17 -53%"},
	}
	for name, w := range want {
		if strings.Join(rows[name], " | ") != strings.Join(w, " | ") {
			t.Errorf("%s: %q, want %q\n%s", name, rows[name], w, out.String())
		}
	}
	if strings.Contains(out.String(), "kWh") {
		t.Errorf("energy table without --watts:\n%s", out.String())
	}
	out.Reset()
	if code := Main([]string{"tco", "--names", "a,b", "--runtime", "3600,1800", "--price", "1000,1000", "--watts", "1000,500", "--kwh-price", "0.2"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	// 1 kW for an hour is 1 kWh, $0.20; 500 W for half an hour 0.25 kWh.
	if flat := strings.Join(strings.Fields(out.String()), " "); !strings.Contains(flat, "a 1000 1 0.2 ") || !strings.Contains(flat, "b 500 0.25 0.05 ") {
		t.Errorf("energy table:\n%s", out.String())
	}
}

func TestTCOErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--names", "a,b", "--runtime", "1", "--price", "1,2"}, "--runtime: 1 values for 2 configurations"},
		{[]string{"--names", "a", "--runtime", "x", "--price", "1"}, `--runtime: "x" is not a non-negative number`},
		{[]string{"--names", "a", "--runtime", "0", "--price", "1"}, "a: runtime must be a positive number of seconds"},
		{[]string{"--names", "a"}, "--names, --runtime and --price are required"},
		{[]string{"--names", "a", "--runtime", "5", "--price", "Inf"}, `--price: "Inf" is not a non-negative number`},
		{[]string{"--names", "a", "--runtime", "5", "--price", "1", "--years", "0"}, "lifetime must be a positive number of years"},
	} {
		var out, errb bytes.Buffer
		if code := Main(append([]string{"tco"}, tc.args...), nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "results.json")
	os.WriteFile(bad, []byte("{not json"), 0o644)
	var out, errb bytes.Buffer
	if code := Main([]string{"tco", "--from", bad}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "not an experiment's results.json") {
		t.Errorf("bad results file: exit %d, %q", code, errb.String())
	}
}

// TestTCOFromResults reads an experiment's results.json.
func TestTCOFromResults(t *testing.T) {
	p := filepath.Join(t.TempDir(), "results.json")
	os.WriteFile(p, []byte(`{"profiles":[{"name":"slow","price":1000,"watts":100,"total_s":864},{"name":"fast","price":2000,"watts":100,"total_s":432}]}`), 0o644)
	var out, errb bytes.Buffer
	if code := Main([]string{"tco", "--from", p, "--years", "1"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	// 864 s a job: 100 a day, 36500 a year, $1000/36500 = $0.03 a job.
	flat := strings.Join(strings.Fields(out.String()), " ")
	for _, w := range []string{"slow 864.00 100.00 36500.00", "fast 432.00 200.00 73000.00", "slow 1000.00 36500.00 0.0274", "fast 2000.00 73000.00 0.0274"} {
		if !strings.Contains(flat, w) {
			t.Errorf("missing %q in:\n%s", w, out.String())
		}
	}
}

// TestExperimentRefusesNoLifetime: `strata experiment -years 0` is refused
// before any cluster is built, as `strata tco --years 0` is.
func TestExperimentRefusesNoLifetime(t *testing.T) {
	var out, errb bytes.Buffer
	dir := t.TempDir()
	if code := Main([]string{"experiment", "-years", "0", "-out", dir}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "lifetime must be a positive number of years") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("the refused experiment wrote %d entries to its output dir", len(ents))
	}
}
