package datatransfer

import (
	"bufio"
	"io"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// OOBSeqno is the seqno of an out-of-band ack (a DataNode announcing a
// restart with OOB_RESTART), Hadoop's PipelineAck.UNKOWN_SEQNO.
const OOBSeqno = -2

// Ack is a pipeline ack: the acknowledged packet's seqno and one status per
// node from the sending node to the end of the pipeline.
type Ack struct {
	Seqno int64
	// Replies holds one status per node, the sending node first.
	Replies []hdfspb.Status
	// Flags are Hadoop's per-node reply headers (status in bits 0–3, ECN in
	// bits 5–6, SLOW in 7–8). WriteAck sends Replies as flags when Flags is
	// nil; ReadAck fills it from the wire (possibly empty).
	Flags []uint32
	// DownstreamAckTimeNanos is the round trip the sender measured to its
	// downstream node, 0 at the end of the pipeline.
	DownstreamAckTimeNanos uint64
}

// OK reports whether every reply is SUCCESS.
func (a *Ack) OK() bool { return a.FirstBad() < 0 }

// FirstBad returns the index of the first non-SUCCESS reply, or -1.
func (a *Ack) FirstBad() int {
	for i, s := range a.Replies {
		if s != hdfspb.Status_SUCCESS {
			return i
		}
	}
	return -1
}

// UpstreamAck builds the ack a DataNode sends upstream for seqno: its own
// status first, then downstream's replies (flags kept), as Hadoop's
// PacketResponder does. downstream is nil at the end of the pipeline.
// When the downstream node could not be read from (mirror error), pass
// MirrorFailed instead: Hadoop answers [SUCCESS, ERROR] then, naming the
// next node as bad.
func UpstreamAck(seqno int64, local hdfspb.Status, downstream *Ack) *Ack {
	a := &Ack{Seqno: seqno, Replies: []hdfspb.Status{local}}
	if downstream == nil {
		return a
	}
	a.Replies = append(a.Replies, downstream.Replies...)
	if len(downstream.Flags) == len(downstream.Replies) && len(downstream.Flags) > 0 {
		a.Flags = append([]uint32{uint32(local)}, downstream.Flags...)
	}
	a.DownstreamAckTimeNanos = downstream.DownstreamAckTimeNanos
	return a
}

// MirrorFailed is the downstream part UpstreamAck uses after the next node
// of the pipeline failed: one ERROR reply.
var MirrorFailed = &Ack{Replies: []hdfspb.Status{hdfspb.Status_ERROR}}

// WriteAck writes a varint-delimited PipelineAckProto in a single Write,
// with both reply and flag filled as Hadoop 2.7+ sends them.
func WriteAck(w io.Writer, a *Ack) error {
	flags := a.Flags
	if len(flags) != len(a.Replies) {
		flags = make([]uint32, len(a.Replies))
		for i, s := range a.Replies {
			flags[i] = uint32(s)
		}
	}
	m := &hdfspb.PipelineAckProto{
		Seqno: proto.Int64(a.Seqno),
		Reply: a.Replies,
		Flag:  flags,
	}
	if a.DownstreamAckTimeNanos != 0 {
		m.DownstreamAckTimeNanos = proto.Uint64(a.DownstreamAckTimeNanos)
	}
	return WriteDelimited(w, m)
}

// ReadAck reads one varint-delimited PipelineAckProto (at most MaxAckSize
// bytes). A node's status is taken from its flag when flags are present
// (as Hadoop does), else from reply.
func ReadAck(r *bufio.Reader) (*Ack, error) {
	m := &hdfspb.PipelineAckProto{}
	if err := ReadDelimited(r, m, MaxAckSize); err != nil {
		return nil, err
	}
	a := &Ack{
		Seqno:                  m.GetSeqno(),
		Replies:                m.GetReply(),
		Flags:                  m.GetFlag(),
		DownstreamAckTimeNanos: m.GetDownstreamAckTimeNanos(),
	}
	for i := range a.Replies {
		if i < len(a.Flags) {
			a.Replies[i] = hdfspb.Status(a.Flags[i] & 0xf)
		}
	}
	return a, nil
}
