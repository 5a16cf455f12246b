package datanode

import (
	"fmt"
	"io"
	"testing"

	"github.com/stratafs/strata/internal/datanode/fsdataset"
)

// An op that failed for the DataNode's own state is logged at Info; one
// the peer caused stays at Debug, so a hostile or departing peer does not
// fill the log.
func TestOwnFault(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("receive: %w", fmt.Errorf("writer of blk_1_1 is closed (stopped): %w", fsdataset.ErrWriterClosed)), true},
		{fmt.Errorf("create: %w", fsdataset.ErrNoVolume), true},
		{fmt.Errorf("open: %w", fsdataset.ErrReplicaNotFound), false},
		{io.ErrUnexpectedEOF, false},
		{fmt.Errorf("read packet: %w", io.EOF), false},
	} {
		if got := ownFault(tt.err); got != tt.want {
			t.Errorf("ownFault(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
