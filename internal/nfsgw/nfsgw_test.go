package nfsgw_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	nfsc "github.com/willscott/go-nfs-client/nfs"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/gwtest"
	"github.com/stratafs/strata/internal/nfsclient"
	"github.com/stratafs/strata/internal/nfsgw"
	"github.com/stratafs/strata/internal/testcluster"
)

// Test users: uid 0 is the cluster's superuser, 1001 alice, 1002 bob.
const (
	uidRoot  = 0
	uidAlice = 1001
	uidBob   = 1002
)

type env struct {
	t   testing.TB
	c   *testcluster.Cluster
	ids gwtest.IDs
	su  *hdfs.Client // the superuser, straight to HDFS

	blockSize int64 // of files the gateway writes; small to cross blocks
}

func newEnv(t testing.TB) *env {
	c := testcluster.New(t, testcluster.Config{DataNodes: 1})
	c.WaitDataNodes(1)
	return &env{t: t, c: c, su: c.Client(c.Superuser()), blockSize: 1 << 20,
		ids: gwtest.IDs{uidRoot: c.Superuser(), uidAlice: "alice", uidBob: "bob"}}
}

// gateway starts a gateway on a fresh port and returns its address.
func (e *env) gateway() (string, *nfsgw.Gateway) {
	return e.gatewayWith(nfsgw.Options{StableWriteWait: 20 * time.Second})
}

func (e *env) gatewayWith(o nfsgw.Options) (string, *nfsgw.Gateway) {
	factory := gwtest.ClientFactory(e.c, hdfs.Options{Replication: 1, BlockSize: e.blockSize})
	o.IDs = e.ids
	return gwtest.ServeNFS(e.t, factory, o)
}

type mount struct{ *nfsclient.Conn }

func (e *env) mount(addr string, uid uint32) *mount {
	e.t.Helper()
	c, err := nfsclient.Dial(addr, "/", uid, uid)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(c.Close)
	return &mount{c}
}

// write sends one WRITE RPC and returns its NFS status and the stability
// the server reports.
func (m *mount) write(t testing.TB, fh []byte, off uint64, data []byte, how uint32) (status, committed uint32) {
	t.Helper()
	committed, err := m.Write(fh, off, data, how)
	var se *nfsclient.StatusError
	if errors.As(err, &se) {
		return se.Status, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, committed
}

// commit sends one COMMIT RPC and returns its NFS status.
func (m *mount) commit(t testing.TB, fh []byte) uint32 {
	t.Helper()
	err := m.Commit(fh)
	var se *nfsclient.StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

func (m *mount) readAll(t testing.TB, p string) []byte {
	t.Helper()
	f, err := m.Open(p)
	if err != nil {
		t.Fatalf("open %s over NFS: %v", p, err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("read %s over NFS: %v", p, err)
	}
	return b
}

func (e *env) hdfsRead(p string) []byte {
	e.t.Helper()
	f, err := e.su.Open(context.Background(), p)
	if err != nil {
		e.t.Fatalf("open %s in HDFS: %v", p, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		e.t.Fatalf("read %s in HDFS: %v", p, err)
	}
	return b
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func names(entries []*nfsc.EntryPlus) map[string]bool {
	out := map[string]bool{}
	for _, e := range entries {
		out[e.FileName] = true
	}
	return out
}

func TestGateway(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	addr, _ := e.gateway()
	root := e.mount(addr, uidRoot)

	if _, err := root.Mkdir("/nfs", 0o755); err != nil {
		t.Fatalf("mkdir: %v", err)
	}
	if _, err := root.Mkdir("/nfs/d", 0o750); err != nil {
		t.Fatalf("mkdir: %v", err)
	}
	if st, err := e.su.Stat(ctx, "/nfs/d"); err != nil || !st.IsDir || st.Perm != 0o750 {
		t.Fatalf("HDFS sees /nfs/d as %+v, %v; want a directory with mode 0750", st, err)
	}

	// A multi-block file through the client's own writes (FILE_SYNC
	// WRITEs of the 1 MiB the gateway advertises, then COMMIT on Close).
	data := randomBytes(5<<20+12345, 1)
	f, err := root.OpenFile("/nfs/big", 0o644)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	for off := 0; off < len(data); off += 700 << 10 {
		if _, err := f.Write(data[off:min(off+700<<10, len(data))]); err != nil {
			t.Fatalf("write at %d: %v", off, err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close (COMMIT): %v", err)
	}
	if got := root.readAll(t, "/nfs/big"); !bytes.Equal(got, data) {
		t.Fatalf("NFS read back %d bytes, want the %d written", len(got), len(data))
	}
	if got := e.hdfsRead("/nfs/big"); !bytes.Equal(got, data) {
		t.Fatalf("HDFS read back %d bytes, want the %d written", len(got), len(data))
	}

	// Directory listing, also of what HDFS made.
	if err := e.su.Mkdir(ctx, "/nfs/fromhdfs", 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := root.ReadDirPlus("/nfs")
	if err != nil {
		t.Fatalf("readdirplus: %v", err)
	}
	if n := names(entries); !n["d"] || !n["big"] || !n["fromhdfs"] {
		t.Fatalf("readdirplus /nfs = %v, want d, big and fromhdfs", n)
	}
	for _, en := range entries {
		if en.FileName == "big" && en.Size() != int64(len(data)) {
			t.Fatalf("readdirplus size of big = %d, want %d", en.Size(), len(data))
		}
	}

	// A directory of many entries takes many READDIRPLUS pages.
	for i := range 300 {
		if err := e.su.Mkdir(ctx, fmt.Sprintf("/nfs/fromhdfs/%03d", i), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	many, err := root.ReadDirPlus("/nfs/fromhdfs")
	if err != nil {
		t.Fatalf("readdirplus of 300 entries: %v", err)
	}
	if n := names(many); len(n) != 300 || !n["000"] || !n["299"] {
		t.Fatalf("readdirplus of 300 entries returned %d names", len(n))
	}
	if err := e.su.Delete(ctx, "/nfs/fromhdfs", true); err != nil {
		t.Fatal(err)
	}
	if err := e.su.Mkdir(ctx, "/nfs/fromhdfs", 0o755); err != nil {
		t.Fatal(err)
	}

	// Rename, then the handle taken before still reads the file.
	_, fhBig, err := root.Lookup("/nfs/big")
	if err != nil {
		t.Fatal(err)
	}
	if err := root.Rename("/nfs/big", "/nfs/d/moved"); err != nil {
		t.Fatalf("rename: %v", err)
	}
	if _, err := e.su.Stat(ctx, "/nfs/big"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("old name after rename: %v, want not found", err)
	}
	if got := e.hdfsRead("/nfs/d/moved"); !bytes.Equal(got, data) {
		t.Fatal("renamed file differs in HDFS")
	}
	if attr, err := root.GetAttr(fhBig); err != nil || attr.Size() != int64(len(data)) {
		t.Fatalf("getattr by the pre-rename handle: %v, %v", attr, err)
	}

	// Overwriting written bytes in the middle is refused; resending the
	// same bytes (a retransmission) is accepted.
	_, fh, err := root.Lookup("/nfs/d/moved")
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := root.write(t, fh, 1000, []byte("different bytes"), 2); st != uint32(1) {
		t.Fatalf("overwrite in the middle: status %d, want NFS3ERR_PERM (1)", st)
	}
	if st, _ := root.write(t, fh, 1000, data[1000:5000], 2); st != 0 {
		t.Fatalf("retransmitted WRITE of identical bytes: status %d, want NFS3_OK", st)
	}
	if st := root.commit(t, fh); st != 0 {
		t.Fatalf("COMMIT: status %d", st)
	}
	if got := e.hdfsRead("/nfs/d/moved"); !bytes.Equal(got, data) {
		t.Fatal("file changed after the refused overwrite")
	}

	// SETATTR: mode, owner, and a cut to a shorter length (HDFS truncate).
	if err := root.Setattr("/nfs/d/moved", nfsc.Sattr3{Mode: nfsc.SetMode{SetIt: true, Mode: 0o600}}); err != nil {
		t.Fatalf("chmod: %v", err)
	}
	if err := root.Setattr("/nfs/d/moved", nfsc.Sattr3{UID: nfsc.SetUID{SetIt: true, UID: uidAlice}}); err != nil {
		t.Fatalf("chown: %v", err)
	}
	if st, err := e.su.Stat(ctx, "/nfs/d/moved"); err != nil || st.Perm != 0o600 || st.Owner != "alice" {
		t.Fatalf("after chmod and chown: %+v, %v; want mode 0600, owner alice", st, err)
	}
	if err := root.Setattr("/nfs/d/moved", nfsc.Sattr3{Size: nfsc.SetSize{SetIt: true, Size: 1000}}); err != nil {
		t.Fatalf("truncate: %v", err)
	}
	if got := e.hdfsRead("/nfs/d/moved"); !bytes.Equal(got, data[:1000]) {
		t.Fatalf("after truncate to 1000: %d bytes", len(got))
	}
	if err := root.Setattr("/nfs/d/moved", nfsc.Sattr3{Size: nfsc.SetSize{SetIt: true, Size: 5000}}); err == nil {
		t.Fatal("growing a file through SETATTR succeeded")
	}

	// Remove.
	if err := root.Remove("/nfs/d/moved"); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if _, err := e.su.Stat(ctx, "/nfs/d/moved"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after remove: %v, want not found", err)
	}
	if err := root.RmDir("/nfs/fromhdfs"); err != nil {
		t.Fatalf("rmdir: %v", err)
	}
	if _, err := e.su.Stat(ctx, "/nfs/fromhdfs"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after rmdir: %v, want not found", err)
	}
}

// WRITEs arriving out of order, from several goroutines, stable and
// unstable, end up as the right bytes.
func TestOutOfOrderWrites(t *testing.T) {
	e := newEnv(t)
	addr, _ := e.gateway()
	root := e.mount(addr, uidRoot)

	const chunk = 256 << 10
	data := randomBytes(24*chunk+777, 2)
	fh, err := root.Create("/ooo", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var chunks [][2]int
	for off := 0; off < len(data); off += chunk {
		chunks = append(chunks, [2]int{off, min(off+chunk, len(data))})
	}
	// Last chunk first, the rest shuffled over four senders. One sender
	// asks for FILE_SYNC, which the gateway answers once the gap before
	// the chunk is filled; it sends its chunks in ascending order, as a
	// client waiting on each would.
	last := chunks[len(chunks)-1]
	if st, committed := root.write(t, fh, uint64(last[0]), data[last[0]:last[1]], 0); st != 0 || committed != 0 {
		t.Fatalf("out-of-order UNSTABLE write: status %d committed %d", st, committed)
	}
	rest := chunks[:len(chunks)-1]
	rand.New(rand.NewPCG(3, 3)).Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	var stable [][2]int
	for i := 0; i < len(rest); i += 4 {
		stable = append(stable, rest[i])
	}
	slices.SortFunc(stable, func(a, b [2]int) int { return a[0] - b[0] })
	for i := 0; i < len(rest); i += 4 {
		rest[i] = stable[i/4]
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(rest))
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			how := uint32(0)
			if w == 0 {
				how = 2
			}
			for i := w; i < len(rest); i += 4 {
				c := rest[i]
				if st, committed := root.write(t, fh, uint64(c[0]), data[c[0]:c[1]], how); st != 0 || committed < how {
					errs <- "write failed"
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Fatal(msg)
	}
	// Written, not yet committed: reads see it.
	if got := root.readAll(t, "/ooo"); !bytes.Equal(got, data) {
		t.Fatalf("before COMMIT, NFS read %d bytes, want the %d written", len(got), len(data))
	}
	if st := root.commit(t, fh); st != 0 {
		t.Fatalf("COMMIT: status %d", st)
	}
	if got := e.hdfsRead("/ooo"); !bytes.Equal(got, data) {
		t.Fatalf("HDFS has %d bytes, want the %d written out of order", len(got), len(data))
	}
	if got := root.readAll(t, "/ooo"); !bytes.Equal(got, data) {
		t.Fatal("NFS read differs")
	}
	// Appending after COMMIT reopens the file.
	more := []byte("appended after commit")
	if st, _ := root.write(t, fh, uint64(len(data)), more, 2); st != 0 {
		t.Fatalf("append after commit: status %d", st)
	}
	// A late retransmission of data committed before the reopen is still
	// recognised, from HDFS.
	if st, _ := root.write(t, fh, 0, data[:chunk], 0); st != 0 {
		t.Fatalf("retransmitted WRITE of committed bytes into a reopened stream: status %d, want NFS3_OK", st)
	}
	if st, _ := root.write(t, fh, chunk, bytes.Repeat([]byte{'x'}, 10), 0); st != 1 {
		t.Fatalf("overwrite of committed bytes in a reopened stream: status %d, want NFS3ERR_PERM (1)", st)
	}
	// Also when another HDFS client renamed the file meanwhile.
	if err := e.su.Rename(context.Background(), "/ooo", "/ooo2"); err != nil {
		t.Fatal(err)
	}
	if st, _ := root.write(t, fh, chunk, data[chunk:2*chunk], 0); st != 0 {
		t.Fatalf("retransmission into a stream whose file was renamed: status %d, want NFS3_OK", st)
	}
	if err := e.su.Rename(context.Background(), "/ooo2", "/ooo"); err != nil {
		t.Fatal(err)
	}
	if st := root.commit(t, fh); st != 0 {
		t.Fatalf("COMMIT: status %d", st)
	}
	if got := e.hdfsRead("/ooo"); !bytes.Equal(got, append(data, more...)) {
		t.Fatal("append after commit: wrong contents")
	}
}

// Out-of-order data is bounded over all files, not only per file: a
// client writing ahead in many files gets JUKEBOX, not the gateway's
// memory.
func TestPendingBoundAcrossFiles(t *testing.T) {
	e := newEnv(t)
	addr, _ := e.gatewayWith(nfsgw.Options{MaxPending: 1 << 20})
	root := e.mount(addr, uidRoot)
	const jukebox = 10008

	a, b := randomBytes(2<<20, 7), randomBytes(2<<20, 8)
	fa, err := root.Create("/pending-a", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := root.Create("/pending-b", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := root.write(t, fa, 1<<20, a[1<<20:7<<18], 0); st != 0 {
		t.Fatalf("out-of-order WRITE within the bound: status %d", st)
	}
	if st, _ := root.write(t, fb, 1<<20, b[1<<20:3<<19], 0); st != jukebox {
		t.Fatalf("out-of-order WRITE past the bound for all files: status %d, want JUKEBOX", st)
	}
	// Filling a's gap frees the buffer; b's WRITE goes through.
	if st, _ := root.write(t, fa, 0, a[:1<<20], 0); st != 0 {
		t.Fatalf("filling the gap: status %d", st)
	}
	if st, _ := root.write(t, fb, 1<<20, b[1<<20:3<<19], 0); st != 0 {
		t.Fatalf("out-of-order WRITE once the buffer emptied: status %d", st)
	}
	for _, w := range []struct {
		fh  []byte
		off int
		d   []byte
	}{{fa, 7 << 18, a}, {fb, 0, b}, {fb, 3 << 19, b}} {
		end := min(w.off+1<<20, len(w.d))
		if w.off == 0 {
			end = 1 << 20
		}
		if st, _ := root.write(t, w.fh, uint64(w.off), w.d[w.off:end], 0); st != 0 {
			t.Fatalf("WRITE at %d: status %d", w.off, st)
		}
	}
	for name, fh := range map[string][]byte{"a": fa, "b": fb} {
		if st := root.commit(t, fh); st != 0 {
			t.Fatalf("COMMIT %s: status %d", name, st)
		}
	}
	if !bytes.Equal(e.hdfsRead("/pending-a"), a) || !bytes.Equal(e.hdfsRead("/pending-b"), b) {
		t.Fatal("files differ from what was written")
	}
}

// Handles name inodes: they resolve through a new gateway process.
func TestHandlesSurviveRestart(t *testing.T) {
	e := newEnv(t)
	addr, g := e.gateway()
	m := e.mount(addr, uidRoot)
	data := randomBytes(300<<10, 4)
	if _, err := m.Mkdir("/keep", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := m.OpenFile("/keep/file", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, fhFile, err := m.Lookup("/keep/file")
	if err != nil {
		t.Fatal(err)
	}
	_, fhDir, err := m.Lookup("/keep")
	if err != nil {
		t.Fatal(err)
	}
	g.Close()

	addr2, _ := e.gateway()
	m2 := e.mount(addr2, uidRoot)
	attr, err := m2.GetAttr(fhFile)
	if err != nil {
		t.Fatalf("getattr with a handle from before the restart: %v", err)
	}
	if attr.Size() != int64(len(data)) {
		t.Fatalf("size %d, want %d", attr.Size(), len(data))
	}
	if attr, err := m2.GetAttr(fhDir); err != nil || !attr.IsDir() {
		t.Fatalf("directory handle after restart: %v, %v", attr, err)
	}
	// Appending through the old handle works and lands in the same file.
	if st, _ := m2.write(t, fhFile, uint64(len(data)), []byte("tail"), 2); st != 0 {
		t.Fatalf("append through old handle: status %d", st)
	}
	if st := m2.commit(t, fhFile); st != 0 {
		t.Fatalf("COMMIT: %d", st)
	}
	if got := e.hdfsRead("/keep/file"); !bytes.Equal(got, append(data, "tail"...)) {
		t.Fatal("contents after append through old handle differ")
	}
	// A handle of a removed file is stale.
	if err := e.su.Delete(context.Background(), "/keep/file", false); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.GetAttr(fhFile); err == nil {
		t.Fatal("getattr of a removed file's handle succeeded")
	}
}

// Buffered data the gateway had to drop fails the writer's next COMMIT,
// rather than being reported durable.
func TestCommitReportsDroppedWrites(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	addr, _ := e.gateway()
	if err := e.su.Mkdirs(ctx, "/shared", 0o777); err != nil {
		t.Fatal(err)
	}
	if err := e.su.SetPermission(ctx, "/shared", 0o777); err != nil {
		t.Fatal(err)
	}
	alice, bob := e.mount(addr, uidAlice), e.mount(addr, uidBob)
	fh, err := alice.Create("/shared/f", 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.su.SetPermission(ctx, "/shared/f", 0o666); err != nil {
		t.Fatal(err)
	}
	if st, _ := alice.write(t, fh, 100, []byte("after a gap"), 0); st != 0 {
		t.Fatalf("alice's out-of-order WRITE: status %d", st)
	}
	// Bob writing the file finishes alice's stream; her buffered WRITE
	// cannot reach HDFS.
	if st, _ := bob.write(t, fh, 0, []byte("bob"), 2); st != 0 {
		t.Fatalf("bob's WRITE: status %d", st)
	}
	if st := alice.commit(t, fh); st != 5 {
		t.Fatalf("COMMIT after alice's buffered WRITE was dropped: status %d, want NFS3ERR_IO (5)", st)
	}
	if st := bob.commit(t, fh); st != 0 {
		t.Fatalf("bob's COMMIT: status %d", st)
	}
	if got := e.hdfsRead("/shared/f"); string(got) != "bob" {
		t.Fatalf("file holds %q, want bob's write", got)
	}
}

// Open write streams are bounded: an idle one is closed to make room,
// and when every one holds buffered data, a WRITE that needs a new stream
// gets JUKEBOX until one is committed.
func TestOpenStreamsBounded(t *testing.T) {
	e := newEnv(t)
	addr, _ := e.gatewayWith(nfsgw.Options{MaxOpenFiles: 2})
	root := e.mount(addr, uidRoot)
	const jukebox = 10008
	fhs := map[string][]byte{}
	for _, name := range []string{"a", "b", "c"} {
		fh, err := root.Create("/open-"+name, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fhs[name] = fh
	}
	// a's stream was closed to open c's; reopening a and b closes the
	// idle others.
	for _, name := range []string{"a", "b"} {
		if st, _ := root.write(t, fhs[name], 5, []byte(name+" after a gap"), 0); st != 0 {
			t.Fatalf("out-of-order WRITE to %s: status %d", name, st)
		}
	}
	// Both open streams buffer data: no room for c.
	if st, _ := root.write(t, fhs["c"], 0, []byte("c"), 0); st != jukebox {
		t.Fatalf("WRITE needing a third stream: status %d, want JUKEBOX", st)
	}
	if st, _ := root.write(t, fhs["a"], 0, []byte("12345"), 0); st != 0 {
		t.Fatalf("filling a's gap: status %d", st)
	}
	if st := root.commit(t, fhs["a"]); st != 0 {
		t.Fatalf("COMMIT a: status %d", st)
	}
	if st, _ := root.write(t, fhs["c"], 0, []byte("c"), 0); st != 0 {
		t.Fatalf("WRITE to c once a stream closed: status %d", st)
	}
	if st, _ := root.write(t, fhs["b"], 0, []byte("12345"), 0); st != 0 {
		t.Fatalf("filling b's gap: status %d", st)
	}
	for _, name := range []string{"b", "c"} {
		if st := root.commit(t, fhs[name]); st != 0 {
			t.Fatalf("COMMIT %s: status %d", name, st)
		}
	}
	for name, want := range map[string]string{"a": "12345a after a gap", "b": "12345b after a gap", "c": "c"} {
		if got := e.hdfsRead("/open-" + name); string(got) != want {
			t.Fatalf("/open-%s holds %q, want %q", name, got, want)
		}
	}
}

// A COMMIT waiting for a gap to fill does not drop WRITEs that arrive
// beyond it meanwhile.
func TestCommitKeepsLaterWrites(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	addr, g := e.gateway()
	root, root2 := e.mount(addr, uidRoot), e.mount(addr, uidRoot)
	data := randomBytes(3000, 9)
	fh, err := root.Create("/c", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.su.Stat(ctx, "/c")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := root.write(t, fh, 1000, data[1000:2000], 0); s != 0 {
		t.Fatalf("WRITE after a gap: status %d", s)
	}
	commit := make(chan error, 1)
	go func() { commit <- root2.Commit(fh) }()
	for g.Waiters(st.FileID) == 0 {
		time.Sleep(time.Millisecond)
	}
	// Past what the COMMIT waits for, with a gap of its own; then the
	// first gap fills and the COMMIT goes on.
	if s, _ := root.write(t, fh, 2500, data[2500:], 0); s != 0 {
		t.Fatalf("WRITE during COMMIT: status %d", s)
	}
	if s, _ := root.write(t, fh, 0, data[:1000], 0); s != 0 {
		t.Fatalf("WRITE filling the gap: status %d", s)
	}
	if err := <-commit; err != nil {
		t.Fatalf("COMMIT: %v", err)
	}
	if s, _ := root.write(t, fh, 2000, data[2000:2500], 0); s != 0 {
		t.Fatalf("WRITE filling the second gap: status %d", s)
	}
	if s := root.commit(t, fh); s != 0 {
		t.Fatalf("second COMMIT: status %d", s)
	}
	if got := e.hdfsRead("/c"); !bytes.Equal(got, data) {
		t.Fatalf("HDFS has %d bytes, want the %d written", len(got), len(data))
	}
}

// Each call acts as the user of its AUTH_UNIX uid.
func TestPermissions(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	addr, _ := e.gateway()
	root := e.mount(addr, uidRoot)
	if _, err := root.Mkdir("/home", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Mkdir("/home/alice", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := e.su.SetOwner(ctx, "/home/alice", "alice", ""); err != nil {
		t.Fatal(err)
	}

	alice := e.mount(addr, uidAlice)
	f, err := alice.OpenFile("/home/alice/notes", 0o600)
	if err != nil {
		t.Fatalf("alice creates in her directory: %v", err)
	}
	if _, err := f.Write([]byte("private")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := e.su.Stat(ctx, "/home/alice/notes")
	if err != nil || st.Owner != "alice" {
		t.Fatalf("file made over NFS by uid %d: owner %q, %v; want alice", uidAlice, st.Owner, err)
	}
	_, fh, err := alice.Lookup("/home/alice/notes")
	if err != nil {
		t.Fatal(err)
	}

	bob := e.mount(addr, uidBob)
	if _, _, err := bob.Lookup("/home/alice/notes"); err == nil {
		t.Fatal("bob looked up a file in alice's 0700 directory")
	}
	if _, err := bob.Create("/home/alice/intruder", 0o644); err == nil {
		t.Fatal("bob created a file in alice's 0700 directory")
	}
	// Even with the handle, bob can neither read nor write.
	if _, err := bob.GetAttr(fh); err == nil {
		t.Fatal("bob got attributes through alice's handle")
	}
	if st, _ := bob.write(t, fh, 7, []byte("x"), 2); st != 13 {
		t.Fatalf("bob's WRITE through alice's handle: status %d, want NFS3ERR_ACCES (13)", st)
	}
	if got := e.hdfsRead("/home/alice/notes"); string(got) != "private" {
		t.Fatalf("alice's file is %q", got)
	}
	if _, err := e.su.Stat(ctx, "/home/alice/intruder"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("intruder file: %v", err)
	}
}

// call frames an NFSv3 call of proc with AUTH_NULL credentials.
func call(proc byte, args []byte) []byte {
	body := append([]byte{0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0x86, 0xa3, 0, 0, 0, 3, 0, 0, 0, proc,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, args...)
	n := uint32(len(body)) | 1<<31
	return append([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, body...)
}

// Garbage on the port closes that connection only.
func TestGarbageDoesNotKillServer(t *testing.T) {
	e := newEnv(t)
	addr, _ := e.gateway()
	inputs := [][]byte{
		[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		{0x80, 0, 0, 4, 1, 2, 3, 4},                         // record too short for a call
		{0xff, 0xff, 0xff, 0xff},                            // 2 GiB record
		{0, 0, 0, 100},                                      // not the last fragment
		append([]byte{0x80, 0, 0, 44}, make([]byte, 44)...), // RPC version 0
		// A call whose credentials claim 4 GiB.
		append([]byte{0x80, 0, 0, 48, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0x86, 0xa3, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff}, make([]byte, 16)...),
		randomBytes(64<<10, 5),
		// LOOKUP whose file name claims 2 GiB.
		call(3, []byte{0, 0, 0, 12, 'S', 'G', 1, 0, 0, 0, 0, 0, 0, 0, 0x40, 1, 0x7f, 0xff, 0xff, 0xf0}),
		// GETATTR with a 1 KiB handle.
		call(1, append([]byte{0, 0, 4, 0}, make([]byte, 1024)...)),
	}
	for i, in := range inputs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(in)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.ReadAll(c)
		c.Close()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("input %d: the gateway kept a garbage connection open", i)
		}
	}
	m := e.mount(addr, uidRoot)
	if _, err := m.Mkdir("/alive", 0o755); err != nil {
		t.Fatalf("after garbage: %v", err)
	}
	// READs at offsets past what int64 holds are past the end of a file.
	fh, err := m.Create("/alive/f", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Write(fh, 0, []byte("data"), 2); err != nil {
		t.Fatal(err)
	}
	for _, off := range []uint64{1 << 63, 1<<64 - 1} {
		if b, eof, err := m.Read(fh, off, 4096); err != nil || len(b) != 0 || !eof {
			t.Fatalf("READ at %#x: %d bytes, eof %v, %v; want none, at the end", off, len(b), eof, err)
		}
	}
}
