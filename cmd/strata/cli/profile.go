package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// CPUProfileEnv names a file to which any strata process (a daemon, a
// job client running a local-mode job, a task attempt) writes a pprof CPU
// profile of its whole run. TaskTrackers set it for the attempts that
// mapreduce.task.profile selects.
const CPUProfileEnv = "STRATA_CPUPROFILE"

// startProfile starts the CPU profile CPUProfileEnv asks for and returns
// the function that ends it. A profile that cannot start is reported and
// the command runs without it.
func startProfile(stderr io.Writer) func() {
	path := os.Getenv(CPUProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "WARN %s: %v\n", CPUProfileEnv, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "WARN %s: %v\n", CPUProfileEnv, err)
		}
	}
}
