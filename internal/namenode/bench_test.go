package namenode_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/testcluster"
)

// BenchmarkNameNodeRPC measures metadata operations per second through the
// whole stack: client → Hadoop IPC over loopback → NameNode → edit log
// fsync (for mutations). Each simulated client has its own connection.
// The ha-mkdirs cases send the same mkdirs to an HA nameservice of three
// NameNodes (testcluster Config.NameNodes), where a mutation is
// acknowledged once a majority of the Raft group has logged it.
//
//	go test -run XXX -bench NameNodeRPC -benchtime 3s ./internal/namenode/
func BenchmarkNameNodeRPC(b *testing.B) {
	for _, clients := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("mkdirs/clients=%d", clients), func(b *testing.B) {
			c := testcluster.New(b, testcluster.Config{})
			var seq atomic.Int64
			before := c.NameNode().Status()
			runClients(b, c, clients, func(ctx context.Context, cl *hdfs.Client, w int) error {
				return cl.Mkdirs(ctx, fmt.Sprintf("/bench/w%d/d%d", w, seq.Add(1)), 0o755)
			})
			// Group commit: edit records per write+fsync round over the
			// run (the clients' setup mkdirs included).
			after := c.NameNode().Status()
			if syncs := after.EditSyncs - before.EditSyncs; syncs > 0 {
				b.ReportMetric(float64(after.EditRecords-before.EditRecords)/float64(syncs), "records/sync")
			}
		})
		if clients > 1 {
			b.Run(fmt.Sprintf("ha-mkdirs/clients=%d", clients), func(b *testing.B) {
				c := testcluster.New(b, testcluster.Config{NameNodes: 3})
				c.ActiveNameNode() // the clients' first calls find it at once
				var seq atomic.Int64
				runClients(b, c, clients, func(ctx context.Context, cl *hdfs.Client, w int) error {
					return cl.Mkdirs(ctx, fmt.Sprintf("/bench/w%d/d%d", w, seq.Add(1)), 0o755)
				})
			})
		}
		b.Run(fmt.Sprintf("getFileInfo/clients=%d", clients), func(b *testing.B) {
			c := testcluster.New(b, testcluster.Config{})
			setup := c.Client(c.Superuser())
			for i := 0; i < 100; i++ {
				if err := setup.Mkdirs(context.Background(), fmt.Sprintf("/bench/d%d", i), 0o755); err != nil {
					b.Fatal(err)
				}
			}
			var seq atomic.Int64
			runClients(b, c, clients, func(ctx context.Context, cl *hdfs.Client, w int) error {
				_, err := cl.Stat(ctx, fmt.Sprintf("/bench/d%d", seq.Add(1)%100))
				return err
			})
		})
	}
}

// runClients runs b.N calls of op spread over n clients and reports ops/s.
func runClients(b *testing.B, c *testcluster.Cluster, n int, op func(context.Context, *hdfs.Client, int) error) {
	ctx := context.Background()
	cls := make([]*hdfs.Client, n)
	for i := range cls {
		cls[i] = c.Client(c.Superuser())
		if err := cls[i].Mkdirs(ctx, fmt.Sprintf("/bench/w%d", i), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	cpu0 := processCPU(b)
	b.ResetTimer()
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := op(ctx, cls[w], w); err != nil {
					b.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	// The process's CPU time per call, clients and NameNode together: on
	// a shared machine a steadier measure of cost than the rate.
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// processCPU is the user and system CPU time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
