// Command nnscale measures the NameNode's namespace at scale: the memory a
// namespace of millions of inodes holds, the time to load it from an
// image and replay edits on it (a restart), the time to process a full
// block report, and the cost of one replication monitor pass. It drives
// the NameNode's own code (namespace.Tree, its image writer and reader,
// blockmgmt.Manager) in one process, without RPC; bench/nnscale.sh runs
// it.
//
//	nnscale gen  -dirs N -files M -edits K -out DIR   build a namespace with edits, write DIR/image and DIR/edits
//	nnscale load -in DIR [-report]                     load DIR/image, replay DIR/edits, report memory and times
//
// Memory is the Go heap in use after a full GC (runtime.MemStats.HeapInuse
// less the same figure before the namespace existed), divided by the
// inodes; VmRSS of the process is printed beside it.
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/subcmd"
)

const fanout = 1000 // children per directory

func main() {
	subcmd.Main("nnscale", "nnscale gen -dirs N -files M -edits K -out DIR | nnscale load -in DIR [-report] [-memprofile F]", map[string]func([]string) error{
		"gen":  gen,
		"load": load,
	})
}

var perm = namespace.Perm{Owner: "hdfs", Group: "supergroup", Mode: 0o755}

// dirPath is the path of the i-th generated directory: the first
// ceil(dirs/fanout) sit under the root, the rest fanout to a parent.
func dirPath(i, top int) string {
	if i < top {
		return fmt.Sprintf("/d%07d", i)
	}
	j := i - top
	return fmt.Sprintf("/d%07d/d%07d", j/fanout, i)
}

func heapInuse() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// cpuTime is the CPU time (user and system, every thread) the process
// used so far: on a shared machine it moves less than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func vmRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmRSS:"))
		}
	}
	return "?"
}

func gen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	dirs := fs.Int("dirs", 1000000, "directories")
	files := fs.Int("files", 0, "files of one 1 MiB block each, spread over the directories")
	edits := fs.Int("edits", 0, "mkdir edits logged after the image, replayed by load")
	out := fs.String("out", "", "output directory")
	fs.Parse(args)
	if *out == "" || *dirs < 1 {
		return errors.New("gen: -out and -dirs ≥ 1 needed")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	base := heapInuse()
	start := time.Now()
	blocks := blockmgmt.NewBlockMap()
	t := namespace.New("hdfs", "supergroup", blocks)
	top := (*dirs + fanout - 1) / fanout
	const mtime = 1767225600000
	for i := 0; i < *dirs; i++ {
		if err := t.Apply(namespace.Mkdir(t.AllocInodeID(), dirPath(i, top), perm, mtime)); err != nil {
			return err
		}
	}
	blockID := uint64(blockmgmt.FirstBlockID)
	for i := 0; i < *files; i++ {
		p := fmt.Sprintf("%s/f%08d", dirPath(i%*dirs, top), i)
		if err := t.Apply(namespace.AddFile(namespace.NewFile{ID: t.AllocInodeID(), Path: p, Perm: perm, Mtime: mtime,
			Replication: 1, BlockSize: 128 << 20, ClientName: "gen", ClientMachine: "127.0.0.1"})); err != nil {
			return err
		}
		if err := t.Apply(namespace.CloseFile(p, mtime, mtime, []namespace.BlockInfo{{ID: blockID, GenStamp: blockmgmt.FirstGenStamp, NumBytes: 1 << 20}})); err != nil {
			return err
		}
		blockID++
	}
	built := time.Since(start)
	heap := heapInuse() - base
	f, d := t.Counts()
	inodes := f + d
	fmt.Printf("gen: %d inodes (%d dirs, %d files) built in %.2fs; heap in use %d MiB = %.0f B/inode; VmRSS %s\n",
		inodes, d, f, built.Seconds(), heap>>20, float64(heap)/float64(inodes), vmRSS())
	if err := writeFile(filepath.Join(*out, "image"), t.WriteImage); err != nil {
		return err
	}
	// The edits: mkdirs under a new top directory, as length-prefixed
	// records of the edit log's encoding.
	return writeFile(filepath.Join(*out, "edits"), func(w io.Writer) error {
		var hdr [binary.MaxVarintLen64]byte
		put := func(e namespace.Edit) error {
			if err := t.Apply(e); err != nil {
				return err
			}
			rec, err := e.Marshal()
			if err != nil {
				return err
			}
			if _, err := w.Write(hdr[:binary.PutUvarint(hdr[:], uint64(len(rec)))]); err != nil {
				return err
			}
			_, err = w.Write(rec)
			return err
		}
		if *edits > 0 {
			if err := put(namespace.Mkdir(t.AllocInodeID(), "/edits", perm, mtime)); err != nil {
				return err
			}
		}
		for i := 1; i < *edits; i++ {
			if err := put(namespace.Mkdir(t.AllocInodeID(), fmt.Sprintf("/edits/e%07d", i), perm, mtime)); err != nil {
				return err
			}
		}
		return nil
	})
}

func writeFile(name string, write func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func load(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	in := fs.String("in", "", "directory gen wrote")
	report := fs.Bool("report", false, "after loading, process a full block report of every block from one DataNode, and time a replication monitor pass")
	memprofile := fs.String("memprofile", "", "write a heap profile after the load")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the load")
	fs.Parse(args)
	if *in == "" {
		return errors.New("load: -in needed")
	}
	img, err := os.ReadFile(filepath.Join(*in, "image"))
	if err != nil {
		return err
	}
	edits, err := os.ReadFile(filepath.Join(*in, "edits"))
	if err != nil {
		return err
	}
	base := heapInuse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		pprof.StartCPUProfile(f)
	}
	cpu0 := cpuTime()
	start := time.Now()
	blocks := blockmgmt.NewBlockMap()
	t, err := namespace.ReadImage(strings.NewReader(string(img)), blocks)
	if err != nil {
		return err
	}
	loaded := time.Since(start)
	n := 0
	for rest := edits; len(rest) > 0; n++ {
		l, k := binary.Uvarint(rest)
		if k <= 0 || uint64(len(rest)-k) < l {
			return errors.New("load: truncated edits")
		}
		if err := t.ApplyRecord(rest[k : k+int(l)]); err != nil {
			return err
		}
		rest = rest[k+int(l):]
	}
	restart := time.Since(start)
	cpu := cpuTime() - cpu0
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	img, edits = nil, nil
	heap := heapInuse() - base
	f, d := t.Counts()
	inodes := f + d
	fmt.Printf("load: %d inodes (%d dirs, %d files); image %.3fs + %d edits %.3fs = restart %.3fs (cpu %.3fs); heap in use %d MiB = %.0f B/inode; VmRSS %s\n",
		inodes, d, f, loaded.Seconds(), n, (restart - loaded).Seconds(), restart.Seconds(), cpu.Seconds(), heap>>20, float64(heap)/float64(inodes), vmRSS())
	if *memprofile != "" {
		pf, err := os.Create(*memprofile)
		if err != nil {
			return err
		}
		if err := pprof.WriteHeapProfile(pf); err != nil {
			return err
		}
		pf.Close()
	}
	if *report {
		if err := blockReport(blocks); err != nil {
			return err
		}
	}
	runtime.KeepAlive(t)
	return nil
}

// blockReport registers one DataNode with one volume and has it report a
// finalized replica of every block, then runs one replication monitor
// pass, which finds nothing to do (every file asks for one replica).
func blockReport(blocks *blockmgmt.BlockMap) error {
	now := time.Now()
	m := blockmgmt.New(blockmgmt.Config{
		MinReplication: 1, HeartbeatExpiry: 630 * time.Second, MaxReplicationStreams: 2,
		ReplicationTimeout: 5 * time.Minute, SafeModeThreshold: 0.999, SafeModeExtension: 30 * time.Second,
	}, blocks, blockmgmt.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return now }})
	reg := blockmgmt.Registration{UUID: "dn1", IP: "10.0.0.1", XferPort: 9866,
		Storages: []blockmgmt.StorageReport{{ID: "dn1-s0", Type: storage.Disk, Capacity: 1 << 50, Remaining: 1 << 49}}}
	if err := m.RegisterDatanode(reg, ""); err != nil {
		return err
	}
	rep := blockmgmt.StorageBlockReport{StorageID: "dn1-s0", Replicas: make([]blockmgmt.ReportedReplica, 0, blocks.Len())}
	for _, id := range blocks.IDs() {
		b := blocks.Get(id)
		rep.Replicas = append(rep.Replicas, blockmgmt.ReportedReplica{ID: b.ID, GenStamp: b.GenStamp, NumBytes: b.NumBytes, Finalized: true})
	}
	before := heapInuse()
	cpu0 := cpuTime()
	start := time.Now()
	if _, err := m.BlockReport("dn1", []blockmgmt.StorageBlockReport{rep}); err != nil {
		return err
	}
	first := time.Since(start)
	firstCPU := cpuTime() - cpu0
	grown := int64(heapInuse()) - int64(before)
	// The first monitor pass checks every block the report queued (each
	// gained a replica); a repeated report of the same replicas changes
	// nothing, so the pass after it should check nothing, and the next
	// pass only what still needs work (here nothing: one replica is what
	// every file asks for).
	start = time.Now()
	cpu0 = cpuTime()
	st := m.Replicate(now)
	pass := time.Since(start)
	passCPU := cpuTime() - cpu0
	start = time.Now()
	if _, err := m.BlockReport("dn1", []blockmgmt.StorageBlockReport{rep}); err != nil {
		return err
	}
	again := time.Since(start)
	start = time.Now()
	st2 := m.Replicate(now)
	afterAgain := time.Since(start)
	start = time.Now()
	m.Replicate(now)
	steady := time.Since(start)
	fmt.Printf("report: %d replicas: first full report %.3fs (cpu %.3fs), repeated %.3fs; replica state %.0f B/replica; replication monitor: pass after the first report %.3fs (cpu %.3fs; %d blocks, %d under-replicated), after the repeated report %.6fs (%d blocks), next pass %.6fs\n",
		len(rep.Replicas), first.Seconds(), firstCPU.Seconds(), again.Seconds(), float64(grown)/float64(max(1, len(rep.Replicas))), pass.Seconds(), passCPU.Seconds(), st.Blocks, st.UnderReplicated, afterAgain.Seconds(), st2.Blocks, steady.Seconds())
	runtime.KeepAlive(rep)
	return nil
}
