package spill

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/vfs"
)

// Counter names, the values of package mapreduce's constants of the same
// names (repeated here so that mapreduce may import this package).
const (
	CounterSpills                = "Spills"
	CounterSpilledRecords        = "Spilled Records"
	CounterMapOutputRecords      = "Map output records"
	CounterMapOutputBytes        = "Map output bytes"
	CounterMapOutputMaterialized = "Map output materialized bytes"
	CounterCombineInputRecords   = "Combine input records"
	CounterCombineOutputRecords  = "Combine output records"
)

// Defaults, Hadoop's: the values of the keys in conf's table, which
// DefaultConfig reads (a test checks that they agree).
const (
	DefaultSortBytes    = 100 << 20 // mapreduce.task.io.sort.mb = 100
	DefaultSpillPercent = 0.80      // mapreduce.map.sort.spill.percent
	DefaultSortFactor   = 10        // mapreduce.task.io.sort.factor
	// MinSpillsForCombine is how many spills the final merge needs before
	// it runs the combiner (Hadoop's mapreduce.map.combine.minspills).
	MinSpillsForCombine = 3
	// MinSortBytes and MaxSortBytes bound Config.SortBytes.
	MinSortBytes = 16 << 10
	MaxSortBytes = 4 << 30
)

// Output file names inside <local dir>/<Config.Name>/.
const (
	OutputFile      = "file.out"
	OutputIndexFile = "file.out.index"
)

// ErrClosed is returned by Collect and Close after Close or Abort.
var ErrClosed = errors.New("spill: collector is closed")

// CombineFunc is a combiner: it is called once per distinct key of a
// partition with that key's values (each valid until the next call of
// values) and emits records with emit, which copies them. It must emit
// keys in sort order — normally just the key it was given — or the spill
// fails. It is never called concurrently with itself, but may be called
// from a goroutine other than Collect's.
type CombineFunc func(key []byte, values func() ([]byte, bool), emit func(k, v []byte) error) error

// Config configures a Collector, one per map task attempt.
type Config struct {
	// Partitions is the number of reduce tasks (≥ 1); Collect takes
	// partitions in [0, Partitions).
	Partitions int
	// SortBytes is mapreduce.task.io.sort.mb in bytes: the memory for
	// record bytes and their metadata (24 bytes a record) together.
	// 0 means DefaultSortBytes; otherwise in [MinSortBytes, MaxSortBytes].
	SortBytes int64
	// SpillPercent (mapreduce.map.sort.spill.percent) is the fill level,
	// in (0, 1], at which a background spill starts. 0 means 0.80.
	SpillPercent float64
	// SortFactor (mapreduce.task.io.sort.factor) is how many segments a
	// merge pass reads at once, ≥ 2. 0 means 10.
	SortFactor int
	// Compare orders keys; nil means bytes.Compare, for which the sort
	// uses key prefixes and a radix sort.
	Compare func(a, b []byte) int
	// Combine is the optional combiner, run on every spill and on the
	// final merge when there are at least MinSpillsForCombine spills.
	Combine CombineFunc
	// Codec compresses every segment (spills and output); see ParseCodec.
	Codec Codec
	// LocalDirs are mapreduce.cluster.local.dir: the Collector works in
	// <dir>/<Name>/ of each. Spill N goes to dir N mod len (skipping dirs
	// without room for it), the output to one with room. Dirs that cannot
	// be created are skipped; at least one must work.
	LocalDirs []string
	// Name is unique to the task attempt (e.g. attempt_..._m_000003_0);
	// it becomes a directory name, so it must not contain a separator.
	Name string
	// Counters, if set, receives counter increments (the Counter*
	// names). It is called from the goroutine calling Collect and Close.
	Counters func(name string, delta int64)
	// FS is the file system of the local dirs; nil means media.Default()
	// (the OS, with emulated media where configured). Tests inject faults
	// here (vfs/errorfs).
	FS vfs.FS
}

// DefaultConfig returns the defaults of conf's table (ConfigFrom of an
// empty configuration) for one partition; the caller sets Partitions,
// LocalDirs and Name.
func DefaultConfig() Config {
	c, err := ConfigFrom(conf.New())
	if err != nil {
		panic("spill: the defaults in conf's table do not parse: " + err.Error())
	}
	return c
}

// The keys ConfigFrom reads; their defaults are in conf's table.
const (
	KeySortMB       = "mapreduce.task.io.sort.mb"
	KeySpillPercent = "mapreduce.map.sort.spill.percent"
	KeySortFactor   = "mapreduce.task.io.sort.factor"
	KeyCompress     = "mapreduce.map.output.compress"
	KeyCodec        = "mapreduce.map.output.compress.codec"
)

// ConfigFrom reads the job's sort settings from Hadoop's keys (unset keys
// take conf's table's defaults): SortBytes, SpillPercent, SortFactor and
// Codec (CodecFrom). Partitions is 1; the caller sets it, LocalDirs, Name
// and the functions. Bad values are reported together; the Config is not
// validated (NewCollector does).
func ConfigFrom(c *conf.Configuration) (Config, error) {
	r := conf.NewReader(c, "spill")
	cfg := Config{Partitions: 1}
	cfg.SortBytes = r.Int(KeySortMB) << 20
	cfg.SpillPercent = r.Float(KeySpillPercent)
	cfg.SortFactor = int(r.Int(KeySortFactor))
	codec, err := CodecFrom(c)
	r.AddAs(err)
	cfg.Codec = codec
	return cfg, r.Err()
}

// CodecFrom returns the map-output codec of a job: None unless
// mapreduce.map.output.compress, else mapreduce.map.output.compress.codec
// (ParseCodec).
func CodecFrom(c *conf.Configuration) (Codec, error) {
	on, err := c.GetBool(KeyCompress)
	if err != nil || !on {
		if err != nil {
			err = fmt.Errorf("spill: %w", err)
		}
		return None, err
	}
	return ParseCodec(c.Get(KeyCodec))
}

// withDefaults returns c with its "0 means" fields given DefaultConfig's
// values.
func (c Config) withDefaults() Config {
	if c.SortBytes == 0 || c.SpillPercent == 0 || c.SortFactor == 0 {
		d := DefaultConfig()
		fill(&c.SortBytes, d.SortBytes)
		fill(&c.SpillPercent, d.SpillPercent)
		fill(&c.SortFactor, d.SortFactor)
	}
	return c
}

func fill[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

// Validate reports the first field out of range.
func (c *Config) Validate() error {
	switch {
	case c.Partitions < 1 || c.Partitions > maxIndexPartitions:
		return fmt.Errorf("spill: %d partitions (want 1..%d)", c.Partitions, maxIndexPartitions)
	case c.SortBytes < MinSortBytes || c.SortBytes > MaxSortBytes:
		return fmt.Errorf("spill: %s: sort buffer of %d bytes (want %d..%d)", KeySortMB, c.SortBytes, MinSortBytes, MaxSortBytes)
	case !(c.SpillPercent > 0 && c.SpillPercent <= 1):
		return fmt.Errorf("spill: %s: spill percent %v not in (0, 1]", KeySpillPercent, c.SpillPercent)
	case c.SortFactor < 2:
		return fmt.Errorf("spill: %s: sort factor %d is less than 2", KeySortFactor, c.SortFactor)
	case c.Name == "" || c.Name == "." || c.Name == ".." || strings.ContainsAny(c.Name, `/\`):
		return fmt.Errorf("spill: bad task attempt name %q", c.Name)
	case len(c.LocalDirs) == 0:
		return errors.New("spill: no local dirs")
	}
	_, err := c.Codec.canonical()
	return err
}

// Output is a finished map output: one file with every partition's
// segment, in partition order, and its index.
type Output struct {
	Path      string // <local dir>/<Name>/file.out
	IndexPath string // <same dir>/file.out.index
	Index     []IndexEntry
}

// region is a set of collected records: the unit a spill sorts and writes.
type region struct {
	data  [][]byte  // slot → chunk, or a large record's own buffer
	meta  [][]entry // metadata chunks; each is sorted on its own
	units int       // buffer units held
}

func (r *region) key(e *entry) []byte {
	off := e.loc & locMask
	return r.data[e.loc>>locShift][off : off+e.klen : off+e.klen]
}

func (r *region) value(e *entry) []byte {
	off := e.loc&locMask + e.klen
	return r.data[e.loc>>locShift][off : off+e.vlen : off+e.vlen]
}

func (r *region) records() int {
	n := 0
	for _, m := range r.meta {
		n += len(m)
	}
	return n
}

type spillFile struct {
	path  string
	index []IndexEntry
}

// pendingCounters are counted by spills and reported by the collecting
// goroutine.
type pendingCounters struct {
	spills, spilled, combineIn, combineOut int64
}

// Collector is a map task's output buffer (Hadoop's MapOutputBuffer):
// Collect copies records into memory; a background goroutine sorts and
// spills full regions to local files while collection goes on; Close
// merges the spills into the task's output file and index.
//
// Memory: SortBytes is divided into units (chunks of 4 KiB to 1 MiB);
// a unit holds either record bytes or metadata, so the split adapts to
// the record size. Besides SortBytes a Collector uses one metadata chunk
// of sort scratch space and 256 KiB I/O buffers.
//
// Collect, Close and Abort must be called from one goroutine at a time.
type Collector struct {
	cfg       Config
	fs        vfs.FS                // never nil
	compare   func(a, b []byte) int // nil: bytes order with prefixes
	keyCmp    func(a, b []byte) int // never nil
	chunkSize int
	metaLen   int // entries per metadata chunk
	units     int
	threshold int
	dirs      []string // <LocalDirs[i]>/<Name> that could be created

	// Owned by the collecting goroutine.
	cur     *region
	dchunk  []byte
	dslot   uint32
	dpos    int
	mchunk  []entry
	mlen    int
	records int64 // not yet reported
	bytes   int64
	closed  bool
	scratch []entry // used by one spill at a time

	mu        sync.Mutex
	cond      sync.Cond
	free      int // units not in use
	allocated int // units backed by memory: in use or cached
	freeData  [][]byte
	freeMeta  [][]entry
	spilling  bool
	spillErr  error
	spills    []spillFile // by spill number
	pending   pendingCounters
}

// NewCollector checks cfg and creates the task attempt's directories.
func NewCollector(cfg Config) (*Collector, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Codec, _ = cfg.Codec.canonical()
	c := &Collector{cfg: cfg, fs: orDefault(cfg.FS), compare: cfg.Compare, keyCmp: cfg.Compare, cur: &region{}}
	if c.keyCmp == nil {
		c.keyCmp = bytes.Compare
	}
	var errs []error
	for _, d := range cfg.LocalDirs {
		p := filepath.Join(d, cfg.Name)
		if err := c.fs.MkdirAll(p, 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		c.dirs = append(c.dirs, p)
	}
	if len(c.dirs) == 0 {
		return nil, fmt.Errorf("spill: no usable local dir: %w", errors.Join(errs...))
	}
	c.chunkSize = 1 << 20
	for c.chunkSize > 4<<10 && int64(c.chunkSize)*64 > cfg.SortBytes {
		c.chunkSize >>= 1
	}
	c.metaLen = c.chunkSize / 24
	c.units = int(cfg.SortBytes / int64(c.chunkSize))
	c.threshold = max(1, int(math.Ceil(cfg.SpillPercent*float64(c.units))))
	c.free = c.units
	c.cond.L = &c.mu
	return c, nil
}

// Collect copies a record into the buffer. It blocks only when the buffer
// is full and a spill is running. A record too large for the whole buffer
// is written to a spill of its own (not combined). A spill's failure is
// returned by this or a later Collect.
func (c *Collector) Collect(partition int, key, value []byte) error {
	if c.closed {
		return ErrClosed
	}
	if uint(partition) >= uint(c.cfg.Partitions) {
		return fmt.Errorf("spill: partition %d out of range [0, %d)", partition, c.cfg.Partitions)
	}
	if len(key) > MaxFieldLen || len(value) > MaxFieldLen {
		return fmt.Errorf("spill: record too large (key %d bytes, value %d bytes)", len(key), len(value))
	}
	n := len(key) + len(value)
	if n > c.chunkSize {
		return c.collectLarge(partition, key, value)
	}
	if c.dpos+n > len(c.dchunk) || c.mlen == len(c.mchunk) {
		if err := c.refill(n); err != nil {
			return err
		}
	}
	off := c.dpos
	copy(c.dchunk[off:], key)
	copy(c.dchunk[off+len(key):], value)
	c.dpos = off + n
	e := &c.mchunk[c.mlen]
	c.mlen++
	e.part = uint32(partition)
	e.loc = c.dslot<<locShift | uint32(off)
	e.klen = uint32(len(key))
	e.vlen = uint32(len(value))
	if c.compare == nil {
		e.prefix = keyPrefix(key)
	}
	c.records++
	c.bytes += int64(n)
	return nil
}

// refill makes room for a record of n bytes and a metadata entry,
// starting a spill at the threshold and waiting for one when full.
func (c *Collector) refill(n int) error {
	c.mu.Lock()
	err := c.refillLocked(n)
	c.mu.Unlock()
	c.reportCounters()
	return err
}

func (c *Collector) refillLocked(n int) error {
	if c.spillErr != nil {
		return c.spillErr
	}
	if !c.spilling && c.cur.units >= c.threshold {
		c.handoff()
	}
	for {
		needData := c.dpos+n > len(c.dchunk)
		needMeta := c.mlen == len(c.mchunk)
		if !needData && !needMeta {
			return nil
		}
		if c.free == 0 {
			if err := c.waitForRoom(); err != nil {
				return err
			}
			continue
		}
		if needData {
			c.dchunk = c.takeData()
			c.dpos = 0
			c.dslot = uint32(len(c.cur.data))
			c.cur.data = append(c.cur.data, c.dchunk)
		} else {
			c.takeMeta()
		}
		c.cur.units++
	}
}

// waitForRoom waits for the running spill, or starts one of the current
// region if none is running (the region then holds every unit).
func (c *Collector) waitForRoom() error {
	if c.spilling {
		c.cond.Wait()
	} else {
		c.handoff()
	}
	return c.spillErr
}

func (c *Collector) takeMeta() {
	if c.mchunk != nil {
		c.cur.meta = append(c.cur.meta, c.mchunk[:c.mlen])
	}
	c.free--
	if n := len(c.freeMeta); n > 0 {
		c.mchunk = c.freeMeta[n-1][:c.metaLen]
		c.freeMeta = c.freeMeta[:n-1]
	} else {
		c.makeRoom(1)
		c.allocated++
		c.mchunk = make([]entry, c.metaLen)
	}
	c.mlen = 0
}

func (c *Collector) takeData() []byte {
	c.free--
	if n := len(c.freeData); n > 0 {
		b := c.freeData[n-1]
		c.freeData = c.freeData[:n-1]
		return b
	}
	c.makeRoom(1)
	c.allocated++
	return make([]byte, c.chunkSize)
}

// makeRoom drops cached chunks until k more units can be allocated
// without the buffer outgrowing SortBytes.
func (c *Collector) makeRoom(k int) {
	for c.allocated+k > c.units {
		if n := len(c.freeMeta); n > 0 {
			c.freeMeta[n-1] = nil
			c.freeMeta = c.freeMeta[:n-1]
		} else {
			n := len(c.freeData)
			c.freeData[n-1] = nil
			c.freeData = c.freeData[:n-1]
		}
		c.allocated--
	}
}

// release returns a spilled region's memory.
func (c *Collector) release(r *region) {
	for _, b := range r.data {
		if len(b) == c.chunkSize {
			c.freeData = append(c.freeData, b)
		} else {
			c.allocated -= c.bigUnits(len(b))
		}
	}
	for _, m := range r.meta {
		c.freeMeta = append(c.freeMeta, m[:0])
	}
	c.free += r.units
}

func (c *Collector) bigUnits(n int) int { return (n + c.chunkSize - 1) / c.chunkSize }

// detach takes the current region for spilling and starts a new one.
func (c *Collector) detach() *region {
	r := c.cur
	if c.mchunk != nil {
		r.meta = append(r.meta, c.mchunk[:c.mlen])
	}
	c.cur = &region{}
	c.dchunk, c.dpos, c.dslot = nil, 0, 0
	c.mchunk, c.mlen = nil, 0
	return r
}

// handoff starts a background spill of the current region. c.mu is held
// and no spill is running.
func (c *Collector) handoff() {
	r := c.detach()
	if r.records() == 0 {
		c.release(r)
		return
	}
	n := len(c.spills)
	c.spills = append(c.spills, spillFile{})
	c.spilling = true
	go func() {
		err := c.writeSpill(n, r)
		c.mu.Lock()
		c.release(r)
		if err != nil && c.spillErr == nil {
			c.spillErr = err
		}
		c.spilling = false
		c.cond.Broadcast()
		c.mu.Unlock()
	}()
}

// collectLarge collects a record larger than a chunk: it gets a buffer
// of its own, counted in units, or a spill of its own if it cannot fit.
func (c *Collector) collectLarge(partition int, key, value []byte) error {
	n := len(key) + len(value)
	k := c.bigUnits(n)
	c.mu.Lock()
	if k+1 > c.units {
		// Hadoop's "spill single record": spill what is buffered, then
		// this record alone.
		var err error
		for c.spilling {
			c.cond.Wait()
		}
		if err = c.spillErr; err == nil {
			c.handoff()
			num := len(c.spills)
			c.spills = append(c.spills, spillFile{})
			c.mu.Unlock()
			err = c.writeSingle(num, partition, key, value)
			c.mu.Lock()
			if err != nil && c.spillErr == nil {
				c.spillErr = err
			}
		}
		c.mu.Unlock()
		c.records++
		c.bytes += int64(n)
		c.reportCounters()
		return err
	}
	err := c.spillErr
	if err == nil && !c.spilling && c.cur.units >= c.threshold {
		c.handoff()
	}
	for err == nil {
		needMeta := c.mlen == len(c.mchunk)
		need := k
		if needMeta {
			need++
		}
		if c.free >= need {
			if needMeta {
				c.takeMeta()
				c.cur.units++
			}
			break
		}
		err = c.waitForRoom()
	}
	if err != nil {
		c.mu.Unlock()
		return err
	}
	c.free -= k
	c.makeRoom(k)
	c.allocated += k
	c.cur.units += k
	buf := make([]byte, n)
	slot := uint32(len(c.cur.data))
	c.cur.data = append(c.cur.data, buf)
	c.mu.Unlock()

	copy(buf, key)
	copy(buf[len(key):], value)
	e := &c.mchunk[c.mlen]
	c.mlen++
	*e = entry{part: uint32(partition), loc: slot << locShift, klen: uint32(len(key)), vlen: uint32(len(value))}
	if c.compare == nil {
		e.prefix = keyPrefix(key)
	}
	c.records++
	c.bytes += int64(n)
	c.reportCounters()
	return nil
}

// reportCounters passes counts on to Config.Counters.
func (c *Collector) reportCounters() {
	f := c.cfg.Counters
	if f == nil {
		return
	}
	c.mu.Lock()
	p := c.pending
	c.pending = pendingCounters{}
	c.mu.Unlock()
	for _, kv := range []struct {
		name string
		n    int64
	}{
		{CounterMapOutputRecords, c.records},
		{CounterMapOutputBytes, c.bytes},
		{CounterSpills, p.spills},
		{CounterSpilledRecords, p.spilled},
		{CounterCombineInputRecords, p.combineIn},
		{CounterCombineOutputRecords, p.combineOut},
	} {
		if kv.n != 0 {
			f(kv.name, kv.n)
		}
	}
	c.records, c.bytes = 0, 0
}

// pickDir returns the attempt dir for file number seq: round-robin,
// skipping dirs whose file system has less than need bytes free; if none
// has, the one with the most.
func (c *Collector) pickDir(seq int, need int64) string { return pickDir(c.fs, c.dirs, seq, need) }

func spillName(n int) string { return "spill" + strconv.Itoa(n) + ".out" }

// createSpill creates spill file n, placed for about need bytes.
func (c *Collector) createSpill(n int, need int64) (vfs.File, error) {
	path := filepath.Join(c.pickDir(n, need), spillName(n))
	f, err := vfs.Create(c.fs, path)
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	return f, nil
}

// finishFile flushes and closes a spill or output file, removing it on
// failure.
func (c *Collector) finishFile(f vfs.File, bw *bufio.Writer, err error) error {
	if err == nil {
		err = bw.Flush()
	}
	putWriter(bw)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		c.fs.Remove(f.Name())
		return fmt.Errorf("spill: writing %s: %w", f.Name(), err)
	}
	return nil
}

// sortRegion sorts each of r's metadata chunks and returns the bytes its
// records take in a segment, roughly (lengths at 2 bytes each).
func (c *Collector) sortRegion(r *region) int64 {
	if len(c.scratch) < c.metaLen {
		c.scratch = make([]entry, c.metaLen)
	}
	var size int64
	for _, m := range r.meta {
		sortEntries(m, c.scratch, r, c.compare)
		for i := range m {
			size += int64(m[i].klen+m[i].vlen) + 4
		}
	}
	return size
}

// writeSpill sorts region r and writes it as spill n.
func (c *Collector) writeSpill(n int, r *region) error {
	size := c.sortRegion(r)
	f, err := c.createSpill(n, size)
	if err != nil {
		return err
	}
	bw := getWriter(f)
	src := newSpillSource(r, c.compare)
	idx := make([]IndexEntry, c.cfg.Partitions)
	var cnt pendingCounters
	var off int64
	for p := range idx {
		it := &partIter{src: src, part: uint32(p)}
		var raw, part int64
		raw, part, err = c.writeSegment(bw, it, c.cfg.Combine, &cnt)
		if err != nil {
			break
		}
		idx[p] = IndexEntry{Offset: off, RawLength: raw, PartLength: part}
		off += part
	}
	if err = c.finishFile(f, bw, err); err != nil {
		return err
	}
	cnt.spills = 1
	c.mu.Lock()
	c.spills[n] = spillFile{path: f.Name(), index: idx}
	c.addPending(cnt)
	c.mu.Unlock()
	return nil
}

func (c *Collector) addPending(p pendingCounters) {
	c.pending.spills += p.spills
	c.pending.spilled += p.spilled
	c.pending.combineIn += p.combineIn
	c.pending.combineOut += p.combineOut
}

// writeSegment writes one partition's sorted records to w, through
// combine if it is not nil, and counts what it did.
func (c *Collector) writeSegment(w io.Writer, it Iterator, combine CombineFunc, cnt *pendingCounters) (raw, part int64, err error) {
	sw, err := NewSegmentWriter(w, c.cfg.Codec)
	if err != nil {
		return 0, 0, err
	}
	if combine == nil {
		for it.Next() {
			if err = sw.Append(it.Key(), it.Value()); err != nil {
				break
			}
			cnt.spilled++
		}
		if err == nil {
			err = it.Err()
		}
	} else {
		var last []byte
		emitted := false
		emit := func(k, v []byte) error {
			if emitted && c.keyCmp(last, k) > 0 {
				return errors.New("spill: combiner emitted keys out of order")
			}
			emitted = true
			last = append(last[:0], k...)
			cnt.combineOut++
			cnt.spilled++
			return sw.Append(k, v)
		}
		err = groups(it, c.compare, func(key []byte, values func() ([]byte, bool)) error {
			return combine(key, values, emit)
		}, &cnt.combineIn)
	}
	r, p, cerr := sw.Close()
	if err == nil {
		err = cerr
	}
	return r, p, err
}

// writeSingle writes spill n holding one record.
func (c *Collector) writeSingle(n, partition int, key, value []byte) error {
	f, err := c.createSpill(n, int64(len(key)+len(value)))
	if err != nil {
		return err
	}
	bw := getWriter(f)
	idx := make([]IndexEntry, c.cfg.Partitions)
	var off int64
	for p := range idx {
		var sw *SegmentWriter
		if sw, err = NewSegmentWriter(bw, c.cfg.Codec); err != nil {
			break
		}
		if p == partition {
			err = sw.Append(key, value)
		}
		raw, part, cerr := sw.Close()
		if err == nil {
			err = cerr
		}
		if err != nil {
			break
		}
		idx[p] = IndexEntry{Offset: off, RawLength: raw, PartLength: part}
		off += part
	}
	if err = c.finishFile(f, bw, err); err != nil {
		return err
	}
	c.mu.Lock()
	c.spills[n] = spillFile{path: f.Name(), index: idx}
	c.addPending(pendingCounters{spills: 1, spilled: 1})
	c.mu.Unlock()
	return nil
}

// Close spills what is buffered and produces the task's output: a single
// spill is renamed, several are merged (SortFactor at a time, combining
// when there are at least MinSpillsForCombine). Spill and temporary files
// are removed, as are the attempt's directories in the other local dirs
// when empty. With no records at all the output has an empty segment for
// every partition. On failure everything is removed, as by Abort.
func (c *Collector) Close() (Output, error) {
	if c.closed {
		return Output{}, ErrClosed
	}
	c.closed = true
	c.mu.Lock()
	for c.spilling {
		c.cond.Wait()
	}
	err := c.spillErr
	var mem *region
	if err == nil && (c.cur.records() > 0 || c.mchunk != nil && c.mlen > 0 || len(c.spills) == 0) {
		r := c.detach()
		if len(c.spills) > 0 && c.cfg.Combine == nil {
			// The remainder joins the final merge from memory: spilling
			// it would write and read it once more for nothing. (With a
			// combiner it is spilled, so that it is combined.)
			mem = r
		} else {
			n := len(c.spills)
			c.spills = append(c.spills, spillFile{})
			c.mu.Unlock()
			err = c.writeSpill(n, r)
			c.mu.Lock()
			c.release(r)
		}
	}
	spills := c.spills
	c.mu.Unlock()
	c.reportCounters()
	var out Output
	if err == nil {
		out, err = c.finish(spills, mem)
	}
	if mem != nil {
		c.mu.Lock()
		c.release(mem)
		c.mu.Unlock()
	}
	c.reportCounters()
	// The buffer is no longer needed.
	c.mu.Lock()
	c.freeData, c.freeMeta, c.scratch = nil, nil, nil
	c.mu.Unlock()
	if err != nil {
		c.removeAll()
		return Output{}, err
	}
	for _, d := range c.dirs {
		if d != filepath.Dir(out.Path) {
			c.fs.Remove(d) // only if empty
		}
	}
	return out, nil
}

// finish merges the spills, and mem (the records collected since the
// last spill, nil if none are left out of the spills) after them, into the
// task's output.
func (c *Collector) finish(spills []spillFile, mem *region) (Output, error) {
	if len(spills) == 1 && mem == nil {
		s := spills[0]
		out := Output{Path: filepath.Join(filepath.Dir(s.path), OutputFile), Index: s.index}
		out.IndexPath = filepath.Join(filepath.Dir(s.path), OutputIndexFile)
		if err := c.fs.Rename(s.path, out.Path); err != nil {
			return Output{}, fmt.Errorf("spill: %w", err)
		}
		if err := writeIndex(c.fs, out.IndexPath, out.Index); err != nil {
			return Output{}, err
		}
		c.countMaterialized(out.Index)
		return out, nil
	}
	var need int64
	files := make([]vfs.File, len(spills))
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}()
	for i, s := range spills {
		f, err := vfs.Open(c.fs, s.path)
		if err != nil {
			return Output{}, fmt.Errorf("spill: %w", err)
		}
		files[i] = f
		for _, e := range s.index {
			need += e.PartLength
		}
	}
	var memSrc *spillSource
	if mem != nil {
		for _, m := range mem.meta {
			for i := range m {
				need += int64(m[i].klen+m[i].vlen) + 4
			}
		}
		c.sortRegion(mem)
		memSrc = newSpillSource(mem, c.compare)
	}
	dir := c.pickDir(len(spills), need)
	out := Output{Path: filepath.Join(dir, OutputFile), IndexPath: filepath.Join(dir, OutputIndexFile)}
	f, err := vfs.Create(c.fs, out.Path)
	if err != nil {
		return Output{}, fmt.Errorf("spill: %w", err)
	}
	bw := getWriter(f)
	var combine CombineFunc
	if len(spills) >= MinSpillsForCombine {
		combine = c.cfg.Combine
	}
	out.Index = make([]IndexEntry, c.cfg.Partitions)
	var cnt pendingCounters
	var off int64
	for p := range out.Index {
		its := make([]Iterator, len(spills), len(spills)+1)
		for i, s := range spills {
			e := s.index[p]
			its[i], err = OpenSegment(io.NewSectionReader(files[i], e.Offset, e.PartLength), c.cfg.Codec, e.PartLength, e.RawLength)
			if err != nil {
				for _, it := range its[:i] {
					it.Close()
				}
				break
			}
		}
		if err != nil {
			break
		}
		if memSrc != nil {
			// Last: its records were collected after every spill's, and
			// the merge keeps input order among equal keys.
			its = append(its, &partIter{src: memSrc, part: uint32(p)})
		}
		var m Iterator
		if m, err = MergeFS(c.fs, its, c.cfg.Compare, c.cfg.SortFactor, c.dirs, c.cfg.Codec); err != nil {
			break
		}
		var raw, part int64
		raw, part, err = c.writeSegment(bw, m, combine, &cnt)
		if cerr := m.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			break
		}
		out.Index[p] = IndexEntry{Offset: off, RawLength: raw, PartLength: part}
		off += part
	}
	if err = c.finishFile(f, bw, err); err != nil {
		return Output{}, err
	}
	if err := writeIndex(c.fs, out.IndexPath, out.Index); err != nil {
		return Output{}, err
	}
	for _, s := range spills {
		c.fs.Remove(s.path)
	}
	c.mu.Lock()
	c.addPending(cnt)
	c.mu.Unlock()
	c.countMaterialized(out.Index)
	return out, nil
}

func (c *Collector) countMaterialized(idx []IndexEntry) {
	if c.cfg.Counters == nil {
		return
	}
	var n int64
	for _, e := range idx {
		n += e.PartLength
	}
	c.cfg.Counters(CounterMapOutputMaterialized, n)
}

// Abort stops the Collector and removes every file it made, its output
// included if Close had returned one. It waits for a running spill.
// Calling it more than once, or after a failed Close, is harmless.
func (c *Collector) Abort() {
	c.closed = true
	c.mu.Lock()
	for c.spilling {
		c.cond.Wait()
	}
	c.freeData, c.freeMeta = nil, nil
	c.mu.Unlock()
	c.removeAll()
}

func (c *Collector) removeAll() {
	for _, d := range c.dirs {
		c.fs.RemoveAll(d)
	}
}

// RemoveOutput removes a task attempt's files from every local dir: what
// a finished job does with its map outputs.
func RemoveOutput(localDirs []string, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("spill: bad task attempt name %q", name)
	}
	var errs []error
	for _, d := range localDirs {
		if err := os.RemoveAll(filepath.Join(d, name)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// spillSource yields a region's entries in (partition, key) order,
// merging its separately sorted metadata chunks; ties go to the earlier
// chunk, so collection order is kept among equal keys.
//
// Sorted order visits the record bytes at random, so every record is a
// cache miss; the source keeps the next lookahead entries in a ring and
// touches their bytes when they enter it, which overlaps those misses.
type spillSource struct {
	r       *region
	compare func(a, b []byte) int // nil: prefix, then bytes.Compare
	heap    []spillCursor
	ring    [lookahead]*entry
	head, n int
	sink    byte
}

const lookahead = 32

type spillCursor struct {
	ents []entry // not yet consumed
	idx  int
}

func newSpillSource(r *region, compare func(a, b []byte) int) *spillSource {
	s := &spillSource{r: r, compare: compare}
	for i, m := range r.meta {
		if len(m) > 0 {
			s.heap = append(s.heap, spillCursor{ents: m, idx: i})
		}
	}
	for i := len(s.heap)/2 - 1; i >= 0; i-- {
		s.down(i)
	}
	return s
}

func (s *spillSource) less(a, b *spillCursor) bool {
	x, y := &a.ents[0], &b.ents[0]
	if x.part != y.part {
		return x.part < y.part
	}
	var c int
	if s.compare == nil {
		if x.prefix != y.prefix {
			return x.prefix < y.prefix
		}
		c = bytes.Compare(s.r.key(x), s.r.key(y))
	} else {
		c = s.compare(s.r.key(x), s.r.key(y))
	}
	return c < 0 || c == 0 && a.idx < b.idx
}

func (s *spillSource) down(i int) {
	h := s.heap
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && s.less(&h[r], &h[l]) {
			j = r
		}
		if !s.less(&h[j], &h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// pull moves the next entry from the heap into the ring.
func (s *spillSource) pull() bool {
	if len(s.heap) == 0 {
		return false
	}
	h := &s.heap[0]
	e := &h.ents[0]
	h.ents = h.ents[1:]
	if len(h.ents) == 0 {
		last := len(s.heap) - 1
		s.heap[0] = s.heap[last]
		s.heap = s.heap[:last]
	}
	if len(s.heap) > 1 {
		s.down(0)
	}
	s.ring[s.n] = e
	s.n++
	return true
}

// fill refills the empty ring, then touches every record in it: the
// loads are independent, so their cache misses overlap.
func (s *spillSource) fill() {
	s.head, s.n = 0, 0
	for s.n < lookahead && s.pull() {
	}
	var sink byte
	for _, e := range s.ring[:s.n] {
		if e.klen+e.vlen > 0 {
			sink += s.r.data[e.loc>>locShift][e.loc&locMask]
		}
	}
	s.sink += sink
}

// peek returns the next entry, or nil at the end.
func (s *spillSource) peek() *entry {
	if s.head == s.n {
		s.fill()
		if s.n == 0 {
			return nil
		}
	}
	return s.ring[s.head]
}

func (s *spillSource) advance() { s.head++ }

// partIter iterates over one partition's records of a spillSource.
type partIter struct {
	src      *spillSource
	part     uint32
	key, val []byte
}

func (p *partIter) Next() bool {
	e := p.src.peek()
	if e == nil || e.part != p.part {
		p.key, p.val = nil, nil
		return false
	}
	p.key, p.val = p.src.r.key(e), p.src.r.value(e)
	p.src.advance()
	return true
}

func (p *partIter) Key() []byte   { return p.key }
func (p *partIter) Value() []byte { return p.val }
func (p *partIter) Err() error    { return nil }
func (p *partIter) Close() error  { return nil }
