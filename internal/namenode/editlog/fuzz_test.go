package editlog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// fuzzAllocBound is far below MaxRecordSize: Load may allocate its fixed
// buffers and up to the input's size, never what a damaged length field
// asks for.
const fuzzAllocBound = 16 << 20

// FuzzLoadSegment feeds arbitrary bytes to Load as the in-progress segment
// edits_inprogress_<1>. Load must not panic, must stay within the allocation
// bound, must either fail with ErrCorrupt or deliver txids 1..k in order, and
// what it leaves behind must load again to the same records.
func FuzzLoadSegment(f *testing.F) {
	valid := segmentHeader(1)
	for i := uint64(1); i <= 3; i++ {
		valid = appendRecord(valid, i, []byte(payload(i)))
	}
	f.Add(valid)
	f.Add(valid[:len(valid)-2])
	f.Add(valid[:segmentHeaderSize])
	f.Add(valid[:5])
	f.Add([]byte{})
	f.Add(append(append([]byte{}, valid...), make([]byte, 64)...))
	flipped := append([]byte{}, valid...)
	flipped[segmentHeaderSize+20] ^= 1
	f.Add(flipped)
	huge := append([]byte{}, valid...)
	huge = append(huge, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4)
	f.Add(huge)
	maxish := append([]byte{}, valid...)
	maxish = append(maxish, 0x03, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4)
	f.Add(maxish)

	// A formatted directory to copy per input, avoiding Format's fsyncs.
	tmpl := formatted(f)
	tmplFiles := map[string][]byte{}
	for _, n := range []string{versionFile, imageName(0), seenTxIDFile} {
		b, err := os.ReadFile(filepath.Join(tmpl, currentDir, n))
		if err != nil {
			f.Fatal(err)
		}
		tmplFiles[n] = b
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		cur := filepath.Join(dir, currentDir)
		if err := os.Mkdir(cur, 0o755); err != nil {
			t.Fatal(err)
		}
		for n, b := range tmplFiles {
			if err := os.WriteFile(filepath.Join(cur, n), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(cur, inProgressName(1)), data, 0o644); err != nil {
			t.Fatal(err)
		}

		l, err := Open(dir, Options{Logger: quiet, SegmentPreallocation: 4096})
		if err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		err = l.Load(nil, func(txid uint64, rec []byte) error {
			if txid != uint64(len(got)+1) {
				t.Fatalf("apply got txid %d after %d records", txid, len(got))
			}
			got = append(got, append([]byte(nil), rec...))
			return nil
		})
		runtime.ReadMemStats(&ms1)
		if a := ms1.TotalAlloc - ms0.TotalAlloc; a > fuzzAllocBound+2*uint64(len(data)) {
			t.Fatalf("Load allocated %d bytes for a %d-byte segment", a, len(data))
		}
		if err != nil {
			l.Close()
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Load failed without ErrCorrupt: %v", err)
			}
			return
		}
		if l.LastTxID() != uint64(len(got)) {
			t.Fatalf("LastTxID %d after %d records", l.LastTxID(), len(got))
		}
		tx, err := l.Append([]byte("after"))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Sync(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}

		// What Load left (truncated or not) plus the new record loads
		// cleanly to the same records.
		l, err = Open(dir, Options{Logger: quiet, SegmentPreallocation: 4096})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		n := 0
		err = l.Load(nil, func(txid uint64, rec []byte) error {
			want := []byte("after")
			if n < len(got) {
				want = got[n]
			}
			n++
			if txid != uint64(n) || string(rec) != string(want) {
				t.Fatalf("reload: txid %d = %q, want %d = %q", txid, rec, n, want)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("reload: %v", err)
		}
		if n != len(got)+1 {
			t.Fatalf("reload gave %d records, want %d", n, len(got)+1)
		}
	})
}
