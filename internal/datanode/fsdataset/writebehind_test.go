package fsdataset

import "testing"

// TestIdleWriterKeepsOneBuffer streams several buffers through a writer,
// hflushes, and checks that the idle writer then holds only the buffer it
// fills: the write-behind buffers went back to the pool. Writing goes on
// afterwards and the replica is intact.
func TestIdleWriterKeepsOneBuffer(t *testing.T) {
	for _, direct := range []bool{false, true} {
		e := newEnv(t, 1, func(c *Config) { c.DirectIO = direct })
		id := uint64(11)
		if direct {
			id = 12
		}
		data := randBytes(id, 4*directBufSize+1000)
		w, err := e.ds.CreateRBW(Block{ID: id, GenStamp: 1}, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		half := 3*directBufSize + 700
		for off := 0; off < half; off += 64 << 10 {
			if _, err := w.Write(data[off:min(off+64<<10, half)]); err != nil {
				t.Fatal(err)
			}
		}
		if w.wb == nil {
			t.Fatalf("direct=%v: no write-behind after %d bytes", direct, half)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		w.mu.Lock()
		nbufs, free := w.nbufs, len(w.wb.free)
		w.mu.Unlock()
		if nbufs > 1 || free > 0 {
			t.Errorf("direct=%v: idle writer after a flush holds %d buffers (%d free in write-behind), want 1", direct, nbufs, free)
		}
		if _, err := w.Write(data[half:]); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Finalize(); err != nil {
			t.Fatal(err)
		}
		e.checkReplica(id, data)
	}
}
