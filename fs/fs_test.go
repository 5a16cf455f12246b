package fs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
)

// stubFS is a FileSystem that only knows its URI and home; other methods
// panic (the embedded interface is nil).
type stubFS struct {
	FileSystem
	u      *url.URL
	home   string
	closed *int
}

func (s *stubFS) URI() *url.URL { return s.u }
func (s *stubFS) Home() string  { return s.home }
func (s *stubFS) Close() error {
	if s.closed != nil {
		*s.closed++
	}
	return nil
}

var stubOpens int

func init() {
	Register("stubfs", func(ctx context.Context, u *url.URL, env Env) (FileSystem, error) {
		stubOpens++
		return &stubFS{u: &url.URL{Scheme: u.Scheme, Host: u.Host}, home: "/user/" + env.User}, nil
	})
}

func stubEnv(defaultFS string) Env {
	c := conf.New()
	if defaultFS != "" {
		c.Set(KeyDefaultFS, defaultFS)
	}
	return Env{Conf: c, User: "alice"}
}

func TestResolve(t *testing.T) {
	ctx := context.Background()
	env := stubEnv("stubfs://nn:8020")
	tests := []struct {
		arg, uri, path string
	}{
		{"/a/b", "stubfs://nn:8020", "/a/b"},
		{"/a/b/", "stubfs://nn:8020", "/a/b"},
		{"//a//b//", "stubfs://nn:8020", "/a/b"},
		{"/a/./b/../c", "stubfs://nn:8020", "/a/c"},
		{"/..", "stubfs://nn:8020", "/"},
		{"/", "stubfs://nn:8020", "/"},
		{"x", "stubfs://nn:8020", "/user/alice/x"},
		{".", "stubfs://nn:8020", "/user/alice"},
		{"x/y/", "stubfs://nn:8020", "/user/alice/x/y"},
		{"../bob/x", "stubfs://nn:8020", "/user/bob/x"},
		{"../../../..", "stubfs://nn:8020", "/"},
		{"stubfs://other:9000/p/q", "stubfs://other:9000", "/p/q"},
		{"stubfs://other:9000", "stubfs://other:9000", "/"},
		{"stubfs:///p", "stubfs://nn:8020", "/p"},
		{"stubfs:/p/../r", "stubfs://nn:8020", "/r"},
		{"STUBFS://nn:8020/p", "stubfs://nn:8020", "/p"},
		{"a:b", "stubfs://nn:8020", "/user/alice/a:b"},
	}
	for _, tt := range tests {
		fsys, p, err := Resolve(ctx, tt.arg, env)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tt.arg, err)
			continue
		}
		if got := fsys.URI().Scheme + "://" + fsys.URI().Host; got != tt.uri || p != tt.path {
			t.Errorf("Resolve(%q) = %s %s, want %s %s", tt.arg, got, p, tt.uri, tt.path)
		}
		if got, want := Qualify(fsys, p), tt.uri+tt.path; got != want {
			t.Errorf("Qualify(%q) = %s, want %s", tt.arg, got, want)
		}
		fsys.Close()
	}
}

func TestResolveLocal(t *testing.T) {
	ctx := context.Background()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	wd = filepath.ToSlash(wd)
	for _, env := range []Env{stubEnv(""), stubEnv("file:///"), {}} {
		for _, tt := range []struct{ arg, path string }{
			{"/tmp/x/", "/tmp/x"},
			{"file:///tmp/../etc", "/etc"},
			{"file:/tmp", "/tmp"},
			{"rel/y", wd + "/rel/y"},
		} {
			fsys, p, err := Resolve(ctx, tt.arg, env)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.arg, err)
			}
			if p != tt.path || fsys.URI().Scheme != "file" {
				t.Errorf("Resolve(%q) = %s %s, want file %s", tt.arg, fsys.URI(), p, tt.path)
			}
			if got := Qualify(fsys, "/tmp"); got != "file:///tmp" {
				t.Errorf("Qualify = %s", got)
			}
		}
	}
}

func TestResolveErrors(t *testing.T) {
	ctx := context.Background()
	env := stubEnv("")
	if _, _, err := Resolve(ctx, "", env); err == nil || !errors.Is(err, ErrInvalid) {
		t.Errorf("empty arg: err = %v", err)
	}
	_, _, err := Resolve(ctx, "nosuch://h/x", env)
	if err == nil || err.Error() != `No FileSystem for scheme "nosuch"` || !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown scheme: err = %v", err)
	}
	if _, err := Get(ctx, "nosuch:///", env); err == nil {
		t.Error("Get of unknown scheme succeeded")
	}
	// A bare host:port default is taken as hdfs, as Hadoop does.
	u, err := DefaultURI(stubEnv("nn:8020").Conf)
	if err != nil || u.String() != "hdfs://nn:8020" {
		t.Errorf("DefaultURI(nn:8020) = %v, %v", u, err)
	}
}

func TestCache(t *testing.T) {
	ctx := context.Background()
	c := NewCache(stubEnv("stubfs://nn:8020"))
	before := stubOpens
	a, _, err := c.Resolve(ctx, "/x")
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := c.Resolve(ctx, "stubfs://NN:8020/y")
	d, _ := c.Get(ctx, "stubfs:///")
	if a != b || a != d || stubOpens-before != 1 {
		t.Errorf("cache opened %d file systems, want 1", stubOpens-before)
	}
	e, _ := c.Get(ctx, "stubfs://other:1/")
	if e == a {
		t.Error("different authority shared a FileSystem")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "/"); err == nil {
		t.Error("Get after Close succeeded")
	}
}

func TestUmask(t *testing.T) {
	for v, want := range map[string]uint16{
		"":                0o022,
		"022":             0o022,
		"0077":            0o077,
		"u=rwx,g=rwx,o=":  0o007,
		"u=rwx,g=rx,o=rx": 0o022,
		"bogus":           0o022,
	} {
		c := conf.New()
		if v != "" {
			c.Set(KeyUmask, v)
		}
		if got := Umask(c); got != want {
			t.Errorf("Umask(%q) = %o, want %o", v, got, want)
		}
	}
}

func TestCurrentUser(t *testing.T) {
	t.Setenv("HADOOP_USER_NAME", "hdfsuser")
	if got := CurrentUser(); got != "hdfsuser" {
		t.Errorf("CurrentUser = %q", got)
	}
	if got := (Env{}).WithDefaults(); got.User != "hdfsuser" || got.Conf == nil {
		t.Errorf("WithDefaults = %+v", got)
	}
}

func newLocal(t *testing.T) (FileSystem, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return NewLocal(Env{User: "tester"}), filepath.ToSlash(dir)
}

func writeFile(t *testing.T, fsys FileSystem, p, data string, opts CreateOptions) {
	t.Helper()
	w, err := fsys.Create(context.Background(), p, opts)
	if err != nil {
		t.Fatalf("Create(%s): %v", p, err)
	}
	if _, err := io.WriteString(w, data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLocalBasics(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newLocal(t)
	if err := fsys.Mkdirs(ctx, dir+"/a/b/c", 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, fsys, dir+"/a/f", "hello", CreateOptions{})
	st, err := fsys.Stat(ctx, dir+"/a/f")
	if err != nil {
		t.Fatal(err)
	}
	if st.IsDir || st.Length != 5 || st.Replication != 1 || st.BlockSize != 32<<20 ||
		st.Perm != 0o644 || st.Owner == "" || st.Group == "" || st.Name() != "f" || st.Path != dir+"/a/f" {
		t.Errorf("Stat = %+v", st)
	}
	dst, err := fsys.Stat(ctx, dir+"/a/b")
	if err != nil || !dst.IsDir || dst.Perm != 0o755 || dst.Length != 0 || dst.Replication != 0 {
		t.Errorf("Stat dir = %+v, %v", dst, err)
	}
	ls, err := fsys.List(ctx, dir+"/a")
	if err != nil || len(ls) != 2 || ls[0].Name() != "b" || ls[1].Name() != "f" {
		t.Errorf("List = %+v, %v", ls, err)
	}
	ls, err = fsys.List(ctx, dir+"/a/f")
	if err != nil || len(ls) != 1 || ls[0].Path != dir+"/a/f" {
		t.Errorf("List(file) = %+v, %v", ls, err)
	}

	r, err := fsys.Open(ctx, dir+"/a/f")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if string(b) != "hello" {
		t.Errorf("read %q", b)
	}

	if err := fsys.SetPermission(ctx, dir+"/a/b", 0o1777); err != nil {
		t.Fatal(err)
	}
	if st, _ := fsys.Stat(ctx, dir+"/a/b"); st.Perm != 0o1777 {
		t.Errorf("perm after SetPermission = %o", st.Perm)
	}
	mt := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	at := time.Date(2021, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := fsys.SetTimes(ctx, dir+"/a/f", mt, at); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SetTimes(ctx, dir+"/a/f", time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	st, _ = fsys.Stat(ctx, dir+"/a/f")
	if !st.ModTime.Equal(mt) || (!st.AccessTime.IsZero() && !st.AccessTime.Equal(at)) {
		t.Errorf("times = %v %v", st.ModTime, st.AccessTime)
	}
	// Chown to ourselves is always allowed.
	if err := fsys.SetOwner(ctx, dir+"/a/f", st.Owner, st.Group); err != nil {
		t.Errorf("SetOwner to self: %v", err)
	}
	if err := fsys.SetOwner(ctx, dir+"/a/f", "no-such-user-xyz", ""); err == nil {
		t.Error("SetOwner to an unknown user succeeded")
	}

	cs, err := fsys.ContentSummary(ctx, dir+"/a")
	if err != nil || cs.DirectoryCount != 3 || cs.FileCount != 1 || cs.Length != 5 ||
		cs.SpaceConsumed != 5 || cs.Quota != -1 || cs.SpaceQuota != -1 {
		t.Errorf("ContentSummary = %+v, %v", cs, err)
	}
	if cs, _ := fsys.ContentSummary(ctx, dir+"/a/f"); cs.FileCount != 1 || cs.DirectoryCount != 0 || cs.Length != 5 {
		t.Errorf("ContentSummary(file) = %+v", cs)
	}
	if st, err := fsys.Status(ctx); err != nil || st.Capacity <= 0 || st.Used+st.Remaining != st.Capacity {
		t.Errorf("Status = %+v, %v", st, err)
	}
	if err := fsys.(Accessor).Access(ctx, dir+"/a/f", AccessRead|AccessWrite); err != nil {
		t.Errorf("Access: %v", err)
	}
}

func TestLocalRename(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newLocal(t)
	fsys.Mkdirs(ctx, dir+"/d", 0)
	writeFile(t, fsys, dir+"/f", "1", CreateOptions{})
	writeFile(t, fsys, dir+"/g", "2", CreateOptions{})
	// Into an existing directory.
	if err := fsys.Rename(ctx, dir+"/f", dir+"/d"); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat(ctx, dir+"/d/f"); err != nil {
		t.Errorf("file not moved into dir: %v", err)
	}
	// Plain rename.
	if err := fsys.Rename(ctx, dir+"/d/f", dir+"/h"); err != nil {
		t.Fatal(err)
	}
	// Onto an existing file.
	if err := fsys.Rename(ctx, dir+"/h", dir+"/g"); !errors.Is(err, os.ErrExist) {
		t.Errorf("rename onto file: %v", err)
	}
	// Into a dir that already holds the name.
	writeFile(t, fsys, dir+"/d/g", "x", CreateOptions{})
	if err := fsys.Rename(ctx, dir+"/g", dir+"/d"); !errors.Is(err, os.ErrExist) {
		t.Errorf("rename into dir holding name: %v", err)
	}
	if err := fsys.Rename(ctx, dir+"/nope", dir+"/x"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("rename missing: %v", err)
	}
	if err := fsys.Rename(ctx, dir+"/h", dir+"/nodir/x"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("rename to missing parent: %v", err)
	}
	if err := fsys.Rename(ctx, dir+"/d", dir+"/d/sub"); !errors.Is(err, ErrInvalid) {
		t.Errorf("rename into itself: %v", err)
	}
}

func TestLocalErrors(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newLocal(t)
	fsys.Mkdirs(ctx, dir+"/d/sub", 0)
	writeFile(t, fsys, dir+"/f", "data", CreateOptions{})

	check := func(name string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: err = %v, want %v", name, err, want)
		}
	}
	_, err := fsys.Stat(ctx, dir+"/missing")
	check("Stat missing", err, os.ErrNotExist)
	_, err = fsys.List(ctx, dir+"/missing")
	check("List missing", err, os.ErrNotExist)
	_, err = fsys.Stat(ctx, dir+"/f/x")
	check("Stat under file", err, ErrNotDir)
	check("Mkdirs on file", fsys.Mkdirs(ctx, dir+"/f", 0), os.ErrExist)
	check("Mkdirs under file", fsys.Mkdirs(ctx, dir+"/f/x", 0), ErrNotDir)
	if err := fsys.Mkdirs(ctx, dir+"/d", 0); err != nil {
		t.Errorf("Mkdirs existing dir: %v", err)
	}
	check("Delete missing", fsys.Delete(ctx, dir+"/missing", false), os.ErrNotExist)
	err = fsys.Delete(ctx, dir+"/d", false)
	check("Delete non-empty", err, ErrNotEmpty)
	if errors.Is(err, os.ErrExist) {
		t.Errorf("Delete non-empty also matches ErrExist: %v", err)
	}
	check("Delete root", fsys.Delete(ctx, "/", true), ErrInvalid)
	_, err = fsys.Create(ctx, dir+"/f", CreateOptions{})
	check("Create existing", err, os.ErrExist)
	_, err = fsys.Create(ctx, dir+"/d", CreateOptions{Overwrite: true})
	check("Create on dir", err, ErrIsDir)
	_, err = fsys.Create(ctx, dir+"/nodir/x", CreateOptions{})
	check("Create without parent", err, os.ErrNotExist)
	_, err = fsys.Create(ctx, dir+"/f/x", CreateOptions{CreateParent: true})
	check("Create under file", err, ErrNotDir)
	_, err = fsys.Open(ctx, dir+"/d")
	check("Open dir", err, ErrIsDir)
	_, err = fsys.Open(ctx, dir+"/missing")
	check("Open missing", err, os.ErrNotExist)
	_, err = fsys.ContentSummary(ctx, dir+"/missing")
	check("ContentSummary missing", err, os.ErrNotExist)
	check("SetPermission missing", fsys.SetPermission(ctx, dir+"/missing", 0o600), os.ErrNotExist)
	check("SetTimes missing", fsys.SetTimes(ctx, dir+"/missing", time.Now(), time.Time{}), os.ErrNotExist)
	check("SetOwner unknown", fsys.SetOwner(ctx, dir+"/f", "", "no-such-group-xyz"), ErrInvalid)

	// Overwrite and CreateParent.
	writeFile(t, fsys, dir+"/f", "new", CreateOptions{Overwrite: true, Perm: 0o600})
	if st, _ := fsys.Stat(ctx, dir+"/f"); st.Length != 3 || st.Perm != 0o600 {
		t.Errorf("overwritten file = %+v", st)
	}
	writeFile(t, fsys, dir+"/p/q/r", "", CreateOptions{CreateParent: true})
	if st, err := fsys.Stat(ctx, dir+"/p/q"); err != nil || !st.IsDir || st.Perm != 0o755 {
		t.Errorf("created parent = %+v, %v", st, err)
	}
	if err := fsys.Delete(ctx, dir+"/p", true); err != nil {
		t.Errorf("recursive delete: %v", err)
	}

	if os.Geteuid() != 0 {
		fsys.Mkdirs(ctx, dir+"/ro", 0o555)
		_, err = fsys.Create(ctx, dir+"/ro/x", CreateOptions{})
		check("Create in read-only dir", err, os.ErrPermission)
		check("Access write on read-only dir", fsys.(Accessor).Access(ctx, dir+"/ro", AccessWrite), os.ErrPermission)
		check("Chown to root", fsys.SetOwner(ctx, dir+"/f", "root", ""), os.ErrPermission)
	}
	if strings.Contains(fsys.URI().String(), "//") == false {
		t.Errorf("URI = %s", fsys.URI())
	}
}

func TestLocalUmask(t *testing.T) {
	ctx := context.Background()
	c := conf.New()
	c.Set(KeyUmask, "077")
	fsys := NewLocal(Env{Conf: c})
	dir := filepath.ToSlash(t.TempDir())
	if err := fsys.Mkdirs(ctx, dir+"/x/y", 0o777); err != nil {
		t.Fatal(err)
	}
	writeFile(t, fsys, dir+"/x/f", "", CreateOptions{})
	for p, want := range map[string]uint16{"/x": 0o700, "/x/y": 0o700, "/x/f": 0o600} {
		if st, _ := fsys.Stat(ctx, dir+p); st.Perm != want {
			t.Errorf("%s perm = %o, want %o", p, st.Perm, want)
		}
	}
}

// Rename2 renames to exactly dst: an existing directory there is not
// entered (os.ErrExist) unless overwrite replaces an empty one.
func TestLocalRename2(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newLocal(t)
	r := fsys.(ExactRenamer)
	fsys.Mkdirs(ctx, dir+"/d", 0)
	writeFile(t, fsys, dir+"/f", "1", CreateOptions{})
	if err := r.Rename2(ctx, dir+"/f", dir+"/d", false); !errors.Is(err, os.ErrExist) {
		t.Fatalf("rename2 onto a directory: %v", err)
	}
	if _, err := fsys.Stat(ctx, dir+"/d/f"); err == nil {
		t.Fatal("rename2 moved the file into the directory")
	}
	if err := r.Rename2(ctx, dir+"/f", dir+"/missing/f", false); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("rename2 under a missing parent: %v", err)
	}
	if err := r.Rename2(ctx, dir+"/f", dir+"/g", false); err != nil {
		t.Fatal(err)
	}
	writeFile(t, fsys, dir+"/h", "2", CreateOptions{})
	if err := r.Rename2(ctx, dir+"/h", dir+"/g", true); err != nil {
		t.Fatalf("rename2 with overwrite: %v", err)
	}
	if err := r.Rename2(ctx, dir+"/d", dir+"/d/e", false); !errors.Is(err, ErrInvalid) {
		t.Fatalf("rename2 into itself: %v", err)
	}
}

// TestLocalWriteBehind: bytes written in odd-sized pieces past several
// write-behind windows, with and without NoSync, and through ReadFrom, read
// back exactly.
func TestLocalWriteBehind(t *testing.T) {
	l := NewLocal(Env{})
	dir := t.TempDir()
	data := make([]byte, 3*8<<20+12345)
	for i := range data {
		data[i] = byte(i * 7 / 5)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		nosync   bool
		readFrom bool
	}{{"sync", false, false}, {"nosync", true, false}, {"readfrom", false, true}} {
		p := dir + "/" + tc.name
		w, err := l.Create(ctx, p, CreateOptions{NoSync: tc.nosync})
		if err != nil {
			t.Fatal(err)
		}
		if tc.readFrom {
			if _, err := io.Copy(w, struct{ io.Reader }{bytes.NewReader(data)}); err != nil {
				t.Fatal(err)
			}
		} else {
			for off, n := 0, 1; off < len(data); off, n = off+n, n*3%1000003+1 {
				if _, err := w.Write(data[off:min(off+n, len(data))]); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: read back %d bytes (%v), want the %d written", tc.name, len(got), err, len(data))
		}
	}
}
