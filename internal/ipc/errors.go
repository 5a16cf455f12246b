package ipc

import (
	"errors"
	"fmt"
)

// Java exception classes that HDFS clients map to specific errors.
const (
	ClassIOException             = "java.io.IOException"
	ClassFileNotFound            = "java.io.FileNotFoundException"
	ClassAccessControl           = "org.apache.hadoop.security.AccessControlException"
	ClassFileAlreadyExists       = "org.apache.hadoop.fs.FileAlreadyExistsException"
	ClassPathIsNotEmptyDir       = "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException"
	ClassParentNotDirectory      = "org.apache.hadoop.fs.ParentNotDirectoryException"
	ClassIllegalArgument         = "org.apache.hadoop.HadoopIllegalArgumentException"
	ClassAlreadyBeingCreated     = "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException"
	ClassLeaseExpired            = "org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException"
	ClassSafeMode                = "org.apache.hadoop.hdfs.server.namenode.SafeModeException"
	ClassStandby                 = "org.apache.hadoop.ipc.StandbyException"
	ClassUnsupportedOperation    = "java.lang.UnsupportedOperationException"
	ClassRPCNoSuchMethod         = "org.apache.hadoop.ipc.RpcNoSuchMethodException"
	ClassRPCNoSuchProtocol       = "org.apache.hadoop.ipc.RpcNoSuchProtocolException"
	ClassRPCServerException      = "org.apache.hadoop.ipc.RpcServerException"
	ClassVersionMismatch         = "org.apache.hadoop.ipc.RPC$VersionMismatch"
	ClassInvalidPath             = "org.apache.hadoop.fs.InvalidPathException"
	ClassPathComponentTooLong    = "org.apache.hadoop.hdfs.protocol.FSLimitException$PathComponentTooLongException"
	ClassMaxDirectoryItems       = "org.apache.hadoop.hdfs.protocol.FSLimitException$MaxDirectoryItemsExceededException"
	ClassNotReplicatedYet        = "org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException"
	ClassDirectoryNotEmpty       = "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException"
	ClassUnresolvedPathException = "org.apache.hadoop.fs.UnresolvedLinkException"
)

// RemoteError is an error carried over IPC: the Java exception class name
// and message. Servers return it (or any error, sent as
// java.io.IOException) from handlers; clients receive it from Call.
type RemoteError struct {
	Class   string
	Message string
	// Code is the RpcErrorCodeProto value; 0 means ERROR_APPLICATION.
	Code int32
	// Fatal is set on the client side when the server closed the
	// connection with this error.
	Fatal bool
}

func (e *RemoteError) Error() string {
	if e.Message == "" {
		return e.Class
	}
	return e.Class + ": " + e.Message
}

// Errorf returns a RemoteError of the given Java class.
func Errorf(class, format string, args ...any) error {
	return &RemoteError{Class: class, Message: fmt.Sprintf(format, args...)}
}

// ClassOf returns the Java class of err as sent over IPC.
func ClassOf(err error) string {
	var re *RemoteError
	if errors.As(err, &re) {
		return re.Class
	}
	return ClassIOException
}

// IsClass reports whether err is a RemoteError of the given class.
func IsClass(err error, class string) bool {
	var re *RemoteError
	return errors.As(err, &re) && re.Class == class
}
