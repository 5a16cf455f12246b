// Package datatransfer implements HDFS's DataTransferProtocol (version 28),
// the streaming protocol between clients and DataNodes and between
// DataNodes: op framing, data packets, pipeline acks and chunk checksums,
// the client's block reader and pipeline writer, and the pieces a DataNode
// serves with. The bytes are Hadoop's, so Hadoop's Java client and
// github.com/colinmarc/hdfs/v2 talk to strata's DataNodes, and strata's
// client to Hadoop's.
//
// # Framing
//
// A request is a 2-byte big-endian Version, an opcode (Op) and a
// varint-delimited op message (WriteRequest, ReadRequest). The DataNode
// answers with a varint-delimited BlockOpResponseProto (WriteResponse,
// ReadResponse); WriteResponse never sends fewer than 5 bytes, because the
// Go client reads 5 before decoding.
//
// Block data travels in packets (WritePacket, PacketReader): a uint32
// payload length (4 + checksum bytes + data bytes), a uint16 header length,
// a PacketHeaderProto, one CRC32C per chunk, then the data. Chunks are 512
// bytes, cut on the block's boundaries: a packet that starts mid-chunk
// (after an hflush or an append to a partial chunk) has a first checksum
// covering only the bytes up to the next boundary (ChunkCount,
// ComputeChunks, VerifyChunks). Writers send such a packet alone, holding
// just the rest of that chunk, as Hadoop's DataNode requires. A block ends
// with an empty packet with lastPacketInBlock set; seqno −1 marks a
// writer's heartbeat, which DataNodes acknowledge like any packet.
//
// A write is acknowledged per packet, upstream, by a varint-delimited
// PipelineAckProto with one status per node from the acking node to the
// end of the pipeline (Ack, WriteAck, ReadAck, UpstreamAck).
//
// # Client side
//
// BlockReader reads a byte range of a block from one DataNode, verifying
// every packet before returning its bytes; a bad chunk is a
// *ChecksumError naming its block offset. BlockWriter streams a block
// through a pipeline, keeping sent packets until every node has
// acknowledged them, so a failure (*PipelineError, naming the failed node)
// leaves exactly Acked and Unacked to work with. BlockChecksum fetches a
// block's MD5-of-CRCs; FileChecksumMD5 combines them as Hadoop does.
//
// # DataNode side
//
// ReadRequest decodes an op; ServeReadBlock and SendBlock answer
// READ_BLOCK from a BlockSource (zero-copy with sendfile for a
// FileSource); NewBlockChecksumResponse answers BLOCK_CHECKSUM. For
// WRITE_BLOCK, PacketReader's Packet.Raw is forwarded to the next node
// unchanged, MirrorWriteOp builds the op for it, and UpstreamAck combines
// the node's own status with the downstream ack.
//
// Everything read from the network is bounded: op messages and replies
// (MaxOpSize), acks (MaxAckSize), packets (DefaultMaxPacketSize, headers
// MaxPacketHeaderLen), and the checksum count of each packet must match
// its data. The byte layout is documented in docs/format/datatransfer.md.
package datatransfer
