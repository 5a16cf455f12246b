package namenode

import (
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/storage"
)

// TestCommandProto pins the DataNode protocol messages the adapter makes
// of blockmgmt's commands: which fields are present matters to the
// DataNode (docs/format/datanode-protocol.md).
func TestCommandProto(t *testing.T) {
	node := blockmgmt.DatanodeInfo{UUID: "u2", IP: "10.0.0.2", Host: "h2", XferPort: 9866, InfoPort: 9864, IPCPort: 9867,
		Capacity: 100, Used: 10, Remaining: 90, Xceivers: 3, Blocks: 7,
		LastHeartbeat: time.UnixMilli(5000), LastReport: time.UnixMilli(4000)}
	ref := blockmgmt.BlockRef{ID: 1 << 30, GenStamp: 1001, NumBytes: 512}
	tests := []struct {
		name string
		cmd  blockmgmt.Command
		want string // prototext of the dnpb.Command
	}{
		{"reregister", blockmgmt.Command{Kind: blockmgmt.Reregister}, `reregister:{}`},
		{"invalidate has no lengths", blockmgmt.Command{Kind: blockmgmt.Invalidate, Blocks: []blockmgmt.BlockRef{ref, {ID: 7, GenStamp: 8}}},
			`invalidate:{blocks:{block_id:1073741824 gen_stamp:1001} blocks:{block_id:7 gen_stamp:8}}`},
		{"recover carries the old stamp and no length", blockmgmt.Command{Kind: blockmgmt.Recover, Block: ref, NewGenStamp: 1002, NewLength: -1},
			`recover:{block:{block_id:1073741824 gen_stamp:1001} new_gen_stamp:1002 new_length:-1}`},
		{"move", blockmgmt.Command{Kind: blockmgmt.Move, Block: ref, TargetType: storage.SSD},
			`move:{block:{block_id:1073741824 gen_stamp:1001 num_bytes:512} target_storage_type:2}`},
		{"transfer", blockmgmt.Command{Kind: blockmgmt.Transfer, Block: ref, Targets: []blockmgmt.Target{{Node: node, StorageType: storage.Disk, StorageID: "s2"}}},
			`transfer:{block:{block_id:1073741824 gen_stamp:1001 num_bytes:512} ` +
				`targets:{id:{ipAddr:"10.0.0.2" hostName:"h2" datanodeUuid:"u2" xferPort:9866 infoPort:9864 ipcPort:9867} ` +
				`capacity:100 dfsUsed:10 remaining:90 blockPoolUsed:10 lastUpdate:5000 xceiverCount:3 location:"/default-rack" ` +
				`adminState:NORMAL numBlocks:7 lastBlockReportTime:4000} target_storage_types:1 target_storage_ids:"s2"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want dnpb.Command
			if err := prototext.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatalf("bad expectation: %v", err)
			}
			if got := commandProto(tt.cmd); !proto.Equal(got, &want) {
				t.Errorf("got  %v\nwant %v", prototext.Format(got), prototext.Format(&want))
			}
		})
	}
}

// TestReportConversions: what a DataNode sends arrives in blockmgmt's
// types intact.
func TestReportConversions(t *testing.T) {
	reg := registration(&dnpb.Registration{DatanodeUuid: proto.String("u"), Hostname: proto.String("h"), IpAddr: proto.String("1.2.3.4"),
		XferPort: proto.Uint32(1), InfoPort: proto.Uint32(2), IpcPort: proto.Uint32(3),
		Storages: []*dnpb.StorageReport{{StorageId: proto.String("s"), StorageType: proto.Uint32(2), Capacity: proto.Uint64(10),
			DfsUsed: proto.Uint64(4), Remaining: proto.Uint64(6), Failed: proto.Bool(true)}}})
	want := blockmgmt.Registration{UUID: "u", IP: "1.2.3.4", Hostname: "h", XferPort: 1, InfoPort: 2, IPCPort: 3,
		Storages: []blockmgmt.StorageReport{{ID: "s", Type: storage.SSD, Capacity: 10, Used: 4, Remaining: 6, Failed: true}}}
	if reg.UUID != want.UUID || reg.IP != want.IP || reg.Hostname != want.Hostname || reg.XferPort != 1 || reg.InfoPort != 2 || reg.IPCPort != 3 ||
		len(reg.Storages) != 1 || reg.Storages[0] != want.Storages[0] {
		t.Errorf("registration %+v, want %+v", reg, want)
	}
	reps := reportedReplicas([]*dnpb.Replica{
		{BlockId: proto.Uint64(5), GenStamp: proto.Uint64(6), NumBytes: proto.Uint64(7)},
		{BlockId: proto.Uint64(8), GenStamp: proto.Uint64(9), NumBytes: proto.Uint64(10), State: dnpb.ReplicaState_RBW.Enum()},
		{BlockId: proto.Uint64(11), GenStamp: proto.Uint64(12), NumBytes: proto.Uint64(13), State: dnpb.ReplicaState_RWR.Enum()},
	})
	if len(reps) != 3 || reps[0] != (blockmgmt.ReportedReplica{ID: 5, GenStamp: 6, NumBytes: 7, Finalized: true}) ||
		reps[1] != (blockmgmt.ReportedReplica{ID: 8, GenStamp: 9, NumBytes: 10, Writing: true}) ||
		reps[2] != (blockmgmt.ReportedReplica{ID: 11, GenStamp: 12, NumBytes: 13}) {
		t.Errorf("replicas %+v", reps)
	}
}
