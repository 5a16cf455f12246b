package shuffle

import (
	"bytes"
	"errors"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stratafs/strata/internal/spill"
	"github.com/stratafs/strata/internal/vfs/errorfs"
)

// TestServerReadsThroughFS checks that a Server reads map outputs through
// its FS: with an FS that wraps files (errorfs) the segment is copied
// through the File rather than sent with sendfile, so an injected EIO on
// the map output's reads fails the send (counted as failed), and with the
// rule gone the same bytes as on disk go out.
func TestServerReadsThroughFS(t *testing.T) {
	job := makeJob(t, spill.None, 1, 2, mixedCounts, 20)
	m := job.maps[0]
	efs := errorfs.Wrap(nil)
	srv := NewServer(ServerConfig{FS: efs})
	srv.SetSecret(job.id, job.secret)
	if err := srv.Add(MapOutputInfo{JobID: job.id, AttemptID: m.attempt, Path: m.out.Path}); err != nil {
		t.Fatal(err)
	}
	target := Path + "?" + url.Values{"job": {job.id}, "map": {m.attempt}, "reduce": {"1"}}.Encode()
	e := m.out.Index[1]
	if e.PartLength == 0 {
		t.Fatal("empty partition: nothing to read")
	}
	rule := efs.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: errorfs.Exact(m.out.Path), Err: syscall.EIO})
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, signed("GET", target, job.secret))
	if rule.Hits() == 0 {
		t.Fatal("the map output was not read through the FS")
	}
	if int64(w.Body.Len()) == e.PartLength || srv.Stats().Failed != 1 {
		t.Fatalf("send with EIO: %d of %d bytes, %d failed", w.Body.Len(), e.PartLength, srv.Stats().Failed)
	}
	rule.Remove()
	w = httptest.NewRecorder()
	srv.ServeHTTP(w, signed("GET", target, job.secret))
	file, err := os.ReadFile(m.out.Path)
	if err != nil {
		t.Fatal(err)
	}
	if w.Code != 200 || !bytes.Equal(w.Body.Bytes(), file[e.Offset:e.Offset+e.PartLength]) {
		t.Fatalf("status %d, %d bytes", w.Code, w.Body.Len())
	}
}

// TestShuffleLocalDirFull fails every write of a reduce's local dir with
// ENOSPC: segments too large for memory cannot be copied to disk, and the
// reduce fails with an error wrapping ENOSPC that names the file; nothing
// is left in the local dir after Close.
func TestShuffleLocalDirFull(t *testing.T) {
	job := makeJob(t, spill.None, 2, 1, mixedCounts, 200)
	locs := serve(t, job, newTracker(t, ServerConfig{}))
	dir := t.TempDir()
	efs := errorfs.Wrap(nil)
	efs.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: errorfs.Under(dir), Err: syscall.ENOSPC})
	cfg := DefaultConfig()
	cfg.JobID, cfg.Name, cfg.LocalDirs, cfg.FS, cfg.Secret = job.id, "attempt_r_0", []string{dir}, efs, job.secret
	cfg.MemoryBudget = 1 // every segment goes to disk
	cfg.MemoryLimitPercent, cfg.MergePercent = 0.25, 0.66
	cfg.Retries = -1
	s, err := New(cfg, len(job.maps))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range locs {
		s.Add(l)
	}
	it, err := s.Wait(t.Context())
	if err == nil {
		it.Close()
		t.Fatal("shuffle into a full local dir succeeded")
	}
	if !errors.Is(err, syscall.ENOSPC) || !bytes.Contains([]byte(err.Error()), []byte(filepath.Join(dir, "attempt_r_0"))) {
		t.Fatalf("shuffle error %v; want ENOSPC naming a file in the attempt's dir", err)
	}
	s.Close()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left in the local dir: %v", ents)
	}
}
