package editlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/vfs"
)

// writeLog formats a dir and writes records 1..n to its first segment.
func writeLog(t *testing.T, n uint64) string {
	t.Helper()
	dir := formatted(t)
	l, _ := mustOpenLoad(t, dir, Options{})
	appendSync(t, l, 1, n)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestTornTail(t *testing.T) {
	const n = 10
	damages := []struct {
		name   string
		damage func(t *testing.T, path string, lastOff int64)
	}{
		{"truncated mid-payload", func(t *testing.T, path string, lastOff int64) {
			os.Truncate(path, dataEnd(t, path)-3)
		}},
		{"truncated mid-header", func(t *testing.T, path string, lastOff int64) {
			os.Truncate(path, lastOff+5)
		}},
		{"payload byte flipped", func(t *testing.T, path string, lastOff int64) {
			flipByte(t, path, dataEnd(t, path)-1)
		}},
		{"txid byte flipped", func(t *testing.T, path string, lastOff int64) {
			flipByte(t, path, lastOff+12)
		}},
		{"garbage length", func(t *testing.T, path string, lastOff int64) {
			writeAt(t, path, lastOff, []byte{0xff, 0xff, 0xff, 0xf0})
		}},
		{"length too long for file", func(t *testing.T, path string, lastOff int64) {
			writeAt(t, path, lastOff, []byte{0, 0, 0x10, 0})
		}},
	}
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := writeLog(t, n)
			path := segPath(dir, 1)
			offs, _ := recordOffsets(t, path)
			last := offs[len(offs)-1]
			d.damage(t, path, last)

			logger, logs := newLogger()
			l, got := mustOpenLoad(t, dir, Options{Logger: logger})
			checkRecs(t, got.recs, 1, n-1)
			if sz := fileSize(t, path); sz != last {
				t.Errorf("file size after Load %d, want %d (record start)", sz, last)
			}
			out := logs.String()
			if !strings.Contains(out, "editlog: truncating corrupt tail") ||
				!strings.Contains(out, "file="+path) ||
				!strings.Contains(out, fmt.Sprintf("offset=%d", last)) ||
				!strings.Contains(out, "dropped=") {
				t.Errorf("log lacks the truncation line:\n%s", out)
			}
			if l.LastTxID() != n-1 {
				t.Fatalf("LastTxID = %d", l.LastTxID())
			}
			// Appending continues at the dropped record's txid.
			appendSync(t, l, n, n+2)
			l.Close()
			l, got = mustOpenLoad(t, dir, Options{})
			defer l.Close()
			checkRecs(t, got.recs, 1, n+2)
		})
	}
}

// A zero-filled tail (preallocation, or what some file systems leave after
// a crash) is the end of the data: neither records nor damage.
func TestZeroFilledTail(t *testing.T) {
	dir := writeLog(t, 5)
	path := segPath(dir, 1)
	end := dataEnd(t, path)
	writeAt(t, path, end, make([]byte, 4096))
	size := fileSize(t, path)
	logger, logs := newLogger()
	l, got := mustOpenLoad(t, dir, Options{Logger: logger})
	checkRecs(t, got.recs, 1, 5)
	if fileSize(t, path) != size || strings.Contains(logs.String(), "truncating") {
		t.Errorf("zero fill was treated as damage:\n%s", logs)
	}
	appendSync(t, l, 6, 7)
	l.Close()
	if got := dataEnd(t, path); got <= end {
		t.Errorf("appended records not at the data end")
	}
	l, got = mustOpenLoad(t, dir, Options{})
	defer l.Close()
	checkRecs(t, got.recs, 1, 7)
}

func TestMidLogCorruption(t *testing.T) {
	damages := []struct {
		name   string
		damage func(t *testing.T, path string, off int64)
	}{
		{"payload byte", func(t *testing.T, path string, off int64) { flipByte(t, path, off+recordHeaderSize+2) }},
		{"checksum byte", func(t *testing.T, path string, off int64) { flipByte(t, path, off+5) }},
		{"length field", func(t *testing.T, path string, off int64) { writeAt(t, path, off, []byte{0x7f, 0, 0, 0}) }},
		{"zeroed record", func(t *testing.T, path string, off int64) { writeAt(t, path, off, make([]byte, 20)) }},
	}
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := writeLog(t, 10)
			path := segPath(dir, 1)
			offs, _ := recordOffsets(t, path)
			d.damage(t, path, offs[4]) // txid 5 of 10
			size := fileSize(t, path)
			l, _, err := openLoad(t, dir, Options{})
			l.Close()
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Load: %v", err)
			}
			t.Log(err)
			if fileSize(t, path) != size {
				t.Error("mid-log corruption was truncated")
			}

			// Recovery mode truncates at the damage instead.
			logger, logs := newLogger()
			l, got := mustOpenLoad(t, dir, Options{Recover: true, Logger: logger})
			defer l.Close()
			checkRecs(t, got.recs, 1, 4)
			if fileSize(t, path) != offs[4] || !strings.Contains(logs.String(), "editlog: recovery:") {
				t.Errorf("recovery did not truncate at %d (size %d):\n%s", offs[4], fileSize(t, path), logs)
			}
			appendSync(t, l, 5, 5)
		})
	}
}

func TestFinalizedSegmentDamage(t *testing.T) {
	for _, name := range []string{"last record flipped", "truncated", "trailing garbage"} {
		t.Run(name, func(t *testing.T) {
			dir := formatted(t)
			l, _ := mustOpenLoad(t, dir, Options{})
			appendSync(t, l, 1, 5)
			if _, err := l.Roll(); err != nil {
				t.Fatal(err)
			}
			appendSync(t, l, 6, 8)
			l.Close()
			path := filepath.Join(dir, currentDir, finalizedName(1, 5))
			switch name {
			case "last record flipped":
				flipByte(t, path, fileSize(t, path)-1)
			case "truncated":
				os.Truncate(path, fileSize(t, path)-1)
			case "trailing garbage":
				writeAt(t, path, fileSize(t, path), []byte("junk"))
			}
			l, _, err := openLoad(t, dir, Options{})
			l.Close()
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Load: %v", err)
			}
		})
	}
}

func TestMissingSegment(t *testing.T) {
	dir := formatted(t)
	l, _ := mustOpenLoad(t, dir, Options{})
	appendSync(t, l, 1, 3)
	l.Roll()
	appendSync(t, l, 4, 6)
	l.Roll()
	appendSync(t, l, 7, 9)
	l.Close()

	// A gap between finalized segments.
	os.Rename(filepath.Join(dir, currentDir, finalizedName(4, 6)), filepath.Join(t.TempDir(), "x"))
	l, _, err := openLoad(t, dir, Options{})
	l.Close()
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "missing edits") {
		t.Fatalf("Load with a gap: %v", err)
	}

	// The newest segment deleted: seen_txid notices.
	dir = formatted(t)
	l, _ = mustOpenLoad(t, dir, Options{})
	appendSync(t, l, 1, 3)
	l.Roll()
	appendSync(t, l, 4, 6)
	l.Close()
	os.Remove(segPath(dir, 4))
	l, _, err = openLoad(t, dir, Options{})
	l.Close()
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), seenTxIDFile) {
		t.Fatalf("Load without the newest segment: %v", err)
	}
}

func TestTxIDGapInsideSegment(t *testing.T) {
	dir := formatted(t)
	// Hand-build a segment whose records skip txid 3.
	var b []byte
	b = append(b, segmentHeader(1)...)
	for _, tx := range []uint64{1, 2, 4} {
		b = appendRecord(b, tx, []byte("r"))
	}
	os.WriteFile(segPath(dir, 1), b, 0o644)
	l, _, err := openLoad(t, dir, Options{})
	l.Close()
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Load: %v", err)
	}
}

func TestTornSegmentHeader(t *testing.T) {
	dir := formatted(t)
	l, _ := mustOpenLoad(t, dir, Options{})
	appendSync(t, l, 1, 3)
	l.Roll()
	l.Close()
	// A crash while creating segment 4 left 7 bytes of its header, and
	// seen_txid still names segment 1.
	os.WriteFile(segPath(dir, 4), segmentHeader(4)[:7], 0o644)
	if err := writeSeenTxID(vfs.Default, filepath.Join(dir, currentDir), 1); err != nil {
		t.Fatal(err)
	}
	logger, logs := newLogger()
	l, got := mustOpenLoad(t, dir, Options{Logger: logger})
	defer l.Close()
	checkRecs(t, got.recs, 1, 3)
	if !strings.Contains(logs.String(), "torn header") {
		t.Errorf("no log line:\n%s", logs)
	}
	if fileSize(t, segPath(dir, 4)) != segmentHeaderSize {
		t.Error("segment 4 was not recreated")
	}
	appendSync(t, l, 4, 4)
}

func TestImageRollPurge(t *testing.T) {
	dir := formatted(t)
	img := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	l, _ := mustOpenLoad(t, dir, Options{})
	appendSync(t, l, 1, 10)
	end, err := l.Roll()
	if err != nil || end != 10 {
		t.Fatalf("Roll: %d %v", end, err)
	}
	if err := l.SaveImage(end, img("image@10")); err != nil {
		t.Fatal(err)
	}
	appendSync(t, l, 11, 15)
	l.Close()

	// Keep 2: fsimage_0 and fsimage_10 stay, so segment 1-10 stays too.
	names := listNames(t, dir)
	for _, n := range []string{imageName(0), imageName(10), finalizedName(1, 10), inProgressName(11)} {
		if !has(names, n) {
			t.Errorf("missing %s: %v", n, names)
		}
	}
	l, got := mustOpenLoad(t, dir, Options{})
	if got.imageTxID != 10 || got.image != "image@10" {
		t.Errorf("image (%d, %q)", got.imageTxID, got.image)
	}
	checkRecs(t, got.recs, 11, 15)

	end, err = l.Roll()
	if err != nil || end != 15 {
		t.Fatalf("Roll: %d %v", end, err)
	}
	big := strings.Repeat("0123456789", 300000) // 3 MB: more than one buffer
	if err := l.SaveImage(end, img(big)); err != nil {
		t.Fatal(err)
	}
	appendSync(t, l, 16, 20)
	l.Close()
	names = listNames(t, dir)
	if has(names, imageName(0)) || has(names, finalizedName(1, 10)) {
		t.Errorf("purge kept old files: %v", names)
	}
	for _, n := range []string{imageName(10), imageName(15), finalizedName(11, 15), inProgressName(16)} {
		if !has(names, n) {
			t.Errorf("purge removed %s: %v", n, names)
		}
	}

	l, got = mustOpenLoad(t, dir, Options{})
	if got.imageTxID != 15 || got.image != big {
		t.Errorf("image txid %d, %d bytes", got.imageTxID, len(got.image))
	}
	checkRecs(t, got.recs, 16, 20)
	l.Close()

	// A damaged newest image: fall back to fsimage_10 and replay 11..20.
	flipByte(t, filepath.Join(dir, currentDir, imageName(15)), imageHeaderSize+100)
	logger, logs := newLogger()
	l, got = mustOpenLoad(t, dir, Options{Logger: logger})
	defer l.Close()
	if got.imageTxID != 10 || got.image != "image@10" {
		t.Errorf("fallback image (%d, %q)", got.imageTxID, got.image)
	}
	checkRecs(t, got.recs, 11, 20)
	if !strings.Contains(logs.String(), "image is corrupt") || !strings.Contains(logs.String(), imageName(15)) {
		t.Errorf("no log line for the corrupt image:\n%s", logs)
	}
}

func TestImageDamage(t *testing.T) {
	damages := map[string]func(t *testing.T, path string){
		"truncated":  func(t *testing.T, path string) { os.Truncate(path, fileSize(t, path)-1) },
		"extended":   func(t *testing.T, path string) { writeAt(t, path, fileSize(t, path), []byte{0}) },
		"magic":      func(t *testing.T, path string) { flipByte(t, path, 0) },
		"txid":       func(t *testing.T, path string) { flipByte(t, path, 19) },
		"trailer":    func(t *testing.T, path string) { flipByte(t, path, fileSize(t, path)-1) },
		"empty file": func(t *testing.T, path string) { os.Truncate(path, 0) },
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			dir := formatted(t)
			l, _ := mustOpenLoad(t, dir, Options{})
			appendSync(t, l, 1, 4)
			l.Roll()
			if err := l.SaveImage(4, func(w io.Writer) error { _, err := w.Write([]byte("four")); return err }); err != nil {
				t.Fatal(err)
			}
			l.Close()
			damage(t, filepath.Join(dir, currentDir, imageName(4)))
			l, got := mustOpenLoad(t, dir, Options{})
			defer l.Close()
			if got.imageTxID != 0 {
				t.Errorf("used the damaged image")
			}
			checkRecs(t, got.recs, 1, 4)
		})
	}
}

func TestNoValidImage(t *testing.T) {
	dir := formatted(t)
	flipByte(t, filepath.Join(dir, currentDir, imageName(0)), 3)
	l, _, err := openLoad(t, dir, Options{})
	l.Close()
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Load: %v", err)
	}
}

func TestImageCallbackError(t *testing.T) {
	dir := formatted(t)
	l, err := Open(dir, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	boom := errors.New("boom")
	err = l.Load(func(uint64, io.Reader) error { return boom }, nil)
	if !errors.Is(err, boom) {
		t.Fatalf("Load: %v", err)
	}
}

// An image not at a segment boundary: Load skips the records it covers.
func TestImageMidSegment(t *testing.T) {
	dir := formatted(t)
	l, _ := mustOpenLoad(t, dir, Options{})
	appendSync(t, l, 1, 10)
	if err := l.SaveImage(6, func(w io.Writer) error { _, err := w.Write([]byte("six")); return err }); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l, got := mustOpenLoad(t, dir, Options{})
	defer l.Close()
	if got.imageTxID != 6 {
		t.Fatalf("image txid %d", got.imageTxID)
	}
	checkRecs(t, got.recs, 7, 10)
	appendSync(t, l, 11, 11)
}

func TestAbandonedCheckpointRemoved(t *testing.T) {
	dir := formatted(t)
	tmp := filepath.Join(dir, currentDir, imageTmpName(7))
	os.WriteFile(tmp, []byte("partial"), 0o644)
	l, _ := mustOpenLoad(t, dir, Options{})
	defer l.Close()
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still there", tmp)
	}
}

// SaveImage runs without the namespace lock, concurrently with appends.
func TestSaveImageConcurrent(t *testing.T) {
	dir := formatted(t)
	l, _ := mustOpenLoad(t, dir, Options{ImagesToKeep: 1})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 5; i++ {
			end, err := l.Roll()
			if err != nil {
				t.Error(err)
				return
			}
			if err := l.SaveImage(end, func(w io.Writer) error { _, err := fmt.Fprint(w, end); return err }); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	ctx := context.Background()
	for i := uint64(1); i <= 300; i++ {
		tx, err := l.Append([]byte(payload(i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Sync(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	l.Close()
	l, got := mustOpenLoad(t, dir, Options{})
	defer l.Close()
	if fmt.Sprint(got.imageTxID) != got.image {
		t.Errorf("image %d holds %q", got.imageTxID, got.image)
	}
	checkRecs(t, got.recs, got.imageTxID+1, 300)
}

func flipByte(t testing.TB, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0x5a
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeAt(t testing.TB, path string, off int64, p []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(p, off); err != nil {
		t.Fatal(err)
	}
}
