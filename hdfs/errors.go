package hdfs

import (
	"errors"
	"os"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/ipcpb"
)

// RemoteError is an error the NameNode returned: its Java exception class
// and message. Is matches the os/fs sentinel the class corresponds to.
type RemoteError struct {
	Class   string
	Message string
	kind    error
}

func (e *RemoteError) Error() string {
	if e.Message == "" {
		return e.Class
	}
	return e.Message
}

// Is reports whether the error corresponds to target (os.ErrNotExist, ...).
func (e *RemoteError) Is(target error) bool { return e.kind != nil && target == e.kind }

var classKinds = map[string]error{
	ipc.ClassFileNotFound:        os.ErrNotExist,
	ipc.ClassAccessControl:       os.ErrPermission,
	ipc.ClassFileAlreadyExists:   os.ErrExist,
	ipc.ClassAlreadyBeingCreated: os.ErrExist,
	ipc.ClassPathIsNotEmptyDir:   fs.ErrNotEmpty,
	ipc.ClassParentNotDirectory:  fs.ErrNotDir,
	ipc.ClassIllegalArgument:     fs.ErrInvalid,
	ipc.ClassInvalidPath:         fs.ErrInvalid,
}

// wrapErr converts an IPC error into the package's error form.
func wrapErr(err error) error {
	var re *ipc.RemoteError
	if !errors.As(err, &re) {
		return err
	}
	kind := classKinds[re.Class]
	if authRefusal(re) {
		// The server refused the connection's authentication: a fact
		// about the client, not about a path; its text is the news.
		kind = nil
	}
	return &RemoteError{Class: re.Class, Message: re.Message, kind: kind}
}

// authRefusal reports a server's refusal of a connection's
// authentication (secure mode: no ticket, a refused ticket or
// impersonation); other fatal errors keep their kind.
func authRefusal(re *ipc.RemoteError) bool {
	return re.Fatal && re.Code == int32(ipcpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED)
}

// pathErr builds an *os.PathError whose Err is the remote error or sentinel.
func pathErr(op, p string, err error) error {
	if err == nil {
		return nil
	}
	return &os.PathError{Op: op, Path: p, Err: wrapErr(err)}
}
