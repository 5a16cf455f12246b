package zones

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/mapreduce"
)

// skyGenConf reads skygen's settings for n objects.
func skyGenConf(c *conf.Configuration, n uint64) (*SkyGen, error) {
	g := &SkyGen{}
	var errs []error
	switch d := c.GetTrimmed(KeySkyGenDistribution); d {
	case "", "uniform":
	case "clustered":
		g.Distribution = Clustered
	default:
		errs = append(errs, fmt.Errorf("zones: %s=%q: use uniform or clustered", KeySkyGenDistribution, d))
	}
	if s := c.GetTrimmed(KeySkyGenSeed); s != "" {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("zones: %s=%q: %w", KeySkyGenSeed, s, err))
		}
		g.Seed = v
	}
	g.Clusters = max(1, n/100)
	if s := c.GetTrimmed(KeySkyGenClusters); s != "" && s != "0" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("zones: %s=%q: %w", KeySkyGenClusters, s, err))
		}
		g.Clusters = v
	}
	var err error
	g.Fraction, err = confFloat(c, KeySkyGenFraction, 0.5)
	errs = append(errs, err)
	if err == nil && !(g.Fraction >= 0 && g.Fraction <= 1) {
		errs = append(errs, fmt.Errorf("zones: %s=%g: want a fraction in [0, 1]", KeySkyGenFraction, g.Fraction))
	}
	g.Sigma, err = confFloat(c, KeySkyGenSigma, 3)
	errs = append(errs, err)
	if err == nil && !(g.Sigma >= 0 && g.Sigma <= 3600) {
		errs = append(errs, fmt.Errorf("zones: %s=%g: want arcseconds in [0, 3600]", KeySkyGenSigma, g.Sigma))
	}
	return g, errors.Join(errs...)
}

// objectRanges gives each skygen map task its range of object ids.
type objectRanges struct{ n, maps uint64 }

func (r objectRanges) bounds(i int) (first, count uint64) {
	lo := r.n / r.maps * uint64(i)
	hi := r.n / r.maps * uint64(i+1)
	if uint64(i) == r.maps-1 {
		hi = r.n
	}
	return lo, hi - lo
}

func (r objectRanges) Splits(ctx context.Context, env fs.Env, c *conf.Configuration, paths []string) ([]mapreduce.InputSplit, error) {
	out := make([]mapreduce.InputSplit, r.maps)
	for i := range out {
		_, count := r.bounds(i)
		out[i] = mapreduce.InputSplit{Path: fmt.Sprintf("objects-%d", i), Index: i, Length: int64(count)}
	}
	return out, nil
}

func (r objectRanges) Open(ctx context.Context, env fs.Env, c *conf.Configuration, s mapreduce.InputSplit) (mapreduce.RecordReader, error) {
	if s.Index < 0 || uint64(s.Index) >= r.maps {
		return nil, fmt.Errorf("zones: skygen split %d of %d", s.Index, r.maps)
	}
	first, count := r.bounds(s.Index)
	return &idReader{next: first, end: first + count, count: count}, nil
}

// idReader reads a range of object ids: each record's key is an id, 8
// bytes big-endian, its value empty.
type idReader struct {
	next, end, count uint64
	key              [8]byte
}

func (r *idReader) Next() bool {
	if r.next >= r.end {
		return false
	}
	binary.BigEndian.PutUint64(r.key[:], r.next)
	r.next++
	return true
}
func (r *idReader) Key() []byte   { return r.key[:] }
func (r *idReader) Value() []byte { return nil }
func (r *idReader) Progress() float64 {
	return 1 - float64(r.end-r.next)/float64(max(r.count, 1))
}
func (r *idReader) Err() error   { return nil }
func (r *idReader) Close() error { return nil }

// maxObjects bounds skygen's object count (ids are 64 bits, but 2^40
// records are already 26 TB).
const maxObjects = 1 << 40

func newSkyGen(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
	if len(args) != 2 {
		return nil, &UsageError{SkyGenUsage}
	}
	n, err := strconv.ParseUint(args[0], 10, 64)
	if err != nil || n == 0 || n > maxObjects {
		return nil, fmt.Errorf("zones: skygen: the number of objects %q must be a whole number in [1, %d]", args[0], uint64(maxObjects))
	}
	gen, err := skyGenConf(c, n)
	if err != nil {
		return nil, err
	}
	maps, err := c.GetInt("mapreduce.job.maps")
	if err != nil || maps < 1 {
		maps = 2
	}
	text := false
	var out mapreduce.OutputFormat = mapreduce.RawOutputFormat{}
	switch f := c.GetTrimmed(KeySkyGenFormat); f {
	case "", "binary":
	case "text":
		text, out = true, mapreduce.TextOutputFormat{}
	default:
		return nil, fmt.Errorf("zones: %s=%q: use binary or text", KeySkyGenFormat, f)
	}
	return &mapreduce.Job{
		Name: "skygen", Conf: c,
		NewMapper: func() mapreduce.Mapper {
			src := &rand.PCG{}
			rng := rand.New(src)
			var rec []byte
			return mapreduce.MapFunc(func(ctx *mapreduce.TaskContext, key, _ []byte, out mapreduce.Emitter) error {
				o := gen.Object(binary.BigEndian.Uint64(key), src, rng)
				if text {
					rec = AppendText(rec[:0], o)
				} else {
					rec = AppendRecord(rec[:0], o)
				}
				return out.Emit(rec, nil)
			})
		},
		Input:  objectRanges{n: n, maps: uint64(min(uint64(maps), n))},
		Output: out, OutputPath: args[1],
	}, nil
}
