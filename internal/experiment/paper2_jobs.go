package experiment

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/mapreduce"
)

// The second paper's "shuffle" is "a shuffle-only job modified from
// hadoop-examples' randomtextwriter": its maps generate random text as
// randomtextwriter's do, and all of it goes through the shuffle to
// reducers that keep nothing, so the job reads and writes no HDFS data.
// Its wordcount needs text to count; paper2-textgen writes it (map-only
// randomtextwriter with text lines). Both are registered jobs, so that the
// TaskTrackers' task processes (this program) rebuild them.
const (
	paper2ShuffleJob = "paper2-shuffle"
	paper2TextGenJob = "paper2-textgen"
	// Keys of Hadoop's randomtextwriter, which both jobs read.
	keyRTWTotal  = "mapreduce.randomtextwriter.totalbytes"
	keyRTWPerMap = "mapreduce.randomtextwriter.bytespermap"
)

func init() {
	mapreduce.Register(paper2ShuffleJob, paper2ShuffleJob+" <out>", func(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
		return newPaper2TextJob(args, c, true)
	})
	mapreduce.Register(paper2TextGenJob, paper2TextGenJob+" <out>", func(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
		return newPaper2TextJob(args, c, false)
	})
}

// paper2Words is the jobs' vocabulary: 1,000 lower-case words of 2 to 9
// letters, the same in every process (randomtextwriter's list is 1,000
// words too).
var paper2Words = func() [][]byte {
	rng := rand.New(rand.NewPCG(2016, 10))
	out := make([][]byte, 1000)
	for i := range out {
		w := make([]byte, 2+rng.IntN(8))
		for j := range w {
			w[j] = byte('a' + rng.IntN(26))
		}
		out[i] = w
	}
	return out
}()

func appendPaper2Words(b []byte, rng *rand.Rand, n int) []byte {
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, paper2Words[rng.IntN(len(paper2Words))]...)
	}
	return b
}

// newPaper2TextJob builds paper2-shuffle (shuffle true) or paper2-textgen:
// totalbytes of random text split over maps of at most bytespermap,
// records of 5–9 words of key and 10–99 of value as randomtextwriter's.
func newPaper2TextJob(args []string, c *conf.Configuration, shuffle bool) (*mapreduce.Job, error) {
	name := paper2TextGenJob
	if shuffle {
		name = paper2ShuffleJob
	}
	if len(args) != 1 {
		return nil, fmt.Errorf("Usage: %s <out>", name)
	}
	total, err := c.GetBytes(keyRTWTotal)
	if err != nil || total <= 0 {
		return nil, fmt.Errorf("%s: %s must be a positive size (got %q)", name, keyRTWTotal, c.Get(keyRTWTotal))
	}
	perMap := int64(1 << 30)
	if c.Get(keyRTWPerMap) != "" {
		if perMap, err = c.GetBytes(keyRTWPerMap); err != nil || perMap <= 0 {
			return nil, fmt.Errorf("%s: %s must be a positive size (got %q)", name, keyRTWPerMap, c.Get(keyRTWPerMap))
		}
	}
	maps := (total + perMap - 1) / perMap
	if maps > 100_000 {
		return nil, fmt.Errorf("%s: %d maps; raise %s", name, maps, keyRTWPerMap)
	}
	job := &mapreduce.Job{
		Name: name, Conf: c,
		NewMapper: func() mapreduce.Mapper {
			return mapreduce.MapFunc(func(ctx *mapreduce.TaskContext, key, _ []byte, out mapreduce.Emitter) error {
				i := int64(binary.BigEndian.Uint64(key))
				n := min(perMap, total-i*perMap)
				rng := rand.New(rand.NewPCG(uint64(i), 0x5f3759df))
				var k, v []byte
				for written := int64(0); written < n; {
					k = appendPaper2Words(k[:0], rng, 5+rng.IntN(5))
					v = appendPaper2Words(v[:0], rng, 10+rng.IntN(90))
					if err := out.Emit(k, v); err != nil {
						return err
					}
					written += int64(len(k) + len(v))
				}
				return nil
			})
		},
		Input:  paper2Generator{maps: int(maps)},
		Output: mapreduce.TextOutputFormat{}, OutputPath: args[0],
	}
	if shuffle {
		job.NewReducer = func() mapreduce.Reducer {
			return mapreduce.ReduceFunc(func(ctx *mapreduce.TaskContext, _ []byte, values *mapreduce.Values, _ mapreduce.Emitter) error {
				n := int64(0)
				for values.Next() {
					n++
				}
				ctx.Counter("Shuffle", "Records discarded", n)
				return nil
			})
		}
		job.NumReducers = paper2Reducers(c)
	}
	return job, nil
}

// paper2Reducers is mapreduce.job.reduces, Hadoop's default 1.
func paper2Reducers(c *conf.Configuration) int {
	n, err := c.GetInt("mapreduce.job.reduces")
	if err != nil || n < 1 {
		return 1
	}
	return int(n)
}

// paper2Generator gives each of maps map tasks one record whose key is
// the task's index: the mapper generates its own data.
type paper2Generator struct{ maps int }

func (g paper2Generator) Splits(ctx context.Context, env fs.Env, c *conf.Configuration, paths []string) ([]mapreduce.InputSplit, error) {
	out := make([]mapreduce.InputSplit, g.maps)
	for i := range out {
		out[i] = mapreduce.InputSplit{Path: fmt.Sprintf("paper2-split-%d", i), Index: i}
	}
	return out, nil
}

func (g paper2Generator) Open(ctx context.Context, env fs.Env, c *conf.Configuration, s mapreduce.InputSplit) (mapreduce.RecordReader, error) {
	return &paper2Record{key: binary.BigEndian.AppendUint64(nil, uint64(s.Index))}, nil
}

type paper2Record struct {
	key  []byte
	done bool
}

func (r *paper2Record) Next() bool {
	if r.done {
		return false
	}
	r.done = true
	return true
}
func (r *paper2Record) Key() []byte       { return r.key }
func (r *paper2Record) Value() []byte     { return nil }
func (r *paper2Record) Progress() float64 { return 0 }
func (r *paper2Record) Err() error        { return nil }
func (r *paper2Record) Close() error      { return nil }
