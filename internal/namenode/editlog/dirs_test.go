package editlog

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/vfs/errorfs"
)

// formattedDirs formats n directories as one namespace.
func formattedDirs(t testing.TB, n int) []string {
	t.Helper()
	root := t.TempDir()
	var dirs []string
	for i := 0; i < n; i++ {
		dirs = append(dirs, filepath.Join(root, string(rune('a'+i)), "name"))
	}
	if _, err := FormatDirs(nil, dirs, false); err != nil {
		t.Fatal(err)
	}
	return dirs
}

func openLoadDirs(t testing.TB, dirs []string, opts Options) (*Log, loaded, error) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger, _ = newLogger()
	}
	l, err := OpenDirs(dirs, opts)
	if err != nil {
		t.Fatal(err)
	}
	var got loaded
	err = l.Load(func(txid uint64, r io.Reader) error {
		b, err := io.ReadAll(r)
		got.imageTxID, got.image, got.imageSeen = txid, string(b), true
		return err
	}, func(txid uint64, b []byte) error {
		got.recs = append(got.recs, rec{txid, string(b)})
		return nil
	})
	return l, got, err
}

func mustOpenLoadDirs(t testing.TB, dirs []string, opts Options) (*Log, loaded) {
	t.Helper()
	l, got, err := openLoadDirs(t, dirs, opts)
	if err != nil {
		l.Close()
		t.Fatalf("Load: %v", err)
	}
	return l, got
}

func checkActive(t testing.TB, l *Log, want ...bool) {
	t.Helper()
	ds := l.Dirs()
	if len(ds) != len(want) {
		t.Fatalf("Dirs() has %d entries, want %d", len(ds), len(want))
	}
	for i, d := range ds {
		if d.Active != want[i] {
			t.Errorf("dir %s: Active = %v, want %v (err %q)", d.Path, d.Active, want[i], d.Err)
		}
		if d.Active != (d.Err == "") || d.Active != d.FailedAt.IsZero() {
			t.Errorf("dir %s: Active %v with Err %q, FailedAt %v", d.Path, d.Active, d.Err, d.FailedAt)
		}
	}
}

// TestDirsFormat: one VERSION in every directory; a formatted one refuses
// the format of all without force; a directory named twice is refused.
func TestDirsFormat(t *testing.T) {
	dirs := formattedDirs(t, 3)
	want, err := os.ReadFile(filepath.Join(dirs[0], currentDir, versionFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs[1:] {
		if got, _ := os.ReadFile(filepath.Join(d, currentDir, versionFile)); string(got) != string(want) {
			t.Fatalf("%s VERSION differs:\n%s\nvs\n%s", d, got, want)
		}
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	if _, err := FormatDirs(nil, []string{fresh, dirs[0]}, false); !errors.Is(err, ErrFormatted) {
		t.Fatalf("format over a formatted directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(fresh, currentDir, versionFile)); err == nil {
		t.Fatal("the refused format wrote the other directory")
	}
	if _, err := FormatDirs(nil, []string{fresh, fresh + "/"}, false); err == nil {
		t.Fatal("a directory named twice was accepted")
	}
	if _, err := OpenDirs([]string{dirs[0], dirs[0]}, Options{}); err == nil {
		t.Fatal("OpenDirs accepted a directory named twice")
	}
	if _, err := FormatDirs(nil, dirs, true); err != nil {
		t.Fatal(err)
	}
}

// Directories of different namespaces are refused.
func TestDirsDifferentNamespaces(t *testing.T) {
	a, b := formatted(t), formatted(t)
	if l, err := OpenDirs([]string{a, b}, Options{Logger: quiet}); !errors.Is(err, ErrCorrupt) {
		if l != nil {
			l.Close()
		}
		t.Fatalf("OpenDirs of two namespaces: %v", err)
	}
	// Their locks were released.
	l, _ := mustOpenLoad(t, a, Options{})
	l.Close()
}

// TestDirsOneFails: a write or fsync failure on one directory takes it out
// of service; mutations, rolls and checkpoints go on in the other; the
// restart repopulates the failed one, which then holds every acknowledged
// record on its own.
func TestDirsOneFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule errorfs.Rule
		want error
	}{
		{"fsync EIO", errorfs.Rule{Ops: errorfs.OpSync, Err: syscall.EIO}, syscall.EIO},
		{"torn write", errorfs.Rule{Ops: errorfs.OpWrite, ShortWrite: 3}, io.ErrShortWrite},
		{"write ENOSPC", errorfs.Rule{Ops: errorfs.OpWrite, Err: syscall.ENOSPC}, syscall.ENOSPC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs := formattedDirs(t, 2)
			fsys := errorfs.Wrap(nil)
			l, _ := mustOpenLoadDirs(t, dirs, Options{FS: fsys})
			appendSync(t, l, 1, 5)
			checkActive(t, l, true, true)

			// The first disk dies for good.
			rule := tc.rule
			rule.Path = errorfs.Under(dirs[0])
			in := fsys.Inject(rule)
			appendSync(t, l, 6, 10)
			if in.Hits() == 0 {
				t.Fatal("the fault was never hit")
			}
			checkActive(t, l, false, true)
			ds := l.Dirs()
			if ds[0].Path != dirs[0] || ds[1].Path != dirs[1] {
				t.Fatalf("Dirs() paths %q, %q", ds[0].Path, ds[1].Path)
			}
			if ds[0].Err == "" || time.Since(ds[0].FailedAt) > time.Minute {
				t.Fatalf("failed dir reported as %+v", ds[0])
			}
			end, err := l.Roll()
			if err != nil || end != 10 {
				t.Fatalf("Roll = %d, %v", end, err)
			}
			if err := l.SaveImage(end, func(w io.Writer) error { _, err := io.WriteString(w, "image-10"); return err }); err != nil {
				t.Fatal(err)
			}
			appendSync(t, l, 11, 15)
			if err := l.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if has(listNames(t, dirs[0]), imageName(10)) {
				t.Fatal("the failed directory got the image")
			}

			// Restart with both: loads from the second, repopulates the first.
			fsys.Clear()
			l, got := mustOpenLoadDirs(t, dirs, Options{})
			if got.imageTxID != 10 || got.image != "image-10" {
				t.Fatalf("loaded image %d %q", got.imageTxID, got.image)
			}
			checkRecs(t, got.recs, 11, 15)
			checkActive(t, l, true, true)
			appendSync(t, l, 16, 17)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}

			// The first directory alone now holds everything.
			l, got = mustOpenLoad(t, dirs[0], Options{})
			defer l.Close()
			if got.imageTxID != 10 || got.image != "image-10" {
				t.Fatalf("repopulated directory: image %d %q", got.imageTxID, got.image)
			}
			checkRecs(t, got.recs, 11, 17)
		})
	}
}

// When every directory fails the log fails, as with one.
func TestDirsAllFail(t *testing.T) {
	dirs := formattedDirs(t, 2)
	fsys := errorfs.Wrap(nil)
	l, _ := mustOpenLoadDirs(t, dirs, Options{FS: fsys})
	appendSync(t, l, 1, 3)
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: errorfs.Under(dirs[0]), Err: syscall.EIO})
	appendSync(t, l, 4, 6)
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: errorfs.Under(dirs[1]), Err: syscall.ENOSPC})
	tx, err := l.Append([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(context.Background(), tx); !errors.Is(err, ErrFailed) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Sync with no directory left: %v", err)
	}
	if _, err := l.Append([]byte("y")); !errors.Is(err, ErrFailed) {
		t.Fatalf("Append with no directory left: %v", err)
	}
	if l.SyncedTxID() != 6 {
		t.Fatalf("SyncedTxID = %d", l.SyncedTxID())
	}
	checkActive(t, l, false, false)
	if err := l.Close(); !errors.Is(err, ErrFailed) {
		t.Fatalf("Close: %v", err)
	}
	fsys.Clear()
	l, got := mustOpenLoadDirs(t, dirs, Options{})
	defer l.Close()
	n := uint64(len(got.recs))
	if n < 6 || n > 7 {
		t.Fatalf("replayed %d records", n)
	}
	checkRecs(t, got.recs[:6], 1, 6)
}

// A wiped directory (a replaced disk) is repopulated from the other.
func TestDirsWipedRepopulated(t *testing.T) {
	dirs := formattedDirs(t, 2)
	l, _ := mustOpenLoadDirs(t, dirs, Options{})
	appendSync(t, l, 1, 8)
	end, err := l.Roll()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SaveImage(end, func(w io.Writer) error { _, err := io.WriteString(w, "img"); return err }); err != nil {
		t.Fatal(err)
	}
	appendSync(t, l, 9, 12)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, wiped := range []int{0, 1} {
		if err := os.RemoveAll(filepath.Join(dirs[wiped], currentDir)); err != nil {
			t.Fatal(err)
		}
		lg, logs := newLogger()
		l, got := mustOpenLoadDirs(t, dirs, Options{Logger: lg})
		if got.imageTxID != 8 || got.image != "img" {
			t.Fatalf("image %d %q", got.imageTxID, got.image)
		}
		checkRecs(t, got.recs, 9, 12)
		checkActive(t, l, true, true)
		if !strings.Contains(logs.String(), "repopulating storage directory") {
			t.Fatalf("no repopulation logged:\n%s", logs)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l, got = mustOpenLoad(t, dirs[wiped], Options{})
		checkRecs(t, got.recs, 9, 12)
		l.Close()
	}
	// Every directory wiped: not formatted.
	for _, d := range dirs {
		os.RemoveAll(filepath.Join(d, currentDir))
	}
	if _, err := OpenDirs(dirs, Options{}); !errors.Is(err, ErrNotFormatted) {
		t.Fatalf("OpenDirs of wiped directories: %v", err)
	}
	// A missing directory is refused (an unmounted disk).
	if _, err := OpenDirs([]string{dirs[0], filepath.Join(t.TempDir(), "missing")}, Options{}); !errors.Is(err, ErrNotFormatted) {
		t.Fatalf("OpenDirs with a missing directory: %v", err)
	}
}

// A directory whose in-progress segment lost its tail (torn, or cut
// short) loads the full history from the other and is repaired.
func TestDirsTornTail(t *testing.T) {
	dirs := formattedDirs(t, 2)
	l, _ := mustOpenLoadDirs(t, dirs, Options{})
	appendSync(t, l, 1, 10)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, damaged := range []int{0, 1} {
		path := segPath(dirs[damaged], 1)
		offs, _ := recordOffsets(t, path)
		// Cut into the middle of the last record: a torn tail.
		if err := os.Truncate(path, offs[len(offs)-1]+recordHeaderSize/2); err != nil {
			t.Fatal(err)
		}
		l, got := mustOpenLoadDirs(t, dirs, Options{})
		checkRecs(t, got.recs, 1, 10)
		checkActive(t, l, true, true)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l, got = mustOpenLoad(t, dirs[damaged], Options{})
		checkRecs(t, got.recs, 1, 10)
		l.Close()
	}
}

// A formatted directory that cannot be recovered stops Load: it might
// hold acknowledged edits the others lack.
func TestDirsCorruptRefused(t *testing.T) {
	dirs := formattedDirs(t, 2)
	l, _ := mustOpenLoadDirs(t, dirs, Options{})
	appendSync(t, l, 1, 5)
	l.Close()
	// A gap: the segment seen_txid names is gone from the second.
	l, _ = mustOpenLoadDirs(t, dirs, Options{})
	end, _ := l.Roll()
	appendSync(t, l, end+1, end+2)
	l.Close()
	if err := os.Remove(filepath.Join(dirs[1], currentDir, finalizedName(1, 5))); err != nil {
		t.Fatal(err)
	}
	l, _, err := openLoadDirs(t, dirs, Options{})
	l.Close()
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), dirs[1]) {
		t.Fatalf("Load with a damaged directory: %v", err)
	}
}

// A failing image write takes its directory out of service when another
// directory saved the image; when none could, the log goes on.
func TestDirsSaveImageFails(t *testing.T) {
	dirs := formattedDirs(t, 2)
	fsys := errorfs.Wrap(nil)
	l, _ := mustOpenLoadDirs(t, dirs, Options{FS: fsys})
	defer l.Close()
	appendSync(t, l, 1, 4)
	end, _ := l.Roll()
	isTmp := func(p string) bool { return strings.Contains(filepath.Base(p), imageTmpPrefix) }
	in := fsys.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: isTmp, Err: syscall.EIO})
	if err := l.SaveImage(end, nil); err == nil || !errors.Is(err, syscall.EIO) {
		t.Fatalf("SaveImage with no directory writable: %v", err)
	}
	checkActive(t, l, true, true)
	appendSync(t, l, 5, 6)
	in.Remove()
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: func(p string) bool { return isTmp(p) && errorfs.Under(dirs[1])(p) }, Err: syscall.EIO})
	end, _ = l.Roll()
	if err := l.SaveImage(end, nil); err != nil {
		t.Fatal(err)
	}
	checkActive(t, l, true, false)
	if !has(listNames(t, dirs[0]), imageName(end)) || has(listNames(t, dirs[1]), imageName(end)) {
		t.Fatal("image not where expected")
	}
	appendSync(t, l, 7, 8)
}

// The fsyncs of one round run on every directory at once: each Sync below
// waits until the other directory's is in progress too.
func TestDirsParallelSync(t *testing.T) {
	dirs := formattedDirs(t, 2)
	var armed atomic.Bool
	var mu sync.Mutex
	waiting := 0
	release := make(chan struct{})
	var rounds atomic.Int64
	wrap := func(sf segmentFile) segmentFile {
		return &barrierFile{segmentFile: sf, sync: func() error {
			if !armed.Load() {
				return nil
			}
			mu.Lock()
			waiting++
			ch := release
			if waiting == 2 {
				waiting = 0
				close(release)
				release = make(chan struct{})
				rounds.Add(1)
			}
			mu.Unlock()
			select {
			case <-ch:
				return nil
			case <-time.After(5 * time.Second):
				return errors.New("the other directory's fsync did not run concurrently")
			}
		}}
	}
	l, _ := mustOpenLoadDirs(t, dirs, Options{wrapFile: wrap, SegmentPreallocation: -1})
	defer l.Close()
	armed.Store(true)
	appendSync(t, l, 1, 3)
	appendSync(t, l, 4, 4)
	armed.Store(false)
	checkActive(t, l, true, true)
	if rounds.Load() != 2 {
		t.Fatalf("%d parallel rounds, want 2", rounds.Load())
	}
}

type barrierFile struct {
	segmentFile
	sync func() error
}

func (b *barrierFile) Sync() error {
	if err := b.sync(); err != nil {
		return err
	}
	return b.segmentFile.Sync()
}
