package hdfs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// Short-circuit local reads: for a replica on this host, the client asks
// the DataNode over its Unix domain socket for the open block and meta
// files and reads them directly, verifying the CRCs itself. Enabled by
// Options.ShortCircuitSocket (dfs.client.read.shortcircuit with
// dfs.domain.socket.path). Any failure falls back to reading over TCP.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// metaHeaderLen is the meta file's header: version (2), checksum type (1),
// bytes per checksum (4).
const metaHeaderLen = 7

var (
	localIPsOnce sync.Once
	localIPs     map[string]bool
)

// isLocalIP reports whether ip belongs to this host.
func isLocalIP(ip string) bool {
	localIPsOnce.Do(func() {
		localIPs = map[string]bool{}
		addrs, _ := net.InterfaceAddrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				localIPs[n.IP.String()] = true
			}
		}
	})
	p := net.ParseIP(ip)
	return p != nil && (p.IsLoopback() || localIPs[p.String()])
}

// A LocalReplicaOpener opens replicas held by the process the Client runs
// in (Options.LocalReplicas): the in-process form of short-circuit reads.
type LocalReplicaOpener interface {
	// OpenLocalReplica returns the open data and meta files (the caller
	// closes them) and the readable length of block b if the DataNode
	// whose UUID is datanodeUUID is this process and holds a finalized
	// replica of it, after checking token as a READ_BLOCK would; an error
	// otherwise.
	OpenLocalReplica(datanodeUUID string, b *hdfspb.ExtendedBlockProto, token *hdfspb.TokenProto) (data, meta *os.File, length int64, err error)
}

// openInProcess returns a reader of [offset, offset+length) of block lb
// from a replica Options.LocalReplicas holds, among the live ones; nil if
// none.
func (r *FileReader) openInProcess(lb *hdfspb.LocatedBlockProto, offset, length int64) (*localBlockReader, *hdfspb.DatanodeInfoProto) {
	if r.c.opts.LocalReplicas == nil {
		return nil, nil
	}
	for _, loc := range lb.GetLocs() {
		if r.dead[loc.GetId().GetDatanodeUuid()] {
			continue
		}
		data, meta, blockLen, err := r.c.opts.LocalReplicas.OpenLocalReplica(loc.GetId().GetDatanodeUuid(), lb.GetB(), lb.GetBlockToken())
		if err == nil {
			return &localBlockReader{data: data, meta: meta, pos: offset, end: min(offset+length, blockLen), blockLen: blockLen, bpc: datatransfer.BytesPerChecksum}, loc
		}
	}
	return nil, nil
}

// openLocal asks the DataNode at loc for the files of block lb and returns
// a reader of [offset, offset+length) of the block.
func (c *Client) openLocal(loc *hdfspb.DatanodeInfoProto, lb *hdfspb.LocatedBlockProto, offset, length int64) (*localBlockReader, error) {
	if c.opts.ShortCircuitSocket == "" || !isLocalIP(loc.GetId().GetIpAddr()) {
		return nil, errNoShortCircuit
	}
	path := strings.ReplaceAll(c.opts.ShortCircuitSocket, "_PORT", strconv.Itoa(int(loc.GetId().GetXferPort())))
	conn, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	uc := conn.(*net.UnixConn)
	uc.SetDeadline(time.Now().Add(10 * time.Second))
	op := &hdfspb.OpRequestShortCircuitAccessProto{
		Header:     &hdfspb.BaseHeaderProto{Block: lb.GetB(), Token: lb.GetBlockToken()},
		MaxVersion: proto.Uint32(1),
	}
	if err := datatransfer.WriteRequest(uc, datatransfer.OpRequestShortCircuitFds, op); err != nil {
		return nil, err
	}
	buf := make([]byte, 4096)
	oob := make([]byte, syscall.CmsgSpace(2*4))
	n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, err
	}
	msgLen, vlen := protowire.ConsumeVarint(buf[:n])
	if vlen < 0 || int(msgLen) > n-vlen {
		closeRights(oob[:oobn])
		return nil, errors.New("short-circuit: bad response")
	}
	var resp hdfspb.BlockOpResponseProto
	if err := proto.Unmarshal(buf[vlen:vlen+int(msgLen)], &resp); err != nil {
		closeRights(oob[:oobn])
		return nil, err
	}
	if resp.GetStatus() != hdfspb.Status_SUCCESS {
		closeRights(oob[:oobn])
		return nil, &datatransfer.ResponseError{Op: datatransfer.OpRequestShortCircuitFds, Status: resp.GetStatus(), Message: resp.GetMessage()}
	}
	if oobn == 0 {
		// Hadoop's DataNode (and this one) send the descriptors in a
		// one-byte message of their own after the response; an older
		// DataNode of this project attached them to the response.
		var b [1]byte
		if _, oobn, _, _, err = uc.ReadMsgUnix(b[:], oob); err != nil {
			return nil, err
		}
	}
	files, err := parseRights(oob[:oobn])
	if err != nil {
		return nil, err
	}
	if len(files) != 2 {
		for _, f := range files {
			f.Close()
		}
		return nil, fmt.Errorf("short-circuit: got %d file descriptors, want 2", len(files))
	}
	blockLen, err := strconv.ParseInt(resp.GetMessage(), 10, 64)
	if err != nil {
		blockLen = int64(lb.GetB().GetNumBytes())
	}
	return &localBlockReader{data: files[0], meta: files[1], pos: offset, end: min(offset+length, blockLen), blockLen: blockLen, bpc: datatransfer.BytesPerChecksum}, nil
}

var errNoShortCircuit = errors.New("short-circuit reads are off for this replica")

func parseRights(oob []byte) ([]*os.File, error) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var files []*os.File
	for _, m := range msgs {
		fds, err := syscall.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			files = append(files, os.NewFile(uintptr(fd), "short-circuit"))
		}
	}
	return files, nil
}

func closeRights(oob []byte) {
	files, _ := parseRights(oob)
	for _, f := range files {
		f.Close()
	}
}

// localBlockReader reads a block range from the replica's own files,
// checking every chunk against its stored CRC32C.
type localBlockReader struct {
	data, meta *os.File
	pos, end   int64
	blockLen   int64
	bpc        int
	chunk      []byte
	sums       []byte
}

func (r *localBlockReader) Read(p []byte) (int, error) {
	if r.pos >= r.end {
		return 0, io.EOF
	}
	bpc := int64(r.bpc)
	if r.pos%bpc == 0 && int64(len(p)) >= bpc {
		// Whole chunks from pos fit in p: read and verify them there.
		n := min(int64(len(p)), r.end-r.pos)
		if n < r.end-r.pos || r.end < r.blockLen {
			n -= n % bpc // the last chunk returned must be whole...
		}
		if n > 0 { // ...unless it is the block's own last, partial one
			return r.readChunks(p[:n])
		}
	}
	// Read whole chunks around pos (up to 64 KiB), verify, copy out.
	// Whole chunks (the stored CRCs cover whole chunks), up to the
	// block's end; only [pos, end) is returned.
	start := r.pos - r.pos%bpc
	stop := min(r.end, start+min(int64(max(len(p), r.bpc)), 64<<10))
	if rem := stop % bpc; rem != 0 {
		stop = min(stop-rem+bpc, r.blockLen)
	}
	n := int(stop - start)
	if cap(r.chunk) < n {
		r.chunk = make([]byte, n)
	}
	buf := r.chunk[:n]
	if _, err := r.data.ReadAt(buf, start); err != nil && err != io.EOF {
		return 0, err
	}
	chunks := (n + r.bpc - 1) / r.bpc
	if cap(r.sums) < chunks*4 {
		r.sums = make([]byte, chunks*4)
	}
	sums := r.sums[:chunks*4]
	if _, err := r.meta.ReadAt(sums, metaHeaderLen+start/bpc*4); err != nil {
		return 0, err
	}
	for i := 0; i < chunks; i++ {
		c := buf[i*r.bpc : min(n, (i+1)*r.bpc)]
		if crc32.Checksum(c, castagnoli) != binary.BigEndian.Uint32(sums[i*4:]) {
			return 0, &datatransfer.ChecksumError{Offset: start + int64(i*r.bpc)}
		}
	}
	m := copy(p, buf[r.pos-start:min(int64(n), r.end-start)])
	r.pos += int64(m)
	return m, nil
}

// readChunks reads the chunks starting at pos (chunk-aligned) into p,
// which ends on a chunk boundary or at the block's end, and verifies them.
func (r *localBlockReader) readChunks(p []byte) (int, error) {
	n, err := r.data.ReadAt(p, r.pos)
	if n < len(p) {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("short-circuit: block file ended at offset %d, before %d: %w", r.pos+int64(n), r.pos+int64(len(p)), io.ErrUnexpectedEOF)
		}
		return 0, err
	}
	chunks := (len(p) + r.bpc - 1) / r.bpc
	if cap(r.sums) < chunks*4 {
		r.sums = make([]byte, chunks*4)
	}
	sums := r.sums[:chunks*4]
	if _, err := r.meta.ReadAt(sums, metaHeaderLen+r.pos/int64(r.bpc)*4); err != nil {
		return 0, err
	}
	for i := 0; i < chunks; i++ {
		c := p[i*r.bpc : min(len(p), (i+1)*r.bpc)]
		if crc32.Checksum(c, castagnoli) != binary.BigEndian.Uint32(sums[i*4:]) {
			return 0, &datatransfer.ChecksumError{Offset: r.pos + int64(i*r.bpc)}
		}
	}
	r.pos += int64(len(p))
	return len(p), nil
}

func (r *localBlockReader) Close() error {
	return errors.Join(r.data.Close(), r.meta.Close())
}
