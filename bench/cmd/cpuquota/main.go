// Command cpuquota checks the model's CPU-quota equation (model.QuotaTime)
// against the kernel: it makes cgroups with a CFS quota of a share of a
// CPU per 100 ms period (internal/hostnet, as strata experiment's hosts
// get), runs in each a child that spins until it has used a given CPU
// time, from an idle start at a random point of the period, and prints
// the mean wall time beside the model's and the steady rate's.
//
//	cpuquota [-share 0.25] [-rounds 20] [-groups 1,3] [-cpu 0.02,0.068,0.19,0.5]
//
// Needs root and a cgroup cpu controller. With several groups, their
// children run at once on the machine's cores; the model column gives
// both of the model's burst rates: a whole core, and the machine's
// cores shared by every group bursting at once (cpu.quota.shared).
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stratafs/strata/internal/hostnet"
	"github.com/stratafs/strata/internal/model"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == "-child" {
		child()
		return
	}
	share := flag.Float64("share", 0.25, "each group's CPUs (the quota over the period)")
	rounds := flag.Int("rounds", 20, "bursts per child")
	groups := flag.String("groups", "1,3", "how many groups burst at once, comma-separated")
	cpus := flag.String("cpu", "0.02,0.068,0.19,0.5", "CPU seconds per burst, comma-separated")
	flag.Parse()
	g, err := hostnet.NewCPUGroups()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpuquota:", err)
		os.Exit(1)
	}
	defer g.Close()
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpuquota:", err)
		os.Exit(1)
	}
	_, periodUS := hostnet.CPUQuota(*share)
	period := float64(periodUS) / 1e6
	cores := float64(runtime.NumCPU())
	fmt.Printf("%d cores; each group %g CPU per %g ms period; %d bursts per child, each after 300-400 ms idle\n\n",
		runtime.NumCPU(), *share, period*1000, *rounds)
	fmt.Println("| CPU s | groups at once | measured wall s (per child) | model, a core | model, shared cores | steady rate |")
	fmt.Println("|---:|---:|---|---:|---:|---:|")
	for _, gs := range strings.Split(*groups, ",") {
		n, err := strconv.Atoi(gs)
		if err != nil || n < 1 {
			fmt.Fprintln(os.Stderr, "cpuquota: bad -groups", gs)
			os.Exit(2)
		}
		for _, cs := range strings.Split(*cpus, ",") {
			c, err := strconv.ParseFloat(cs, 64)
			if err != nil || c <= 0 {
				fmt.Fprintln(os.Stderr, "cpuquota: bad -cpu", cs)
				os.Exit(2)
			}
			walls := make([]string, n)
			var wg sync.WaitGroup
			for i := range n {
				dirs, err := g.Group(fmt.Sprintf("burst%d", i), *share)
				if err != nil {
					fmt.Fprintln(os.Stderr, "cpuquota:", err)
					os.Exit(1)
				}
				args := append(hostnet.Wrap(dirs), self, "-child", cs, strconv.Itoa(*rounds))
				wg.Add(1)
				go func() {
					defer wg.Done()
					out, err := exec.Command(args[0], args[1:]...).Output()
					if err != nil {
						walls[i] = "error: " + err.Error()
						return
					}
					walls[i] = strings.TrimSpace(string(out))
				}()
			}
			wg.Wait()
			rate := min(1, cores/float64(n))
			fmt.Printf("| %g | %d | %s | %.3f | %.3f | %.3f |\n", c, n, strings.Join(walls, ", "),
				model.QuotaTime(c, *share, 1, period), model.QuotaTime(c, *share, rate, period), c / *share)
		}
	}
}

// child spins rounds times until it has used the CPU seconds given,
// each time after an idle pause that lets its quota refill, and prints
// the mean wall time of a burst.
func child() {
	c, _ := strconv.ParseFloat(os.Args[2], 64)
	rounds, _ := strconv.Atoi(os.Args[3])
	want := time.Duration(c * float64(time.Second))
	var sum time.Duration
	for range rounds {
		time.Sleep(300*time.Millisecond + rand.N(100*time.Millisecond))
		start, c0 := time.Now(), cpuTime()
		for x := 0; cpuTime()-c0 < want; x++ {
			for j := range 10000 {
				x += j & 1
			}
		}
		sum += time.Since(start)
	}
	fmt.Printf("%.3f", (sum / time.Duration(rounds)).Seconds())
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
