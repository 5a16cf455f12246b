// Package e2e runs the real strata binary as separate processes, through
// the process implementation of the cluster harness (testcluster.
// NewProcess): the place where crashes, kill -9 and restarts are real.
package e2e

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

// syncBuffer collects a command's output while it runs.
type syncBuffer = testcluster.SyncBuffer

func TestMain(m *testing.M) { os.Exit(testcluster.RunMain(m)) }

// newNameNode runs a NameNode process (no DataNodes) with the harness.
func newNameNode(t *testing.T) *testcluster.Processes {
	t.Helper()
	return testcluster.NewProcess(t, testcluster.Config{})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
