// Command cpuquota checks the model's CPU-quota equation (model.QuotaTime)
// against the kernel: it makes cgroups with a CFS quota of a share of a
// CPU per 100 ms period (internal/hostnet, as strata experiment's hosts
// get), runs in each a child that spins until it has used a given CPU
// time, from an idle start at a random point of the period, and prints
// the mean wall time beside the model's and the steady rate's.
//
//	cpuquota [-share 0.25] [-rounds 20] [-groups 1,3] [-cpu 0.02,0.068,0.19,0.5]
//	cpuquota -pipeline [-share 0.25] [-cpu 0.2] [-chunks 400] [-buffer 64k]
//
// Needs root and a cgroup cpu controller. With several groups, their
// children run at once on the machine's cores; the model column gives
// both of the model's burst rates: a whole core, and the machine's
// cores shared by every group bursting at once (cpu.quota.shared).
//
// -pipeline asks what a chain of quota-limited nodes does, as a replica
// pipeline is: three children, each in a group of its own, pass chunks
// of 64 KiB down pipes of -buffer bytes, each spending the same CPU on
// every chunk (-cpu in all); it prints the chain's wall time beside one
// such child alone and the model's time for one node's CPU.
package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/hostnet"
	"github.com/stratafs/strata/internal/model"
	"github.com/stratafs/strata/internal/procstat"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == "-child" {
		child()
		return
	}
	if len(os.Args) == 5 && os.Args[1] == "-stage" {
		stage()
		return
	}
	share := flag.Float64("share", 0.25, "each group's CPUs (the quota over the period)")
	rounds := flag.Int("rounds", 20, "bursts per child")
	groups := flag.String("groups", "1,3", "how many groups burst at once, comma-separated")
	cpus := flag.String("cpu", "0.02,0.068,0.19,0.5", "CPU seconds per burst, comma-separated (-pipeline: one, per stage)")
	pipeline := flag.Bool("pipeline", false, "time a chain of three groups passing chunks down pipes")
	chunks := flag.Int("chunks", 400, "-pipeline: chunks of 64 KiB through the chain")
	buffer := flag.String("buffer", "64k", "-pipeline: each pipe's capacity (F_SETPIPE_SZ)")
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
	if *pipeline {
		runPipeline(g, self, *share, period, *cpus, *chunks, *buffer)
		return
	}
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

// cpuTime is this process's CPU time so far.
func cpuTime() time.Duration {
	c, err := procstat.Self()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpuquota:", err)
		os.Exit(1)
	}
	return c.Total()
}

// runPipeline times three stages, each in a group of its own, chained by
// pipes, then one stage alone (reading from a writer outside any group,
// writing to a reader outside), each stage spending cpu seconds in all.
func runPipeline(g *hostnet.CPUGroups, self string, share, period float64, cpu string, chunks int, buffer string) {
	c, err := strconv.ParseFloat(cpu, 64)
	if err != nil || c <= 0 || chunks < 1 {
		fmt.Fprintln(os.Stderr, "cpuquota: -pipeline needs one -cpu and -chunks >= 1")
		os.Exit(2)
	}
	bufBytes, err := conf.ParseBytes(buffer)
	if err != nil || bufBytes < 4096 || bufBytes > 1<<30 {
		fmt.Fprintln(os.Stderr, "cpuquota: bad -buffer", buffer)
		os.Exit(2)
	}
	fmt.Printf("%d cores; each group %g CPU per %g ms; %d chunks of 64 KiB, %g CPU-s per stage, pipes of %d bytes\n\n",
		runtime.NumCPU(), share, period*1000, chunks, c, bufBytes)
	fmt.Println("| chain | wall s | CPU s of its busiest group | model for that CPU (a core) | steady rate for it |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, n := range []int{1, 3} {
		wall, used, err := chain(g, self, n, share, c, chunks, int(bufBytes))
		if err != nil {
			fmt.Fprintln(os.Stderr, "cpuquota:", err)
			os.Exit(1)
		}
		fmt.Printf("| %d stage(s) | %.3f | %.3f | %.3f | %.3f |\n", n, wall, used, model.QuotaTime(used, share, 1, period), used/share)
	}
}

// chain runs n stages in groups of their own, the first fed and the last
// drained by this process (outside any group), and returns its wall time
// and the CPU seconds of its busiest group (the stage's start, reads and
// writes included).
func chain(g *hostnet.CPUGroups, self string, n int, share, c float64, chunks, buf int) (wall, used float64, err error) {
	wall, err = runChain(g, self, n, share, c, chunks, buf)
	for i := range n {
		if u, _, ok := g.Stat(fmt.Sprintf("stage%d-%d", n, i)); ok {
			used = max(used, float64(u)/1e6)
		}
	}
	return wall, used, err
}

func runChain(g *hostnet.CPUGroups, self string, n int, share, c float64, chunks, buf int) (float64, error) {
	pipe := func() (*os.File, *os.File, error) {
		r, w, err := os.Pipe()
		if err == nil {
			// Best effort: the kernel's limit may be lower.
			syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), syscall.F_SETPIPE_SZ, uintptr(buf))
		}
		return r, w, err
	}
	in, feed, err := pipe()
	if err != nil {
		return 0, err
	}
	var cmds []*exec.Cmd
	var toClose []*os.File
	prev := in
	for i := range n {
		r, w, err := pipe()
		if err != nil {
			return 0, err
		}
		dirs, err := g.Group(fmt.Sprintf("stage%d-%d", n, i), share)
		if err != nil {
			return 0, err
		}
		args := append(hostnet.Wrap(dirs), self, "-stage", strconv.Itoa(i), strconv.FormatFloat(c, 'g', -1, 64), strconv.Itoa(chunks))
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = prev, w, os.Stderr
		cmds = append(cmds, cmd)
		toClose = append(toClose, prev, w)
		prev = r
	}
	start := time.Now()
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			return 0, err
		}
	}
	for _, f := range toClose {
		f.Close()
	}
	done := make(chan error, 1)
	go func() {
		chunk := make([]byte, 64<<10)
		for range chunks {
			if _, err := feed.Write(chunk); err != nil {
				done <- err
				return
			}
		}
		done <- feed.Close()
	}()
	_, err = io.Copy(io.Discard, prev)
	prev.Close()
	if ferr := <-done; err == nil {
		err = ferr
	}
	for _, cmd := range cmds {
		if werr := cmd.Wait(); err == nil {
			err = werr
		}
	}
	return time.Since(start).Seconds(), err
}

// stage copies chunks of 64 KiB from stdin to stdout, spinning its share
// of cpu seconds on each.
func stage() {
	c, _ := strconv.ParseFloat(os.Args[3], 64)
	chunks, _ := strconv.Atoi(os.Args[4])
	per := time.Duration(c / float64(chunks) * float64(time.Second))
	buf := make([]byte, 64<<10)
	for range chunks {
		if _, err := io.ReadFull(os.Stdin, buf); err != nil {
			fmt.Fprintln(os.Stderr, "stage:", err)
			os.Exit(1)
		}
		c0 := cpuTime()
		for x := 0; cpuTime()-c0 < per; x++ {
			for j := range 1000 {
				x += j & 1
			}
		}
		if _, err := os.Stdout.Write(buf); err != nil {
			fmt.Fprintln(os.Stderr, "stage:", err)
			os.Exit(1)
		}
	}
}
