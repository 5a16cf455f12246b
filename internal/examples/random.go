package examples

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/mapreduce"
)

const (
	randomWriterUsage     = "randomwriter <out>"
	randomTextWriterUsage = "randomtextwriter <out>"
	sortUsage             = "sort [-r <reduces>] [-inFormat kv|text] [-outFormat kv|text] <in> <out>"
)

func init() {
	mapreduce.Register("randomwriter", randomWriterUsage, func(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
		return newRandomJob(args, c, false)
	})
	mapreduce.Register("randomtextwriter", randomTextWriterUsage, func(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
		return newRandomJob(args, c, true)
	})
	mapreduce.Register("sort", sortUsage, newSort)
	for _, name := range []string{"randomwriter", "randomtextwriter", "sort"} {
		name := name
		summary := map[string]string{
			"randomwriter":     "write random binary records (keys 10-999 bytes, values 0-19,999 bytes)",
			"randomtextwriter": "write random text records (keys 5-9 words, values 10-99 words)",
			"sort":             "sort records with identity map and reduce (hash partitioned)",
		}[name]
		usage := map[string]string{"randomwriter": randomWriterUsage, "randomtextwriter": randomTextWriterUsage, "sort": sortUsage}[name]
		addCommand(Command{Name: name, Usage: usage, Summary: summary, Run: func(ctx context.Context, env fs.Env, args []string, out io.Writer) error {
			if len(args) < 1 {
				return usageErr(usage)
			}
			_, err := runJob(ctx, env, out, name, args)
			return err
		}})
	}
}

// generatorInput gives each of n map tasks one empty record: the mapper
// generates its own data (Hadoop's RandomWriter does the same).
type generatorInput struct{ maps int }

func (g generatorInput) Splits(ctx context.Context, env fs.Env, c *conf.Configuration, paths []string) ([]mapreduce.InputSplit, error) {
	out := make([]mapreduce.InputSplit, g.maps)
	for i := range out {
		out[i] = mapreduce.InputSplit{Path: fmt.Sprintf("dummy-split-%d", i), Index: i}
	}
	return out, nil
}

func (g generatorInput) Open(ctx context.Context, env fs.Env, c *conf.Configuration, s mapreduce.InputSplit) (mapreduce.RecordReader, error) {
	return &oneRecord{key: binary.BigEndian.AppendUint64(nil, uint64(s.Index))}, nil
}

type oneRecord struct {
	key  []byte
	done bool
}

func (r *oneRecord) Next() bool {
	if r.done {
		return false
	}
	r.done = true
	return true
}
func (r *oneRecord) Key() []byte       { return r.key }
func (r *oneRecord) Value() []byte     { return nil }
func (r *oneRecord) Progress() float64 { return 0 }
func (r *oneRecord) Err() error        { return nil }
func (r *oneRecord) Close() error      { return nil }

func getInt(c *conf.Configuration, key string, def int64) (int64, error) {
	if c.Get(key) == "" {
		return def, nil
	}
	return c.GetBytes(key)
}

// newRandomJob builds randomwriter (binary) or randomtextwriter (text):
// map-only, each map writing mapreduce.random(text)writer.bytespermap
// bytes of keys+values; the number of maps is totalbytes / bytespermap,
// else mapsperhost (10; one host in local mode).
func newRandomJob(args []string, c *conf.Configuration, text bool) (*mapreduce.Job, error) {
	name, usage := "randomwriter", randomWriterUsage
	if text {
		name, usage = "randomtextwriter", randomTextWriterUsage
	}
	if len(args) != 1 {
		return nil, usageErr(usage)
	}
	perMap, err := getInt(c, "mapreduce."+name+".bytespermap", 1<<30)
	if err != nil {
		return nil, err
	}
	maps := int64(10)
	if v, err := getInt(c, "mapreduce."+name+".mapsperhost", 10); err == nil {
		maps = v
	}
	if c.Get("mapreduce."+name+".totalbytes") != "" {
		total, err := getInt(c, "mapreduce."+name+".totalbytes", 0)
		if err != nil {
			return nil, err
		}
		maps = max(1, (total+perMap-1)/perMap)
	}
	if perMap <= 0 || maps <= 0 {
		return nil, fmt.Errorf("%s: bytespermap and the number of maps must be positive", name)
	}
	limits := func(key string, def int64) int64 {
		v, err := getInt(c, key, def)
		if err != nil {
			return def
		}
		return v
	}
	minK, maxK := limits("mapreduce.randomwriter.minkey", 10), limits("mapreduce.randomwriter.maxkey", 1000)
	minV, maxV := limits("mapreduce.randomwriter.minvalue", 0), limits("mapreduce.randomwriter.maxvalue", 20000)
	minWK, maxWK := limits("mapreduce.randomtextwriter.minwordskey", 5), limits("mapreduce.randomtextwriter.maxwordskey", 10)
	minWV, maxWV := limits("mapreduce.randomtextwriter.minwordsvalue", 10), limits("mapreduce.randomtextwriter.maxwordsvalue", 100)
	return &mapreduce.Job{
		Name: name, Conf: c,
		NewMapper: func() mapreduce.Mapper {
			return mapreduce.MapFunc(func(ctx *mapreduce.TaskContext, key, _ []byte, out mapreduce.Emitter) error {
				rng := rand.New(rand.NewPCG(binary.BigEndian.Uint64(key), 0x5f3759df))
				var k, v []byte
				for written := int64(0); written < perMap; {
					if text {
						k = appendWords(k[:0], rng, int(minWK+rng.Int64N(maxWK-minWK)))
						v = appendWords(v[:0], rng, int(minWV+rng.Int64N(maxWV-minWV)))
					} else {
						k = appendRandom(k[:0], rng, int(minK+rng.Int64N(maxK-minK)))
						v = appendRandom(v[:0], rng, int(minV+rng.Int64N(maxV-minV)))
					}
					if err := out.Emit(k, v); err != nil {
						return err
					}
					written += int64(len(k) + len(v))
					ctx.Counter("Random", "Bytes written", int64(len(k)+len(v)))
				}
				return nil
			})
		},
		Input:  generatorInput{maps: int(maps)},
		Output: mapreduce.KVFileOutputFormat{}, OutputPath: args[0],
	}, nil
}

func appendRandom(b []byte, rng *rand.Rand, n int) []byte {
	for i := 0; i < n; i += 8 {
		b = binary.LittleEndian.AppendUint64(b, rng.Uint64())
	}
	return b[:len(b)-(len(b)-n)]
}

// appendWords appends n words of the list, each followed by a space, as
// Hadoop's RandomTextWriter does.
func appendWords(b []byte, rng *rand.Rand, n int) []byte {
	for i := 0; i < n; i++ {
		b = append(b, words[rng.IntN(len(words))]...)
		b = append(b, ' ')
	}
	return b
}

// newSort is Hadoop's Sort example: identity map and reduce over KV files
// (or text lines with -inFormat text), hash partitioned, so each output
// part is sorted.
func newSort(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
	reduces := reducers(c)
	var in mapreduce.InputFormat = mapreduce.KVFileInputFormat{}
	var out mapreduce.OutputFormat = mapreduce.KVFileOutputFormat{}
	var rest []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-r", "-inFormat", "-outFormat":
			if i+1 >= len(args) {
				return nil, usageErr(sortUsage)
			}
			v := args[i+1]
			switch args[i] {
			case "-r":
				if _, err := fmt.Sscan(v, &reduces); err != nil || reduces < 1 {
					return nil, fmt.Errorf("sort: -r needs a positive number, got %q", v)
				}
			case "-inFormat":
				if v == "text" {
					in = mapreduce.KeyValueTextInputFormat{}
				} else if v != "kv" {
					return nil, fmt.Errorf("sort: -inFormat kv or text, got %q", v)
				}
			case "-outFormat":
				if v == "text" {
					out = mapreduce.TextOutputFormat{}
				} else if v != "kv" {
					return nil, fmt.Errorf("sort: -outFormat kv or text, got %q", v)
				}
			}
			i++
		default:
			rest = append(rest, args[i])
		}
	}
	if len(rest) != 2 {
		return nil, usageErr(sortUsage)
	}
	return &mapreduce.Job{
		Name: "sorter", Conf: c, NewMapper: mapreduce.IdentityMapper,
		NewReducer: mapreduce.IdentityReducer,
		Input:      in, InputPaths: []string{rest[0]}, Output: out, OutputPath: rest[1], NumReducers: reduces,
	}, nil
}
