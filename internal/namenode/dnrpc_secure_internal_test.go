package namenode

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/security"
)

// TestSecureDatanodeOnlyNeedsAuthorizedDatanodeCall: in kerberos mode a
// non-superuser principal may call the DataNode protocol only when the
// IPC server's service authorization admitted the call to that very
// protocol; a Kerberos user whose call was not (a ClientProtocol
// connection) is refused as any non-superuser.
func TestSecureDatanodeOnlyNeedsAuthorizedDatanodeCall(t *testing.T) {
	nn := startTestNameNode(t, nil)
	// Only datanodeOnly reads this, on the calls below.
	nn.cfg.Security = security.Settings{Kerberos: true}
	dp := &datanodeProtocol{nn: nn, ns: nn.ns}
	reg := func(c *ipc.Caller) error {
		_, err := dp.register(ipc.WithCaller(context.Background(), c), &dnpb.RegisterRequest{Registration: &dnpb.Registration{
			DatanodeUuid: proto.String("dn-1"), IpAddr: proto.String("127.0.0.1"), XferPort: proto.Uint32(9866)}})
		return err
	}
	for _, c := range []*ipc.Caller{
		{User: "alice", Auth: ipc.AuthMethodKerberos, Protocol: ClientProtocolName},
		{User: "alice", Auth: ipc.AuthMethodKerberos, Protocol: DatanodeProtocolName},
		{User: "alice", Auth: ipc.AuthMethodKerberos, Protocol: ClientProtocolName, Authorized: true},
	} {
		if err := reg(c); !ipc.IsClass(err, ipc.ClassAccessControl) {
			t.Fatalf("%+v registered a DataNode: %v", c, err)
		}
	}
	if err := reg(&ipc.Caller{User: "dn", Auth: ipc.AuthMethodKerberos, Protocol: DatanodeProtocolName, Authorized: true}); err != nil {
		t.Fatalf("the authorized DataNode principal: %v", err)
	}
}
