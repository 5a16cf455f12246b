package ipc

import (
	"context"

	"google.golang.org/protobuf/proto"
)

// Around returns m with wrap around its handler: wrap receives the decoded
// request and the handler, and returns what the call answers. A server uses
// it to rewrite requests or responses of many methods in one place.
func (m Method) Around(wrap func(ctx context.Context, req proto.Message, next func(context.Context, proto.Message) (proto.Message, error)) (proto.Message, error)) Method {
	inner := m.handle
	return Method{
		newRequest: m.newRequest,
		handle: func(ctx context.Context, req proto.Message) (proto.Message, error) {
			return wrap(ctx, req, inner)
		},
	}
}
