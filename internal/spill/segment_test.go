package spill

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

func TestSegmentRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := randRecords(rng, 3000, 1, 0, 30, 300)
	// Records larger than the read buffer and the writer's buffer, and
	// empty keys and values.
	big := make([]byte, 700<<10)
	for i := range big {
		big[i] = byte(rng.IntN(256))
	}
	recs = append(recs, rec{key: nil, value: nil}, rec{key: big[:100], value: big}, rec{key: big, value: nil},
		rec{key: []byte("k"), value: big[:70<<10]})
	for _, codec := range allCodecs {
		t.Run(codec.String(), func(t *testing.T) {
			data, raw := encodeSegment(t, codec, recs)
			if codec == None && raw != int64(len(data))-4 {
				t.Fatalf("raw %d, stored %d", raw, len(data)-4)
			}
			for _, rawArg := range []int64{raw, -1} {
				it, err := OpenSegment(bytes.NewReader(data), codec, int64(len(data)), rawArg)
				if err != nil {
					t.Fatal(err)
				}
				got, err := drain(t, it)
				if err != nil {
					t.Fatal(err)
				}
				equalRecs(t, got, recs)
			}
			it, err := NewMemorySegment(data, codec)
			if err != nil {
				t.Fatal(err)
			}
			got, err := drain(t, it)
			if err != nil {
				t.Fatal(err)
			}
			equalRecs(t, got, recs)

			var copied bytes.Buffer
			if err := CopySegment(&copied, bytes.NewReader(data), int64(len(data))); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(copied.Bytes(), data) {
				t.Fatal("CopySegment changed the bytes")
			}
		})
	}
}

func TestEmptySegment(t *testing.T) {
	for _, codec := range allCodecs {
		data, raw := encodeSegment(t, codec, nil)
		if raw != 2 {
			t.Errorf("%s: raw length %d, want 2", codec, raw)
		}
		if codec == None && !bytes.Equal(data[:2], []byte{0, 0}) {
			t.Errorf("empty segment %x", data)
		}
		it, err := OpenSegment(bytes.NewReader(data), codec, int64(len(data)), raw)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := drain(t, it); err != nil || len(got) != 0 {
			t.Errorf("%s: %d records, %v", codec, len(got), err)
		}
	}
}

func TestSegmentCorruption(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := randRecords(rng, 500, 1, 0, 20, 100)
	for _, codec := range allCodecs {
		data, raw := encodeSegment(t, codec, recs)
		check := func(name string, b []byte, partLen, rawLen int64) {
			t.Helper()
			it, err := OpenSegment(bytes.NewReader(b), codec, partLen, rawLen)
			if err == nil {
				_, err = drain(t, it)
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s %s: OpenSegment: got %v, want ErrCorrupt", codec, name, err)
			}
			if int64(len(b)) == partLen && rawLen != raw+1 {
				it, err := NewMemorySegment(b, codec)
				if err == nil {
					_, err = drain(t, it)
				}
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("%s %s: NewMemorySegment: got %v, want ErrCorrupt", codec, name, err)
				}
				if err := CopySegment(io.Discard, bytes.NewReader(b), partLen); !errors.Is(err, ErrCorrupt) {
					t.Errorf("%s %s: CopySegment: got %v, want ErrCorrupt", codec, name, err)
				}
			}
		}
		for _, pos := range []int{0, len(data) / 3, len(data) / 2, len(data) - 5, len(data) - 1} {
			b := bytes.Clone(data)
			b[pos] ^= 0x10
			check("flipped byte", b, int64(len(b)), raw)
			check("flipped byte, raw length unknown", b, int64(len(b)), -1)
		}
		check("truncated", data[:len(data)-10], int64(len(data)), raw)
		check("truncated by the index", data[:len(data)-10], int64(len(data)-10), -1)
		if codec != None {
			check("wrong raw length", data, int64(len(data)), raw+1)
		}
	}
}

// TestSegmentBoundedAllocation: a corrupt length must not make the reader
// allocate it.
func TestSegmentBoundedAllocation(t *testing.T) {
	b := []byte{0xff, 0xff, 0xff, 0xff, 0x07, 0xff, 0xff, 0xff, 0xff, 0x07, 1, 2, 3}
	b = append(b, 0, 0, 0, 0) // a wrong checksum, found only at the end
	for _, codec := range allCodecs {
		it, err := OpenSegment(bytes.NewReader(b), codec, int64(len(b)), -1)
		if err != nil {
			t.Fatal(err)
		}
		for it.Next() {
		}
		if !errors.Is(it.Err(), ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", codec, it.Err())
		}
		it.Close()
	}
}

func TestParseCodec(t *testing.T) {
	for in, want := range map[string]Codec{
		"": None, "none": None, "NONE": None, "zstd": Zstd, "lz4": LZ4, "snappy": Snappy,
		"org.apache.hadoop.io.compress.SnappyCodec":    Snappy,
		"org.apache.hadoop.io.compress.Lz4Codec":       LZ4,
		"org.apache.hadoop.io.compress.ZStandardCodec": Zstd,
		"org.apache.hadoop.io.compress.DefaultCodec":   Zstd,
		"org.apache.hadoop.io.compress.GzipCodec":      Zstd,
		"org.apache.hadoop.io.compress.BZip2Codec":     Zstd,
	} {
		got, err := ParseCodec(in)
		if err != nil || got != want {
			t.Errorf("ParseCodec(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"lzo", "com.hadoop.compression.lzo.LzoCodec", "zip"} {
		if _, err := ParseCodec(bad); err == nil {
			t.Errorf("ParseCodec(%q) succeeded", bad)
		}
	}
	if _, err := NewSegmentWriter(io.Discard, Codec("brotli")); err == nil {
		t.Error("NewSegmentWriter accepted an unknown codec")
	}
}
