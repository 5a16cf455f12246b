package fsdataset

import "testing"

// TestCloseAfterRoomReturnsBuffer checks that a writer whose owner lent
// its buffer (Room) and then closed or aborted it, as a receive that
// failed reading a packet does, puts the buffer back in the pool. A
// sync.Pool may drop a Put (the race detector drops some on purpose), so
// several rounds are tried; a buffer never returned is never seen again
// (room keeps it alive, so its address cannot be reused).
func TestCloseAfterRoomReturnsBuffer(t *testing.T) {
	e := newEnv(t, 1, nil)
	for _, abort := range []bool{false, true} {
		back := false
		for i := 0; i < 20 && !back; i++ {
			id := uint64(100 + i)
			if abort {
				id += 100
			}
			w, err := e.ds.CreateRBW(Block{ID: id, GenStamp: 1}, 0, "")
			if err != nil {
				t.Fatal(err)
			}
			room := w.Room()
			if cap(room) != bufferedBufSize {
				t.Fatalf("a new buffered writer lends %d bytes, want %d", cap(room), bufferedBufSize)
			}
			if abort {
				err = w.Abort()
			} else {
				err = w.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
			b := getBuf(bufferedBufSize)
			back = &b[:1][0] == &room[0]
		}
		if !back {
			t.Errorf("abort=%v: a buffer lent by Room never went back to the pool after the owner's Close/Abort", abort)
		}
	}
}
