package namenode

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/ipc"
)

// slowJournal's Sync waits for release (or the caller's context), as a
// group commit's waiter does, and then reports diskErr.
type slowJournal struct {
	mu      sync.Mutex
	last    uint64
	synced  uint64
	release chan struct{}
	diskErr error
}

func (j *slowJournal) Append(rec []byte) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.last++
	return j.last, nil
}

func (j *slowJournal) Sync(ctx context.Context, txid uint64) error {
	select {
	case <-j.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	if j.diskErr != nil {
		return j.diskErr
	}
	j.mu.Lock()
	j.synced = max(j.synced, txid)
	j.mu.Unlock()
	return nil
}

// A mutation whose caller goes away while it waits for the sync gets its
// context's error; the journal is not failed, the edit is still synced,
// and a later sync failure does stop mutations.
func TestCancelledWaiterIsNotALogFailure(t *testing.T) {
	for _, diskErr := range []error{nil, syscall.EIO} {
		ns, _ := testNS(t)
		j := &slowJournal{release: make(chan struct{}), diskErr: diskErr}
		ns.journal = j
		ctx, cancel := context.WithCancel(as("hdfs"))
		done := make(chan error, 1)
		go func() { done <- ns.Mkdirs(ctx, "/left", 0o755, false) }()
		time.Sleep(10 * time.Millisecond)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled mkdir: %v, want context.Canceled", err)
		}
		if err := ns.journalFailed(); err != nil {
			t.Fatalf("a cancelled caller failed the journal: %v", err)
		}
		close(j.release) // the group commit finishes
		ns.waitSyncs()
		if diskErr == nil {
			if j.synced != 1 {
				t.Errorf("the abandoned edit was not synced: synced %d", j.synced)
			}
			mustOK(t, ns.Mkdirs(as("hdfs"), "/next", 0o755, false))
			continue
		}
		if err := ns.journalFailed(); !errors.Is(err, syscall.EIO) {
			t.Errorf("a failed background sync did not stop mutations: %v", err)
		}
		wantClass(t, ns.Mkdirs(as("hdfs"), "/next", 0o755, false), ipc.ClassIOException)
	}
}
