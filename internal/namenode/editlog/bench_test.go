package editlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// BenchmarkAppendSync measures acknowledged mutations per second: each
// operation is Append under a shared "namespace" mutex, then Sync, as the
// NameNode does. It runs with 1, 8 and 64 concurrent callers (RunParallel
// with SetParallelism chosen so that the goroutine count is at least that)
// on a real directory under os.TempDir, so fsync cost is the disk's.
func BenchmarkAppendSync(b *testing.B) {
	rec := make([]byte, 200) // a typical small edit (mkdir, addBlock, close)
	for _, callers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("goroutines=%d", callers), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "name")
			if _, err := Format(dir, false); err != nil {
				b.Fatal(err)
			}
			l, err := Open(dir, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			if err := l.Load(nil, nil); err != nil {
				b.Fatal(err)
			}
			procs := runtime.GOMAXPROCS(0)
			if callers == 1 {
				// RunParallel always starts GOMAXPROCS goroutines; run the
				// single-caller case as a plain loop.
				ctx := context.Background()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					tx, err := l.Append(rec)
					if err != nil {
						b.Fatal(err)
					}
					if err := l.Sync(ctx, tx); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.SetParallelism((callers + procs - 1) / procs)
				var ns sync.Mutex
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					ctx := context.Background()
					for pb.Next() {
						ns.Lock()
						tx, err := l.Append(rec)
						ns.Unlock()
						if err != nil {
							b.Error(err)
							return
						}
						if err := l.Sync(ctx, tx); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.StopTimer()
			st := l.Stats()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			if st.Syncs > 0 {
				b.ReportMetric(float64(st.Records)/float64(st.Syncs), "records/sync")
			}
		})
	}
}
