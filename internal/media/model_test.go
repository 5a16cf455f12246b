package media

import (
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
)

const ms = int64(time.Millisecond)

func freshState(qd int) *devState { return &devState{slots: make([]int64, qd)} }

// hdd is a disk whose requests are easy to add up: 100 MB/s (1 MB takes
// 10 ms), no latency, 5 ms seeks.
var hdd = Params{ReadMBps: 100, WriteMBps: 100, Seek: 5 * time.Millisecond, QueueDepth: 1}

func TestSequentialStreamSeeksOnce(t *testing.T) {
	st := freshState(1)
	now := int64(1000 * ms)
	var seeks int
	var prev int64
	for i := range int64(10) {
		finish, seek := hdd.reserve(st, now, prev, 7, i*1e6, 1e6, false)
		if seek {
			seeks++
		}
		now, prev = finish, finish // the reader waits for each request
	}
	if seeks != 1 {
		t.Errorf("one sequential stream paid %d seeks, want 1 (the first request)", seeks)
	}
	// 5 ms seek + 10 × 10 ms transfer.
	if got, want := st.stats.Busy, 105*time.Millisecond; got != want {
		t.Errorf("busy %v, want %v", got, want)
	}
}

func TestInterleavedStreamsSeekEveryRequest(t *testing.T) {
	st := freshState(1)
	now := int64(1000 * ms)
	for i := range int64(10) {
		file := uint64(1 + i%2) // two files, alternating
		now, _ = hdd.reserve(st, now, 0, file, (i/2)*1e6, 1e6, true)
	}
	if st.stats.Seeks != 10 {
		t.Errorf("two interleaved streams paid %d seeks in 10 requests, want 10", st.stats.Seeks)
	}
	if got, want := st.stats.Busy, 150*time.Millisecond; got != want {
		t.Errorf("busy %v, want %v", got, want)
	}
	if st.stats.WriteBytes != 10e6 || st.stats.ReadBytes != 0 {
		t.Errorf("bytes read %d written %d, want 0 and 10e6", st.stats.ReadBytes, st.stats.WriteBytes)
	}
}

func TestConcurrentRequestsQueueOnOneActuator(t *testing.T) {
	st := freshState(1)
	now := int64(1000 * ms)
	f1, _ := hdd.reserve(st, now, 0, 1, 0, 1e6, false)
	f2, _ := hdd.reserve(st, now, 0, 2, 0, 1e6, false) // arrives at the same time
	if f1 != now+15*ms || f2 != f1+15*ms {
		t.Errorf("finishes %d, %d ms after arrival; want 15 and 30", (f1-now)/ms, (f2-now)/ms)
	}
}

func TestQueueDepthOverlapsLatency(t *testing.T) {
	ssd := Params{ReadMBps: 1000, Latency: 100 * time.Microsecond, QueueDepth: 4}
	st := freshState(4)
	now := int64(1000 * ms)
	for i := range int64(4) {
		if f, _ := ssd.reserve(st, now, 0, 1, i*1e9, 4000, false); f != now+int64(104*time.Microsecond) {
			t.Errorf("request %d of 4 at once on a 4-deep device finishes %v after arrival, want 104µs", i, time.Duration(f-now))
		}
	}
	// A fifth waits for a slot.
	if f, _ := ssd.reserve(st, now, 0, 1, 5e9, 4000, false); f != now+int64(208*time.Microsecond) {
		t.Errorf("fifth request on a 4-deep device finishes %v after arrival, want 208µs", time.Duration(f-now))
	}
}

func TestChannelBoundsBandwidth(t *testing.T) {
	// Eight 1 MB requests at once on an 8-deep 100 MB/s device: the
	// slots take them all, the channel moves 1 MB per 10 ms.
	ssd := Params{ReadMBps: 100, QueueDepth: 8}
	st := freshState(8)
	now := int64(1000 * ms)
	var last int64
	for i := range int64(8) {
		last, _ = ssd.reserve(st, now, 0, uint64(i+1), 0, 1e6, false)
	}
	if want := now + 80*ms - slack.Nanoseconds(); last != want {
		t.Errorf("eighth 1 MB request ends %v after arrival, want %v (80 ms of transfers, less the reordering slack)", time.Duration(last-now), time.Duration(want-now))
	}
}

func TestStreamContinuesWithinSlack(t *testing.T) {
	st := freshState(1)
	f1, _ := hdd.reserve(st, 1000*ms, 0, 1, 0, 1e6, false)
	// The same caller, back within slack of its request's end: served as
	// if it had asked then (the readahead the model stands for).
	f2, _ := hdd.reserve(st, f1+slack.Nanoseconds()/2, f1, 1, 1e6, 1e6, false)
	if f2 != f1+10*ms {
		t.Errorf("a stream's request within slack finished %v after its previous one, want 10ms", time.Duration(f2-f1))
	}
	// Another caller at that time starts when it arrives.
	arrive := f2 + slack.Nanoseconds()/2
	f3, _ := hdd.reserve(st, arrive, 0, 1, 2e6, 1e6, false)
	if f3 != arrive+10*ms {
		t.Errorf("a new caller's request on an idle device finished %v after arrival, want 10ms", time.Duration(f3-arrive))
	}
	// So does the same caller long after.
	arrive = f3 + 100*ms
	f4, _ := hdd.reserve(st, arrive, f3, 1, 3e6, 1e6, false)
	if f4 != arrive+10*ms {
		t.Errorf("a request long after the stream's previous one finished %v after arrival, want 10ms", time.Duration(f4-arrive))
	}
}

func TestOneStreamDoesNotOverlapItself(t *testing.T) {
	// A caller that runs ahead of its device (it does not sleep for
	// short waits) still has one request at a time, even on a device
	// with many slots.
	ssd := Params{ReadMBps: 1000, Latency: 100 * time.Microsecond, QueueDepth: 10}
	st := freshState(10)
	now := int64(1000 * ms)
	var prev int64
	for i := range int64(10) {
		prev, _ = ssd.reserve(st, now, prev, 1, i*1e9, 4000, false)
	}
	if want := now + 10*int64(104*time.Microsecond); prev != want {
		t.Errorf("10 requests of one stream end %v after it began, want %v", time.Duration(prev-now), time.Duration(want-now))
	}
}

func TestModelRates(t *testing.T) {
	p, _ := LookupPreset("hdd-7200")
	if got := p.Params.SequentialMBps(1<<20, false); got < 174.9 || got > 175.1 {
		t.Errorf("hdd-7200 sequential %f MB/s, want 175", got)
	}
	if got := p.Params.RandomIOPS(4096, 1); got < 70 || got > 90 {
		t.Errorf("hdd-7200 random IOPS %f, want 70..90 for a 7200 rpm disk", got)
	}
	s, _ := LookupPreset("sata-ssd")
	if qd1, qd := s.Params.RandomIOPS(4096, 1), s.Params.RandomIOPS(4096, s.Params.QueueDepth); qd < 9*qd1 {
		t.Errorf("sata-ssd random IOPS %f at QD1, %f at its queue depth: want the queue to multiply them", qd1, qd)
	}
	r, _ := LookupPreset("ram")
	if !r.Params.free() {
		t.Error("ram preset has a cost")
	}
}

func TestStateRoundTrip(t *testing.T) {
	st := freshState(3)
	hdd.reserve(st, 1000*ms, 0, 9, 0, 1e6, true)
	st.slots[2] = 42
	b := make([]byte, stateSize)
	st.encode(b)
	got, ok := decodeState(b, 3)
	if !ok || got.busFree != st.busFree || got.lastFile != 9 || got.lastEnd != 1e6 || got.slots[2] != 42 || got.stats != st.stats {
		t.Errorf("decoded %+v (ok %v), want %+v", got, ok, st)
	}
	if _, ok := decodeState(b, 4); ok {
		t.Error("a state of 3 slots decoded as 4")
	}
	if _, ok := decodeState(make([]byte, stateSize), 3); ok {
		t.Error("a zero page decoded as a state")
	}
}

func TestParse(t *testing.T) {
	c := conf.New()
	c.Set(KeyDirs, "/data/hdd=hdd-7200, /data/ssd=sata-ssd")
	c.Set("strata.media.hdd-7200.read.mbps", "120")
	c.Set("strata.media.hdd-7200.seek", "8ms")
	c.Set("strata.media.sata-ssd.queue.depth", "4")
	c.Set(KeyRequestBytes, "512k")
	tab, err := Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Devices) != 2 || tab.RequestBytes != 512<<10 {
		t.Fatalf("table %+v", tab)
	}
	h, s := tab.Devices[0], tab.Devices[1]
	if h.Dir != "/data/hdd" || h.Preset != "hdd-7200" || h.Params.ReadMBps != 120 || h.Params.WriteMBps != 175 || h.Params.Seek != 8*time.Millisecond {
		t.Errorf("hdd device %+v", h)
	}
	if s.Dir != "/data/ssd" || s.Params.QueueDepth != 4 || s.Params.ReadMBps != 550 {
		t.Errorf("ssd device %+v", s)
	}

	for _, tc := range []struct{ key, value, want string }{
		{KeyDirs, "/data/x=floppy", "unknown preset"},
		{KeyDirs, "/data/x", "not DIR=PRESET"},
		{KeyDirs, "/data/x=ram,/data/x/=nvme", "listed twice"},
		{"strata.media.hdd-7200.rpm", "7200", "unknown key"},
		{"strata.media.floppy.read.mbps", "1", "unknown key"},
		{"strata.media.nvme.queue.depth", "0", "queue depth"},
		{"strata.media.nvme.read.mbps", "fast", "fast"},
		{"strata.media.nvme.latency", "-1", "negative"},
		{"strata.media.nvme.read.mbps", "NaN", "NaN"},
		{"strata.media.nvme.write.mbps", "-1", "out of range"},
		{"strata.media.hdd-7200.read.mbps", "1e-12", "out of range"},
		{"strata.media.hdd-7200.seek", "1000h", "at most"},
		{KeyRequestBytes, "1", "out of range"},
	} {
		c := conf.New()
		c.Set(tc.key, tc.value)
		if _, err := Parse(c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%s: error %v, want one mentioning %q", tc.key, tc.value, err, tc.want)
		}
	}
	if tab, err := Parse(conf.New()); err != nil || len(tab.Devices) != 0 {
		t.Errorf("no keys: %+v, %v; want an empty table", tab, err)
	}
}
