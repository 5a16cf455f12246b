package dfstest

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"os"
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
// DataNodes, with replication 1 and 3, and block writes through the page
// cache (Hadoop's default), through it with drop-behind
// (dfs.datanode.drop.cache.behind.writes, as strata local sets; the reads
// then come from the disk) and with O_DIRECT. It reports MB/s and the CPU
// seconds the whole process (client, NameNode and DataNodes) used per GB
// moved.
//
//	go test -run XXX -bench DFS -benchtime 2x ./internal/dfstest/
func BenchmarkDFS(b *testing.B) {
	const size = 256 << 20
	data := randBytes(size, 1)
	for _, mode := range []string{"buffered", "drop-behind", "direct"} {
		for _, repl := range []int{1, 3} {
			name := fmt.Sprintf("repl=%d/writes=%s", repl, mode)
			sock := filepath.Join(b.TempDir(), "dn_PORT.sock")
			c := testcluster.New(b, testcluster.Config{DataNodes: 3, DataNode: func(i int, dc *datanode.Config) {
				dc.DirectIO = mode == "direct"
				dc.DropBehindWrites = mode == "drop-behind"
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

// BenchmarkLoopbackTCP is the ceiling of a read over loopback TCP on this
// machine, with no protocol: one goroutine sendfiles a page-cached 256 MiB
// file to a socket (as a DataNode serves a block) and another reads it
// into a 1 MiB buffer (as a client), with and without a CRC32C per 512
// bytes (as a client checks). bench/dfs.sh prints it beside strata's
// reads over TCP.
//
//	go test -run XXX -bench LoopbackTCP -benchtime 3x ./internal/dfstest/
func BenchmarkLoopbackTCP(b *testing.B) {
	const size = 256 << 20
	path := filepath.Join(b.TempDir(), "f")
	if err := os.WriteFile(path, randBytes(size, 2), 0o644); err != nil {
		b.Fatal(err)
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	for _, crc := range []bool{false, true} {
		b.Run(fmt.Sprintf("crc=%v", crc), func(b *testing.B) {
			b.SetBytes(size)
			buf := make([]byte, 1<<20)
			for i := 0; i < b.N; i++ {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				go func() {
					c, err := ln.Accept()
					ln.Close()
					if err != nil {
						return
					}
					defer c.Close()
					if f, err := os.Open(path); err == nil {
						io.Copy(c, f) // sendfile
						f.Close()
					}
				}()
				c, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				var n int64
				for {
					k, err := io.ReadFull(c, buf)
					if crc {
						for j := 0; j < k; j += 512 {
							crc32.Checksum(buf[j:min(j+512, k)], tab)
						}
					}
					n += int64(k)
					if err != nil {
						break
					}
				}
				c.Close()
				if n != size {
					b.Fatalf("read %d bytes of %d", n, size)
				}
			}
		})
	}
}
