package dfsio

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Mega is TestDFSIO's MB: 2^20 bytes.
const Mega = 1 << 20

// Defaults of Hadoop's TestDFSIO.run.
const (
	DefaultBufferSize = 1000000
	DefaultResFile    = "TestDFSIO_results.log"
	DefaultBaseDir    = "/benchmarks/TestDFSIO"
	DefaultFileSize   = 1 * Mega
	DefaultNrFiles    = 1
)

// KeyBaseDir is the configuration key naming the base directory (Hadoop's
// test.build.data); empty means DefaultBaseDir.
const KeyBaseDir = "test.build.data"

// Usage is the command's argument synopsis.
const Usage = "-read [-random | -backward | -skip [-skipSize Size]] | -write | -append | -truncate | -clean" +
	" [-compression gzip] [-nrFiles N] [-fileSize Size[B|KB|MB|GB|TB]]" +
	" [-resFile resultFileName] [-bufferSize Bytes] [-storagePolicy storagePolicyName]"

// TestType is the benchmark to run.
type TestType int

// The test types, as Hadoop's TestType enum.
const (
	Read TestType = iota + 1
	Write
	Cleanup
	Append
	RandomRead
	BackwardRead
	SkipRead
	Truncate
)

// String is Hadoop's name of the test, printed in the report header.
func (t TestType) String() string {
	switch t {
	case Read:
		return "read"
	case Write:
		return "write"
	case Cleanup:
		return "cleanup"
	case Append:
		return "append"
	case RandomRead:
		return "random read"
	case BackwardRead:
		return "backward read"
	case SkipRead:
		return "skip read"
	case Truncate:
		return "truncate"
	}
	return "unknown"
}

// outDir is the job output directory's name under the base directory.
func (t TestType) outDir() string {
	switch t {
	case Write:
		return "io_write"
	case Read:
		return "io_read"
	case Append:
		return "io_append"
	case RandomRead, BackwardRead, SkipRead:
		return "io_random_read"
	case Truncate:
		return "io_truncate"
	}
	return ""
}

// parseTestType is the inverse of String for the job arguments.
func parseTestType(s string) (TestType, bool) {
	for t := Read; t <= Truncate; t++ {
		if t.String() == s {
			return t, true
		}
	}
	return 0, false
}

// Options are a TestDFSIO run's parameters.
type Options struct {
	Type TestType
	// NrFiles is the number of files, one map task each (default 1).
	NrFiles int
	// FileSize is the bytes per file to write, read or append; for
	// Truncate the new length (default 1 MiB).
	FileSize int64
	// BufferSize is the size of each read or write in bytes (default
	// 1,000,000).
	BufferSize int
	// SkipSize is the gap in bytes between reads of SkipRead (0 means
	// BufferSize); Run sets it from Type for the other random reads:
	// BackwardRead steps back by BufferSize, RandomRead uses 0.
	SkipSize int64
	// ResFile is the local file the report is appended to (default
	// TestDFSIO_results.log in the working directory).
	ResFile string
	// StoragePolicy, if set, is set on the data directory before Write
	// (an HDFS storage policy name: HOT, ALL_SSD, ONE_SSD, ...).
	StoragePolicy string
	// Compression is "" (none) or "gzip": data is written through and
	// read through that codec; sizes count uncompressed bytes.
	Compression string
}

// UsageError is a wrong command line; its text says what is wrong.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usageErr(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// ParseArgs reads TestDFSIO's command line as Hadoop does: option names
// are case-insensitive, any option starting with -read selects the read
// test, -random/-backward/-skip must follow it, -size is a synonym of
// -fileSize, the last test option wins.
func ParseArgs(args []string) (Options, error) {
	o := Options{NrFiles: DefaultNrFiles, FileSize: DefaultFileSize, BufferSize: DefaultBufferSize, ResFile: DefaultResFile}
	if len(args) == 0 {
		return o, usageErr("Missing arguments.")
	}
	for i := 0; i < len(args); i++ {
		a := strings.ToLower(args[i])
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", usageErr("%s needs a value", args[i])
			}
			i++
			return args[i], nil
		}
		var err error
		var v string
		switch {
		case strings.HasPrefix(a, "-read"):
			o.Type = Read
		case a == "-write":
			o.Type = Write
		case a == "-append":
			o.Type = Append
		case a == "-random", a == "-backward", a == "-skip":
			if o.Type != Read {
				return o, usageErr("%s must follow -read", args[i])
			}
			o.Type = map[string]TestType{"-random": RandomRead, "-backward": BackwardRead, "-skip": SkipRead}[a]
		case a == "-truncate":
			o.Type = Truncate
		case a == "-clean":
			o.Type = Cleanup
		case strings.HasPrefix(a, "-seq"):
			return o, usageErr("%s (sequential in-process test) is not supported", args[i])
		case a == "-erasurecodepolicy":
			return o, usageErr("%s is not supported: strata has no erasure coding", args[i])
		case strings.HasPrefix(a, "-compression"):
			if v, err = value(); err == nil {
				o.Compression, err = parseCodec(v)
			}
		case a == "-nrfiles":
			if v, err = value(); err == nil {
				var n int64
				n, err = strconv.ParseInt(v, 10, 32)
				if err != nil || n < 1 {
					err = usageErr("-nrFiles %q: want a number of files >= 1", v)
				}
				o.NrFiles = int(n)
			}
		case a == "-filesize", a == "-size":
			if v, err = value(); err == nil {
				o.FileSize, err = ParseSize(v)
			}
		case a == "-skipsize":
			if v, err = value(); err == nil {
				o.SkipSize, err = ParseSize(v)
			}
		case a == "-buffersize":
			if v, err = value(); err == nil {
				var n int64
				n, err = strconv.ParseInt(v, 10, 32)
				if err != nil || n < 1 {
					err = usageErr("-bufferSize %q: want a number of bytes >= 1", v)
				}
				o.BufferSize = int(n)
			}
		case a == "-resfile":
			o.ResFile, err = value()
		case a == "-storagepolicy":
			o.StoragePolicy, err = value()
		default:
			return o, usageErr("Illegal argument: %s", args[i])
		}
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) {
				err = usageErr("%s: %v", args[i-1], err)
			}
			return o, err
		}
	}
	if o.Type == 0 {
		return o, usageErr("no test given: one of -write, -read, -append, -truncate, -clean")
	}
	switch o.Type {
	case BackwardRead:
		o.SkipSize = -int64(o.BufferSize)
	case SkipRead:
		if o.SkipSize == 0 {
			o.SkipSize = int64(o.BufferSize)
		}
	case RandomRead:
		o.SkipSize = 0
	}
	if o.Compression != "" && (o.Type == RandomRead || o.Type == BackwardRead || o.Type == SkipRead) {
		return o, usageErr("-compression cannot be used with -random, -backward or -skip: a compressed stream has no positioned reads")
	}
	return o, nil
}

// GzipCodec is Hadoop's gzip codec class name, accepted by -compression.
const GzipCodec = "org.apache.hadoop.io.compress.GzipCodec"

// parseCodec accepts gzip by its short or Hadoop class name.
func parseCodec(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "none":
		return "", nil
	case "gzip", "gz", strings.ToLower(GzipCodec), "gzipcodec":
		return "gzip", nil
	}
	return "", usageErr("-compression %q is not supported (use gzip or %s)", s, GzipCodec)
}

// multiples are TestDFSIO's ByteMultiple values, in the order its
// parseString tries them.
var multiples = []struct {
	name string
	mult int64
}{
	{"B", 1}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"TB", 1 << 40},
}

// ParseSize reads a size as TestDFSIO's parseSize does: decimal digits
// followed by a multiple B, KB, MB, GB or TB (any case); no multiple means
// MB. "128" is 128 MiB, "64KB" 65536, "1gb" 2^30. Signs, fractions, spaces
// and other units (K, M, G) are rejected.
func ParseSize(s string) (int64, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("invalid size %q: want digits followed by B, KB, MB, GB or TB", s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: %w", s, err)
	}
	mult := int64(Mega)
	if unit := strings.ToUpper(s[i:]); unit != "" {
		mult = 0
		for _, m := range multiples {
			if strings.HasSuffix(m.name, unit) {
				mult = m.mult
				break
			}
		}
		if mult == 0 {
			return 0, fmt.Errorf("invalid size %q: unsupported multiple %q (use B, KB, MB, GB or TB)", s, s[i:])
		}
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return n * mult, nil
}
