package hostnet

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// CPU shares: the quota per period is the share, with the kernel's 1 ms
// floor, and the wrapper joins every group before it execs.
func TestCPUQuotaAndWrap(t *testing.T) {
	for _, tc := range []struct {
		cpus  float64
		quota int64
	}{{1, 100000}, {0.5, 50000}, {2, 200000}, {0.001, 1000}} {
		if q, p := CPUQuota(tc.cpus); q != tc.quota || p != 100000 {
			t.Errorf("CPUQuota(%g) = %d/%d, want %d/100000", tc.cpus, q, p, tc.quota)
		}
	}
	dirs := []string{t.TempDir(), t.TempDir()}
	w := Wrap(dirs)
	out, err := exec.Command(w[0], append(w[1:], "sh", "-c", "echo $$")...).Output()
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(out))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil || strings.TrimSpace(string(b)) != pid {
			t.Errorf("%s/cgroup.procs = %q, %v; want the program's pid %s (exec keeps it)", d, b, err, pid)
		}
	}
}
