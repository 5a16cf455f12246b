package examples

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/examples/terasort"
	"github.com/stratafs/strata/mapreduce"
)

const (
	teragenUsage      = "teragen <num rows> <output dir>"
	terasortUsage     = "terasort <input dir> <output dir>"
	teravalidateUsage = "teravalidate <terasort output dir> <report dir>"
	terasumUsage      = "terasum <input dir> <report dir>"
	// partitionFile is TeraSort's split-point file in the output dir.
	partitionFile = "_partition.lst"
)

func init() {
	mapreduce.Register("teragen", teragenUsage, newTeraGen)
	mapreduce.Register("terasort", terasortUsage, newTeraSort)
	mapreduce.Register("teravalidate", teravalidateUsage, newTeraValidate)
	mapreduce.Register("terasum", terasumUsage, newTeraSum)
	addCommand(Command{Name: "teragen", Usage: teragenUsage, Summary: "generate TeraSort input, byte-identical to Hadoop's TeraGen", Run: runTeraGen})
	addCommand(Command{Name: "terasort", Usage: terasortUsage, Summary: "sort TeraGen data into a globally ordered output", Run: simpleRun("terasort", 2, terasortUsage)})
	addCommand(Command{Name: "teravalidate", Usage: teravalidateUsage, Summary: "check TeraSort output is ordered; print its checksum", Run: runTeraValidate})
	addCommand(Command{Name: "terasum", Usage: terasumUsage, Summary: "compute the checksum of TeraSort records", Run: simpleRun("terasum", 2, terasumUsage)})
}

func simpleRun(name string, n int, usage string) func(ctx context.Context, env fs.Env, args []string, out io.Writer) error {
	return func(ctx context.Context, env fs.Env, args []string, out io.Writer) error {
		if len(args) != n {
			return usageErr(usage)
		}
		_, err := runJob(ctx, env, out, name, args)
		return err
	}
}

// ParseRows parses a row count with Hadoop TeraGen's suffixes: k (10^3),
// m (10^6), b (10^9), t (10^12).
func ParseRows(s string) (uint64, error) {
	mult := uint64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			mult = 1e3
		case 'm', 'M':
			mult = 1e6
		case 'b', 'B':
			mult = 1e9
		case 't', 'T':
			mult = 1e12
		}
		if mult != 1 {
			s = s[:n-1]
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > math.MaxUint64/mult {
		return 0, fmt.Errorf("teragen: bad number of rows %q", s)
	}
	return v * mult, nil
}

// rangeInput gives TeraGen's map tasks their row ranges.
type rangeInput struct{ ranges []terasort.Range }

func (r rangeInput) Splits(ctx context.Context, env fs.Env, c *conf.Configuration, paths []string) ([]mapreduce.InputSplit, error) {
	out := make([]mapreduce.InputSplit, len(r.ranges))
	for i := range r.ranges {
		out[i] = mapreduce.InputSplit{Path: fmt.Sprintf("rows-%d", i), Index: i, Length: int64(r.ranges[i].Count)}
	}
	return out, nil
}

func (r rangeInput) Open(ctx context.Context, env fs.Env, c *conf.Configuration, s mapreduce.InputSplit) (mapreduce.RecordReader, error) {
	rg := r.ranges[s.Index]
	k := binary.BigEndian.AppendUint64(nil, rg.First)
	return &oneRecord{key: binary.BigEndian.AppendUint64(k, rg.Count)}, nil
}

func newTeraGen(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
	if len(args) != 2 {
		return nil, usageErr(teragenUsage)
	}
	rows, err := ParseRows(args[0])
	if err != nil {
		return nil, err
	}
	maps, err := c.GetInt("mapreduce.job.maps")
	if err != nil || maps < 1 {
		maps = 2
	}
	return &mapreduce.Job{
		Name: "TeraGen", Conf: c,
		NewMapper: func() mapreduce.Mapper {
			return mapreduce.MapFunc(func(ctx *mapreduce.TaskContext, key, _ []byte, out mapreduce.Emitter) error {
				first, count := binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:])
				g := terasort.NewGenerator(first)
				rec := make([]byte, terasort.RecordSize)
				var sum terasort.Checksum
				for i := uint64(0); i < count; i++ {
					g.Next(rec)
					sum.Add(rec)
					if err := out.Emit(rec[:terasort.KeySize], rec[terasort.KeySize:]); err != nil {
						return err
					}
				}
				// Hadoop's TeraGen counter: the sum of CRC-32s as a long.
				ctx.Counter("org.apache.hadoop.examples.terasort.TeraGen$Counters", "CHECKSUM", int64(sum.Sum().Lo))
				return nil
			})
		},
		Input:  rangeInput{ranges: terasort.Ranges(rows, int(maps))},
		Output: rawOutput{}, OutputPath: args[1],
	}, nil
}

func runTeraGen(ctx context.Context, env fs.Env, args []string, out io.Writer) error {
	if len(args) != 2 {
		return usageErr(teragenUsage)
	}
	res, err := runJob(ctx, env, out, "teragen", args)
	if err != nil {
		return err
	}
	var sum terasort.Checksum
	sum.Merge(checksumFromCounter(res.Counters.Get("org.apache.hadoop.examples.terasort.TeraGen$Counters", "CHECKSUM")))
	fmt.Fprintf(out, "checksum\t%s\n", sum)
	return nil
}

func checksumFromCounter(v int64) terasort.Checksum {
	c, _ := terasort.ParseChecksum(strconv.FormatUint(uint64(v), 16))
	return c
}

// rawOutput writes records as key and value bytes back to back (TeraSort's
// output format), with replication mapreduce.terasort.output.replication
// when set. Its Check accepts an output directory holding only the
// partition file.
type rawOutput struct{ replication int }

func (rawOutput) Check(ctx context.Context, env fs.Env, c *conf.Configuration, dir string) error {
	fsys, p, err := fs.Resolve(ctx, dir, env)
	if err != nil {
		return err
	}
	defer fsys.Close()
	entries, err := fsys.List(ctx, p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) == 1 && entries[0].Name() == partitionFile && !entries[0].IsDir {
		return nil
	}
	return fmt.Errorf("Output directory %s already exists", fs.Qualify(fsys, p))
}

func (o rawOutput) Writer(ctx context.Context, att *mapreduce.TaskAttempt, name string) (mapreduce.RecordWriter, error) {
	return mapreduce.RawOutputFormat{Replication: o.replication}.Writer(ctx, att, name)
}

// teraInput reads 100-byte records: a 10-byte key and a 90-byte value.
func teraInput() mapreduce.FixedLengthInputFormat {
	return mapreduce.FixedLengthInputFormat{RecordLength: terasort.RecordSize, KeyLength: terasort.KeySize}
}

// samplePartitions computes TeraSort's split points as Hadoop's
// TeraInputFormat.writePartitionFile does: from up to
// mapreduce.terasort.num.partitions (10) splits spread over the input (in
// file order), the first sampleSize/samples keys of each; sorted; split
// point i of n reducers is sample[round(i · count/n)] with a float step.
func samplePartitions(ctx context.Context, env fs.Env, c *conf.Configuration, in string, reducers int) ([][]byte, error) {
	format := teraInput()
	splits, err := format.Splits(ctx, env, c, []string{in})
	if err != nil {
		return nil, err
	}
	sort.Slice(splits, func(i, j int) bool {
		if splits[i].Path != splits[j].Path {
			return splits[i].Path < splits[j].Path
		}
		return splits[i].Start < splits[j].Start
	})
	if len(splits) == 0 {
		return nil, fmt.Errorf("terasort: no input in %s", in)
	}
	sampleSize := int64(100000)
	if v, err := c.GetInt("mapreduce.terasort.partitions.sample"); err == nil && c.Get("mapreduce.terasort.partitions.sample") != "" {
		sampleSize = v
	}
	samples := 10
	if v, err := c.GetInt("mapreduce.terasort.num.partitions"); err == nil && c.Get("mapreduce.terasort.num.partitions") != "" {
		samples = int(v)
	}
	samples = min(samples, len(splits))
	perSample := sampleSize / int64(samples)
	step := len(splits) / samples
	var keys [][]byte
	for i := 0; i < samples; i++ {
		rr, err := format.Open(ctx, env, c, splits[step*i])
		if err != nil {
			return nil, err
		}
		for n := int64(0); n < perSample && rr.Next(); n++ {
			keys = append(keys, bytes.Clone(rr.Key()))
		}
		err = rr.Err()
		rr.Close()
		if err != nil {
			return nil, err
		}
	}
	if reducers > len(keys) {
		return nil, fmt.Errorf("terasort: %d reducers but only %d sampled keys", reducers, len(keys))
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	stepSize := float32(len(keys)) / float32(reducers)
	out := make([][]byte, reducers-1)
	for i := 1; i < reducers; i++ {
		out[i-1] = keys[int(math.Floor(float64(stepSize*float32(i))+0.5))]
	}
	return out, nil
}

// writePartitionFile writes split points as Hadoop Text writables (vint
// length, bytes).
func writePartitionFile(ctx context.Context, env fs.Env, uri string, points [][]byte) error {
	fsys, p, err := fs.Resolve(ctx, uri, env)
	if err != nil {
		return err
	}
	defer fsys.Close()
	w, err := fsys.Create(ctx, p, fs.CreateOptions{CreateParent: true, Overwrite: true})
	if err != nil {
		return err
	}
	var b []byte
	for _, pt := range points {
		b = append(b, byte(len(pt)))
		b = append(b, pt...)
	}
	if _, err := w.Write(b); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

func readPartitionFile(ctx context.Context, env fs.Env, uri string) ([][]byte, error) {
	fsys, p, err := fs.Resolve(ctx, uri, env)
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	f, err := fsys.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for len(data) > 0 {
		n := int(data[0])
		if n > 127 || 1+n > len(data) {
			return nil, fmt.Errorf("terasort: corrupt partition file %s", uri)
		}
		out = append(out, data[1:1+n])
		data = data[1+n:]
	}
	return out, nil
}

func newTeraSort(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
	if len(args) != 2 {
		return nil, usageErr(terasortUsage)
	}
	in, out := args[0], args[1]
	repl := 1
	if v := c.Get("mapreduce.terasort.output.replication"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("terasort: bad mapreduce.terasort.output.replication %q", v)
		}
		repl = n
	}
	reduces := reducers(c)
	// points are the split points: computed by the job's Setup in the
	// submitting process, or read from the partition file in a task's own
	// process (as Hadoop's TotalOrderPartitioner reads it).
	var points [][]byte
	var loadOnce sync.Once
	var loadErr error
	loadPoints := func() {
		if points != nil {
			return
		}
		points, loadErr = readPartitionFile(context.Background(), fs.Env{Conf: c}.WithDefaults(), strings.TrimSuffix(out, "/")+"/"+partitionFile)
		if loadErr == nil && len(points) != reduces-1 {
			loadErr = fmt.Errorf("terasort: partition file has %d split points for %d reducers", len(points), reduces)
		}
	}
	job := &mapreduce.Job{
		Name: "TeraSort", Conf: c, NewMapper: mapreduce.IdentityMapper,
		NewReducer: mapreduce.IdentityReducer,
		Input:      teraInput(), InputPaths: []string{in},
		Output: rawOutput{replication: repl}, OutputPath: out,
		NumReducers: reduces,
		// Partition = the number of split points ≤ key.
		Partitioner: func(key, _ []byte, n int) int {
			loadOnce.Do(loadPoints)
			if loadErr != nil {
				panic(loadErr) // fails the attempt with the reason
			}
			return sort.Search(len(points), func(i int) bool { return bytes.Compare(points[i], key) > 0 })
		},
	}
	job.Setup = func(ctx context.Context, job *mapreduce.Job, env fs.Env) error {
		if err := (rawOutput{}).Check(ctx, env, c, out); err != nil {
			return err
		}
		pts, err := samplePartitions(ctx, env, c, in, reduces)
		if err != nil {
			return err
		}
		points = pts
		return writePartitionFile(ctx, env, strings.TrimSuffix(out, "/")+"/"+partitionFile, pts)
	}
	return job, nil
}

// oneFilePerSplit makes every input file a single split.
func oneFilePerSplit(c *conf.Configuration) *conf.Configuration {
	c = c.Clone()
	c.Set("mapreduce.input.fileinputformat.split.minsize", strconv.FormatInt(math.MaxInt64, 10))
	return c
}

func newTeraValidate(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
	if len(args) != 2 {
		return nil, usageErr(teravalidateUsage)
	}
	c = oneFilePerSplit(c)
	return &mapreduce.Job{
		Name: "TeraValidate", Conf: c,
		NewMapper:  func() mapreduce.Mapper { return &validateMapper{} },
		NewReducer: func() mapreduce.Reducer { return &validateReducer{} },
		Input:      teraInput(), InputPaths: []string{args[0]},
		Output: mapreduce.TextOutputFormat{}, OutputPath: args[1],
		NumReducers: 1,
	}, nil
}

// validateMapper is Hadoop's TeraValidate mapper: per file, its first and
// last key, misorders, and the checksum.
type validateMapper struct {
	file    string
	lastKey []byte
	seen    bool
	sum     terasort.Checksum
	rec     []byte
}

func (m *validateMapper) Map(ctx *mapreduce.TaskContext, key, value []byte, out mapreduce.Emitter) error {
	if !m.seen {
		m.seen = true
		m.file = path.Base(ctx.Split.Path)
		if err := out.Emit([]byte(m.file+":begin"), key); err != nil {
			return err
		}
	} else if bytes.Compare(key, m.lastKey) < 0 {
		msg := fmt.Sprintf("misorder in %s between %s and %s", m.file, hex.EncodeToString(m.lastKey), hex.EncodeToString(key))
		if err := out.Emit([]byte("error"), []byte(msg)); err != nil {
			return err
		}
	}
	m.rec = append(append(m.rec[:0], key...), value...)
	m.sum.Add(m.rec)
	m.lastKey = append(m.lastKey[:0], key...)
	return nil
}

func (m *validateMapper) Cleanup(ctx *mapreduce.TaskContext, out mapreduce.Emitter) error {
	if !m.seen {
		return nil
	}
	if err := out.Emit([]byte(m.file+":end"), m.lastKey); err != nil {
		return err
	}
	return out.Emit([]byte("checksum"), []byte(m.sum.String()))
}

// validateReducer is Hadoop's TeraValidate reducer: errors pass through,
// checksums are summed, and consecutive files must not overlap.
type validateReducer struct {
	first            bool
	lastKey, lastVal []byte
	started          bool
}

func (r *validateReducer) Reduce(ctx *mapreduce.TaskContext, key []byte, values *mapreduce.Values, out mapreduce.Emitter) error {
	switch string(key) {
	case "error":
		for values.Next() {
			if err := out.Emit(key, values.Value()); err != nil {
				return err
			}
		}
	case "checksum":
		var sum terasort.Checksum
		for values.Next() {
			c, ok := terasort.ParseChecksum(string(values.Value()))
			if !ok {
				return fmt.Errorf("teravalidate: bad checksum %q", values.Value())
			}
			sum.Merge(c)
		}
		return out.Emit(key, []byte(sum.String()))
	default:
		if !values.Next() {
			return nil
		}
		v := values.Value()
		if r.started && bytes.Compare(v, r.lastVal) < 0 {
			msg := fmt.Sprintf("bad key partitioning:\n  file %s key %s\n  file %s key %s", r.lastKey, hex.EncodeToString(r.lastVal), key, hex.EncodeToString(v))
			if err := out.Emit([]byte("error"), []byte(msg)); err != nil {
				return err
			}
		}
		r.started = true
		r.lastKey = append(r.lastKey[:0], key...)
		r.lastVal = append(r.lastVal[:0], v...)
	}
	return nil
}

// runTeraValidate runs the job and fails when the report has errors.
func runTeraValidate(ctx context.Context, env fs.Env, args []string, out io.Writer) error {
	if len(args) != 2 {
		return usageErr(teravalidateUsage)
	}
	if _, err := runJob(ctx, env, out, "teravalidate", args); err != nil {
		return err
	}
	report, err := readReport(ctx, env, args[1])
	if err != nil {
		return err
	}
	fmt.Fprint(out, report)
	if strings.Contains(report, "error\t") {
		return errors.New("teravalidate: the output is not valid (see the error lines above)")
	}
	if !strings.Contains(report, "checksum\t") {
		return errors.New("teravalidate: no records found")
	}
	return nil
}

func readReport(ctx context.Context, env fs.Env, dir string) (string, error) {
	fsys, p, err := fs.Resolve(ctx, strings.TrimSuffix(dir, "/")+"/part-r-00000", env)
	if err != nil {
		return "", err
	}
	defer fsys.Close()
	f, err := fsys.Open(ctx, p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 16<<20))
	return string(b), err
}

func newTeraSum(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
	if len(args) != 2 {
		return nil, usageErr(terasumUsage)
	}
	return &mapreduce.Job{
		Name: "TeraSum", Conf: c,
		NewMapper: func() mapreduce.Mapper { return &sumMapper{} },
		NewReducer: func() mapreduce.Reducer {
			return mapreduce.ReduceFunc(func(ctx *mapreduce.TaskContext, key []byte, values *mapreduce.Values, out mapreduce.Emitter) error {
				var sum terasort.Checksum
				for values.Next() {
					c, _ := terasort.ParseChecksum(string(values.Value()))
					sum.Merge(c)
				}
				return out.Emit(key, []byte(sum.String()))
			})
		},
		Input: teraInput(), InputPaths: []string{args[0]},
		Output: mapreduce.TextOutputFormat{}, OutputPath: args[1], NumReducers: 1,
	}, nil
}

type sumMapper struct {
	sum terasort.Checksum
	rec []byte
}

func (m *sumMapper) Map(ctx *mapreduce.TaskContext, key, value []byte, out mapreduce.Emitter) error {
	m.rec = append(append(m.rec[:0], key...), value...)
	m.sum.Add(m.rec)
	return nil
}

func (m *sumMapper) Cleanup(ctx *mapreduce.TaskContext, out mapreduce.Emitter) error {
	return out.Emit([]byte("checksum"), []byte(m.sum.String()))
}
