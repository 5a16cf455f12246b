package tasktracker

import (
	"os/exec"
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
