package tasktracker

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	line := []byte("4242 (my (odd) cmd) S 1 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 3 0 12345 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0")
	g, rss, ok := parseStat(line)
	if !ok || g != 4240 || rss != 2560 {
		t.Fatalf("parseStat = %d, %d, %v; want 4240, 2560, true", g, rss, ok)
	}
	if _, _, ok := parseStat([]byte("12 (x) S 1")); ok {
		t.Fatal("a short line parsed")
	}
}

// TestProcessGroupRSS: a child process group's resident memory counts
// its members (a shell and the sleep it started) and nothing else.
func TestProcessGroupRSS(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & sleep 30; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }()
	var got int64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got = processGroupRSS(cmd.Process.Pid); got > 0 {
			break
		}
	}
	if got <= 0 {
		t.Fatal("no resident memory found for the child's process group")
	}
	if got > 200<<20 {
		t.Fatalf("a shell and two sleeps use %d MB: other processes were counted", got>>20)
	}
}

// groupMembers are the resident sizes, in bytes, of pgid's processes.
func groupMembers(pgid int) []int64 {
	var out []int64
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if g, rss, ok := parseStat(b); ok && g == pgid {
				out = append(out, rss*int64(os.Getpagesize()))
			}
		}
	}
	return out
}

// TestMemoryWatchPeak: the watcher's peak is the process tree's total,
// more than its largest single process (what wait4's ru_maxrss gives);
// over a cap it records the sample and kills.
func TestMemoryWatchPeak(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & sleep 30 & sleep 30 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }()
	var members []int64
	for deadline := time.Now().Add(10 * time.Second); len(members) < 4; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the group has %d processes", len(members))
		}
		members = groupMembers(cmd.Process.Pid)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &memoryWatch{}
	done := make(chan struct{})
	go func() { defer close(done); w.run(ctx, cmd.Process.Pid, 10*time.Millisecond, 0, nil) }()
	time.Sleep(200 * time.Millisecond)
	cancel()
	<-done
	if p := w.peak.Load(); p <= slices.Max(members) || p < (members[0]+members[1]+members[2]+members[3])*3/4 {
		t.Errorf("peak %d, members %v", p, members)
	}

	cmd = exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	killed := make(chan struct{})
	w = &memoryWatch{}
	go w.run(context.Background(), cmd.Process.Pid, 10*time.Millisecond, 1, func() { close(killed) })
	select {
	case <-killed:
	case <-time.After(10 * time.Second):
		t.Fatal("not killed over a 1-byte cap")
	}
	if w.over.Load() <= 1 || w.peak.Load() != w.over.Load() {
		t.Errorf("over %d, peak %d", w.over.Load(), w.peak.Load())
	}
}
