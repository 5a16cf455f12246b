package namenode

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"google.golang.org/protobuf/proto"
	"strings"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/webhdfs"
)

// Extended attributes (Hadoop's FSDirXAttrOp). The order of the checks is
// Hadoop's: the feature switch, the attribute's size, whether the caller
// may name the attribute at all, then the path (traverse), then access to
// the inode.

// reservedRaw is the prefix under which raw.* attributes are visible
// (Hadoop's /.reserved/raw); the rest of the path is an ordinary path.
const reservedRaw = "/.reserved/raw"

// rawPath strips /.reserved/raw from p, reporting whether it was there.
// Only the superuser may use such paths.
func rawPath(pc namespace.Checker, p string) (string, bool, error) {
	rest, ok := strings.CutPrefix(p, reservedRaw)
	if !ok || (rest != "" && rest[0] != '/') {
		return p, false, nil
	}
	if pc.Enabled {
		if err := pc.Superuser(""); err != nil {
			return "", false, err
		}
	}
	if rest == "" {
		rest = "/"
	}
	return rest, true, nil
}

func (s *Namesystem) checkXAttrsEnabled() error {
	if s.cfg.xattrsDisabled {
		return ipc.Errorf(ipc.ClassIOException, "The XAttr operation has been rejected.  Support for XAttrs has been disabled by setting dfs.namenode.xattrs.enabled to false.")
	}
	return nil
}

// SetXAttr sets x on p with flag (CREATE, REPLACE or both).
func (s *Namesystem) SetXAttr(ctx context.Context, p string, x namespace.XAttr, flag namespace.XAttrFlag) error {
	if err := s.checkXAttrsEnabled(); err != nil {
		return err
	}
	if err := namespace.CheckXAttrSize(x, s.cfg.xattrLimits.Size); err != nil {
		return err
	}
	return s.changeXAttr(ctx, p, x, func(n *namespace.Inode) error {
		return namespace.CheckSetXAttr(n, x, flag, s.cfg.xattrLimits.PerInode)
	}, func(p string) namespace.Edit { return namespace.SetXAttr(p, x) })
}

// RemoveXAttr removes p's attribute with x's namespace and name.
func (s *Namesystem) RemoveXAttr(ctx context.Context, p string, x namespace.XAttr) error {
	if err := s.checkXAttrsEnabled(); err != nil {
		return err
	}
	return s.changeXAttr(ctx, p, x, func(n *namespace.Inode) error {
		return namespace.CheckRemoveXAttr(n, x)
	}, func(p string) namespace.Edit { return namespace.RemoveXAttr(p, x.NS, x.Name) })
}

// changeXAttr is SetXAttr's and RemoveXAttr's common part: the API and
// change permission checks on x, then check, then the edit built for the
// path without its /.reserved/raw prefix.
func (s *Namesystem) changeXAttr(ctx context.Context, p string, x namespace.XAttr, check func(n *namespace.Inode) error, edit func(p string) namespace.Edit) error {
	pc := s.checker(ctx)
	p, raw, err := rawPath(pc, p)
	if err != nil {
		return err
	}
	if err := pc.XAttrAPI(x, raw); err != nil {
		return err
	}
	return s.setAttr(ctx, p, func(pc namespace.Checker, n *namespace.Inode) error {
		if err := pc.XAttrChange(n, x); err != nil {
			return err
		}
		return check(n)
	}, func(*namespace.Inode) (namespace.Edit, bool) { return edit(p), true })
}

// GetXAttrs returns the attributes of p that want names (their values
// ignored), or all the caller may see when want is empty. A named
// attribute that is missing fails the whole call, as in Hadoop.
func (s *Namesystem) GetXAttrs(ctx context.Context, p string, want []namespace.XAttr) ([]namespace.XAttr, error) {
	if err := s.checkXAttrsEnabled(); err != nil {
		return nil, err
	}
	pc := s.checker(ctx)
	p, raw, err := rawPath(pc, p)
	if err != nil {
		return nil, err
	}
	for _, x := range want {
		x.Value = nil // names only: a value must not trip the security xattr's rule
		if err := pc.XAttrAPI(x, raw); err != nil {
			return nil, err
		}
	}
	all, err := s.readXAttrs(pc, p, raw)
	if err != nil || len(want) == 0 {
		return all, err
	}
	out := make([]namespace.XAttr, 0, len(want))
	for _, w := range want {
		found := false
		for _, a := range all {
			if a.NS == w.NS && a.Name == w.Name {
				out = append(out, a)
				found = true
				break
			}
		}
		if !found {
			return nil, ipc.Errorf(ipc.ClassIOException, "At least one of the attributes provided was not found.")
		}
	}
	return out, nil
}

// ListXAttrs returns the attributes of p the caller may see.
func (s *Namesystem) ListXAttrs(ctx context.Context, p string) ([]namespace.XAttr, error) {
	if err := s.checkXAttrsEnabled(); err != nil {
		return nil, err
	}
	pc := s.checker(ctx)
	p, raw, err := rawPath(pc, p)
	if err != nil {
		return nil, err
	}
	return s.readXAttrs(pc, p, raw)
}

// readXAttrs returns a copy of p's attributes visible to pc, after the
// traverse and READ checks of getXAttrs and listXAttrs.
func (s *Namesystem) readXAttrs(pc namespace.Checker, p string, raw bool) ([]namespace.XAttr, error) {
	if err := s.checkPath(p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	n, err := s.resolveExisting(pc, p)
	if err != nil {
		return nil, err
	}
	if err := pc.Check(n, namespace.AccessRead); err != nil {
		return nil, err
	}
	// Values are shared with the tree, which never changes them in place
	// (Apply replaces attributes whole), so a shallow copy is safe.
	return pc.FilterXAttrs(n.XAttrs(), raw), nil
}

// maxXAttrsPerCall bounds the names one getXAttrs call may ask for: an
// inode holds few, so more is a malformed request.
const maxXAttrsPerCall = 1024

func xattrFromProto(p *hdfspb.XAttrProto) (namespace.XAttr, error) {
	if p == nil {
		return namespace.XAttr{}, ipc.Errorf(ipc.ClassIllegalArgument, "XAttr is missing")
	}
	ns := p.GetNamespace()
	if ns < hdfspb.XAttrProto_USER || ns > hdfspb.XAttrProto_RAW {
		return namespace.XAttr{}, ipc.Errorf(ipc.ClassIllegalArgument, "Invalid XAttr namespace %d", ns)
	}
	if p.GetName() == "" {
		return namespace.XAttr{}, ipc.Errorf(ipc.ClassIllegalArgument, "XAttr name cannot be empty.")
	}
	return namespace.XAttr{NS: namespace.XAttrNS(ns), Name: p.GetName(), Value: p.Value}, nil
}

func xattrProtos(xs []namespace.XAttr, values bool) []*hdfspb.XAttrProto {
	out := make([]*hdfspb.XAttrProto, len(xs))
	for i, x := range xs {
		out[i] = &hdfspb.XAttrProto{Namespace: hdfspb.XAttrProto_XAttrNamespaceProto(x.NS).Enum(), Name: proto.String(x.Name)}
		if values {
			out[i].Value = x.Value
		}
	}
	return out
}

// setXAttr and removeXAttr are @AtMostOnce in Hadoop: a retried CREATE
// must not fail on the attribute its first attempt made.
func (c *clientProtocol) setXAttr(ctx context.Context, req *hdfspb.SetXAttrRequestProto) (*hdfspb.SetXAttrResponseProto, error) {
	x, err := xattrFromProto(req.GetXAttr())
	if err != nil {
		return nil, err
	}
	_, err = atMostOnce(ctx, c.ns, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.ns.SetXAttr(ctx, req.GetSrc(), x, namespace.XAttrFlag(req.GetFlag()))
	}, nil, func(any) (struct{}, error) { return struct{}{}, nil })
	return &hdfspb.SetXAttrResponseProto{}, err
}

func (c *clientProtocol) removeXAttr(ctx context.Context, req *hdfspb.RemoveXAttrRequestProto) (*hdfspb.RemoveXAttrResponseProto, error) {
	x, err := xattrFromProto(req.GetXAttr())
	if err != nil {
		return nil, err
	}
	x.Value = nil
	_, err = atMostOnce(ctx, c.ns, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.ns.RemoveXAttr(ctx, req.GetSrc(), x)
	}, nil, func(any) (struct{}, error) { return struct{}{}, nil })
	return &hdfspb.RemoveXAttrResponseProto{}, err
}

func (c *clientProtocol) getXAttrs(ctx context.Context, req *hdfspb.GetXAttrsRequestProto) (*hdfspb.GetXAttrsResponseProto, error) {
	if len(req.GetXAttrs()) > maxXAttrsPerCall {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "getXAttrs names %d attributes, more than the limit of %d", len(req.GetXAttrs()), maxXAttrsPerCall)
	}
	var want []namespace.XAttr
	for _, p := range req.GetXAttrs() {
		x, err := xattrFromProto(p)
		if err != nil {
			return nil, err
		}
		want = append(want, x)
	}
	xs, err := c.ns.GetXAttrs(ctx, req.GetSrc(), want)
	if err != nil {
		return nil, err
	}
	return &hdfspb.GetXAttrsResponseProto{XAttrs: xattrProtos(xs, true)}, nil
}

// listXAttrs answers names only, as Hadoop's NameNode does.
func (c *clientProtocol) listXAttrs(ctx context.Context, req *hdfspb.ListXAttrsRequestProto) (*hdfspb.ListXAttrsResponseProto, error) {
	xs, err := c.ns.ListXAttrs(ctx, req.GetSrc())
	if err != nil {
		return nil, err
	}
	return &hdfspb.ListXAttrsResponseProto{XAttrs: xattrProtos(xs, false)}, nil
}

// WebHDFS: GETXATTRS, LISTXATTRS, SETXATTR, REMOVEXATTR, with Hadoop's
// JSON ({"XAttrs":[{"name":..,"value":..}]}, {"XAttrNames":"[..]"}).

type webXAttr struct {
	Name  string  `json:"name"`
	Value *string `json:"value"`
}

func webXAttrEncode(v []byte, enc string) string {
	switch enc {
	case "HEX":
		return "0x" + hex.EncodeToString(v)
	case "BASE64":
		return "0s" + base64.StdEncoding.EncodeToString(v)
	}
	return `"` + string(v) + `"`
}

// webXAttrDecode is XAttrCodec.decodeValue: "quoted" text, 0x hex, 0s
// base64, else the text itself.
func webXAttrDecode(s string) ([]byte, error) {
	if len(s) >= 2 {
		switch p := strings.ToLower(s[:2]); {
		case s[0] == '"' && s[len(s)-1] == '"':
			return []byte(s[1 : len(s)-1]), nil
		case p == "0x":
			b, err := hex.DecodeString(s[2:])
			if err != nil {
				return nil, ipc.Errorf(webhdfs.ClassJavaIllegalArgument, "Invalid value for webhdfs parameter \"xattr.value\": %v", err)
			}
			return b, nil
		case p == "0s":
			b, err := base64.StdEncoding.DecodeString(s[2:])
			if err != nil {
				return nil, ipc.Errorf(webhdfs.ClassJavaIllegalArgument, "Invalid value for webhdfs parameter \"xattr.value\": %v", err)
			}
			return b, nil
		}
	}
	return []byte(s), nil
}

func (n *NameNode) webGetXAttrs(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	// Hadoop 3 requires the encoding (validateOpParams).
	enc := strings.ToUpper(r.String("encoding"))
	switch enc {
	case "":
		return ipc.Errorf(webhdfs.ClassJavaIllegalArgument, "Required param encoding for op: GETXATTRS is null or empty")
	case "TEXT", "HEX", "BASE64":
	default:
		return ipc.Errorf(webhdfs.ClassJavaIllegalArgument, "Invalid value for webhdfs parameter \"encoding\": %s", r.String("encoding"))
	}
	var want []namespace.XAttr
	for _, name := range r.All("xattr.name") {
		x, err := namespace.ParseXAttrName(name)
		if err != nil {
			return err
		}
		want = append(want, x)
	}
	xs, err := n.ns.GetXAttrs(ctx, r.Path, want)
	if err != nil {
		return err
	}
	out := make([]webXAttr, len(xs))
	for i, x := range xs {
		out[i].Name = x.PrefixedName()
		if x.Value != nil {
			v := webXAttrEncode(x.Value, enc)
			out[i].Value = &v
		}
	}
	webhdfs.WriteJSON(w, http.StatusOK, map[string][]webXAttr{"XAttrs": out})
	return nil
}

func (n *NameNode) webListXAttrs(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	xs, err := n.ns.ListXAttrs(ctx, r.Path)
	if err != nil {
		return err
	}
	names := make([]string, len(xs))
	for i, x := range xs {
		names[i] = x.PrefixedName()
	}
	b, err := json.Marshal(names)
	if err != nil {
		return err
	}
	// Hadoop sends the names as a JSON array inside a string.
	webhdfs.WriteJSON(w, http.StatusOK, map[string]string{"XAttrNames": string(b)})
	return nil
}

func (n *NameNode) webSetXAttr(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	name, err := r.Required("xattr.name")
	if err != nil {
		return err
	}
	x, err := namespace.ParseXAttrName(name)
	if err != nil {
		return err
	}
	if r.Has("xattr.value") {
		if x.Value, err = webXAttrDecode(r.String("xattr.value")); err != nil {
			return err
		}
	}
	var flag namespace.XAttrFlag
	for _, f := range strings.Split(r.String("flag"), ",") {
		switch strings.ToUpper(strings.TrimSpace(f)) {
		case "CREATE":
			flag |= namespace.XAttrCreate
		case "REPLACE":
			flag |= namespace.XAttrReplace
		case "":
		default:
			return ipc.Errorf(webhdfs.ClassJavaIllegalArgument, "Invalid value for webhdfs parameter \"flag\": %s", r.String("flag"))
		}
	}
	return webDone(w, n.ns.SetXAttr(ctx, r.Path, x, flag))
}

func (n *NameNode) webRemoveXAttr(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	name, err := r.Required("xattr.name")
	if err != nil {
		return err
	}
	x, err := namespace.ParseXAttrName(name)
	if err != nil {
		return err
	}
	return webDone(w, n.ns.RemoveXAttr(ctx, r.Path, x))
}
