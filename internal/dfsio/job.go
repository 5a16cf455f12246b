package dfsio

import (
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/mapreduce"
)

// JobName is the name the benchmark's job is registered under with
// package mapreduce.
const JobName = "testdfsio"

const jobUsage = JobName + " -type <write|read|append|random read|backward read|skip read|truncate> -base <uri> [-bufferSize B] [-skipSize S] [-compression gzip]"

func init() {
	mapreduce.Register(JobName, jobUsage, newJob)
}

// jobParams are what the map tasks need, passed as the job's arguments so
// that a TaskTracker rebuilds the same job.
type jobParams struct {
	typ         TestType
	base        string // qualified URI of the base directory
	bufferSize  int
	skipSize    int64
	compression string
}

func (p jobParams) args() []string {
	a := []string{"-type", p.typ.String(), "-base", p.base, "-bufferSize", strconv.Itoa(p.bufferSize), "-skipSize", strconv.FormatInt(p.skipSize, 10)}
	if p.compression != "" {
		a = append(a, "-compression", p.compression)
	}
	return a
}

func parseJobArgs(args []string) (jobParams, error) {
	fl := flag.NewFlagSet(JobName, flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	typ := fl.String("type", "", "")
	p := jobParams{}
	fl.StringVar(&p.base, "base", "", "")
	fl.IntVar(&p.bufferSize, "bufferSize", DefaultBufferSize, "")
	fl.Int64Var(&p.skipSize, "skipSize", 0, "")
	fl.StringVar(&p.compression, "compression", "", "")
	if err := fl.Parse(args); err != nil || fl.NArg() > 0 {
		return p, fmt.Errorf("dfsio: job arguments %q; usage: %s", args, jobUsage)
	}
	var ok bool
	if p.typ, ok = parseTestType(*typ); !ok || p.typ == Cleanup {
		return p, fmt.Errorf("dfsio: job: unknown test type %q", *typ)
	}
	if p.base == "" || p.bufferSize < 1 {
		return p, fmt.Errorf("dfsio: job arguments %q; usage: %s", args, jobUsage)
	}
	if p.compression != "" && p.compression != "gzip" {
		return p, fmt.Errorf("dfsio: job: compression %q is not supported", p.compression)
	}
	return p, nil
}

// newJob builds the benchmark job: the control files are the input (one
// split, so one map, each), one map per file doing the I/O, one
// accumulating reducer writing text.
func newJob(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
	p, err := parseJobArgs(args)
	if err != nil {
		return nil, err
	}
	if c == nil {
		c = conf.New()
	}
	c = c.Clone()
	// analyzeResult reads one plain "key\tvalue" text file.
	c.Set("mapreduce.output.fileoutputformat.compress", "false")
	c.Set("mapreduce.output.textoutputformat.separator", "\t")
	return &mapreduce.Job{
		Name:        "TestDFSIO " + p.typ.String(),
		Conf:        c,
		NewMapper:   func() mapreduce.Mapper { return &ioMapper{p: p} },
		NewReducer:  func() mapreduce.Reducer { return accumulatingReducer{} },
		Input:       mapreduce.KVFileInputFormat{},
		InputPaths:  []string{p.base + "/io_control"},
		Output:      mapreduce.TextOutputFormat{},
		OutputPath:  p.base + "/" + p.typ.outDir(),
		NumReducers: 1,
	}, nil
}

// Statistic record keys (AccumulatingReducer's type prefixes).
const (
	typeLong   = "l:"
	typeFloat  = "f:"
	typeString = "s:"
)

// ioMapper is IOMapperBase with the IOStatMapper subclasses: one map call
// per control record, that is per file.
type ioMapper struct {
	p      jobParams
	buf    []byte
	host   string
	random *rand.Rand
}

// stream is the open file of one map call; nil for Truncate.
type stream interface{ Close() error }

// Setup allocates the buffer (filled as WriteMapper fills it).
func (m *ioMapper) Setup(tc *mapreduce.TaskContext) error {
	m.buf = make([]byte, m.p.bufferSize)
	for i := range m.buf {
		m.buf[i] = byte('0' + i%50)
	}
	m.host, _ = os.Hostname()
	if m.host == "" {
		m.host = "localhost"
	}
	m.random = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	return nil
}

// Map does the I/O of one file and emits its statistics.
func (m *ioMapper) Map(tc *mapreduce.TaskContext, key, value []byte, out mapreduce.Emitter) error {
	if m.buf == nil {
		m.Setup(tc)
	}
	name := string(key)
	if len(value) != 8 || strings.ContainsAny(name, "/") || name == "" {
		return fmt.Errorf("dfsio: bad control record %q → %x", key, value)
	}
	size := int64(binary.BigEndian.Uint64(value))
	// The map API carries no context: the I/O runs to its end once begun.
	ctx := context.Background()
	env := tc.Attempt.Env
	if env.Conf == nil {
		env.Conf = tc.Attempt.Conf
	}
	fsys, p, err := fs.Resolve(ctx, m.p.base+"/io_data/"+name, env)
	if err != nil {
		return fmt.Errorf("dfsio: %s: %w", name, err)
	}
	defer fsys.Close()
	tc.SetStatus("starting " + name + " ::host = " + m.host)

	s, fileSize, err := m.open(ctx, fsys, p)
	if err != nil {
		return fmt.Errorf("dfsio: %s: %w", fs.Qualify(fsys, p), err)
	}
	start := time.Now()
	n, err := m.doIO(ctx, tc, fsys, p, s, name, size, fileSize)
	if s != nil {
		err = errors.Join(err, s.Close())
	}
	exec := time.Since(start)
	if err != nil {
		return fmt.Errorf("dfsio: %s %s: %w", m.p.typ, fs.Qualify(fsys, p), err)
	}
	tc.SetStatus("finished " + name + " ::host = " + m.host)
	return collectStats(out, n, exec)
}

// open is getIOStream: the untimed opening of the file.
func (m *ioMapper) open(ctx context.Context, fsys fs.FileSystem, p string) (s stream, fileSize int64, err error) {
	switch m.p.typ {
	case Write:
		w, err := fsys.Create(ctx, p, fs.CreateOptions{Overwrite: true, CreateParent: true})
		if err != nil {
			return nil, 0, err
		}
		return m.compress(w), 0, nil
	case Append:
		a, ok := fsys.(fs.Appender)
		if !ok {
			return nil, 0, fmt.Errorf("%s does not support append", fsys.URI())
		}
		w, err := a.AppendFile(ctx, p)
		if err != nil {
			return nil, 0, err
		}
		return m.compress(w), 0, nil
	case Read, RandomRead, BackwardRead, SkipRead:
		st, err := fsys.Stat(ctx, p)
		if err != nil {
			return nil, 0, err
		}
		f, err := fsys.Open(ctx, p)
		if err != nil {
			return nil, 0, err
		}
		if m.p.compression == "gzip" {
			zr, err := gzip.NewReader(f)
			if err != nil {
				f.Close()
				return nil, 0, fmt.Errorf("not a gzip stream: %w", err)
			}
			return &gzipReader{Reader: zr, f: f}, st.Length, nil
		}
		return f, st.Length, nil
	case Truncate:
		st, err := fsys.Stat(ctx, p)
		if err != nil {
			return nil, 0, err
		}
		return nil, st.Length, nil
	}
	return nil, 0, fmt.Errorf("test type %v has no I/O", m.p.typ)
}

// compress wraps w in the codec's writer; closing it closes w too.
func (m *ioMapper) compress(w io.WriteCloser) io.WriteCloser {
	if m.p.compression != "gzip" {
		return w
	}
	return &gzipWriter{Writer: gzip.NewWriter(w), w: w}
}

type gzipWriter struct {
	*gzip.Writer
	w io.WriteCloser
}

func (g *gzipWriter) Close() error { return errors.Join(g.Writer.Close(), g.w.Close()) }

type gzipReader struct {
	*gzip.Reader
	f io.Closer
}

func (g *gzipReader) Close() error { return errors.Join(g.Reader.Close(), g.f.Close()) }

// doIO is the timed part: it returns the bytes processed.
func (m *ioMapper) doIO(ctx context.Context, tc *mapreduce.TaskContext, fsys fs.FileSystem, p string, s stream, name string, size, fileSize int64) (int64, error) {
	switch m.p.typ {
	case Write, Append:
		w := s.(io.Writer)
		for remaining := size; remaining > 0; remaining -= int64(m.p.bufferSize) {
			cur := int(min(int64(m.p.bufferSize), remaining))
			if _, err := w.Write(m.buf[:cur]); err != nil {
				return 0, err
			}
			tc.SetStatus(fmt.Sprintf("writing %s@%d/%d ::host = %s", name, size-remaining, size, m.host))
		}
		return size, nil
	case Read:
		r := s.(io.Reader)
		var actual int64
		for actual < size {
			n, err := r.Read(m.buf)
			actual += int64(n)
			if err == io.EOF {
				break
			}
			if err != nil {
				return actual, err
			}
			tc.SetStatus(fmt.Sprintf("reading %s@%d/%d ::host = %s", name, actual, size, m.host))
		}
		return actual, nil
	case RandomRead, BackwardRead, SkipRead:
		r, ok := s.(io.ReaderAt)
		if !ok {
			return 0, errors.New("the stream has no positioned reads")
		}
		var actual int64
		for pos := m.nextOffset(-1, fileSize); actual < size; pos = m.nextOffset(pos, fileSize) {
			n, err := r.ReadAt(m.buf, pos)
			if n == 0 && (err == io.EOF || pos >= fileSize) {
				break // Java's read(pos, ...) returning -1
			}
			if err != nil && err != io.EOF {
				return actual, err
			}
			actual += int64(n)
			tc.SetStatus(fmt.Sprintf("reading %s@%d/%d ::host = %s", name, actual, size, m.host))
		}
		return actual, nil
	case Truncate:
		t, ok := fsys.(fs.Truncater)
		if !ok {
			return 0, fmt.Errorf("%s does not support truncate", fsys.URI())
		}
		done, err := t.Truncate(ctx, p, size)
		if err != nil {
			return 0, err
		}
		tc.SetStatus(fmt.Sprintf("truncating %s to newLength %d ::host = %s", name, size, m.host))
		if !done {
			if err := t.WaitTruncated(ctx, p); err != nil {
				return 0, err
			}
		}
		return fileSize - size, nil
	}
	return 0, fmt.Errorf("test type %v has no I/O", m.p.typ)
}

// nextOffset is RandomReadMapper.nextOffset: a random offset for random
// reads (skipSize 0), forward by bufferSize+skipSize for skip reads,
// backward by bufferSize from the end (staying at 0) for backward reads.
func (m *ioMapper) nextOffset(current, fileSize int64) int64 {
	skip, bs := m.p.skipSize, int64(m.p.bufferSize)
	switch {
	case skip == 0:
		if fileSize <= 0 {
			return 0
		}
		return m.random.Int64N(fileSize)
	case skip > 0:
		if current < 0 {
			return 0
		}
		return current + bs + skip
	default:
		if current < 0 {
			return max(0, fileSize-bs)
		}
		return max(0, current+skip)
	}
}

// collectStats is IOStatMapper.collectStats, with Java's float arithmetic.
// The time is in whole milliseconds, at least 1.
func collectStats(out mapreduce.Emitter, size int64, exec time.Duration) error {
	ms := max(exec.Milliseconds(), 1)
	rate := float32(size) * 1000 / float32(ms*Mega)
	recs := [][2]string{
		{typeLong + "tasks", "1"},
		{typeLong + "size", strconv.FormatInt(size, 10)},
		{typeLong + "time", strconv.FormatInt(ms, 10)},
		{typeFloat + "rate", javaFloat(rate * 1000)},
		{typeFloat + "sqrate", javaFloat(rate * rate * 1000)},
	}
	for _, r := range recs {
		if err := out.Emit([]byte(r[0]), []byte(r[1])); err != nil {
			return err
		}
	}
	return nil
}

// accumulatingReducer is Hadoop's AccumulatingReducer: s: values are
// concatenated, each followed by ";"; f: values summed as float32; l:
// values summed as int64. Other keys are dropped.
type accumulatingReducer struct{}

func (accumulatingReducer) Reduce(tc *mapreduce.TaskContext, key []byte, values *mapreduce.Values, out mapreduce.Emitter) error {
	field := string(key)
	switch {
	case strings.HasPrefix(field, typeString):
		var b strings.Builder
		for values.Next() {
			b.Write(values.Value())
			b.WriteByte(';')
		}
		return out.Emit(key, []byte(b.String()))
	case strings.HasPrefix(field, typeFloat):
		var sum float32
		for values.Next() {
			f, err := strconv.ParseFloat(string(values.Value()), 32)
			if err != nil {
				return fmt.Errorf("dfsio: %s: %w", field, err)
			}
			sum += float32(f)
		}
		return out.Emit(key, []byte(javaFloat(sum)))
	case strings.HasPrefix(field, typeLong):
		var sum int64
		for values.Next() {
			n, err := strconv.ParseInt(string(values.Value()), 10, 64)
			if err != nil {
				return fmt.Errorf("dfsio: %s: %w", field, err)
			}
			sum += n
		}
		return out.Emit(key, []byte(strconv.FormatInt(sum, 10)))
	}
	return nil
}
