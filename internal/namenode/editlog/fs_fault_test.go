package editlog

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stratafs/strata/internal/vfs/errorfs"
)

// TestFaultThroughFS drives the log through Options.FS with faults
// injected by errorfs below it: one failed fsync, one torn (short) write
// and one ENOSPC, each hitting a single operation after txids 1..5 were
// acknowledged (Sync returned nil). It proves that:
//
//   - the Sync of the round that met the fault returns an error wrapping
//     both ErrFailed and the injected error, and SyncedTxID stays 5;
//   - the log stays failed although the disk works again (the rule hit
//     once): every later Append, Sync (even of an acknowledged txid),
//     Roll and Close fails with ErrFailed — no silent continuation;
//   - reopened with the OS file system, the log replays 1..5 exactly, and
//     whatever follows is a gap-free prefix of what was appended after
//     (6, 7, 8 — records whose fsync failed may have reached the disk
//     anyway, and were never acknowledged); after a torn write or ENOSPC
//     nothing follows 5 at all, the torn record being cut off; and the
//     reopened log appends and syncs from there.
func TestFaultThroughFS(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rule  errorfs.Rule
		want  error
		exact bool // nothing past 5 may replay
	}{
		{"fsync EIO", errorfs.Rule{Ops: errorfs.OpSync, Times: 1, Err: syscall.EIO}, syscall.EIO, false},
		{"torn write", errorfs.Rule{Ops: errorfs.OpWrite, Times: 1, ShortWrite: 3}, io.ErrShortWrite, true},
		{"write ENOSPC", errorfs.Rule{Ops: errorfs.OpWrite, Times: 1, Err: syscall.ENOSPC}, syscall.ENOSPC, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := formatted(t)
			fsys := errorfs.Wrap(nil)
			l, _ := mustOpenLoad(t, dir, Options{FS: fsys})
			appendSync(t, l, 1, 5)

			rule := tc.rule
			rule.Path = errorfs.Under(filepath.Join(dir, currentDir))
			in := fsys.Inject(rule)
			for i := uint64(6); i <= 8; i++ {
				if _, err := l.Append([]byte(payload(i))); err != nil {
					t.Fatal(err)
				}
			}
			err := l.Sync(context.Background(), 8)
			if !errors.Is(err, ErrFailed) || !errors.Is(err, tc.want) {
				t.Fatalf("Sync after the fault: %v, want ErrFailed and %v", err, tc.want)
			}
			if in.Hits() != 1 {
				t.Fatalf("rule hit %d times, want 1", in.Hits())
			}
			if got := l.SyncedTxID(); got != 5 {
				t.Fatalf("SyncedTxID = %d after the failed round, want 5", got)
			}
			if _, err := l.Append([]byte("more")); !errors.Is(err, ErrFailed) {
				t.Errorf("Append on the failed log: %v", err)
			}
			for _, tx := range []uint64{5, 8} {
				if err := l.Sync(context.Background(), tx); !errors.Is(err, ErrFailed) {
					t.Errorf("Sync(%d) on the failed log: %v", tx, err)
				}
			}
			if _, err := l.Roll(); !errors.Is(err, ErrFailed) {
				t.Errorf("Roll on the failed log: %v", err)
			}
			if err := l.Close(); !errors.Is(err, ErrFailed) {
				t.Errorf("Close of the failed log: %v", err)
			}

			l, got := mustOpenLoad(t, dir, Options{})
			defer l.Close()
			n := uint64(len(got.recs))
			if n < 5 || n > 8 || (tc.exact && n != 5) {
				t.Fatalf("reopened log replays %d records", n)
			}
			checkRecs(t, got.recs, 1, n) // acknowledged ones intact, then a gap-free prefix
			if l.LastTxID() != n {
				t.Fatalf("reopened LastTxID = %d, want %d", l.LastTxID(), n)
			}
			appendSync(t, l, n+1, n+2)
		})
	}
}
