package datatransfer

import (
	"context"
	"fmt"
	"io"
	"testing"
)

// BenchmarkBlockWriter streams blocks through BlockWriter to the fake
// DataNode over loopback; the DataNode verifies every checksum and acks.
func BenchmarkBlockWriter(b *testing.B) {
	dn := newFakeDN(b)
	dn.discard = true
	dn.start()
	const size = 16 << 20
	data := randomData(1<<20, 1)
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, err := NewBlockWriter(context.Background(), dn.dial(b), WriteBlockConfig{ClientName: "bench", Block: testBlock(uint64(i), 0)})
		if err != nil {
			b.Fatal(err)
		}
		for n := 0; n < size; n += len(data) {
			if _, err := w.Write(data); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBlockRead serves a block with SendBlock (from memory with
// ReadAt, or from a file with sendfile) and reads it with BlockReader,
// which verifies every chunk.
func BenchmarkBlockRead(b *testing.B) {
	for _, useFile := range []bool{false, true} {
		b.Run(fmt.Sprintf("file=%v", useFile), func(b *testing.B) {
			dn := newFakeDN(b)
			dn.useFile = useFile
			dn.start()
			const size = 16 << 20
			dn.setBlock(1, randomData(size, 2))
			buf := make([]byte, 1<<20)
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := NewBlockReader(context.Background(), dn.dial(b), "bench", testBlock(1, 0), nil, 0, size)
				if err != nil {
					b.Fatal(err)
				}
				if n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{r}, buf); err != nil || n != size {
					b.Fatalf("read %d: %v", n, err)
				}
				r.Close()
			}
		})
	}
}
