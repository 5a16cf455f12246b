package editlog

import (
	"os"
	"path/filepath"
	"testing"
)

// wantModes checks that dir, current/ and every file in current/ are
// closed to group and other (they hold delegation master keys).
func wantModes(t *testing.T, dir string) {
	t.Helper()
	cur := filepath.Join(dir, currentDir)
	for _, d := range []string{dir, cur} {
		st, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != dirPerm {
			t.Errorf("%s: mode %v, want %v", d, st.Mode().Perm(), dirPerm)
		}
	}
	ents, err := os.ReadDir(cur)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v is open to others", e.Name(), info.Mode().Perm())
		}
		files++
	}
	if files < 3 { // VERSION, seen_txid, an image, a segment
		t.Fatalf("only %d files in %s", files, cur)
	}
}

func TestStoragePrivate(t *testing.T) {
	dir := formatted(t)
	l, _ := mustOpenLoad(t, dir, Options{})
	appendSync(t, l, 1, 10)
	if _, err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	if err := l.SaveImage(10, nil); err != nil {
		t.Fatal(err)
	}
	appendSync(t, l, 11, 15)
	wantModes(t, dir)
	l.Close()

	// A storage made by an older version (0755/0644) is tightened on
	// start.
	cur := filepath.Join(dir, currentDir)
	ents, _ := os.ReadDir(cur)
	for _, e := range ents {
		os.Chmod(filepath.Join(cur, e.Name()), 0o644)
	}
	os.Chmod(cur, 0o755)
	os.Chmod(dir, 0o755)
	l, _ = mustOpenLoad(t, dir, Options{})
	defer l.Close()
	wantModes(t, dir)
}
