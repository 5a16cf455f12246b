package model

import (
	"math"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/media"
)

// A job with intermediate data on HDFS's devices gets HDFS's reads
// priced as the read-only jobs showed and its writes as the write-only
// ones did; the rest of its requests and seeks are its intermediate
// data's.
func TestSplitRolesByDirection(t *testing.T) {
	const mb = 1 << 20
	jobs := []Job{
		// A reader of its own split: 100 requests of 1 MiB, 30 seek.
		{Name: "validate", DeviceBytes: 100 * mb, HDFSDevice: 100 * mb, Requests: 100, Seeks: 30},
		// Replica receivers interleaved: every request seeks.
		{Name: "gen", DeviceBytes: 200 * mb, HDFSDevice: 200 * mb, HDFSDeviceWrite: 200 * mb, Requests: 200, Seeks: 200},
		// 100 MiB of HDFS reads, 100 MiB of HDFS writes and 300 MiB of
		// spills in 1 MiB requests; 30 + 100 of the seeks are HDFS's.
		{Name: "sort", MapFileWrite: 1, DeviceBytes: 500 * mb, HDFSDevice: 200 * mb, HDFSDeviceWrite: 100 * mb,
			Requests: 500, Seeks: 130 + 240},
	}
	splitRoles(jobs)
	s := jobs[2]
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Max(1, want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	near("read seek share", s.HDFSSeek, 0.3)
	near("write seek share", s.HDFSWriteSeek, 1)
	near("read bytes per request", s.HDFSRequest, mb)
	near("write bytes per request", s.HDFSWriteRequest, mb)
	near("intermediate bytes per request", s.FileRequest, mb)
	near("intermediate seek share", s.FileSeek, 0.8)
	// The HDFS-only jobs keep their own figures.
	if jobs[0].HDFSSeek != 0 || jobs[1].HDFSWriteSeek != 0 {
		t.Errorf("HDFS-only jobs changed: %v, %v", jobs[0].HDFSSeek, jobs[1].HDFSWriteSeek)
	}
	// On a device of seeks only, HDFS's writes cost their seek share.
	p := media.Params{Seek: 10 * time.Millisecond, QueueDepth: 1}
	L := newLoad()
	r := deviceTime(p, []part{{bytes: 100 * mb, streams: 1}}, 2, 0, L, &s)
	w := deviceTime(p, []part{{bytes: 100 * mb, streams: 1, write: true}}, 2, 0, L, &s)
	near("100 reads' seeks (s)", r, 0.3)
	near("100 writes' seeks (s)", w, 1)
}
