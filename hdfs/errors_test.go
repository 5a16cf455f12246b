package hdfs

import (
	"errors"
	"os"
	"testing"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/ipcpb"
)

// TestWrapErrKinds: a refused authentication is no path's permission
// error; any other error, fatal or not, keeps its class's kind.
func TestWrapErrKinds(t *testing.T) {
	for _, tc := range []struct {
		re   *ipc.RemoteError
		kind error
	}{
		{&ipc.RemoteError{Class: ipc.ClassAccessControl, Message: "Permission denied"}, os.ErrPermission},
		{&ipc.RemoteError{Class: ipc.ClassAccessControl, Fatal: true, Code: int32(ipcpb.RpcResponseHeaderProto_FATAL_UNKNOWN)}, os.ErrPermission},
		{&ipc.RemoteError{Class: ipc.ClassFileNotFound, Fatal: true}, os.ErrNotExist},
		{&ipc.RemoteError{Class: ipc.ClassAccessControl, Fatal: true, Code: int32(ipcpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED), Message: "SIMPLE authentication is not enabled."}, nil},
	} {
		err := wrapErr(tc.re)
		if tc.kind != nil && !errors.Is(err, tc.kind) {
			t.Errorf("%+v: not %v", tc.re, tc.kind)
		}
		if tc.kind == nil && errors.Is(err, os.ErrPermission) {
			t.Errorf("%+v: an authentication refusal became a permission error", tc.re)
		}
	}
}
