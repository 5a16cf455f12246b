package namenode

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// setXAttr and removeXAttr are at-most-once, as in Hadoop: a retried
// CREATE (or remove) gets its first attempt's success instead of "already
// exists" (or "No matching attributes"); a new call runs again.
func TestRetriedXAttrCalls(t *testing.T) {
	nn := startTestNameNode(t, nil)
	c := &retryClient{t: t, cp: &clientProtocol{nn: nn, ns: nn.ns}, id: []byte("client-000000002")}
	c.mkdir(1, "/d")
	x := &hdfspb.XAttrProto{Namespace: hdfspb.XAttrProto_USER.Enum(), Name: proto.String("k"), Value: []byte("v")}
	set := func(call, retry int32) error {
		_, err := c.cp.setXAttr(c.ctx(call, retry), &hdfspb.SetXAttrRequestProto{Src: proto.String("/d"), XAttr: x, Flag: proto.Uint32(1)})
		return err
	}
	remove := func(call, retry int32) error {
		_, err := c.cp.removeXAttr(c.ctx(call, retry), &hdfspb.RemoveXAttrRequestProto{Src: proto.String("/d"), XAttr: x})
		return err
	}
	for retry := int32(0); retry <= 1; retry++ {
		if err := set(2, retry); err != nil {
			t.Fatalf("setXAttr attempt %d: %v", retry, err)
		}
	}
	wantClass(t, set(3, 0), ipc.ClassIOException)
	for retry := int32(0); retry <= 1; retry++ {
		if err := remove(4, retry); err != nil {
			t.Fatalf("removeXAttr attempt %d: %v", retry, err)
		}
	}
	wantClass(t, remove(5, 0), ipc.ClassIOException)
}
