package dfstest

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/testcluster"
)

// BenchmarkDFS measures one client writing and then reading a 256 MiB
// file through the whole stack — NameNode RPC, DataTransferProtocol
// pipelines, checksums, replica files — on an in-process cluster of 3
// DataNodes, with replication 1 and 3, and with and without O_DIRECT
// block writes. It reports MB/s and the CPU seconds the whole process
// (client, NameNode and DataNodes) used per GB moved.
//
//	go test -run XXX -bench DFS -benchtime 2x ./internal/dfstest/
func BenchmarkDFS(b *testing.B) {
	const size = 256 << 20
	data := randBytes(size, 1)
	for _, direct := range []bool{false, true} {
		for _, repl := range []int{1, 3} {
			name := fmt.Sprintf("repl=%d/direct=%v", repl, direct)
			sock := filepath.Join(b.TempDir(), "dn_PORT.sock")
			c := testcluster.New(b, testcluster.Config{DataNodes: 3, DataNode: func(i int, dc *datanode.Config) {
				dc.DirectIO = direct
				dc.ScanPeriod = -1
				dc.DomainSocketPath = sock
			}})
			cl := c.Client(c.Superuser())
			ctx := context.Background()
			b.Run("write/"+name, func(b *testing.B) {
				b.SetBytes(size)
				cpu := cpuTime()
				for i := 0; i < b.N; i++ {
					w, err := cl.CreateFile(ctx, fmt.Sprintf("/bench/f%d", i), fs.CreateOptions{CreateParent: true, Overwrite: true, Replication: repl, BlockSize: 128 << 20})
					if err != nil {
						b.Fatal(err)
					}
					for off := 0; off < size; off += 1 << 20 {
						if _, err := w.Write(data[off : off+1<<20]); err != nil {
							b.Fatal(err)
						}
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((cpuTime()-cpu).Seconds()/(float64(b.N)*size/1e9), "cpu-s/GB")
			})
			b.Run("read/"+name, func(b *testing.B) {
				b.SetBytes(size)
				cpu := cpuTime()
				for i := 0; i < b.N; i++ {
					f, err := cl.OpenFile(ctx, "/bench/f0")
					if err != nil {
						b.Fatal(err)
					}
					n, err := io.Copy(io.Discard, f)
					f.Close()
					if err != nil || n != size {
						b.Fatal(n, err)
					}
				}
				b.ReportMetric((cpuTime()-cpu).Seconds()/(float64(b.N)*size/1e9), "cpu-s/GB")
			})
			// The same read with short-circuit local reads (the replica's
			// files passed to the client over a Unix socket).
			local, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: c.Superuser(), ShortCircuitSocket: sock})
			if err != nil {
				b.Fatal(err)
			}
			b.Run("read-shortcircuit/"+name, func(b *testing.B) {
				b.SetBytes(size)
				cpu := cpuTime()
				for i := 0; i < b.N; i++ {
					f, err := local.OpenFile(ctx, "/bench/f0")
					if err != nil {
						b.Fatal(err)
					}
					n, err := io.Copy(io.Discard, f)
					f.Close()
					if err != nil || n != size {
						b.Fatal(n, err)
					}
				}
				b.ReportMetric((cpuTime()-cpu).Seconds()/(float64(b.N)*size/1e9), "cpu-s/GB")
			})
			local.Close()
			c.Close()
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
