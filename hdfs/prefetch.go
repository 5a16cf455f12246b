package hdfs

import (
	"io"
	"sync"
)

// A prefetcher reads one block stream ahead of its consumer in a goroutine,
// so that the DataNode's disk reads, the network, the checksum checks (the
// block reader verifies before it returns bytes) and whatever the consumer
// does with the bytes — write a local file, a FUSE reply, an HTTP body —
// overlap instead of taking turns. The Atom paper measured HDFS reads as
// "disk then send, in sequence"; this is the client's half of the fix.
//
// Read-ahead follows demand: the goroutine fills a chunk only with a
// credit; it starts with one, and each chunk the consumer takes returns
// its credit and, until depth credits are out, one more — so a consumer
// that reads a few bytes and stops costs one 64 KiB chunk, and one that
// streams soon has depth chunks in flight. Chunk sizes double from
// minChunk to maxChunk.
//
// Invariants: at most depth chunks are filled or being filled and not yet
// taken, plus the one being consumed, so a reader holds at most
// (depth+1)×maxChunk bytes. Bytes come out in stream order, then the
// source's error (io.EOF at the end) exactly where the source returned it.
// Close stops the goroutine and waits for it, so no buffer is shared after
// Close; a FileReader dropped without Close is closed by a cleanup.
type prefetcher struct {
	src    io.ReadCloser
	full   chan chunk
	credit chan struct{}
	quit   chan struct{}
	done   chan struct{}
	depth  int
	issued int // credits given out so far (up to depth)

	cur  chunk
	off  int // consumed bytes of cur.data
	err  error
	once sync.Once
}

type chunk struct {
	data []byte
	err  error
}

const (
	minChunk = 64 << 10
	maxChunk = 1 << 20
)

// chunkPools hold buffers by size class (minChunk << i).
var chunkPools [5]sync.Pool

func sizeClass(n int) int {
	c := 0
	for minChunk<<c < n && c < len(chunkPools)-1 {
		c++
	}
	return c
}

func getChunk(n int) []byte {
	c := sizeClass(n)
	if b, ok := chunkPools[c].Get().(*[]byte); ok {
		return (*b)[:minChunk<<c]
	}
	return make([]byte, minChunk<<c)
}

func putChunk(b []byte) {
	if cap(b) < minChunk {
		return
	}
	c := sizeClass(cap(b))
	if minChunk<<c != cap(b) {
		return
	}
	b = b[:cap(b)]
	chunkPools[c].Put(&b)
}

// newPrefetcher starts reading src ahead, ahead bytes at most (rounded to
// whole maxChunk chunks, at least one).
func newPrefetcher(src io.ReadCloser, ahead int) *prefetcher {
	depth := max(1, ahead/maxChunk)
	p := &prefetcher{
		src:    src,
		full:   make(chan chunk, depth),
		credit: make(chan struct{}, depth),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
		depth:  depth,
		issued: 1,
	}
	p.credit <- struct{}{}
	go p.run()
	return p
}

func (p *prefetcher) run() {
	defer close(p.done)
	size := minChunk
	for {
		select {
		case <-p.credit:
		case <-p.quit:
			return
		}
		buf := getChunk(size)
		n := 0
		var err error
		// Fill the chunk, but hand over the first one as soon as it has
		// anything: the consumer should not wait for a megabyte to start.
		for n < len(buf) && err == nil {
			var m int
			m, err = p.src.Read(buf[n:])
			n += m
			if size == minChunk && n > 0 {
				break
			}
		}
		// The channel has room: a credit is only given for a free slot.
		p.full <- chunk{data: buf[:n], err: err}
		if err != nil {
			return
		}
		size = min(2*size, maxChunk)
	}
}

// next makes the next filled chunk current, returning the last one's
// buffer to its pool.
func (p *prefetcher) next() {
	if p.cur.data != nil {
		putChunk(p.cur.data)
	}
	p.cur, p.off = <-p.full, 0
	if p.cur.err != nil {
		return // the goroutine has stopped
	}
	// Taking a chunk frees its slot: return its credit, and ramp up.
	p.credit <- struct{}{}
	if p.issued < p.depth {
		p.issued++
		p.credit <- struct{}{}
	}
}

// view returns the unconsumed bytes of the current chunk, waiting for
// the next chunk when it is used up, and nothing with the source's error
// (io.EOF at the end of the stream) once every byte before it is
// consumed. The bytes stay valid until the next view or Close.
func (p *prefetcher) view() ([]byte, error) {
	for p.off == len(p.cur.data) {
		if p.err != nil {
			return nil, p.err
		}
		if p.cur.err != nil {
			p.err = p.cur.err
			return nil, p.err
		}
		p.next()
	}
	return p.cur.data[p.off:], nil
}

// consume marks n bytes of the last view as used.
func (p *prefetcher) consume(n int) { p.off += n }

// Close stops the goroutine (closing src unblocks its read), waits for
// it and returns every buffer.
func (p *prefetcher) Close() error {
	var err error
	p.once.Do(func() {
		close(p.quit)
		err = p.src.Close()
		<-p.done
		if p.cur.data != nil {
			putChunk(p.cur.data)
		}
		p.cur, p.off = chunk{}, 0
		for {
			select {
			case c := <-p.full:
				putChunk(c.data)
				continue
			default:
			}
			break
		}
		if p.err == nil {
			p.err = io.ErrClosedPipe
		}
	})
	return err
}
