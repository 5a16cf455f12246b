package datanode_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/testcluster"
)

// TestConcurrentMovesShareBandwidth: moves sharing the balancing
// bandwidth take longer together than one move alone would at full
// bandwidth (twice over, plus the socket timeout); they must all finish,
// the target saying IN_PROGRESS meanwhile, not time out.
func TestConcurrentMovesShareBandwidth(t *testing.T) {
	const (
		size  = 1 << 20
		moves = 6
	)
	c := testcluster.New(t, testcluster.Config{DataNodes: 2, DataNode: func(_ int, dc *datanode.Config) {
		// One block a second: the six take 6 s, more than 2 s + 2×1 s,
		// while a packet waits about 6×64 KiB / 1 MiB/s, well under 2 s.
		dc.BalanceBandwidth = size
		dc.SocketTimeout = 2 * time.Second
	}})
	cl := c.Client(c.Superuser())
	ctx := context.Background()
	data := bytes.Repeat([]byte("m"), size)
	type blk struct {
		id, gs uint64
	}
	var onZero []blk
	for i := 0; len(onZero) < moves; i++ {
		if i > 40 {
			t.Fatal("too few blocks landed on DataNode 0")
		}
		p := fmt.Sprintf("/m%d", i)
		w, err := cl.CreateFile(ctx, p, fs.CreateOptions{Replication: 1})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		locs, err := cl.BlockLocations(ctx, p)
		if err != nil || len(locs) != 1 {
			t.Fatalf("locations: %v %v", locs, err)
		}
		if c.DataNodeByAddr(locs[0].Hosts[0]) == 0 {
			onZero = append(onZero, blk{locs[0].BlockID, locs[0].GenStamp})
		}
	}
	src, dst := c.DataNode(0), c.DataNode(1)
	pool := src.Status().Pool
	host, port, _ := net.SplitHostPort(c.DataNodeAddr(0))
	var xfer uint32
	fmt.Sscan(port, &xfer)
	proxy := &hdfspb.DatanodeInfoProto{Id: &hdfspb.DatanodeIDProto{IpAddr: proto.String(host), HostName: proto.String("dn0"),
		DatanodeUuid: proto.String(src.Status().UUID), XferPort: proto.Uint32(xfer), InfoPort: proto.Uint32(1), IpcPort: proto.Uint32(1)}}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, moves)
	progress := make([]int, moves)
	for i, b := range onZero {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.DialTimeout("tcp", c.DataNodeAddr(1), 5*time.Second)
			if err != nil {
				errs[i] = err
				return
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(60 * time.Second))
			op := &hdfspb.OpReplaceBlockProto{
				Header: &hdfspb.BaseHeaderProto{
					Block: &hdfspb.ExtendedBlockProto{PoolId: proto.String(pool), BlockId: proto.Uint64(b.id),
						GenerationStamp: proto.Uint64(b.gs), NumBytes: proto.Uint64(size)},
					Token: datanode.MintToken(dst, "balancer", b.id, blocktoken.Replace, blocktoken.Copy),
				},
				DelHint: proto.String(src.Status().UUID), Source: proxy,
			}
			if err := datatransfer.WriteRequest(conn, datatransfer.OpReplaceBlock, op); err != nil {
				errs[i] = err
				return
			}
			in := bufio.NewReader(conn)
			for {
				resp, err := datatransfer.ReadResponse(in)
				if err != nil {
					errs[i] = err
					return
				}
				if resp.GetStatus() == hdfspb.Status_IN_PROGRESS {
					progress[i]++
					continue
				}
				if resp.GetStatus() != hdfspb.Status_SUCCESS {
					errs[i] = fmt.Errorf("%v: %s", resp.GetStatus(), resp.GetMessage())
				}
				return
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	for i, err := range errs {
		if err != nil {
			t.Errorf("move %d after %v: %v", i, took, err)
		}
	}
	if took < 4500*time.Millisecond {
		t.Fatalf("%d moves of a second's bandwidth each took %v: the test does not exercise sharing", moves, took)
	}
	total := 0
	for _, n := range progress {
		total += n
	}
	if total == 0 {
		t.Error("no IN_PROGRESS while the moves ran")
	}
}
