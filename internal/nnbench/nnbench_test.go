package nnbench

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

func TestOpsPerThread(t *testing.T) {
	for _, tc := range []struct {
		n, t int
		want []int
	}{
		{800, 4, []int{200, 200, 200, 200}},
		{10, 3, []int{3, 3, 4}},
		{2, 4, []int{1, 1, 0, 0}},
		{7, 1, []int{7}},
	} {
		if got := opsPerThread(tc.n, tc.t); !slices.Equal(got, tc.want) {
			t.Errorf("opsPerThread(%d, %d) = %v, want %v", tc.n, tc.t, got, tc.want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	c, err := ParseArgs([]string{"-op", "all", "-threads", "4", "-ops", "200", "-baseDir", "/b", "-keep"})
	if err != nil || c.Op != "all" || c.Threads != 4 || c.Ops != 200 || c.BaseDir != "/b" || !c.Keep || c.FilesPerDir != DefaultFilesPerDir {
		t.Errorf("got %+v, %v", c, err)
	}
	c, err = ParseArgs([]string{"-op", "create", "-files", "5"})
	if err != nil || c.Ops != 5 || c.BaseDir != DefaultBaseDir || c.Threads != 1 {
		t.Errorf("got %+v, %v", c, err)
	}
	for _, bad := range [][]string{nil, {"-op"}, {"-op", "nope"}, {"-op", "all", "-threads", "0"}, {"-op", "all", "-x"}} {
		if _, err := ParseArgs(bad); err == nil {
			t.Errorf("ParseArgs(%q) accepted", bad)
		}
	}
}

func TestReportFormat(t *testing.T) {
	r := &Result{Op: OpCreateWrite, Threads: 4, FilesPerDir: 1000, Elapsed: 250 * time.Millisecond}
	for i := 1; i <= 100; i++ {
		r.Latencies = append(r.Latencies, time.Duration(i)*100*time.Microsecond)
	}
	want := `--- create_write inputs ---
nrFiles = 100
nrThreads = 4
nrFilesPerDir = 1000
--- create_write stats  ---
# operations: 100
Elapsed Time: 250
 Ops per sec: 400.0
Average Time: 5.050
 Latency p50: 5.000
 Latency p90: 9.000
 Latency p99: 9.900
 Latency max: 10.000`
	if got := strings.Join(r.Lines(), "\n"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := javaDouble(1000.0 / 3); got != "333.3333333333333" {
		t.Errorf("javaDouble: %s", got)
	}
	if got := javaDouble(12345678.9); got != "1.23456789E7" {
		t.Errorf("javaDouble: %s", got)
	}
}

func TestOps(t *testing.T) {
	cl := testcluster.New(t, testcluster.Config{})
	c := cl.Client(cl.Superuser())
	ctx := context.Background()
	for _, op := range []string{OpMkdirs, OpCreateWrite, OpFileStatus, OpOpenRead, OpRename, OpDelete, OpAll} {
		t.Run(op, func(t *testing.T) {
			var out, log bytes.Buffer
			cfg := Config{Addr: cl.Addr(), User: cl.Superuser(), Op: op, Threads: 4, Ops: 200, FilesPerDir: 30, Log: &log}
			res, err := Run(ctx, cfg, &out)
			if err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			want := []string{op}
			if op == OpAll {
				want = AllOps
			}
			if len(res) != len(want) {
				t.Fatalf("%d results, want %d", len(res), len(want))
			}
			for i, r := range res {
				if r.Op != want[i] || r.NumOps() != 200 || r.Threads != 4 || r.Elapsed <= 0 || r.Percentile(100) < r.Percentile(50) {
					t.Errorf("result %+v", r)
				}
				for _, l := range []string{"--- " + want[i] + " stats  ---\n", "# operations: 200\n", " Ops per sec: ", "Average Time: ", " Latency p99: "} {
					if !strings.Contains(out.String(), l) {
						t.Errorf("no %q in\n%s", l, out.String())
					}
				}
			}
			if !strings.Contains(out.String(), SummaryHeader) {
				t.Errorf("no summary in\n%s", out.String())
			}
			for _, p := range []string{"/benchmarks/NNBench", "/benchmarks"} {
				if _, err := c.Stat(ctx, p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s after the run: %v", p, err)
				}
			}
		})
	}
}

func TestKeepAndExistingBase(t *testing.T) {
	cl := testcluster.New(t, testcluster.Config{})
	c := cl.Client(cl.Superuser())
	ctx := context.Background()
	if err := c.Mkdirs(ctx, "/bench/mine", 0); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Addr: cl.Addr(), User: cl.Superuser(), Op: OpCreateWrite, Threads: 2, Ops: 10, BaseDir: "/bench", Keep: true}
	if _, err := Run(ctx, cfg, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if st, err := c.Stat(ctx, "/bench/files/t1/d0/f4"); err != nil || st.IsDir {
		t.Fatalf("kept file: %+v, %v", st, err)
	}
	// A second run removes the leftovers, then its own files, and leaves
	// the base directory's other content alone.
	cfg.Keep = false
	cfg.Op = OpRename
	if _, err := Run(ctx, cfg, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	entries, err := c.List(ctx, "/bench")
	if err != nil || len(entries) != 1 || entries[0].Name() != "mine" {
		t.Errorf("/bench after the run: %v, %v", entries, err)
	}

	// An operation that fails is reported.
	if err := c.Mkdirs(ctx, "/ro", 0o555); err != nil {
		t.Fatal(err)
	}
	cfg = Config{Addr: cl.Addr(), User: "nobody", Op: OpMkdirs, Threads: 2, Ops: 4, BaseDir: "/ro/b"}
	if _, err := Run(ctx, cfg, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "ermission") {
		t.Errorf("run without permission: %v", err)
	}
}
