package hdfs

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// Concat moves the blocks of srcs, in order, to the end of trg and
// deletes srcs (Hadoop's DistributedFileSystem.concat). The NameNode
// requires closed, non-empty sources in trg's directory whose block size
// is at most trg's; the sources take trg's replication.
func (c *Client) Concat(ctx context.Context, trg string, srcs []string) error {
	req := &hdfspb.ConcatRequestProto{Trg: proto.String(trg), Srcs: srcs}
	var resp hdfspb.ConcatResponseProto
	return pathErr("concat", trg, c.call(ctx, "concat", req, &resp))
}
