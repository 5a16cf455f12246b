package e2e

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/hdfs"
)

// TestKill9LosesNoAcknowledgedMkdir kills the NameNode with SIGKILL in the
// middle of a stream of mkdirs from several clients, restarts it, and checks
// that every mkdir that was acknowledged is there.
func TestKill9LosesNoAcknowledgedMkdir(t *testing.T) {
	nn := newNameNode(t)
	ctx := ctxT(t)

	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c, err := hdfs.New(hdfs.Options{Addr: nn.Addr(), User: "root"})
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := fmt.Sprintf("/w%d/d%06d", w, i)
				if err := c.Mkdirs(ctx, p, 0o755); err != nil {
					return // the NameNode is gone
				}
				mu.Lock()
				acked = append(acked, p)
				mu.Unlock()
			}
		}(w)
	}
	time.Sleep(1500 * time.Millisecond)
	nn.KillNameNode()
	close(stop)
	wg.Wait()
	if len(acked) < 100 {
		t.Fatalf("only %d mkdirs acknowledged before the kill; the test needs a stream", len(acked))
	}

	nn.StartNameNode()
	c, err := hdfs.New(hdfs.Options{Addr: nn.Addr(), User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	missing := 0
	for _, p := range acked {
		if st, err := c.Stat(ctx, p); err != nil || !st.IsDir {
			missing++
			if missing < 5 {
				t.Errorf("acknowledged %s missing after kill -9 and restart: %v", p, err)
			}
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged mkdirs lost", missing, len(acked))
	}
	t.Logf("%d acknowledged mkdirs all survived kill -9", len(acked))
	nn.StopNameNode()
}

// TestCorruptLastEditDropped flips a byte in the last edit-log record after
// a crash: the NameNode must drop that record with a log line and keep
// every earlier one.
func TestCorruptLastEditDropped(t *testing.T) {
	nn := newNameNode(t)
	ctx := ctxT(t)
	c, err := hdfs.New(hdfs.Options{Addr: nn.Addr(), User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if err := c.Mkdirs(ctx, fmt.Sprintf("/d%02d", i), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	nn.KillNameNode() // no checkpoint: everything is in the in-progress edit log

	segs, _ := filepath.Glob(filepath.Join(nn.NameDir(), "current", "edits_inprogress_*"))
	if len(segs) != 1 {
		t.Fatalf("want one in-progress segment, found %v", segs)
	}
	f, err := os.OpenFile(segs[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	ends := recordEnds(data)
	if len(ends) == 0 {
		t.Fatal("no records found in the segment")
	}
	end := ends[len(ends)-1]
	last := []byte{data[end-1] ^ 0xff}
	f.WriteAt(last, int64(end-1))
	f.Close()

	nn.StartNameNode()
	c2, err := hdfs.New(hdfs.Options{Addr: nn.Addr(), User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	for i := 0; i < 19; i++ {
		if _, err := c2.Stat(ctx, fmt.Sprintf("/d%02d", i)); err != nil {
			t.Errorf("/d%02d lost: %v", i, err)
		}
	}
	if _, err := c2.Stat(ctx, "/d19"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("/d19, whose record was corrupted, still exists (err %v)", err)
	}
	if log := nn.NameNodeProcess().Log(); !strings.Contains(log, "corrupt") {
		t.Errorf("no log line about the corrupt record; log:\n%s", log)
	}
	// The NameNode goes on logging after the truncation.
	if err := c2.Mkdirs(ctx, "/after", 0o755); err != nil {
		t.Fatal(err)
	}
	nn.KillNameNode()
	nn.StartNameNode()
	c3, _ := hdfs.New(hdfs.Options{Addr: nn.Addr(), User: "root"})
	defer c3.Close()
	if _, err := c3.Stat(ctx, "/after"); err != nil {
		t.Errorf("/after lost: %v", err)
	}
	nn.StopNameNode()
}

// TestGarbageOnRPCPort sends malformed input to a running NameNode and
// checks it keeps serving a well-behaved client throughout.
func TestGarbageOnRPCPort(t *testing.T) {
	nn := newNameNode(t)
	ctx := ctxT(t)
	good, err := hdfs.New(hdfs.Options{Addr: nn.Addr(), User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	if err := good.Mkdirs(ctx, "/before", 0o755); err != nil {
		t.Fatal(err)
	}
	oversize := binary.BigEndian.AppendUint32([]byte("hrpc\x09\x00\x00"), 0x7fffffff)
	inputs := map[string][]byte{
		"random":         []byte("\x8f\x13 this is not hadoop ipc \x00\x01\x02"),
		"wrong version":  []byte("hrpc\x04\x00\x00"),
		"oversize frame": oversize,
		"truncated":      append([]byte("hrpc\x09\x00\x00"), 0, 0, 1, 0, 1, 2, 3),
		"bad delimited":  append([]byte("hrpc\x09\x00\x00"), 0, 0, 0, 3, 0xff, 0xff, 0xff),
		"http":           []byte("GET /webhdfs/v1/?op=LISTSTATUS HTTP/1.1\r\n\r\n"),
	}
	names := make([]string, 0, len(inputs))
	for k := range inputs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		nc, err := net.Dial("tcp", nn.Addr())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		nc.Write(inputs[name])
		nc.(*net.TCPConn).CloseWrite()
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := io.ReadAll(nc)
		nc.Close()
		if err != nil {
			t.Errorf("%s: the NameNode neither answered nor closed: %v", name, err)
		}
		if name == "http" && !strings.HasPrefix(string(resp), "HTTP/1.1 404") {
			t.Errorf("http on the RPC port answered %q", resp)
		}
		if err := good.Mkdirs(ctx, "/after-"+strings.ReplaceAll(name, " ", "-"), 0o755); err != nil {
			t.Fatalf("after %s, a good client fails: %v", name, err)
		}
	}
	if !nn.NameNodeProcess().Running() {
		t.Fatal("namenode exited")
	}
	nn.StopNameNode()
}

// TestShellAgainstNameNode runs the dfs shell as a user would.
func TestShellAgainstNameNode(t *testing.T) {
	nn := newNameNode(t)
	if out, errs, code := nn.Run("root", "dfs", "-mkdir", "-p", "/user/alice/data"); code != 0 {
		t.Fatalf("mkdir: %d %s %s", code, out, errs)
	}
	nn.Run("root", "dfs", "-chown", "alice", "/user/alice", "/user/alice/data")
	out, errs, code := nn.Run("alice", "dfs", "-touchz", "data/x")
	if code != 0 {
		t.Fatalf("touchz relative to home: %d %s %s", code, out, errs)
	}
	out, _, code = nn.Run("alice", "dfs", "-ls", "data")
	if code != 0 || !strings.Contains(out, "Found 1 items") || !strings.Contains(out, "alice supergroup") || !strings.HasSuffix(strings.TrimSpace(out), "data/x") {
		t.Errorf("ls data as alice:\n%s", out)
	}
	_, errs, code = nn.Run("alice", "dfs", "-ls", "/nope")
	if code != 1 || strings.TrimSpace(errs) != "ls: `/nope': No such file or directory" {
		t.Errorf("ls of a missing path: exit %d, stderr %q", code, errs)
	}
	_, errs, code = nn.Run("bob", "dfs", "-mkdir", "/user/alice/data/y")
	if code != 1 || !strings.Contains(errs, "Permission denied: user=bob, access=WRITE") {
		t.Errorf("bob mkdir in alice's dir: exit %d, stderr %q", code, errs)
	}
	out, _, code = nn.Run("root", "storagepolicies", "-setStoragePolicy", "-path", "/user/alice", "-policy", "ONE_SSD")
	if code != 0 || !strings.Contains(out, "Set storage policy ONE_SSD on /user/alice") {
		t.Errorf("setStoragePolicy: %d %s", code, out)
	}
	out, _, _ = nn.Run("alice", "storagepolicies", "-getStoragePolicy", "-path", "/user/alice/data/x")
	if !strings.Contains(out, "BlockStoragePolicy{ONE_SSD:10") {
		t.Errorf("inherited policy: %s", out)
	}
	out, _, code = nn.Run("root", "dfs", "-count", "/user")
	if f := strings.Fields(out); code != 0 || len(f) != 4 || f[0] != "3" || f[1] != "1" {
		t.Errorf("count /user: %q", out)
	}
	// Restart cleanly: the namespace comes back from the checkpoint.
	nn.StopNameNode()
	nn.StartNameNode()
	out, _, _ = nn.Run("alice", "dfs", "-ls", "-R", "/user/alice")
	if len(lines(out)) != 2 {
		t.Errorf("after restart, ls -R:\n%s", out)
	}
	nn.StopNameNode()
}

// TestMidLogCorruptionNeedsRecover damages a record in the middle of the
// edit log: the NameNode must refuse to start, and `namenode -recover`
// must cut the log there and keep everything before the damage.
func TestMidLogCorruptionNeedsRecover(t *testing.T) {
	nn := newNameNode(t)
	ctx := ctxT(t)
	c, err := hdfs.New(hdfs.Options{Addr: nn.Addr(), User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if err := c.Mkdirs(ctx, fmt.Sprintf("/d%02d", i), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	nn.KillNameNode()

	segs, _ := filepath.Glob(filepath.Join(nn.NameDir(), "current", "edits_inprogress_*"))
	if len(segs) != 1 {
		t.Fatalf("segments: %v", segs)
	}
	data, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	// Damage the 11th record's payload (records 1-10 stay intact).
	off := recordEnds(data)[9]
	data[off+16] ^= 0xff
	if err := os.WriteFile(segs[0], data, 0o644); err != nil {
		t.Fatal(err)
	}

	out, err := exec.Command(nn.Binary(), nn.NameNodeArgs("namenode")...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "recover") {
		t.Fatalf("namenode started on a corrupt log, or did not point to -recover: %v\n%s", err, out)
	}
	out, err = exec.Command(nn.Binary(), nn.NameNodeArgs("namenode", "-recover")...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Recovery complete") {
		t.Fatalf("namenode -recover: %v\n%s", err, out)
	}
	nn.StartNameNode()
	c2, _ := hdfs.New(hdfs.Options{Addr: nn.Addr(), User: "root"})
	defer c2.Close()
	entries, err := c2.List(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	// Each mkdir is one record: /d00../d09 precede the damage.
	if len(entries) != 10 || entries[9].Name() != "d09" {
		t.Errorf("after recovery %d directories survive, want /d00../d09", len(entries))
	}
	nn.StopNameNode()
}

// recordEnds walks an edit-log segment (docs/format/namenode-storage.md: a
// 20-byte header, then records of length|crc|txid|payload, then
// preallocated zeros) and returns the offset just past each record.
func recordEnds(data []byte) []int {
	var ends []int
	off := 20
	for off+16 <= len(data) {
		n := int(binary.BigEndian.Uint32(data[off:]))
		if n == 0 && binary.BigEndian.Uint64(data[off+8:]) == 0 {
			break
		}
		off += 16 + n
		ends = append(ends, off)
	}
	return ends
}
