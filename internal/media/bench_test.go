package media

import (
	"context"
	"testing"
	"time"
)

// BenchmarkPreset runs the microbenchmark of strata media bench on each
// preset (a file of 64 MiB in a temporary directory, one second per
// measurement) and reports measured and modelled figures side by side:
//
//	go test -run '^$' -bench Preset ./internal/media
func BenchmarkPreset(b *testing.B) {
	for _, p := range Presets() {
		b.Run(p.Name, func(b *testing.B) {
			var r BenchResult
			for b.Loop() {
				var err error
				r, err = Bench(context.Background(), p.Name, p.Params, BenchConfig{Dir: b.TempDir(), Size: 64 << 20, Duration: time.Second})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(r.SeqWriteMBps, "write-MB/s")
			b.ReportMetric(r.WantSeqWriteMBps, "model-write-MB/s")
			b.ReportMetric(r.SeqReadMBps, "read-MB/s")
			b.ReportMetric(r.WantSeqReadMBps, "model-read-MB/s")
			b.ReportMetric(r.RandIOPS1, "IOPS-QD1")
			b.ReportMetric(r.WantRandIOPS1, "model-IOPS-QD1")
			b.ReportMetric(r.RandIOPSQD, "IOPS-QD")
			b.ReportMetric(r.WantRandIOPSQD, "model-IOPS-QD")
		})
	}
}

// BenchmarkBook is the cost of booking one request on a device (the
// shared-state update every charge makes).
func BenchmarkBook(b *testing.B) {
	d := newDevice(Device{Dir: b.TempDir(), Params: Params{ReadMBps: 1e9, QueueDepth: 32}}, DefaultRequestBytes)
	var off int64
	for b.Loop() {
		d.book(0, 1, off, 4096, false)
		off += 8192
	}
}
