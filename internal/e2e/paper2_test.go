package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

// TestExperimentDFSIOPaper runs `strata experiment dfsio-paper` at tiny
// sizes through the binary: the second paper's tables are printed with
// its values beside strata's, and results.json, the CSVs and the charts
// are written.
func TestExperimentDFSIOPaper(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testcluster.Binary(t), "-D", "dfs.blocksize=1m", "experiment", "dfsio-paper", "-datanodes", "3",
		"-files", "1,3", "-replication", "3", "-dfsio-total", "3MB", "-rows", "3k", "-wordcount-size", "1MB", "-shuffle-size", "1MB",
		"-gateway-size", "2MB", "-out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("strata experiment dfsio-paper: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{
		"TestDFSIO write, replication 3: concurrent MB/s (paper's Figure 1)",
		"TestDFSIO read, replication 3: concurrent MB/s (paper's Figure 2)",
		"MapReduce jobs, replication 3: seconds (paper's Figure 6)",
		"put vs FUSE vs NFS",
		" 685 ", " 3625 ", "118.29", // the paper's values
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Paper2 struct {
			Jobs     []struct{ Job string }
			Gateways []struct{ Way, Skipped string }
		} `json:"paper2"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Paper2.Jobs) != 2*5 || len(res.Paper2.Gateways) != 2*3 {
		t.Errorf("results.json paper2: %+v", res.Paper2)
	}
	for _, f := range []string{"paper2-dfsio-write-r3.csv", "paper2-dfsio-read-r3.svg", "paper2-jobs-r3.csv", "paper2-jobs-r3.svg", "paper2-gateways.csv", "paper2-gateways.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}
