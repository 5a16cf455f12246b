package ipc

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/stratafs/strata/internal/proto/ipcpb"
)

// The headers every call carries (RpcRequestHeaderProto and
// RequestHeaderProto one way, RpcResponseHeaderProto the other) are
// encoded and decoded here by hand rather than through proto.Marshal and
// proto.Unmarshal: they are a handful of scalar fields, and the generic
// path's reflection and allocations were a tenth of a small call's CPU.
// The bytes are the ones proto.Marshal writes (fields in number order,
// proto2 presence), and decoding follows proto.Unmarshal's rules: the last
// occurrence of a field wins, a field of the wrong wire type is an unknown
// field (skipped), an enum keeps any value (the Go runtime treats proto2
// enums as open), malformed input and missing required fields are errors. header_test.go checks both
// against the generated code.

var (
	errMissingCallID   = errors.New("ipc: RpcRequestHeaderProto: required field callId not set")
	errMissingClientID = errors.New("ipc: RpcRequestHeaderProto: required field clientId not set")
	errBadField        = errors.New("ipc: malformed protobuf field")
)

// fields walks the fields of one encoded message, calling f with each
// field's number, wire type and value bytes (for varints, the decoded
// value is passed as v). It fails on malformed input as proto.Unmarshal
// does: a bad tag, a field number out of range, a truncated value, or a
// stray end group.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v uint64, val []byte)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num > protowire.MaxValidNumber {
			return errBadField
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return errBadField
			}
			f(num, typ, v, nil)
			b = b[m:]
		case protowire.BytesType:
			val, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return errBadField
			}
			f(num, typ, 0, val)
			b = b[m:]
		default:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return errBadField
			}
			b = b[m:]
		}
	}
	return nil
}

// decodeRPCHeader decodes an RpcRequestHeaderProto into r (its callID,
// clientID, retry, kind and op). last is the connection's previous client
// id: when the new one is equal it is shared rather than copied (a
// connection's calls all carry the same one), so r.clientID never aliases
// b.
func decodeRPCHeader(b []byte, r *request, last []byte) error {
	var haveCall, haveClient bool
	var clientID []byte
	r.retry = retryNone
	r.kind, r.op = ipcpb.RpcKindProto_RPC_BUILTIN, ipcpb.RpcRequestHeaderProto_RPC_FINAL_PACKET
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, val []byte) {
		switch {
		case num == 1 && typ == protowire.VarintType:
			r.kind = ipcpb.RpcKindProto(int32(v))
		case num == 2 && typ == protowire.VarintType:
			r.op = ipcpb.RpcRequestHeaderProto_OperationProto(int32(v))
		case num == 3 && typ == protowire.VarintType:
			r.callID, haveCall = int32(protowire.DecodeZigZag(v&0xffffffff)), true
		case num == 4 && typ == protowire.BytesType:
			clientID, haveClient = val, true
		case num == 5 && typ == protowire.VarintType:
			r.retry = int32(protowire.DecodeZigZag(v & 0xffffffff))
		}
	})
	if err != nil {
		return fmt.Errorf("ipc: decoding RpcRequestHeaderProto: %w", err)
	}
	if !haveCall {
		return errMissingCallID
	}
	if !haveClient {
		return errMissingClientID
	}
	if last != nil && string(last) == string(clientID) {
		r.clientID = last
	} else {
		r.clientID = append(make([]byte, 0, len(clientID)), clientID...)
	}
	return nil
}

// methodHeader is a decoded RequestHeaderProto. The strings alias the
// request frame's bytes only until they are looked up.
type methodHeader struct {
	method, protocol []byte
	version          uint64
}

func decodeMethodHeader(b []byte) (methodHeader, error) {
	var h methodHeader
	var have [3]bool
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, val []byte) {
		switch {
		case num == 1 && typ == protowire.BytesType:
			h.method, have[0] = val, true
		case num == 2 && typ == protowire.BytesType:
			h.protocol, have[1] = val, true
		case num == 3 && typ == protowire.VarintType:
			h.version, have[2] = v, true
		}
	})
	if err != nil {
		return h, fmt.Errorf("ipc: decoding RequestHeaderProto: %w", err)
	}
	for i, name := range []string{"methodName", "declaringClassProtocolName", "clientProtocolVersion"} {
		if !have[i] {
			return h, fmt.Errorf("ipc: RequestHeaderProto: required field %s not set", name)
		}
	}
	return h, nil
}

// appendRequestHeaders appends a call's RpcRequestHeaderProto (kind
// protocol buffer, final packet) and RequestHeaderProto, each with its
// varint length, to dst. retry < 0 sends no retry count.
func appendRequestHeaders(dst []byte, callID, retry int32, clientID []byte, method, protocol string, version uint64) []byte {
	size := 1 + 1 + // rpcKind
		1 + 1 + // rpcOp
		1 + protowire.SizeVarint(protowire.EncodeZigZag(int64(callID))) +
		1 + protowire.SizeBytes(len(clientID))
	if retry >= 0 {
		size += 1 + protowire.SizeVarint(protowire.EncodeZigZag(int64(retry)))
	}
	dst = protowire.AppendVarint(dst, uint64(size))
	dst = protowire.AppendTag(dst, 1, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER))
	dst = protowire.AppendTag(dst, 2, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(ipcpb.RpcRequestHeaderProto_RPC_FINAL_PACKET))
	dst = protowire.AppendTag(dst, 3, protowire.VarintType)
	dst = protowire.AppendVarint(dst, protowire.EncodeZigZag(int64(callID)))
	dst = protowire.AppendTag(dst, 4, protowire.BytesType)
	dst = protowire.AppendBytes(dst, clientID)
	if retry >= 0 {
		dst = protowire.AppendTag(dst, 5, protowire.VarintType)
		dst = protowire.AppendVarint(dst, protowire.EncodeZigZag(int64(retry)))
	}
	size = 1 + protowire.SizeBytes(len(method)) + 1 + protowire.SizeBytes(len(protocol)) + 1 + protowire.SizeVarint(version)
	dst = protowire.AppendVarint(dst, uint64(size))
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	dst = protowire.AppendString(dst, method)
	dst = protowire.AppendTag(dst, 2, protowire.BytesType)
	dst = protowire.AppendString(dst, protocol)
	dst = protowire.AppendTag(dst, 3, protowire.VarintType)
	return protowire.AppendVarint(dst, version)
}

// responseHeader is an RpcResponseHeaderProto without its optional
// serverIpcVersionNum, which a server always sends (Version) and a client
// ignores.
type responseHeader struct {
	callID    uint32
	status    ipcpb.RpcResponseHeaderProto_RpcStatusProto
	class     string // exceptionClassName, with status ERROR or FATAL
	msg       string // errorMsg, likewise
	detail    ipcpb.RpcResponseHeaderProto_RpcErrorCodeProto
	hasDetail bool
	clientID  []byte // nil: not sent
	retry     int32
	hasRetry  bool
	hasError  bool // class and msg are sent
}

// appendResponseHeader appends h, with serverIpcVersionNum = Version and
// its varint length, to dst.
func appendResponseHeader(dst []byte, h *responseHeader) []byte {
	size := 1 + protowire.SizeVarint(uint64(h.callID)) +
		1 + protowire.SizeVarint(uint64(h.status)) +
		1 + protowire.SizeVarint(Version)
	if h.hasError {
		size += 1 + protowire.SizeBytes(len(h.class)) + 1 + protowire.SizeBytes(len(h.msg))
	}
	if h.hasDetail {
		size += 1 + protowire.SizeVarint(uint64(int64(h.detail)))
	}
	if h.clientID != nil {
		size += 1 + protowire.SizeBytes(len(h.clientID))
	}
	if h.hasRetry {
		size += 1 + protowire.SizeVarint(protowire.EncodeZigZag(int64(h.retry)))
	}
	dst = protowire.AppendVarint(dst, uint64(size))
	dst = protowire.AppendTag(dst, 1, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(h.callID))
	dst = protowire.AppendTag(dst, 2, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(h.status))
	dst = protowire.AppendTag(dst, 3, protowire.VarintType)
	dst = protowire.AppendVarint(dst, Version)
	if h.hasError {
		dst = protowire.AppendTag(dst, 4, protowire.BytesType)
		dst = protowire.AppendString(dst, h.class)
		dst = protowire.AppendTag(dst, 5, protowire.BytesType)
		dst = protowire.AppendString(dst, h.msg)
	}
	if h.hasDetail {
		dst = protowire.AppendTag(dst, 6, protowire.VarintType)
		dst = protowire.AppendVarint(dst, uint64(int64(h.detail)))
	}
	if h.clientID != nil {
		dst = protowire.AppendTag(dst, 7, protowire.BytesType)
		dst = protowire.AppendBytes(dst, h.clientID)
	}
	if h.hasRetry {
		dst = protowire.AppendTag(dst, 8, protowire.VarintType)
		dst = protowire.AppendVarint(dst, protowire.EncodeZigZag(int64(h.retry)))
	}
	return dst
}

// decodeResponseHeader decodes the fields of an RpcResponseHeaderProto a
// client uses: call id, status, exception class, message and error code.
func decodeResponseHeader(b []byte) (responseHeader, error) {
	var h responseHeader
	var haveCall, haveStatus bool
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, val []byte) {
		switch {
		case num == 1 && typ == protowire.VarintType:
			h.callID, haveCall = uint32(v), true
		case num == 2 && typ == protowire.VarintType:
			h.status, haveStatus = ipcpb.RpcResponseHeaderProto_RpcStatusProto(int32(v)), true
		case num == 4 && typ == protowire.BytesType:
			h.class = string(val)
		case num == 5 && typ == protowire.BytesType:
			h.msg = string(val)
		case num == 6 && typ == protowire.VarintType:
			h.detail, h.hasDetail = ipcpb.RpcResponseHeaderProto_RpcErrorCodeProto(int32(v)), true
		}
	})
	if err != nil {
		return h, fmt.Errorf("ipc: decoding RpcResponseHeaderProto: %w", err)
	}
	if !haveCall || !haveStatus {
		return h, errors.New("ipc: RpcResponseHeaderProto: required field callId or status not set")
	}
	return h, nil
}

// code is the error detail as RemoteError.Code; ERROR_APPLICATION, the
// field's default, when none was sent (as the generated getter answers).
func (h *responseHeader) code() int32 {
	if !h.hasDetail {
		return int32(ipcpb.RpcResponseHeaderProto_ERROR_APPLICATION)
	}
	return int32(h.detail)
}
