package zones

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/mapreduce"
)

// Configuration keys (defaults in conf/keys.go).
const (
	KeyTheta        = "zones.theta"         // arcseconds
	KeyMaxTheta     = "zones.maxtheta"      // arcseconds
	KeyBlockHeight  = "zones.block.height"  // degrees; empty: chosen
	KeyBlockWidth   = "zones.block.width"   // degrees at the equator; empty: the height
	KeyBlockObjects = "zones.block.objects" // objects per block aimed at
	KeyZoneHeight   = "zones.zone.height"   // arcseconds; empty: θ
	KeyInputFormat  = "zones.input.format"  // binary or text

	KeySkyGenDistribution = "zones.skygen.distribution"
	KeySkyGenSeed         = "zones.skygen.seed"
	KeySkyGenClusters     = "zones.skygen.clusters"
	KeySkyGenFraction     = "zones.skygen.cluster.fraction"
	KeySkyGenSigma        = "zones.skygen.cluster.sigma"
	KeySkyGenFormat       = "zones.skygen.format"

	KeyPowerWatts = "strata.power.watts"
)

// Job names in the mapreduce registry, and their usages.
const (
	SkyGenJob          = "skygen"
	NeighborsJob       = "neighbors"
	StatsBlocksJob     = "neighborstats-blocks"
	StatsSumJob        = "neighborstats-sum"
	SkyGenUsage        = "skygen <num objects> <out>"
	NeighborsUsage     = "neighbors <in> [<in>...] <out>"
	NeighborStatsUsage = "neighborstats <in> [<in>...] <out>"
	statsBlocksUsage   = "neighborstats-blocks <in> [<in>...] <tmp>"
	statsSumUsage      = "neighborstats-sum <tmp> <out>"
)

// CounterGroup holds the applications' counters.
const CounterGroup = "Zones"

// Counter names.
const (
	CounterObjects = "Objects"
	CounterCopies  = "Border copies"
	CounterBlocks  = "Blocks"
	CounterPairs   = "Pairs"
)

func init() {
	mapreduce.Register(SkyGenJob, SkyGenUsage, newSkyGen)
	mapreduce.Register(NeighborsJob, NeighborsUsage, newNeighbors)
	mapreduce.Register(StatsBlocksJob, statsBlocksUsage, newStatsBlocks)
	mapreduce.Register(StatsSumJob, statsSumUsage, newStatsSum)
}

// UsageError is a wrong command line; its text is the usage.
type UsageError struct{ Usage string }

func (e *UsageError) Error() string { return "Usage: " + e.Usage }

// confFloat reads a number, def when the key has no value.
func confFloat(c *conf.Configuration, key string, def float64) (float64, error) {
	if c.GetTrimmed(key) == "" {
		return def, nil
	}
	v, err := c.GetFloat(key)
	if err != nil {
		return 0, fmt.Errorf("zones: %w", err)
	}
	return v, nil
}

// fallbackBlock is the block size (degrees) when nothing chose one: the
// commands choose from the input size (Plan).
const fallbackBlock = 1.0

// GeometryFromConf builds the Geometry of a job searching to the radius in
// thetaKey (arcseconds, default 60).
func GeometryFromConf(c *conf.Configuration, thetaKey string) (*Geometry, error) {
	theta, err := confFloat(c, thetaKey, 60)
	if err != nil {
		return nil, err
	}
	theta *= arcsec
	h, err := confFloat(c, KeyBlockHeight, max(fallbackBlock, theta))
	if err != nil {
		return nil, err
	}
	w, err := confFloat(c, KeyBlockWidth, h)
	if err != nil {
		return nil, err
	}
	z, err := confFloat(c, KeyZoneHeight, theta*3600)
	if err != nil {
		return nil, err
	}
	return NewGeometry(theta, h, w, z*arcsec)
}

// inputFormat is the catalogue's input format and its record decoder.
func inputFormat(c *conf.Configuration) (mapreduce.InputFormat, func([]byte) (Object, error), error) {
	switch f := c.GetTrimmed(KeyInputFormat); f {
	case "", "binary":
		return mapreduce.FixedLengthInputFormat{RecordLength: RecordSize}, DecodeRecord, nil
	case "text":
		return mapreduce.TextInputFormat{}, ParseText, nil
	default:
		return nil, nil, fmt.Errorf("zones: %s=%q: use binary or text", KeyInputFormat, f)
	}
}

// Map output: the key is the block number (4 bytes big-endian), the value
// a flag byte (owned or copy) and the object's binary record.
const (
	flagOwned byte = 0
	flagCopy  byte = 1
)

// blockPartitioner sends block b to reducer b mod n: neighbouring blocks
// go to different reducers.
func blockPartitioner(key, _ []byte, n int) int {
	return int(binary.BigEndian.Uint32(key) % uint32(n))
}

// Route calls emit with the home block of o and then with each block it
// is copied to: what the map tasks do with every object.
func (g *Geometry) Route(o Object, emit func(block uint32, copy bool) error) error {
	home := g.Home(o.RA, o.Dec)
	if err := emit(home, false); err != nil {
		return err
	}
	return g.Copies(o.RA, o.Dec, home, func(b uint32) error { return emit(b, true) })
}

// blockMapper routes catalogue records to blocks.
type blockMapper struct {
	g      *Geometry
	decode func([]byte) (Object, error)
	key    [4]byte
	val    []byte
}

func (m *blockMapper) Map(ctx *mapreduce.TaskContext, key, rec []byte, out mapreduce.Emitter) error {
	o, err := m.decode(rec)
	if err != nil {
		return fmt.Errorf("%w (in %s)", err, splitName(ctx))
	}
	m.val = AppendRecord(append(m.val[:0], flagOwned), o)
	var copies int64
	err = m.g.Route(o, func(b uint32, copy bool) error {
		binary.BigEndian.PutUint32(m.key[:], b)
		if copy {
			m.val[0] = flagCopy
			copies++
		}
		return out.Emit(m.key[:], m.val)
	})
	ctx.Counter(CounterGroup, CounterObjects, 1)
	ctx.Counter(CounterGroup, CounterCopies, copies)
	return err
}

func splitName(ctx *mapreduce.TaskContext) string {
	if ctx.Split == nil {
		return "?"
	}
	return fmt.Sprintf("%s at %d+%d", ctx.Split.Path, ctx.Split.Start, ctx.Split.Length)
}

// readBlock decodes a block's map output values into entries.
func readBlock(entries []Entry, values *mapreduce.Values) ([]Entry, error) {
	entries = entries[:0]
	for values.Next() {
		v := values.Value()
		if len(v) != 1+RecordSize || v[0] > flagCopy {
			return nil, fmt.Errorf("zones: map output value of %d bytes is not a flagged catalogue record", len(v))
		}
		o, err := DecodeRecord(v[1:])
		if err != nil {
			return nil, err
		}
		entries = append(entries, Entry{Object: o, Copy: v[0] == flagCopy})
	}
	return entries, nil
}

// blockJob is the map side and shape shared by neighbors and
// neighborstats-blocks.
func blockJob(name string, args []string, c *conf.Configuration, thetaKey, usage string, reducer func(g *Geometry) mapreduce.Reducer, out mapreduce.OutputFormat) (*mapreduce.Job, error) {
	if len(args) < 2 {
		return nil, &UsageError{usage}
	}
	g, err := GeometryFromConf(c, thetaKey)
	if err != nil {
		return nil, err
	}
	in, decode, err := inputFormat(c)
	if err != nil {
		return nil, err
	}
	return &mapreduce.Job{
		Name: name, Conf: c,
		NewMapper:   func() mapreduce.Mapper { return &blockMapper{g: g, decode: decode} },
		NewReducer:  func() mapreduce.Reducer { return reducer(g) },
		Partitioner: blockPartitioner,
		Input:       in, InputPaths: args[:len(args)-1],
		Output: out, OutputPath: args[len(args)-1],
		NumReducers: reduceTasks(c),
	}, nil
}

// reduceTasks is mapreduce.job.reduces, at least 1.
func reduceTasks(c *conf.Configuration) int {
	n, err := c.GetInt("mapreduce.job.reduces")
	if err != nil || n < 1 {
		return 1
	}
	return int(n)
}

// neighborsReducer writes a block's pairs as "id1 id2 distance_arcsec".
type neighborsReducer struct {
	g       *Geometry
	entries []Entry
	line    []byte
}

func (r *neighborsReducer) Reduce(ctx *mapreduce.TaskContext, _ []byte, values *mapreduce.Values, out mapreduce.Emitter) error {
	var err error
	if r.entries, err = readBlock(r.entries, values); err != nil {
		return err
	}
	var pairs int64
	err = r.g.Pairs(r.entries, func(a, b int, chord2 float64) error {
		r.line = AppendPair(r.line[:0], r.entries[a].ID, r.entries[b].ID, Distance(chord2))
		pairs++
		return out.Emit(r.line, nil)
	})
	ctx.Counter(CounterGroup, CounterBlocks, 1)
	ctx.Counter(CounterGroup, CounterPairs, pairs)
	return err
}

// AppendPair appends a pair line of neighbors' output without its
// newline: the smaller id, the larger id and the distance in arcseconds
// with six decimals.
func AppendPair(b []byte, id1, id2 uint64, dist float64) []byte {
	if id2 < id1 {
		id1, id2 = id2, id1
	}
	b = strconv.AppendUint(b, id1, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, id2, 10)
	b = append(b, ' ')
	return strconv.AppendFloat(b, dist, 'f', 6, 64)
}

func newNeighbors(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
	return blockJob("neighbors", args, c, KeyTheta, NeighborsUsage,
		func(g *Geometry) mapreduce.Reducer { return &neighborsReducer{g: g} }, mapreduce.TextOutputFormat{})
}

// Histogram counts pairs in 1″ bins: bin i holds distances in [i, i+1)″,
// the last bin ending at the maximum radius.
type Histogram []uint64

// NewHistogram makes the bins for pairs within maxTheta arcseconds.
func NewHistogram(maxTheta float64) Histogram {
	return make(Histogram, max(1, int(math.Ceil(maxTheta))))
}

// Add counts a pair of squared chord chord2 (known to be within range).
func (h Histogram) Add(chord2 float64) {
	i := int(Distance(chord2))
	h[min(max(i, 0), len(h)-1)]++
}

// statsReducer writes a block's histogram: key the block, value the bins
// as 8-byte big-endian counts.
type statsReducer struct {
	g       *Geometry
	entries []Entry
	hist    Histogram
	val     []byte
}

func (r *statsReducer) Reduce(ctx *mapreduce.TaskContext, key []byte, values *mapreduce.Values, out mapreduce.Emitter) error {
	var err error
	if r.entries, err = readBlock(r.entries, values); err != nil {
		return err
	}
	clear(r.hist)
	var pairs int64
	err = r.g.Pairs(r.entries, func(a, b int, chord2 float64) error {
		r.hist.Add(chord2)
		pairs++
		return nil
	})
	if err != nil {
		return err
	}
	ctx.Counter(CounterGroup, CounterBlocks, 1)
	ctx.Counter(CounterGroup, CounterPairs, pairs)
	if pairs == 0 {
		return nil
	}
	r.val = r.val[:0]
	for _, n := range r.hist {
		r.val = binary.BigEndian.AppendUint64(r.val, n)
	}
	return out.Emit(key, r.val)
}

func newStatsBlocks(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
	g, err := GeometryFromConf(c, KeyMaxTheta)
	if err != nil {
		return nil, err
	}
	bins := len(NewHistogram(g.Theta * 3600))
	return blockJob("neighborstats-blocks", args, c, KeyMaxTheta, statsBlocksUsage,
		func(g *Geometry) mapreduce.Reducer { return &statsReducer{g: g, hist: make(Histogram, bins)} }, mapreduce.KVFileOutputFormat{})
}

// sumHistograms adds 8-byte big-endian histogram values; it is the
// combiner of neighborstats-sum.
type sumHistograms struct {
	bins int
	sum  []uint64
	val  []byte
}

func (s *sumHistograms) add(values *mapreduce.Values) error {
	if s.sum == nil {
		s.sum = make([]uint64, s.bins)
	}
	clear(s.sum)
	for values.Next() {
		v := values.Value()
		if len(v) != 8*s.bins {
			return fmt.Errorf("zones: a block histogram of %d bytes, want %d bins of 8 bytes (was zones.maxtheta changed between the steps?)", len(v), s.bins)
		}
		for i := range s.sum {
			s.sum[i] += binary.BigEndian.Uint64(v[8*i:])
		}
	}
	return nil
}

func (s *sumHistograms) Reduce(ctx *mapreduce.TaskContext, key []byte, values *mapreduce.Values, out mapreduce.Emitter) error {
	if err := s.add(values); err != nil {
		return err
	}
	s.val = s.val[:0]
	for _, n := range s.sum {
		s.val = binary.BigEndian.AppendUint64(s.val, n)
	}
	return out.Emit(key, s.val)
}

// printHistogram writes the summed histogram as "theta_arcsec count"
// lines, theta the bin's upper edge.
type printHistogram struct {
	sumHistograms
	maxTheta float64
	line     []byte
}

func (p *printHistogram) Reduce(ctx *mapreduce.TaskContext, key []byte, values *mapreduce.Values, out mapreduce.Emitter) error {
	if err := p.add(values); err != nil {
		return err
	}
	for i, n := range p.sum {
		p.line = AppendBin(p.line[:0], min(float64(i+1), p.maxTheta), n)
		if err := out.Emit(p.line, nil); err != nil {
			return err
		}
	}
	return nil
}

// AppendBin appends a line of neighborstats' output without its newline.
func AppendBin(b []byte, theta float64, n uint64) []byte {
	b = strconv.AppendFloat(b, theta, 'g', -1, 64)
	b = append(b, ' ')
	return strconv.AppendUint(b, n, 10)
}

var histogramKey = []byte{'h'}

func newStatsSum(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
	if len(args) != 2 {
		return nil, &UsageError{statsSumUsage}
	}
	g, err := GeometryFromConf(c, KeyMaxTheta)
	if err != nil {
		return nil, err
	}
	maxTheta := g.Theta * 3600
	bins := len(NewHistogram(maxTheta))
	return &mapreduce.Job{
		Name: "neighborstats-sum", Conf: c,
		NewMapper: func() mapreduce.Mapper {
			return mapreduce.MapFunc(func(ctx *mapreduce.TaskContext, _, hist []byte, out mapreduce.Emitter) error {
				return out.Emit(histogramKey, hist)
			})
		},
		NewCombiner: func() mapreduce.Reducer { return &sumHistograms{bins: bins} },
		NewReducer: func() mapreduce.Reducer {
			return &printHistogram{sumHistograms: sumHistograms{bins: bins}, maxTheta: maxTheta}
		},
		Input: mapreduce.KVFileInputFormat{}, InputPaths: args[:1],
		Output: mapreduce.TextOutputFormat{}, OutputPath: args[1],
		NumReducers: 1,
	}, nil
}
