package nfsgw

import "bytes"

// WRITE data arrives in pooled record buffers (front.go). The gateway
// keeps some of it after the WRITE is answered — the last bytes of each
// stream, to recognise retransmissions, and out-of-order data until the
// gap before it fills — and it keeps the record itself rather than a copy
// when the data fills at least half of the record's buffer, so a 1 MiB
// WRITE costs no copy beyond the one into the HDFS packets. The owner of
// a record returns it to the pool once; a function given a *[]byte takes
// the record by setting it to nil.

// chunk is WRITE data the gateway keeps: either inside rec, a record it
// took, or (rec nil) in a buffer of its own.
type chunk struct {
	data []byte
	rec  []byte
}

// keepable reports whether data, inside the record *rec, may be kept in
// the tail by keeping the record: it fills at least half of the record's
// buffer, so what the tail holds is at most twice what it counts.
func keepable(data []byte, rec *[]byte) bool {
	return rec != nil && *rec != nil && len(data) > 0 && 2*len(data) >= cap(*rec)
}

// recordSlack is how much larger than its data a record kept for
// out-of-order data may be: the call's header and the pool's rounding
// (getBuf), so that what MaxPending counts is close to what a client
// sent.
const recordSlack = 8 << 10

// tight reports whether data fills the record *rec but for recordSlack.
func tight(data []byte, rec *[]byte) bool {
	return rec != nil && *rec != nil && len(data) > 0 && cap(*rec)-len(data) <= recordSlack
}

// keep returns a chunk holding data: the record when ok (taking it from
// *rec), else a copy.
func keep(data []byte, rec *[]byte, ok bool) chunk {
	if ok {
		c := chunk{data: data, rec: *rec}
		*rec = nil
		return c
	}
	return chunk{data: bytes.Clone(data)}
}

// size is the memory the chunk holds.
func (c *chunk) size() int64 {
	if c.rec != nil {
		return int64(cap(c.rec))
	}
	return int64(cap(c.data))
}

// release gives the chunk's record back to the pool.
func (c *chunk) release() {
	if c.rec != nil {
		putBuf(c.rec)
	}
	c.data, c.rec = nil, nil
}

// tail is the last bytes written to a stream: at least tailKeep of them
// once that many were written, and at most tailKeep plus the oldest
// chunk (one record: maxRecord bytes).
type tail struct {
	segs []chunk // contiguous, oldest first
	n    int     // bytes in segs
}

// tailSeg is the smallest buffer the tail copies small writes into.
const tailSeg = 64 << 10

// add appends data, keeping the record *rec holding it when keepable.
func (t *tail) add(data []byte, rec *[]byte) {
	if len(data) == 0 {
		return
	}
	k := len(t.segs)
	switch {
	case keepable(data, rec):
		t.segs = append(t.segs, keep(data, rec, true))
	case k > 0 && t.segs[k-1].rec == nil && cap(t.segs[k-1].data)-len(t.segs[k-1].data) >= len(data):
		t.segs[k-1].data = append(t.segs[k-1].data, data...)
	default:
		b := make([]byte, len(data), max(len(data), tailSeg))
		copy(b, data)
		t.segs = append(t.segs, chunk{data: b})
	}
	t.n += len(data)
	for len(t.segs) > 1 && t.n-len(t.segs[0].data) >= tailKeep {
		t.n -= len(t.segs[0].data)
		t.segs[0].release()
		copy(t.segs, t.segs[1:])
		t.segs[len(t.segs)-1] = chunk{}
		t.segs = t.segs[:len(t.segs)-1]
	}
}

// len is how many bytes the tail holds.
func (t *tail) len() int { return t.n }

// equal reports whether b equals the tail's bytes from position at (0 is
// its oldest byte); false when they reach past the tail's end.
func (t *tail) equal(at int, b []byte) bool {
	if at < 0 || at+len(b) > t.n {
		return false
	}
	for _, s := range t.segs {
		if len(b) == 0 {
			break
		}
		if at >= len(s.data) {
			at -= len(s.data)
			continue
		}
		n := min(len(s.data)-at, len(b))
		if !bytes.Equal(s.data[at:at+n], b[:n]) {
			return false
		}
		b, at = b[n:], 0
	}
	return true
}

// reset drops everything, giving records back to the pool.
func (t *tail) reset() {
	for i := range t.segs {
		t.segs[i].release()
	}
	t.segs, t.n = nil, 0
}
