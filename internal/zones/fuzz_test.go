package zones

import (
	"errors"
	"math"
	"testing"
)

// FuzzRecords feeds arbitrary bytes to both catalogue decoders: they
// return an object on the sphere or ErrBadRecord, and what they accept
// encodes back to the same object.
func FuzzRecords(f *testing.F) {
	f.Add(AppendRecord(nil, Object{ID: 3, RA: 359.5, Dec: -89.9}))
	f.Add([]byte("12 0.5 -90"))
	f.Add([]byte("1 NaN 0"))
	f.Add([]byte("18446744073709551615 359.99999999999994 90\t"))
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(o Object, err error) {
			if err != nil {
				if !errors.Is(err, ErrBadRecord) {
					t.Fatalf("error %v does not wrap ErrBadRecord", err)
				}
				return
			}
			if !(o.RA >= 0 && o.RA < 360 && math.Abs(o.Dec) <= 90) {
				t.Fatalf("accepted %+v", o)
			}
			if back, err := DecodeRecord(AppendRecord(nil, o)); err != nil || back != o {
				t.Fatalf("binary round trip of %+v: %+v, %v", o, back, err)
			}
			if back, err := ParseText(AppendText(nil, o)); err != nil || back != o {
				t.Fatalf("text round trip of %+v: %+v, %v", o, back, err)
			}
		}
		check(ParseText(b))
		if len(b) >= RecordSize {
			check(DecodeRecord(b[:RecordSize]))
		}
	})
}
