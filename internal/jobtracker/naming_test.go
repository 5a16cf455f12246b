package jobtracker

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/mrpb"
)

// TestSameNameFromTwoAddresses: two trackers that advertise one name from
// two addresses look like one tracker restarting at every heartbeat; the
// JobTracker says so, naming slave.host.name and both addresses. A
// restart from the same address is only a restart.
func TestSameNameFromTwoAddresses(t *testing.T) {
	h := newHarness(t)
	var log bytes.Buffer
	h.jt.log = slog.New(slog.NewTextHandler(&log, nil))
	beat := func(ip string, started int64) {
		t.Helper()
		ctx := ipc.WithCaller(context.Background(), &ipc.Caller{Remote: &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000}})
		_, err := h.jt.heartbeat(ctx, &mrpb.HeartbeatRequest{Tracker: proto.String("tracker_vm:50060"), Host: proto.String("vm"),
			HttpUrl: proto.String("http://vm:50060"), FreeMapSlots: proto.Int32(2), FreeReduceSlots: proto.Int32(2), StartedNs: proto.Int64(started)})
		if err != nil {
			t.Fatal(err)
		}
	}
	beat("10.0.0.11", 1)
	beat("10.0.0.11", 2) // a restart on the same host
	if strings.Contains(log.String(), "same name") {
		t.Errorf("a restart from the same address was taken for a name clash:\n%s", log.String())
	}
	beat("10.0.0.12", 3)
	if out := log.String(); !strings.Contains(out, "same name") || !strings.Contains(out, "slave.host.name") ||
		!strings.Contains(out, "was=10.0.0.11") || !strings.Contains(out, "now=10.0.0.12") {
		t.Errorf("no warning naming the clash:\n%s", out)
	}
	if len(h.jt.trackers) != 1 {
		t.Errorf("%d trackers", len(h.jt.trackers))
	}
}
