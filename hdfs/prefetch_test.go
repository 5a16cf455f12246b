package hdfs

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// stream is a block stream: data in random-sized Reads, then err.
type stream struct {
	data   []byte
	err    error
	rnd    *rand.Rand
	closed atomic.Bool
	served atomic.Int64  // bytes returned
	block  chan struct{} // if set, a Read after the data waits for Close
}

func (s *stream) Read(p []byte) (int, error) {
	if s.closed.Load() {
		return 0, io.ErrClosedPipe
	}
	if len(s.data) == 0 {
		if s.block != nil {
			<-s.block
			return 0, io.ErrClosedPipe
		}
		return 0, s.err
	}
	n := min(len(p), len(s.data), 1+s.rnd.Intn(100<<10))
	copy(p, s.data[:n])
	s.data = s.data[n:]
	s.served.Add(int64(n))
	return n, nil
}

func (s *stream) Close() error {
	if !s.closed.Swap(true) && s.block != nil {
		close(s.block)
	}
	return nil
}

// read is what FileReader.Read does with a prefetcher.
func (p *prefetcher) read(b []byte) (int, error) {
	data, err := p.view()
	n := copy(b, data)
	p.consume(n)
	return n, err
}

// writeTo is what FileReader.WriteTo does with a prefetcher.
func (p *prefetcher) writeTo(w io.Writer) (int64, error) {
	var total int64
	for {
		data, err := p.view()
		if len(data) > 0 {
			m, _ := w.Write(data)
			p.consume(m)
			total += int64(m)
			continue
		}
		return total, err
	}
}

func payload(n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(int64(n))).Read(b)
	return b
}

// TestPrefetcherDeliversInOrderThenError: every byte in order, then the
// source's error exactly after them, through reads of any size and
// through whole views.
func TestPrefetcherDeliversInOrderThenError(t *testing.T) {
	boom := errors.New("boom")
	for _, size := range []int{0, 1, minChunk - 1, minChunk, 3*maxChunk + 12345} {
		for _, end := range []error{io.EOF, boom} {
			for _, bufSize := range []int{1 << 10, 100 << 10, 2 << 20, -1} {
				if bufSize == 1<<10 && size > maxChunk {
					continue
				}
				data := payload(size)
				p := newPrefetcher(&stream{data: append([]byte(nil), data...), err: end, rnd: rand.New(rand.NewSource(1))}, 2*maxChunk)
				var got bytes.Buffer
				var err error
				if bufSize < 0 {
					_, err = p.writeTo(&got)
				} else {
					buf := make([]byte, bufSize)
					for {
						var n int
						n, err = p.read(buf)
						got.Write(buf[:n])
						if err != nil {
							break
						}
					}
				}
				if !bytes.Equal(got.Bytes(), data) {
					t.Fatalf("size %d buf %d: got %d bytes, want %d (or wrong bytes)", size, bufSize, got.Len(), size)
				}
				if err != end {
					t.Fatalf("size %d buf %d: error %v, want %v", size, bufSize, err, end)
				}
				if _, err2 := p.read(make([]byte, 10)); err2 != end {
					t.Fatalf("error not sticky: %v", err2)
				}
				p.Close()
			}
		}
	}
}

// TestPrefetcherCloseStopsReading: Close mid-stream, while the goroutine
// waits for room or blocks in the source, returns promptly and leaves no
// goroutine behind; the prefetcher never reads further than its budget.
func TestPrefetcherCloseStopsReading(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := 0; i < 5; i++ {
		src := &stream{data: payload(8 * maxChunk), rnd: rand.New(rand.NewSource(int64(i))), err: io.EOF}
		p := newPrefetcher(src, 2*maxChunk)
		buf := make([]byte, 1000)
		if _, err := p.read(buf); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
		// Budget: 2 chunks queued + 1 being filled + the consumed one.
		if read := src.served.Load(); read > 4*maxChunk {
			t.Fatalf("read %d bytes ahead with a budget of 2 MiB", read)
		}
		done := make(chan struct{})
		go func() { p.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Close blocked")
		}
		if _, err := p.read(buf); err == nil {
			t.Fatal("Read after Close succeeded")
		}
	}
	// A source that blocks until closed.
	src := &stream{data: payload(1000), rnd: rand.New(rand.NewSource(9)), block: make(chan struct{})}
	p := newPrefetcher(src, maxChunk)
	buf := make([]byte, 2000)
	n, _ := p.read(buf)
	if n == 0 {
		t.Fatal("no data")
	}
	p.Close()
	for i := 0; i < 100 && runtime.NumGoroutine() > before; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Fatalf("%d goroutines after Close, %d before", g, before)
	}
}

// TestPrefetcherFollowsDemand: a consumer that reads a little and stops
// costs the first chunks of the ramp, not the whole read-ahead budget;
// one that streams gets the budget.
func TestPrefetcherFollowsDemand(t *testing.T) {
	src := &stream{data: payload(16 * maxChunk), rnd: rand.New(rand.NewSource(3)), err: io.EOF}
	p := newPrefetcher(src, 4*maxChunk)
	defer p.Close()
	if n, err := p.read(make([]byte, 1000)); n == 0 || err != nil {
		t.Fatal(n, err)
	}
	time.Sleep(50 * time.Millisecond)
	// Taking the first chunk (64 KiB) released two more (128 + 256 KiB).
	if got := src.served.Load(); got > minChunk+2*minChunk+4*minChunk {
		t.Fatalf("after a 1000-byte read the prefetcher read %d bytes ahead", got)
	}
	// Streaming: the reads stay within depth chunks ahead of the consumer.
	consumed := int64(1000)
	buf := make([]byte, 300<<10)
	for consumed < 10*maxChunk {
		n, err := p.read(buf)
		if err != nil {
			t.Fatal(err)
		}
		consumed += int64(n)
		if ahead := src.served.Load() - consumed; ahead > 5*maxChunk {
			t.Fatalf("%d bytes read ahead with a budget of 4 MiB", ahead)
		}
	}
}
