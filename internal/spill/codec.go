package spill

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Codec names how a segment's record stream is compressed. The zero value
// is no compression.
type Codec string

// The codecs. Map output is read only by strata, so the compressed bytes
// need not (and do not) match Hadoop's codecs' framing.
const (
	None   Codec = ""       // no compression; "none" is accepted as a synonym
	Zstd   Codec = "zstd"   // Zstandard frame, fastest level
	LZ4    Codec = "lz4"    // LZ4 frame format, 256 KiB blocks, no frame checksum
	Snappy Codec = "snappy" // Snappy framing format (64 KiB chunks)
)

// ParseCodec turns a short name or a Hadoop codec class name
// (mapreduce.map.output.compress.codec) into a Codec. Names are matched
// without regard to case:
//
//	"", "none"                                      → None
//	"zstd", "zstandard", ...ZStandardCodec          → Zstd
//	"lz4", ...Lz4Codec                              → LZ4
//	"snappy", ...SnappyCodec                        → Snappy
//	"default", "deflate", "gzip", "bzip2",
//	...DefaultCodec, ...DeflateCodec,
//	...GzipCodec, ...BZip2Codec                     → Zstd
//
// where ... is org.apache.hadoop.io.compress. Hadoop's zlib-family and
// bzip2 codecs are general-purpose, ratio-oriented codecs; strata maps them
// to Zstandard, which is faster than all of them at a similar ratio (the
// bytes are strata's own either way). Hadoop's default codec when
// mapreduce.map.output.compress is true is DefaultCodec, so a job that only
// turns compression on gets Zstd. Anything else is an error.
func ParseCodec(name string) (Codec, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.TrimPrefix(n, "org.apache.hadoop.io.compress.")
	switch n {
	case "", "none":
		return None, nil
	case "zstd", "zstandard", "zstandardcodec":
		return Zstd, nil
	case "lz4", "lz4codec":
		return LZ4, nil
	case "snappy", "snappycodec":
		return Snappy, nil
	case "default", "defaultcodec", "deflate", "deflatecodec", "gzip", "gzipcodec", "bzip2", "bzip2codec":
		return Zstd, nil
	}
	return None, fmt.Errorf("spill: unknown compression codec %q", name)
}

// canonical returns c's canonical form, or an error for an unknown codec.
func (c Codec) canonical() (Codec, error) {
	switch c {
	case None, "none":
		return None, nil
	case Zstd, LZ4, Snappy:
		return c, nil
	}
	return None, fmt.Errorf("spill: unknown compression codec %q", string(c))
}

// String returns the codec's name, "none" for None.
func (c Codec) String() string {
	if c == None {
		return "none"
	}
	return string(c)
}

// compressor is a pooled stream encoder.
type compressor interface {
	io.WriteCloser // Close ends the stream; it does not close the destination
	Reset(w io.Writer)
}

// decompressor is a pooled stream decoder.
type decompressor interface {
	io.Reader
	Reset(r io.Reader) error
}

var (
	zstdEncPool, lz4EncPool, snappyEncPool sync.Pool
	zstdDecPool, lz4DecPool, snappyDecPool sync.Pool
)

// zstdWindow is the encoder's window; the decoder refuses larger ones, which
// bounds its memory on corrupt input.
const zstdWindow = 1 << 20

func getCompressor(c Codec, w io.Writer) (compressor, error) {
	switch c {
	case Zstd:
		if e, ok := zstdEncPool.Get().(*zstd.Encoder); ok {
			e.Reset(w)
			return e, nil
		}
		return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(zstdWindow),
			zstd.WithEncoderCRC(false))
	case LZ4:
		if e, ok := lz4EncPool.Get().(*lz4.Writer); ok {
			e.Reset(w)
			return e, nil
		}
		e := lz4.NewWriter(w)
		if err := e.Apply(lz4.BlockSizeOption(lz4.Block256Kb), lz4.ChecksumOption(false),
			lz4.ConcurrencyOption(1)); err != nil {
			return nil, fmt.Errorf("spill: lz4: %w", err)
		}
		return e, nil
	case Snappy:
		if e, ok := snappyEncPool.Get().(*s2.Writer); ok {
			e.Reset(w)
			return e, nil
		}
		return s2.NewWriter(w, s2.WriterSnappyCompat(), s2.WriterConcurrency(1)), nil
	}
	return nil, fmt.Errorf("spill: no compressor for codec %q", string(c))
}

func putCompressor(c Codec, e compressor) {
	e.Reset(nil)
	switch c {
	case Zstd:
		zstdEncPool.Put(e)
	case LZ4:
		lz4EncPool.Put(e)
	case Snappy:
		snappyEncPool.Put(e)
	}
}

type zstdDec struct{ *zstd.Decoder }

func (d zstdDec) Reset(r io.Reader) error { return d.Decoder.Reset(r) }

type lz4Dec struct{ *lz4.Reader }

func (d lz4Dec) Reset(r io.Reader) error { d.Reader.Reset(r); return nil }

type snappyDec struct{ *s2.Reader }

func (d snappyDec) Reset(r io.Reader) error { d.Reader.Reset(r); return nil }

func getDecompressor(c Codec, r io.Reader) (decompressor, error) {
	var d decompressor
	switch c {
	case Zstd:
		if p, ok := zstdDecPool.Get().(zstdDec); ok {
			d = p
			break
		}
		z, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxWindow(zstdWindow), zstd.WithDecoderMaxMemory(64<<20))
		if err != nil {
			return nil, fmt.Errorf("spill: zstd: %w", err)
		}
		d = zstdDec{z}
	case LZ4:
		if p, ok := lz4DecPool.Get().(lz4Dec); ok {
			d = p
			break
		}
		d = lz4Dec{lz4.NewReader(nil)}
	case Snappy:
		if p, ok := snappyDecPool.Get().(snappyDec); ok {
			d = p
			break
		}
		d = snappyDec{s2.NewReader(nil, s2.ReaderMaxBlockSize(64<<10))}
	default:
		return nil, fmt.Errorf("spill: no decompressor for codec %q", string(c))
	}
	if err := d.Reset(r); err != nil {
		return nil, fmt.Errorf("spill: %s: %w", c, err)
	}
	return d, nil
}

func putDecompressor(c Codec, d decompressor) {
	switch c {
	case Zstd:
		// Reset(nil) is an error for zstd but still drops the reference.
		_ = d.Reset(nil)
		zstdDecPool.Put(d)
	case LZ4:
		_ = d.Reset(nil)
		lz4DecPool.Put(d)
	case Snappy:
		_ = d.Reset(nil)
		snappyDecPool.Put(d)
	}
}
