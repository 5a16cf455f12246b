package procstat

import (
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// A command name with spaces and a parenthesis, as comm may have.
	line := "4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 1234 0 5 0 250 37 0 0 20 0 3 0 12345 1000000 500 18446744073709551615"
	c, kids, err := parseStat(line)
	if err != nil || c.User != 2500*time.Millisecond || c.System != 370*time.Millisecond {
		t.Fatalf("parseStat = %+v, %v", c, err)
	}
	if kids != (CPU{}) {
		t.Errorf("children %+v, want none", kids)
	}
	line = "77 (tt) S 1 77 77 0 -1 4194560 1 0 5 0 12 3 4150 260 20 0"
	if c, kids, err := parseStat(line); err != nil || c.Total() != 150*time.Millisecond || kids.User != 41500*time.Millisecond || kids.System != 2600*time.Millisecond {
		t.Errorf("parseStat = %+v, %+v, %v", c, kids, err)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 12 0 0", "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13",
		"1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 -1 0"} {
		if _, _, err := parseStat(bad); err == nil {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
}

func TestParseDiskStats(t *testing.T) {
	in := `   8       0 sda 1000 10 20480 500 2000 20 40960 900 0 1500 1400 0 0 0 0
   8       1 sda1 bad
 253       0 dm-0 5 0 8 1 0 0 0 0 0 2 1
`
	m, err := parseDiskStats(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	d := m["sda"]
	if d.Reads != 1000 || d.ReadBytes != 20480*512 || d.Writes != 2000 || d.WriteBytes != 40960*512 || d.Busy != 1500*time.Millisecond {
		t.Errorf("sda %+v", d)
	}
	if _, ok := m["sda1"]; ok {
		t.Error("malformed line parsed")
	}
	if m["dm-0"].Reads != 5 {
		t.Errorf("dm-0 %+v", m["dm-0"])
	}
	if x := d.Sub(m["dm-0"]); x.Reads != 995 {
		t.Errorf("Sub %+v", x)
	}
}

// A reaped child's rusage has the CPU time it burnt, and this process's
// RUSAGE_CHILDREN grows by it; /proc/self/stat agrees with getrusage.
func TestChildUsage(t *testing.T) {
	before, err := Children()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
	if err := cmd.Run(); err != nil {
		t.Skip("no sh:", err)
	}
	u, ok := FromProcessState(cmd.ProcessState)
	if !ok || u.User < 10*time.Millisecond || u.MaxRSS <= 0 {
		t.Fatalf("child usage %+v, %v", u, ok)
	}
	after, err := Children()
	if err != nil {
		t.Fatal(err)
	}
	if d := after.Sub(before); d.Total() < u.Total() {
		t.Errorf("RUSAGE_CHILDREN grew by %v, the child used %v", d.Total(), u.Total())
	}
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PID(-1); err == nil {
		t.Error("PID(-1) read something")
	}
	proc, kids, err := PIDAndChildren(selfPID())
	if err != nil {
		t.Fatal(err)
	}
	// /proc counts in 10 ms ticks, getrusage more finely.
	if diff := proc.Total() - self.Total(); diff > 100*time.Millisecond || diff < -100*time.Millisecond {
		t.Errorf("/proc says %v, getrusage %v", proc, self)
	}
	if diff := kids.Total() - after.Total(); diff > 100*time.Millisecond || diff < -100*time.Millisecond {
		t.Errorf("/proc says the children used %v, getrusage %v", kids, after)
	}
}

func selfPID() int { return os.Getpid() }

func TestParseHWM(t *testing.T) {
	got, err := parseHWM([]byte("Name:\tstrata\nVmPeak:\t  900 kB\nVmHWM:\t   12345 kB\nVmRSS:\t 100 kB\n"))
	if err != nil || got != 12345<<10 {
		t.Fatalf("parseHWM = %d, %v; want %d", got, err, 12345<<10)
	}
	for _, bad := range []string{"", "VmHWM: x kB\n", "VmHWM: 12 MB\n", "VmHWM: -3 kB\n", "VmRSS: 3 kB\n"} {
		if _, err := parseHWM([]byte(bad)); err == nil {
			t.Errorf("parseHWM(%q) took it", bad)
		}
	}
}

// An attempt's usage is the difference of two readings around it, and
// its peak is reset between attempts: memory touched in the first one is
// not the second's peak.
func TestRunningUsageBetweenReadings(t *testing.T) {
	if err := ResetPeakRSS(); err != nil {
		t.Skip(err)
	}
	before, err := Running()
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 64<<20)
	for i := 0; i < len(big); i += 4096 {
		big[i] = 1
	}
	for start, _ := Self(); ; { // 50 ms of CPU, however loaded the machine
		if now, _ := Self(); now.Total()-start.Total() >= 50*time.Millisecond {
			break
		}
	}
	after, err := Running()
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	if d.Total() < 30*time.Millisecond || d.MaxRSS < 64<<20 {
		t.Fatalf("usage between readings %+v: want ≥ 30 ms CPU and ≥ 64 MiB peak", d)
	}
	runtime.KeepAlive(big)
	big = nil
	runtime.GC()
	debug.FreeOSMemory()
	if err := ResetPeakRSS(); err != nil {
		t.Fatal(err)
	}
	again, err := Running()
	if err != nil {
		t.Fatal(err)
	}
	if again.MaxRSS >= after.MaxRSS {
		t.Errorf("peak after a reset %d, before it %d: not reset", again.MaxRSS, after.MaxRSS)
	}
}
