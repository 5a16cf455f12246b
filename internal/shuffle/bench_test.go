package shuffle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/spill"
)

// benchJob writes maps map outputs of one 16 MiB partition each:
// TeraSort-shaped records (10-byte random key, 90-byte value of
// printable bytes, so that codecs have something to do).
func benchJob(b *testing.B, codec spill.Codec, maps int) *testJob {
	const partBytes = 16 << 20
	dir := b.TempDir()
	job := &testJob{id: "job_bench", codec: codec}
	rng := rand.New(rand.NewPCG(1, 2))
	rec := make([]byte, 100)
	for m := range maps {
		tm := &testMap{attempt: fmt.Sprintf("attempt_bench_m_%06d_0", m)}
		c, err := spill.NewCollector(spill.Config{Partitions: 1, SortBytes: 64 << 20, Codec: codec,
			LocalDirs: []string{dir}, Name: tm.attempt})
		if err != nil {
			b.Fatal(err)
		}
		for range partBytes / 100 {
			for i := range 10 {
				rec[i] = byte(rng.Uint32())
			}
			for i := 10; i < 100; i++ {
				rec[i] = 'A' + byte(rng.IntN(26))
			}
			if err := c.Collect(0, rec[:10], rec[10:]); err != nil {
				b.Fatal(err)
			}
		}
		if tm.out, err = c.Close(); err != nil {
			b.Fatal(err)
		}
		job.maps = append(job.maps, tm)
	}
	return job
}

// BenchmarkShuffle: one reducer fetches 8 maps × 16 MiB partitions from
// two servers over loopback and reads the merged records. MB/s is of
// stored (fetched) bytes, for the whole shuffle including the final
// merge; fetch-MB/s is for the fetching alone (until Wait returns).
// "memory" keeps every segment in memory (the default 256 MiB budget),
// "disk" sends every one to a local file (a 32 MiB budget).
func BenchmarkShuffle(b *testing.B) {
	for _, codec := range []spill.Codec{spill.None, spill.LZ4} {
		job := benchJob(b, codec, 8)
		a, c := newTracker(b, ServerConfig{}), newTracker(b, ServerConfig{})
		locs := serve(b, job, a, c)
		total := job.partBytes(0)
		for _, mode := range []string{"memory", "disk"} {
			b.Run(fmt.Sprintf("codec=%s/%s", codec, mode), func(b *testing.B) {
				b.SetBytes(total)
				var fetch time.Duration
				for i := 0; b.Loop(); i++ {
					cfg := testConfig(b, job, 0, nil)
					cfg.Name = fmt.Sprint("attempt_bench_r_", i)
					if mode == "disk" {
						cfg.MemoryBudget = 32 << 20
					}
					start := time.Now()
					s, err := New(cfg, len(locs))
					if err != nil {
						b.Fatal(err)
					}
					for _, l := range locs {
						s.Add(l)
					}
					it, err := s.Wait(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					fetch += time.Since(start)
					n := 0
					for it.Next() {
						n++
					}
					if err := it.Err(); err != nil {
						b.Fatal(err)
					}
					it.Close()
					s.Close()
					if n != len(locs)*((16<<20)/100) {
						b.Fatalf("%d records", n)
					}
				}
				b.ReportMetric(float64(total)*float64(b.N)/fetch.Seconds()/1e6, "fetch-MB/s")
			})
		}
	}
}
