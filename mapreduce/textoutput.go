package mapreduce

import (
	"bufio"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
)

// Configuration keys of the file output formats.
const (
	// KeyTextOutputSeparator goes between key and value in
	// TextOutputFormat's lines (default tab).
	KeyTextOutputSeparator = "mapreduce.output.textoutputformat.separator"
	// KeyOutputCompress compresses TextOutputFormat's files (default false).
	KeyOutputCompress = "mapreduce.output.fileoutputformat.compress"
	// KeyOutputCompressCodec names the codec when compressing:
	// org.apache.hadoop.io.compress.GzipCodec (".gz", strata's default) or
	// org.apache.hadoop.io.compress.DefaultCodec (zlib, ".deflate",
	// Hadoop's default).
	KeyOutputCompressCodec = "mapreduce.output.fileoutputformat.compress.codec"
)

// Codec class names accepted in KeyOutputCompressCodec.
const (
	GzipCodec    = "org.apache.hadoop.io.compress.GzipCodec"
	DefaultCodec = "org.apache.hadoop.io.compress.DefaultCodec"
)

// compressor returns the extension and writer constructor of the output
// codec c asks for; ok is false when output is not compressed.
func compressor(c *conf.Configuration) (ext string, open func(io.Writer) io.WriteCloser, ok bool, err error) {
	on, err := confBool(c, KeyOutputCompress, false)
	if err != nil || !on {
		return "", nil, false, err
	}
	codec := ""
	if c != nil {
		codec = c.GetTrimmed(KeyOutputCompressCodec)
	}
	switch codec {
	case "", GzipCodec, "gzip":
		return ".gz", func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) }, true, nil
	case DefaultCodec, "deflate", "default":
		return ".deflate", func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) }, true, nil
	}
	return "", nil, false, fmt.Errorf("mapreduce: %s: codec %q is not supported (use %s or %s)", KeyOutputCompressCodec, codec, GzipCodec, DefaultCodec)
}

// TextOutputFormat writes lines "key<sep>value\n" (sep from
// mapreduce.output.textoutputformat.separator, default tab), as Hadoop's
// TextOutputFormat. Like Hadoop's null key or value, a nil key or value is
// left out together with the separator: a nil value writes "key\n", a nil
// key "value\n", both nil nothing. An empty but non-nil value writes
// "key<sep>\n". With mapreduce.output.fileoutputformat.compress=true the
// file is compressed and named with the codec's extension
// (part-r-00000.gz).
type TextOutputFormat struct{}

// Check implements OutputFormat: see CheckOutputDir.
func (TextOutputFormat) Check(ctx context.Context, env fs.Env, c *conf.Configuration, dir string) error {
	if _, _, _, err := compressor(c); err != nil {
		return err
	}
	return CheckOutputDir(ctx, env, c, dir)
}

// Writer implements OutputFormat: the file is name (plus the codec's
// extension) in the attempt's work directory (WorkPath).
func (TextOutputFormat) Writer(ctx context.Context, att *TaskAttempt, name string) (RecordWriter, error) {
	c := att.Conf
	if c == nil {
		c = att.Env.Conf
	}
	sep := "\t"
	if c != nil && c.IsSet(KeyTextOutputSeparator) {
		sep = c.Get(KeyTextOutputSeparator)
	}
	ext, open, compress, err := compressor(c)
	if err != nil {
		return nil, err
	}
	f, err := createWorkFile(ctx, att, name+ext)
	if err != nil {
		return nil, err
	}
	w := &lineRecordWriter{f: f, sep: []byte(sep)}
	var dst io.Writer = f
	if compress {
		w.comp = open(f)
		dst = w.comp
	}
	w.w = bufio.NewWriterSize(dst, 64<<10)
	return w, nil
}

// lineRecordWriter is Hadoop's TextOutputFormat.LineRecordWriter.
type lineRecordWriter struct {
	f    io.WriteCloser
	comp io.WriteCloser // compressor, if any
	w    *bufio.Writer
	sep  []byte
	err  error
}

// Write implements RecordWriter.
func (w *lineRecordWriter) Write(key, value []byte) error {
	if w.err != nil {
		return w.err
	}
	if key == nil && value == nil {
		return nil
	}
	if key != nil {
		w.w.Write(key)
	}
	if key != nil && value != nil {
		w.w.Write(w.sep)
	}
	if value != nil {
		w.w.Write(value)
	}
	if err := w.w.WriteByte('\n'); err != nil {
		w.err = fmt.Errorf("mapreduce: write output: %w", err)
	}
	return w.err
}

// Close implements RecordWriter: flushes and closes the file; safe to call
// twice.
func (w *lineRecordWriter) Close() error {
	if w.f == nil {
		return w.err
	}
	err := w.w.Flush()
	if w.comp != nil {
		err = errors.Join(err, w.comp.Close())
	}
	err = errors.Join(err, w.f.Close())
	w.f = nil
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("mapreduce: close output: %w", err)
	}
	return w.err
}
