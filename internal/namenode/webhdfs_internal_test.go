package namenode

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// WebHDFS redirects a read to the nearest replica, as Hadoop does, and a
// new file to the least busy DataNode; nodes without HTTP are skipped.
func TestWebHDFSDataNodeChoice(t *testing.T) {
	node := func(name string, infoPort, xceivers uint32) *hdfspb.DatanodeInfoProto {
		return &hdfspb.DatanodeInfoProto{
			Id:           &hdfspb.DatanodeIDProto{IpAddr: proto.String(name), InfoPort: proto.Uint32(infoPort)},
			XceiverCount: proto.Uint32(xceivers),
		}
	}
	noHTTP, near, far := node("nohttp", 0, 0), node("near", 9864, 7), node("far", 9864, 1)
	replicas := []*hdfspb.DatanodeInfoProto{noHTTP, near, far}
	if got := firstServingHTTP(replicas); got != near {
		t.Errorf("replica chosen: %s, want the nearest serving HTTP", got.GetId().GetIpAddr())
	}
	if got := leastBusy(replicas); got != far {
		t.Errorf("least busy: %s, want far", got.GetId().GetIpAddr())
	}
	if firstServingHTTP([]*hdfspb.DatanodeInfoProto{noHTTP}) != nil || leastBusy([]*hdfspb.DatanodeInfoProto{noHTTP}) != nil {
		t.Error("a node without HTTP was chosen")
	}
}
