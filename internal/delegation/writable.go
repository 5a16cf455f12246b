package delegation

import (
	"errors"
	"fmt"
)

// Hadoop's Writable primitives (WritableUtils.writeVLong/readVLong and
// Text), as the identifier and the token file use them.

// maxText bounds a decoded Text, as Hadoop's Text.DEFAULT_MAX_LEN (1 MiB).
const maxText = 1 << 20

var errShort = errors.New("delegation: truncated writable data")

// appendVLong appends v in WritableUtils' variable-length encoding: one
// byte for -112..127, else a length byte then the big-endian magnitude
// (ones' complement for negatives).
func appendVLong(b []byte, v int64) []byte {
	if v >= -112 && v <= 127 {
		return append(b, byte(v))
	}
	l := -112
	if v < 0 {
		v ^= -1
		l = -120
	}
	for t := v; t != 0; t >>= 8 {
		l--
	}
	b = append(b, byte(int8(l)))
	n := -(l + 112)
	if l < -120 {
		n = -(l + 120)
	}
	for i := n; i > 0; i-- {
		b = append(b, byte(v>>(8*(i-1))))
	}
	return b
}

// reader decodes Writable data from a byte slice; every length is checked
// against what remains before anything is allocated.
type reader struct {
	b   []byte
	err error
}

func (r *reader) byte1() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.err = errShort
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) vlong() int64 {
	first := int8(r.byte1())
	if r.err != nil {
		return 0
	}
	if first >= -112 {
		return int64(first)
	}
	// The bytes after the first: -112-first for a positive value,
	// -120-first for a negative one (WritableUtils.decodeVIntSize).
	neg := first < -120
	n := -112 - int(first)
	if neg {
		n = -120 - int(first)
	}
	if n < 1 || n > 8 {
		r.err = fmt.Errorf("delegation: bad vlong length %d", n)
		return 0
	}
	if len(r.b) < n {
		r.err = errShort
		return 0
	}
	var v int64
	for _, c := range r.b[:n] {
		v = v<<8 | int64(c)
	}
	r.b = r.b[n:]
	if neg {
		v ^= -1
	}
	return v
}

func (r *reader) vint() int32 {
	v := r.vlong()
	if r.err == nil && (v > 1<<31-1 || v < -1<<31) {
		r.err = fmt.Errorf("delegation: vint %d out of range", v)
		return 0
	}
	return int32(v)
}

// bytes reads a vint length and that many bytes, at most limit.
func (r *reader) bytes(limit int) []byte {
	n := r.vint()
	if r.err != nil {
		return nil
	}
	if n < 0 || int(n) > limit {
		r.err = fmt.Errorf("delegation: length %d out of range (limit %d)", n, limit)
		return nil
	}
	if len(r.b) < int(n) {
		r.err = errShort
		return nil
	}
	out := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return out
}

func (r *reader) text() string { return string(r.bytes(maxText)) }

func appendBytes(b, v []byte) []byte {
	b = appendVLong(b, int64(len(v)))
	return append(b, v...)
}

func appendText(b []byte, s string) []byte { return appendBytes(b, []byte(s)) }
