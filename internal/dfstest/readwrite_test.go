package dfstest

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	gohdfs "github.com/colinmarc/hdfs/v2"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/testcluster"
)

func goClient(t *testing.T, c *testcluster.Cluster, user string) *gohdfs.Client {
	t.Helper()
	cl, err := gohdfs.NewClient(gohdfs.ClientOptions{Addresses: []string{c.Addr()}, User: user})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func randBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

const smallBlock = 1 << 20 // 1 MiB blocks so several-block files stay small

var sizes = []int{0, 1, 511, 512, 513, 64 << 10, 1<<20 + 1, 3*smallBlock + 12345}

// TestGoClientWritesAndReads writes files of awkward sizes with
// colinmarc/hdfs and reads them back with it and with strata's client.
func TestGoClientWritesAndReads(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 3})
	g := goClient(t, c, c.Superuser())
	mine := c.Client(c.Superuser())
	ctx := context.Background()
	for i, n := range sizes {
		data := randBytes(n, uint64(i))
		p := fmt.Sprintf("/go/f%d", n)
		if err := g.MkdirAll("/go", 0o755); err != nil {
			t.Fatal(err)
		}
		w, err := g.CreateFile(p, 3, smallBlock, 0o644)
		if err != nil {
			t.Fatalf("%d bytes: create: %v", n, err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatalf("%d bytes: write: %v", n, err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%d bytes: close: %v", n, err)
		}
		got, err := g.ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: colinmarc read back %d bytes, equal=%v, err %v", n, len(got), bytes.Equal(got, data), err)
		}
		f, err := mine.OpenFile(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		got2, err := io.ReadAll(f)
		f.Close()
		if err != nil || !bytes.Equal(got2, data) {
			t.Fatalf("%d bytes: strata read back %d bytes, err %v", n, len(got2), err)
		}
		// Random reads at awkward offsets.
		if n > 2000 {
			for _, off := range []int64{1, 511, 512, 513, int64(n) - 700} {
				buf := make([]byte, 600)
				m, err := f.ReadAt(buf, off)
				if err != nil && err != io.EOF || !bytes.Equal(buf[:m], data[off:off+int64(m)]) {
					t.Fatalf("%d bytes: ReadAt(%d): %d bytes, %v", n, off, m, err)
				}
			}
		}
	}
}

// TestStrataClientWritesGoClientReads goes the other way.
func TestStrataClientWritesGoClientReads(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 3})
	g := goClient(t, c, c.Superuser())
	mine := c.Client(c.Superuser())
	ctx := context.Background()
	for i, n := range sizes {
		data := randBytes(n, uint64(100+i))
		p := fmt.Sprintf("/mine/f%d", n)
		w, err := mine.CreateFile(ctx, p, fs.CreateOptions{CreateParent: true, BlockSize: smallBlock, Replication: 2})
		if err != nil {
			t.Fatal(err)
		}
		// Odd-sized writes exercise packet boundaries.
		for off := 0; off < n; off += 7777 {
			if _, err := w.Write(data[off:min(n, off+7777)]); err != nil {
				t.Fatalf("%d bytes: write: %v", n, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%d bytes: close: %v", n, err)
		}
		got, err := g.ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: colinmarc read back %d bytes, err %v", n, len(got), err)
		}
		st, err := g.Stat(p)
		if err != nil || st.Size() != int64(n) {
			t.Fatalf("%d bytes: stat says %v, %v", n, st, err)
		}
	}
}

// TestAppend appends with colinmarc to a partial last chunk, to a full
// block, and to an empty file.
func TestAppend(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 3})
	g := goClient(t, c, c.Superuser())
	cases := []struct {
		name          string
		first, second int
	}{
		{"partial chunk", 700, 1000},
		{"chunk boundary", 1024, 513},
		{"full block", smallBlock, 1000},
		{"empty file", 0, 5000},
	}
	for i, tc := range cases {
		p := fmt.Sprintf("/append/%d", i)
		a, b := randBytes(tc.first, uint64(i)), randBytes(tc.second, uint64(i+50))
		g.MkdirAll("/append", 0o755)
		w, err := g.CreateFile(p, 3, smallBlock, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(a)
		if err := w.Close(); err != nil {
			t.Fatalf("%s: close: %v", tc.name, err)
		}
		aw, err := g.Append(p)
		if err != nil {
			t.Fatalf("%s: append: %v", tc.name, err)
		}
		if _, err := aw.Write(b); err != nil {
			t.Fatalf("%s: append write: %v", tc.name, err)
		}
		if err := aw.Close(); err != nil {
			t.Fatalf("%s: append close: %v", tc.name, err)
		}
		got, err := g.ReadFile(p)
		want := append(append([]byte{}, a...), b...)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: read %d bytes (want %d), err %v", tc.name, len(got), len(want), err)
		}
	}
}

// TestFileChecksum checks the MD5-of-MD5-of-CRC32C file checksum against
// the known value for "bar\n" and between two copies of the same data.
func TestFileChecksum(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 3})
	g := goClient(t, c, c.Superuser())
	w, err := g.CreateFile("/bar", 3, smallBlock, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("bar\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := g.Open("/bar")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := f.Checksum()
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(sum); got != "27c076e4987344253650d3335a5d08ce" {
		t.Errorf("checksum of bar\\n = %s", got)
	}
	data := randBytes(2*smallBlock+999, 3)
	for _, p := range []string{"/c1", "/c2"} {
		w, _ := g.CreateFile(p, 2, smallBlock, 0o644)
		w.Write(data)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s1, s2 := checksumOf(t, g, "/c1"), checksumOf(t, g, "/c2")
	if !bytes.Equal(s1, s2) {
		t.Errorf("same data, different checksums: %x %x", s1, s2)
	}
	_ = md5.Size
}

func checksumOf(t *testing.T, g *gohdfs.Client, p string) []byte {
	f, err := g.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := f.Checksum()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
