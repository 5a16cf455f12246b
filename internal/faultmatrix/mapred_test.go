package faultmatrix

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

var (
	mapLaunchRE    = regexp.MustCompile(`launching attempt" attempt=attempt_\S+_m_`)
	reduceLaunchRE = regexp.MustCompile(`launching attempt" attempt=attempt_\S+_r_`)
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A TaskTracker is killed (SIGKILL) while the job's maps run, or while
// its reduces run: the JobTracker declares it lost, re-runs its attempts
// and the map outputs it held elsewhere, and the job succeeds with
// exactly its input in its output.
func TestTaskTrackerKill(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		phase           string
		when            *regexp.Regexp
		mapper, reducer string
	}{
		{"map", mapLaunchRE, "sleep 1; cat", "cat"},
		{"reduce", reduceLaunchRE, "cat", "sleep 1; cat"},
	} {
		t.Run(tc.phase, func(t *testing.T) {
			t.Parallel()
			r := record(t, "TaskTracker kill -9 in "+tc.phase)
			m := testcluster.NewProcess(t, testcluster.Config{NoHDFS: true, MapReduce: true, TaskTrackers: 2})
			dir := t.TempDir()
			in, outDir := filepath.Join(dir, "in"), filepath.Join(dir, "out")
			lines := 1000 * scale()
			want := writeLines(t, in, lines)
			r.Running = fmt.Sprintf("streaming identity job, 4 maps x %d lines, 4 reduces, 2 TaskTrackers", lines)
			out := &lockedBuffer{}
			done := make(chan error, 1)
			go func() {
				cmd := m.Command("streaming", "-input", "file://"+in, "-output", "file://"+outDir,
					"-mapper", tc.mapper, "-reducer", tc.reducer, "-numReduceTasks", "4")
				cmd.Stdout, cmd.Stderr = out, out
				done <- cmd.Run()
			}()
			killed := -1
			deadline := time.Now().Add(60 * time.Second)
			for killed < 0 {
				select {
				case err := <-done:
					t.Fatalf("job ended (%v) before a %s attempt was seen:\n%s", err, tc.phase, out.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("no %s attempt started:\n%s", tc.phase, out.String())
				}
				for i := 0; i < m.NumTaskTrackers(); i++ {
					if tc.when.MatchString(m.TaskTrackerProcess(i).Log()) {
						m.KillTaskTracker(i)
						killed = i
						break
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
			t0 := time.Now()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("job failed after a tasktracker was killed in the %s phase: %v\n%s", tc.phase, err, out.String())
				}
			case <-time.After(120 * time.Second):
				t.Fatalf("job did not finish after a tasktracker was killed:\n%s", out.String())
			}
			r.Recover = since(t0) + " from the kill to the job's success"
			r.Acked = "the job's submission"
			got := readParts(t, outDir)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("output has %d lines, want the %d of the input", len(got), len(want))
			}
			lost := strings.Contains(m.JobTrackerProcess().Log(), "lost tasktracker")
			if !lost {
				t.Error("the jobtracker did not declare the killed tasktracker lost")
			}
			r.Survived = fmt.Sprintf("job succeeded; output = input (%d lines); tracker %d declared lost", len(got), killed)
		})
	}
}

// writeLines writes four input files of n distinct lines and returns the
// lines, sorted.
func writeLines(t *testing.T, dir string, n int) []string {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	var want []string
	for f := 0; f < 4; f++ {
		var b strings.Builder
		for i := 0; i < n; i++ {
			l := fmt.Sprintf("line-%d-%06d", f, i)
			want = append(want, l)
			b.WriteString(l + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(want)
	return want
}

// readParts is the job's output lines (a streaming identity job's lines
// come out with an empty value: the tab is dropped), sorted.
func readParts(t *testing.T, dir string) []string {
	t.Helper()
	parts, _ := filepath.Glob(filepath.Join(dir, "part-*"))
	if len(parts) == 0 {
		t.Fatalf("no output parts in %s", dir)
	}
	var lines []string
	for _, p := range parts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if l != "" {
				lines = append(lines, strings.TrimSuffix(l, "\t"))
			}
		}
	}
	sort.Strings(lines)
	return lines
}
