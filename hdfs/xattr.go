package hdfs

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// Extended attributes. Names carry their namespace prefix, "user.tag",
// as Hadoop's FileSystem xattr API takes them; the prefix is
// case-insensitive and sent as the namespace enum.

// XAttr set flags (Hadoop's XAttrSetFlag): CREATE fails on an existing
// attribute, REPLACE on a missing one; both set either.
const (
	XAttrCreate  = 1
	XAttrReplace = 2
)

var xattrNamespaces = []string{"user", "trusted", "security", "system", "raw"}

// xattrProto builds the attribute named name (as XAttrHelper.buildXAttr);
// value nil sends no value.
func xattrProto(name string, value []byte) (*hdfspb.XAttrProto, error) {
	i := strings.IndexByte(name, '.')
	if i < 3 {
		return nil, fmt.Errorf("An XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.'")
	}
	if i == len(name)-1 {
		return nil, fmt.Errorf("XAttr name cannot be empty.")
	}
	for ns, p := range xattrNamespaces {
		if strings.EqualFold(name[:i], p) {
			return &hdfspb.XAttrProto{
				Namespace: hdfspb.XAttrProto_XAttrNamespaceProto(ns).Enum(),
				Name:      proto.String(name[i+1:]), Value: value,
			}, nil
		}
	}
	return nil, fmt.Errorf("An XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.'")
}

func xattrName(x *hdfspb.XAttrProto) string {
	ns := int(x.GetNamespace())
	if ns < len(xattrNamespaces) {
		return xattrNamespaces[ns] + "." + x.GetName()
	}
	return x.GetName()
}

// SetXAttr sets attribute name of p to value (nil: an attribute without
// a value) with flag, XAttrCreate|XAttrReplace to create or replace.
func (c *Client) SetXAttr(ctx context.Context, p, name string, value []byte, flag int) error {
	x, err := xattrProto(name, value)
	if err != nil {
		return err
	}
	req := &hdfspb.SetXAttrRequestProto{Src: proto.String(p), XAttr: x, Flag: proto.Uint32(uint32(flag))}
	return pathErr("setxattr", p, c.call(ctx, "setXAttr", req, &hdfspb.SetXAttrResponseProto{}))
}

// GetXAttrs returns p's attributes by prefixed name: those named, or
// every one the caller may see when names is empty. A value-less
// attribute maps to an empty value.
func (c *Client) GetXAttrs(ctx context.Context, p string, names ...string) (map[string][]byte, error) {
	req := &hdfspb.GetXAttrsRequestProto{Src: proto.String(p)}
	for _, n := range names {
		x, err := xattrProto(n, nil)
		if err != nil {
			return nil, err
		}
		req.XAttrs = append(req.XAttrs, x)
	}
	var resp hdfspb.GetXAttrsResponseProto
	if err := c.call(ctx, "getXAttrs", req, &resp); err != nil {
		return nil, pathErr("getxattrs", p, err)
	}
	out := make(map[string][]byte, len(resp.XAttrs))
	for _, x := range resp.XAttrs {
		v := x.GetValue()
		if v == nil {
			v = []byte{}
		}
		out[xattrName(x)] = v
	}
	return out, nil
}

// ListXAttrs returns the prefixed names of p's attributes the caller may
// see.
func (c *Client) ListXAttrs(ctx context.Context, p string) ([]string, error) {
	var resp hdfspb.ListXAttrsResponseProto
	if err := c.call(ctx, "listXAttrs", &hdfspb.ListXAttrsRequestProto{Src: proto.String(p)}, &resp); err != nil {
		return nil, pathErr("listxattrs", p, err)
	}
	out := make([]string, len(resp.XAttrs))
	for i, x := range resp.XAttrs {
		out[i] = xattrName(x)
	}
	return out, nil
}

// RemoveXAttr removes attribute name from p.
func (c *Client) RemoveXAttr(ctx context.Context, p, name string) error {
	x, err := xattrProto(name, nil)
	if err != nil {
		return err
	}
	req := &hdfspb.RemoveXAttrRequestProto{Src: proto.String(p), XAttr: x}
	return pathErr("removexattr", p, c.call(ctx, "removeXAttr", req, &hdfspb.RemoveXAttrResponseProto{}))
}
