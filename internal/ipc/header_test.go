package ipc

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/ipcpb"
)

// The hand-written header codec (header.go) must write the bytes
// proto.Marshal writes and decode what proto.Unmarshal decodes.

func randomBytes(r *rand.Rand, max int) []byte {
	b := make([]byte, r.IntN(max+1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func randomInt32(r *rand.Rand) int32 {
	switch r.IntN(4) {
	case 0:
		return math.MinInt32
	case 1:
		return math.MaxInt32
	case 2:
		return int32(r.IntN(200)) - 100
	}
	return int32(r.Uint32())
}

func TestAppendRequestHeadersMatchesProto(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		id, retry := randomInt32(r), randomInt32(r)
		clientID := randomBytes(r, 20)
		method, protocol := string(randomBytes(r, 40)), string(randomBytes(r, 300))
		version := r.Uint64() >> r.IntN(64)
		rpcHdr := &ipcpb.RpcRequestHeaderProto{
			RpcKind:  ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
			RpcOp:    ipcpb.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
			CallId:   proto.Int32(id),
			ClientId: clientID,
		}
		if retry >= 0 {
			rpcHdr.RetryCount = proto.Int32(retry)
		}
		reqHdr := &ipcpb.RequestHeaderProto{MethodName: proto.String(method), DeclaringClassProtocolName: proto.String(protocol), ClientProtocolVersion: proto.Uint64(version)}
		want, err := appendFrame(nil, rpcHdr, reqHdr)
		if err != nil {
			t.Fatal(err)
		}
		got := appendRequestHeaders([]byte{0, 0, 0, 0}, id, retry, clientID, method, protocol, version)
		setFrameLength(got)
		if !bytes.Equal(got, want) {
			t.Fatalf("call %d retry %d: got %x, want %x", id, retry, got, want)
		}
	}
}

func TestAppendResponseHeaderMatchesProto(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		h := responseHeader{
			callID: uint32(randomInt32(r)),
			status: ipcpb.RpcResponseHeaderProto_RpcStatusProto(r.IntN(3)),
			retry:  randomInt32(r), hasRetry: r.IntN(2) == 0,
		}
		p := &ipcpb.RpcResponseHeaderProto{CallId: proto.Uint32(h.callID), Status: h.status.Enum(), ServerIpcVersionNum: proto.Uint32(Version)}
		if r.IntN(2) == 0 {
			h.class, h.msg, h.hasError = string(randomBytes(r, 50)), string(randomBytes(r, 400)), true
			p.ExceptionClassName, p.ErrorMsg = proto.String(h.class), proto.String(h.msg)
		}
		if r.IntN(2) == 0 {
			h.detail, h.hasDetail = ipcpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, true
			p.ErrorDetail = h.detail.Enum()
		}
		if r.IntN(3) > 0 {
			h.clientID = randomBytes(r, 16)
			p.ClientId = h.clientID
		}
		if h.hasRetry {
			p.RetryCount = proto.Int32(h.retry)
		}
		want, err := appendFrame(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		got := appendResponseHeader([]byte{0, 0, 0, 0}, &h)
		setFrameLength(got)
		if !bytes.Equal(got, want) {
			t.Fatalf("%+v: got %x, want %x", h, got, want)
		}
		// And the client reads back what the generated decoder reads.
		checkResponseHeader(t, got[4:])
	}
}

// checkRequestHeader compares decodeRPCHeader with proto.Unmarshal on one
// delimited-message-or-garbage input (the body of a frame).
func checkRequestHeader(t *testing.T, frame []byte) {
	t.Helper()
	var p ipcpb.RpcRequestHeaderProto
	_, perr := unmarshalDelimited(frame, &p)
	got, err := decodeRequest(frame)
	if (err == nil) != (perr == nil) {
		t.Fatalf("%x: decodeRequest err %v, proto.Unmarshal err %v", frame, err, perr)
	}
	if err != nil {
		return
	}
	if got.callID != p.GetCallId() || !bytes.Equal(got.clientID, p.GetClientId()) || got.retry != p.GetRetryCount() || got.kind != p.GetRpcKind() || got.op != p.GetRpcOp() {
		t.Fatalf("%x: decoded %+v, proto.Unmarshal %v", frame, got, &p)
	}
	if got.clientID == nil {
		t.Fatalf("%x: nil client id (a present, empty one is sent back)", frame)
	}
}

func checkResponseHeader(t *testing.T, frame []byte) {
	t.Helper()
	var p ipcpb.RpcResponseHeaderProto
	_, perr := unmarshalDelimited(frame, &p)
	msg, _, err := nextDelimited(frame)
	var got responseHeader
	if err == nil {
		got, err = decodeResponseHeader(msg)
	}
	if (err == nil) != (perr == nil) {
		t.Fatalf("%x: decodeResponseHeader err %v, proto.Unmarshal err %v", frame, err, perr)
	}
	if err != nil {
		return
	}
	if got.callID != p.GetCallId() || got.status != p.GetStatus() || got.class != p.GetExceptionClassName() || got.msg != p.GetErrorMsg() || got.code() != int32(p.GetErrorDetail()) {
		t.Fatalf("%x: decoded %+v, proto.Unmarshal %v", frame, got, &p)
	}
}

func checkMethodHeader(t *testing.T, msg []byte) {
	t.Helper()
	var p ipcpb.RequestHeaderProto
	perr := proto.Unmarshal(msg, &p)
	got, err := decodeMethodHeader(msg)
	if (err == nil) != (perr == nil) {
		t.Fatalf("%x: decodeMethodHeader err %v, proto.Unmarshal err %v", msg, err, perr)
	}
	if err == nil && (string(got.method) != p.GetMethodName() || string(got.protocol) != p.GetDeclaringClassProtocolName() || got.version != p.GetClientProtocolVersion()) {
		t.Fatalf("%x: decoded %+v, proto.Unmarshal %v", msg, got, &p)
	}
}

// delimited prefixes msg with its varint length.
func delimited(msg []byte) []byte {
	return append(protowire.AppendVarint(nil, uint64(len(msg))), msg...)
}

// headerSeeds are encodings the decoders must agree with proto on:
// well-formed ones and the awkward cases (repeated fields, unknown enum
// values, wrong wire types, unknown fields and groups, truncation).
func headerSeeds() [][]byte {
	tag := func(b []byte, num protowire.Number, typ protowire.Type) []byte {
		return protowire.AppendTag(b, num, typ)
	}
	var seeds [][]byte
	good, _ := proto.Marshal(&ipcpb.RpcRequestHeaderProto{RpcKind: ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(), CallId: proto.Int32(-7), ClientId: []byte("0123456789abcdef"), RetryCount: proto.Int32(3)})
	seeds = append(seeds, good, good[:len(good)-1], nil)
	var b []byte
	b = tag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 9) // unknown RpcKindProto
	b = tag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, 1<<40) // unknown after truncation to int32
	b = tag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, 1<<35|5) // truncated to 32 bits before zigzag
	b = tag(b, 4, protowire.BytesType)
	b = protowire.AppendBytes(b, nil) // present and empty
	b = tag(b, 3, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte("wrong wire type"))
	b = tag(b, 99, protowire.StartGroupType)
	b = tag(b, 1, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, 1)
	b = tag(b, 99, protowire.EndGroupType)
	b = tag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, protowire.EncodeZigZag(-1)) // last one wins
	seeds = append(seeds, b)
	seeds = append(seeds, tag(nil, 0, protowire.VarintType))                         // field 0
	seeds = append(seeds, tag(append([]byte{}, good...), 5, protowire.EndGroupType)) // stray end group
	seeds = append(seeds, append(tag(append([]byte{}, good...), 6, protowire.Fixed64Type), 1, 2))
	m, _ := proto.Marshal(&ipcpb.RequestHeaderProto{MethodName: proto.String("mkdirs"), DeclaringClassProtocolName: proto.String("p"), ClientProtocolVersion: proto.Uint64(1)})
	seeds = append(seeds, m, m[:len(m)-2])
	rh, _ := proto.Marshal(&ipcpb.RpcResponseHeaderProto{CallId: proto.Uint32(1), Status: ipcpb.RpcResponseHeaderProto_ERROR.Enum(), ErrorDetail: ipcpb.RpcResponseHeaderProto_ERROR_NO_SUCH_METHOD.Enum(), ErrorMsg: proto.String("x")})
	seeds = append(seeds, rh, append(tag(append([]byte{}, rh...), 6, protowire.VarintType), 7, tag(nil, 6, protowire.VarintType)[0], 99))
	return seeds
}

func TestHeaderDecodersAgreeWithProto(t *testing.T) {
	for _, s := range headerSeeds() {
		checkRequestHeader(t, delimited(s))
		checkResponseHeader(t, delimited(s))
		checkMethodHeader(t, s)
	}
}

// FuzzHeaderDecoders: on any input the hand-written decoders fail exactly
// when proto.Unmarshal does, and otherwise decode the same values.
func FuzzHeaderDecoders(f *testing.F) {
	for _, s := range headerSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkRequestHeader(t, delimited(b))
		checkResponseHeader(t, delimited(b))
		checkMethodHeader(t, b)
	})
}

func TestClientIDShared(t *testing.T) {
	frame, _ := appendFrame(nil, &ipcpb.RpcRequestHeaderProto{CallId: proto.Int32(1), ClientId: []byte("0123456789abcdef")})
	body := frame[4:]
	first, err := decodeRequestWith(body, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := decodeRequestWith(body, first.clientID)
	if err != nil {
		t.Fatal(err)
	}
	if &second.clientID[0] != &first.clientID[0] {
		t.Error("an equal client id was copied, not shared")
	}
	body[len(body)-1] = 'X' // the frame's bytes change: no decoded id may alias them
	if string(first.clientID) != "0123456789abcdef" {
		t.Errorf("client id aliases the frame: %q", first.clientID)
	}
	third, _ := decodeRequestWith(body, first.clientID)
	if string(third.clientID) != "0123456789abcdeX" {
		t.Errorf("different client id decoded as %q", third.clientID)
	}
}
