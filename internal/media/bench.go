package media

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// BenchConfig says how to measure a preset.
type BenchConfig struct {
	Dir string // where the device's directory is made (a subdirectory per preset)
	// Size is the test file's size in bytes; the sequential passes wrap
	// around it until Duration has passed.
	Size int64
	// Duration is how long each measurement runs (at least one pass of
	// Size for the sequential ones).
	Duration time.Duration
	// RequestBytes is the largest request a charge makes
	// (DefaultRequestBytes if 0).
	RequestBytes int64
	// IOBytes is the size of the sequential passes' application reads
	// and writes (256 KiB if 0).
	IOBytes int
}

// BenchResult is what the microbenchmark of one device model measured,
// next to what the model predicts for the same access pattern (0 where
// the model is unlimited).
type BenchResult struct {
	Preset     string
	Params     Params
	QueueDepth int // of the second random-read measurement

	SeqWriteMBps, WantSeqWriteMBps float64
	SeqReadMBps, WantSeqReadMBps   float64
	RandIOPS1, WantRandIOPS1       float64 // 4 KiB random reads, one at a time
	RandIOPSQD, WantRandIOPSQD     float64 // QueueDepth at a time
}

// BenchRandBytes is the random reads' size.
const BenchRandBytes = 4096

// Bench measures the model p (named name) in a directory of its own under
// cfg.Dir: sequential write and read MB/s through File, and random 4 KiB
// read IOPS at queue depth 1 and at the model's queue depth. It uses a
// device of its own, leaving the process's table alone. The directory is
// removed afterwards.
func Bench(ctx context.Context, name string, p Params, cfg BenchConfig) (BenchResult, error) {
	if err := p.Validate(); err != nil {
		return BenchResult{}, err
	}
	if cfg.RequestBytes <= 0 {
		cfg.RequestBytes = DefaultRequestBytes
	}
	if cfg.IOBytes <= 0 {
		cfg.IOBytes = 256 << 10
	}
	if cfg.Size < int64(cfg.IOBytes) || cfg.Size < 64*BenchRandBytes {
		return BenchResult{}, fmt.Errorf("media: bench size %d too small", cfg.Size)
	}
	dir, err := os.MkdirTemp(cfg.Dir, "media-bench-"+name+"-")
	if err != nil {
		return BenchResult{}, err
	}
	defer os.RemoveAll(dir)
	dev := newDevice(Device{Dir: dir, Preset: name, Params: p}, cfg.RequestBytes)
	open := func(flag int) (File, error) {
		f, err := os.OpenFile(filepath.Join(dir, "bench.dat"), flag, 0o644)
		if err != nil || p.free() {
			return f, err
		}
		return wrap(f, dev)
	}
	r := BenchResult{
		Preset: name, Params: p, QueueDepth: p.QueueDepth,
		WantSeqWriteMBps: p.SequentialMBps(cfg.RequestBytes, true),
		WantSeqReadMBps:  p.SequentialMBps(cfg.RequestBytes, false),
		WantRandIOPS1:    p.RandomIOPS(BenchRandBytes, 1),
		WantRandIOPSQD:   p.RandomIOPS(BenchRandBytes, p.QueueDepth),
	}
	buf := make([]byte, cfg.IOBytes)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	// Sequential: passes over the file, each on a new handle, until
	// Duration has passed.
	seq := func(flag int, do func(f File, off int64) error) (float64, error) {
		var n int64
		start := time.Now()
		for n == 0 || time.Since(start) < cfg.Duration {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			f, err := open(flag)
			if err != nil {
				return 0, err
			}
			for off := int64(0); off < cfg.Size; off += int64(len(buf)) {
				if err = do(f, off); err != nil {
					break
				}
				n += int64(len(buf))
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return 0, err
			}
		}
		return float64(n) / time.Since(start).Seconds() / 1e6, nil
	}
	if r.SeqWriteMBps, err = seq(os.O_WRONLY|os.O_CREATE, func(f File, _ int64) error {
		_, err := f.Write(buf)
		return err
	}); err != nil {
		return r, err
	}
	if r.SeqReadMBps, err = seq(os.O_RDONLY, func(f File, _ int64) error {
		_, err := io.ReadFull(f, buf)
		return err
	}); err != nil {
		return r, err
	}
	if r.RandIOPS1, err = randomReads(ctx, open, cfg, 1); err != nil {
		return r, err
	}
	r.RandIOPSQD = r.RandIOPS1
	if p.QueueDepth > 1 {
		r.RandIOPSQD, err = randomReads(ctx, open, cfg, p.QueueDepth)
	}
	return r, err
}

// randomReads runs qd readers of random aligned 4 KiB blocks, each on its
// own handle, for cfg.Duration and returns the reads a second.
func randomReads(ctx context.Context, open func(int) (File, error), cfg BenchConfig, qd int) (float64, error) {
	var ops atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, qd)
	blocks := cfg.Size / BenchRandBytes
	start := time.Now()
	deadline := start.Add(cfg.Duration)
	for i := range qd {
		f, err := open(os.O_RDONLY)
		if err != nil {
			wg.Wait() // the readers already started close their files
			return 0, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer f.Close()
			rng := rand.New(rand.NewPCG(uint64(i), uint64(start.UnixNano())))
			b := make([]byte, BenchRandBytes)
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if _, err := f.ReadAt(b, rng.Int64N(blocks)*BenchRandBytes); err != nil {
					errs <- err
					return
				}
				ops.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return float64(ops.Load()) / elapsed.Seconds(), nil
}

// Best returns r with each measured figure replaced by o's where o's is
// higher: the best of several runs, since other load on the machine only
// ever slows a run down.
func (r BenchResult) Best(o BenchResult) BenchResult {
	r.SeqWriteMBps = max(r.SeqWriteMBps, o.SeqWriteMBps)
	r.SeqReadMBps = max(r.SeqReadMBps, o.SeqReadMBps)
	r.RandIOPS1 = max(r.RandIOPS1, o.RandIOPS1)
	r.RandIOPSQD = max(r.RandIOPSQD, o.RandIOPSQD)
	return r
}
