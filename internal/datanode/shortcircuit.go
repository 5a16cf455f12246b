package datanode

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// Short-circuit local reads: a client on this host connects to the
// DataNode's Unix domain socket (dfs.domain.socket.path, "_PORT" replaced
// by the transfer port, as in Hadoop) and sends REQUEST_SHORT_CIRCUIT_FDS;
// the DataNode answers with the BlockOpResponseProto and, in the same
// message, the open data and meta files of the replica (SCM_RIGHTS). The
// client then reads the block file itself, verifying its CRCs, with no
// TCP connection and no copy through the DataNode. The same socket serves
// every other op too, like the TCP port.

// DomainSocketPath returns the socket path for a DataNode whose transfer
// address is xferAddr.
func DomainSocketPath(pattern, xferAddr string) string {
	_, port, _ := net.SplitHostPort(xferAddr)
	return strings.ReplaceAll(pattern, "_PORT", port)
}

// listenDomainSocket starts the Unix socket when configured.
func (d *DataNode) listenDomainSocket() error {
	if d.cfg.DomainSocketPath == "" {
		return nil
	}
	p := DomainSocketPath(d.cfg.DomainSocketPath, d.XferAddr())
	os.Remove(p) // a socket file left by a previous process
	ln, err := net.Listen("unix", p)
	if err != nil {
		return fmt.Errorf("datanode: domain socket %s: %w", p, err)
	}
	d.unixLn = ln
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.acceptLoop(ln)
	}()
	return nil
}

// requestShortCircuitFds serves op 87 on a Unix socket.
func (d *DataNode) requestShortCircuitFds(c *peerConn, m *hdfspb.OpRequestShortCircuitAccessProto) error {
	if err := d.checkAccess(c, c, datatransfer.OpRequestShortCircuitFds, m.GetHeader().GetBlock(), m.GetHeader().GetToken(), blocktoken.Read); err != nil {
		return err
	}
	uc, ok := c.Conn.(*net.UnixConn)
	if !ok {
		return datatransfer.WriteResponse(c, errResponse(hdfspb.Status_ERROR_UNSUPPORTED, "short-circuit access needs the DataNode's Unix domain socket"))
	}
	b := blockOf(m.GetHeader().GetBlock())
	r, err := d.data.OpenForRead(b)
	if err != nil {
		return datatransfer.WriteResponse(c, errResponse(hdfspb.Status_ERROR, err.Error()))
	}
	defer r.Close()
	df, mf := r.DataFile(), r.MetaFile()
	if df == nil || mf == nil || r.Info().State != 0 {
		return datatransfer.WriteResponse(c, errResponse(hdfspb.Status_ERROR_UNSUPPORTED, "short-circuit access is only for finalized replicas on local files"))
	}
	resp := &hdfspb.BlockOpResponseProto{Status: hdfspb.Status_SUCCESS.Enum(), ShortCircuitAccessVersion: proto.Uint32(1),
		Message: proto.String(strconv.FormatInt(r.Length(), 10))}
	var buf bytesBuffer
	if err := datatransfer.WriteResponse(&buf, resp); err != nil {
		return err
	}
	// As Hadoop's DataXceiver: the response, then the descriptors with a
	// message of their own, one byte saying whether the client is to
	// confirm their receipt (only if it said it would).
	uc.SetWriteDeadline(time.Now().Add(d.cfg.SocketWriteTimeout))
	if _, err := uc.Write(buf.b); err != nil {
		return err
	}
	verify := m.GetSupportsReceiptVerification()
	flag := []byte{byte(hdfspb.ShortCircuitFdResponse_DO_NOT_USE_RECEIPT_VERIFICATION)}
	if verify {
		flag[0] = byte(hdfspb.ShortCircuitFdResponse_USE_RECEIPT_VERIFICATION)
	}
	rights := syscall.UnixRights(int(df.Fd()), int(mf.Fd()))
	n, oobn, err := uc.WriteMsgUnix(flag, rights, nil)
	if err == nil && (n != len(flag) || oobn != len(rights)) {
		err = errors.New("short write of the file descriptors")
	}
	if err == nil && verify {
		uc.SetReadDeadline(time.Now().Add(d.cfg.SocketTimeout))
		var ack [1]byte
		if _, err = io.ReadFull(uc, ack[:]); err != nil {
			err = fmt.Errorf("short-circuit: no receipt of the file descriptors: %w", err)
		}
	}
	if err == nil {
		d.stats.ShortCircuitReads.Add(1)
	}
	return err
}

// OpenLocalReplica implements hdfs.LocalReplicaOpener for the clients
// this DataNode makes for its own gateway (WebHDFS): a replica it holds is
// read from its files in-process, after the same token check as a
// READ_BLOCK, instead of over a TCP connection to itself.
func (d *DataNode) OpenLocalReplica(uuid string, eb *hdfspb.ExtendedBlockProto, tok *hdfspb.TokenProto) (*os.File, *os.File, int64, error) {
	if uuid != d.data.DatanodeUUID() {
		return nil, nil, 0, errNotHere
	}
	if err := d.checkAccess(io.Discard, nil, datatransfer.OpReadBlock, eb, tok, blocktoken.Read); err != nil {
		return nil, nil, 0, err
	}
	r, err := d.data.OpenForRead(blockOf(eb))
	if err != nil {
		return nil, nil, 0, err
	}
	defer r.Close()
	df, mf := r.DataFile(), r.MetaFile()
	if df == nil || mf == nil || r.Info().State != 0 {
		return nil, nil, 0, errNotHere
	}
	data, err := dupFile(df)
	if err != nil {
		return nil, nil, 0, err
	}
	meta, err := dupFile(mf)
	if err != nil {
		data.Close()
		return nil, nil, 0, err
	}
	d.stats.ShortCircuitReads.Add(1)
	return data, meta, r.Length(), nil
}

var errNotHere = errors.New("datanode: no finalized local replica for an in-process read")

// dupFile returns an independent descriptor for f's open file.
func dupFile(f *os.File) (*os.File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd int
	var derr error
	// F_DUPFD_CLOEXEC: no window in which a child started meanwhile (a
	// streaming task of strata local) inherits the block file.
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

type bytesBuffer struct{ b []byte }

func (w *bytesBuffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
