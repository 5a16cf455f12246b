package datanode

import (
	"errors"
	"time"

	"github.com/stratafs/strata/internal/datanode/fsdataset"
)

// scanBlocks is the block scanner: every ScanPeriod it reads each
// finalized replica end to end, checking its checksums, at no more than
// ScanBytesPerSecond, and reports corrupt replicas to the NameNode, which
// replaces them from a good copy. Hadoop's VolumeScanner does the same
// (dfs.datanode.scan.period.hours, dfs.block.scanner.volume.bytes.per.second).
func (d *DataNode) scanBlocks() {
	if d.cfg.ScanPeriod < 0 {
		return
	}
	period, rate := d.cfg.ScanPeriod, d.cfg.ScanBytesPerSecond // New gave them their defaults
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-time.After(period):
		}
		report := d.data.Report()
		d.scan.startPass(report)
		for _, infos := range report {
			for _, info := range infos {
				if info.State != fsdataset.Finalized {
					continue
				}
				start := time.Now()
				err := d.data.Verify(info.Block)
				var ce *fsdataset.CorruptReplicaError
				corrupt := errors.As(err, &ce) || errors.Is(err, fsdataset.ErrCorrupt)
				if corrupt {
					d.reportBad(info.Block, err)
				}
				d.scan.scanned(info.NumBytes, corrupt)
				// Pace the scan: a replica of n bytes takes at least n/rate.
				want := time.Duration(float64(info.NumBytes) / float64(rate) * float64(time.Second))
				select {
				case <-d.ctx.Done():
					return
				case <-time.After(want - time.Since(start)):
				}
			}
		}
		d.scan.endPass()
	}
}
