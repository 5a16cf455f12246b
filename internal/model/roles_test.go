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

// HDFS writes' requests grow more slowly than their bytes: a fixed share
// of them is the job's small files and ends of files. mr11's TeraGen
// wrote 302 MB in 320 requests, 306 seeking, at calibration, and ten
// times the data in 2,921 requests, 2,909 seeking; per byte would say
// 3,200 and 3,062.
func TestHDFSWriteRequestsWithData(t *testing.T) {
	jobs := []Job{{Name: "teragen", DeviceBytes: 302e6, HDFSDevice: 302e6, HDFSDeviceWrite: 302e6, Requests: 320, Seeks: 306,
		HDFSWriteRequest: 302e6 / 320, HDFSWriteSeek: 306.0 / 320}}
	splitRoles(jobs)
	j := jobs[0]
	if j.HDFSWriteExtra <= 0 {
		t.Fatalf("no extra share: %+v", j)
	}
	perReq, seek := j.hdfsWriteAt(1)
	if perReq != j.HDFSWriteRequest || seek != j.HDFSWriteSeek {
		t.Errorf("at the calibration's data: %v, %v; want %v, %v", perReq, seek, j.HDFSWriteRequest, j.HDFSWriteSeek)
	}
	perReq, seek = j.hdfsWriteAt(10)
	reqs := 3020e6 / perReq
	if math.Abs(reqs-2921)/2921 > 0.01 || math.Abs(reqs*seek-2909)/2909 > 0.01 {
		t.Errorf("10x: %.0f requests, %.0f seeking; measured 2921, 2909", reqs, reqs*seek)
	}
}

// A task's output is a file of its own, so a node holds its tasks' bytes
// exactly, not whole blocks of the job's: three maps writing 333 MB
// each (2.6 blocks of 128 MiB) at replication 3 on 3 nodes put 1 GB on
// every node (the block-rounded count put 1.07 GB).
func TestHDFSWritesInTasksBlocks(t *testing.T) {
	cl := &Cluster{Name: "c", Nodes: 3, Cores: 2, Speed: 1, MapSlots: 1, ReduceSlots: 1,
		Devices: []Device{{Name: "d", Params: media.Params{WriteMBps: 100, QueueDepth: 1}}},
		Volumes: []string{"d"}, LocalDirs: []string{"d"}, Replication: 3, BlockSize: 128 << 20}
	j := &Job{Name: "gen", Bytes: 1e8, Maps: 3, MapHDFSWrite: 1}
	for _, d := range []float64{1e8, 1e9} {
		L := j.shape(cl, d, 3, 0).load(cl, PhaseMap, j)
		var got float64
		for _, p := range L.parts["d"] {
			got += p.bytes
		}
		if math.Abs(got-d)/d > 1e-9 {
			t.Errorf("%g bytes written by 3 maps: %g on a node, want %g", d, got, d)
		}
	}
}
