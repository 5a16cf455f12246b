package datatransfer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// ErrAccessToken is matched (errors.Is) by errors for replies with status
// ERROR_ACCESS_TOKEN: the block token was refused, so fetch a new one from
// the NameNode rather than trying another DataNode.
var ErrAccessToken = errors.New("datatransfer: block access token refused")

// ResponseError is a DataNode's non-SUCCESS reply to an op.
type ResponseError struct {
	Op      Op
	Status  hdfspb.Status
	Message string // the DataNode's explanation, may be empty
}

func (e *ResponseError) Error() string {
	s := fmt.Sprintf("datatransfer: %v refused: %v", e.Op, e.Status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is makes errors.Is(err, ErrAccessToken) true for ERROR_ACCESS_TOKEN.
func (e *ResponseError) Is(target error) bool {
	return target == ErrAccessToken && e.Status == hdfspb.Status_ERROR_ACCESS_TOKEN
}

// pastDeadline interrupts blocked I/O on a connection.
var pastDeadline = time.Unix(1, 0)

// bindContext applies ctx's deadline to conn and makes cancelling ctx
// interrupt conn's pending and future I/O. stop releases the binding.
func bindContext(ctx context.Context, conn net.Conn) (stop func() bool) {
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
	}
	return context.AfterFunc(ctx, func() { conn.SetDeadline(pastDeadline) })
}

// ctxError returns ctx's error in place of err when ctx is done, since the
// I/O error is then only the consequence of cancelling.
func ctxError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cerr := context.Cause(ctx); cerr != nil {
		return fmt.Errorf("datatransfer: %w (%v)", cerr, err)
	}
	return err
}

// BlockChecksum asks the DataNode on conn for the MD5-of-CRCs of block
// (BLOCK_CHECKSUM). It takes ownership of conn and closes it. A refusal is
// a *ResponseError. A nil token sends Hadoop's empty token.
func BlockChecksum(ctx context.Context, conn net.Conn, block *hdfspb.ExtendedBlockProto, token *hdfspb.TokenProto) (*hdfspb.OpBlockChecksumResponseProto, error) {
	defer conn.Close()
	stop := bindContext(ctx, conn)
	defer stop()
	if token == nil {
		token = emptyToken()
	}
	op := &hdfspb.OpBlockChecksumProto{
		Header: &hdfspb.BaseHeaderProto{Block: block, Token: token},
	}
	if err := WriteRequest(conn, OpBlockChecksum, op); err != nil {
		return nil, ctxError(ctx, err)
	}
	resp, err := ReadResponse(bufio.NewReaderSize(conn, 512))
	if err != nil {
		return nil, ctxError(ctx, err)
	}
	if resp.GetStatus() != hdfspb.Status_SUCCESS {
		return nil, &ResponseError{Op: OpBlockChecksum, Status: resp.GetStatus(), Message: resp.GetMessage()}
	}
	if resp.ChecksumResponse == nil {
		return nil, errors.New("datatransfer: BLOCK_CHECKSUM reply without checksumResponse")
	}
	return resp.ChecksumResponse, nil
}
