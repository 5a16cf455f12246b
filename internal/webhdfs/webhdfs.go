// Package webhdfs holds what the NameNode's and DataNodes' WebHDFS
// handlers share: request parsing (the /webhdfs/v1/<path>?op=... URL, its
// parameters with Hadoop's names, defaults and domains, and simple
// authentication by user.name), the JSON documents of Hadoop's WebHDFS REST
// API, and its error responses (a RemoteException object with the HTTP
// status Hadoop maps the exception to).
//
// The protocol is Hadoop's: the NameNode answers metadata operations
// itself and redirects data operations (OPEN, CREATE, APPEND,
// GETFILECHECKSUM) with 307 to a DataNode's HTTP port, which performs them
// through an HDFS client acting as the same user. The wire format is
// described in docs/format/webhdfs.md.
package webhdfs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/ipc"
)

// Prefix is the URL path prefix of every WebHDFS request.
const Prefix = "/webhdfs/v1"

// DefaultUser is the user a request without user.name acts as: Hadoop's
// hadoop.http.staticuser.user default.
const DefaultUser = "dr.who"

// Java exception classes WebHDFS reports that the IPC layer has no name
// for.
const (
	ClassJavaIllegalArgument = "java.lang.IllegalArgumentException"
	ClassSecurity            = "java.lang.SecurityException"
	ClassAuthorization       = "org.apache.hadoop.security.authorize.AuthorizationException"
)

// userPattern is dfs.webhdfs.user.provider.user.pattern's default.
var userPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9._-]*[$]?$`)

// maxParamLen bounds one parameter value; paths and names are far
// shorter, so a longer value is a malformed request.
const maxParamLen = 8192

// Request is a parsed WebHDFS request.
type Request struct {
	// Op is the operation, upper-cased (Hadoop accepts any case).
	Op string
	// Path is the absolute HDFS path after /webhdfs/v1, without a trailing
	// slash (except the root).
	Path string
	// User is the acting user: user.name, or DefaultUser.
	User string
	// params are the query parameters by lower-cased name (Hadoop's
	// parameter names are case-insensitive), first value wins.
	params map[string]string
	// multi holds every value of a repeated parameter (GETXATTRS's
	// xattr.name), in request order.
	multi map[string][]string
	// Delegation is the delegation= token, decoded but not verified (the
	// NameNode verifies it; a DataNode relies on the NameNode's signed
	// redirect); User is then its owner. Nil without one.
	Delegation *delegation.Token
}

// Op runs one operation of a parsed request.
type Op func(w http.ResponseWriter, hr *http.Request, r *Request) error

// Handler serves WebHDFS requests: it parses each one, runs its operation
// from ops (keyed "METHOD OP", e.g. "GET OPEN") and answers any error as a
// RemoteException.
func Handler(ops map[string]Op) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		r, err := Parse(hr)
		if err == nil {
			if op := ops[hr.Method+" "+r.Op]; op == nil {
				err = UnknownOp(hr.Method, r.Op)
			} else {
				err = op(w, hr, r)
			}
		}
		if err != nil {
			WriteError(w, err)
		}
	})
}

// Parse reads r's path and parameters. Its errors are IllegalArgument or
// security RemoteErrors, ready for WriteError.
func Parse(r *http.Request) (*Request, error) {
	rest, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok || (rest != "" && rest[0] != '/') {
		return nil, ipc.Errorf(ClassJavaIllegalArgument, "Invalid WebHDFS path %q: it must start with %s/", r.URL.Path, Prefix)
	}
	if rest == "" {
		rest = "/"
	}
	if len(rest) > 1 {
		rest = strings.TrimSuffix(rest, "/")
	}
	if err := checkPath(rest); err != nil {
		return nil, err
	}
	req := &Request{Path: rest, params: map[string]string{}}
	// Parameters in request order, so "first wins" holds across names
	// that differ only in case.
	for pair := range strings.SplitSeq(r.URL.RawQuery, "&") {
		if pair == "" {
			continue
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		k, err := url.QueryUnescape(rawKey)
		if err == nil {
			var v string
			if v, err = url.QueryUnescape(rawValue); err == nil {
				k = strings.ToLower(k)
				if len(v) > maxParamLen {
					return nil, invalid(k, "value longer than %d bytes", maxParamLen)
				}
				if !utf8.ValidString(v) {
					return nil, invalid(k, "value is not valid UTF-8")
				}
				if _, dup := req.params[k]; !dup {
					req.params[k] = v
				} else if len(req.multi[k]) < maxRepeatedParam {
					if req.multi == nil {
						req.multi = map[string][]string{}
					}
					if len(req.multi[k]) == 0 {
						req.multi[k] = []string{req.params[k]}
					}
					req.multi[k] = append(req.multi[k], v)
				} else {
					return nil, invalid(k, "repeated more than %d times", maxRepeatedParam)
				}
				continue
			}
		}
		return nil, ipc.Errorf(ClassJavaIllegalArgument, "Malformed query string: %v", err)
	}
	req.Op = strings.ToUpper(req.params["op"])
	if req.Op == "" {
		return nil, ipc.Errorf(ClassJavaIllegalArgument, "Invalid value for webhdfs parameter \"op\": op is missing")
	}
	req.User = DefaultUser
	if u, ok := httpauth.User(r.Context()); ok {
		// Secure mode: the SPNEGO user; user.name is ignored.
		req.User = u
	} else if u, ok := req.params["user.name"]; ok {
		if !userPattern.MatchString(u) {
			return nil, invalid("user.name", "Invalid value: %q does not belong to the domain %s", u, userPattern)
		}
		req.User = u
	}
	if err := req.parseDelegation(); err != nil {
		return nil, err
	}
	if as, ok := req.params["doas"]; ok && as != req.User {
		return nil, ipc.Errorf(ClassAuthorization, "User: %s is not allowed to impersonate %s", req.User, as)
	}
	return req, nil
}

// checkPath refuses a decoded path that is not valid UTF-8 or has an
// empty, "." or ".." component (which only percent-encoding gets past the
// HTTP server's path cleaning), as HDFS's DFSUtil.isValidName does: the
// path must reach the NameNode, and a DataNode through a redirect, as the
// same name.
func checkPath(p string) error {
	if !utf8.ValidString(p) {
		return ipc.Errorf(ipc.ClassInvalidPath, "Invalid path name: %q is not valid UTF-8", p)
	}
	if p == "/" {
		return nil
	}
	for c := range strings.SplitSeq(p[1:], "/") {
		if c == "" || c == "." || c == ".." {
			return ipc.Errorf(ipc.ClassInvalidPath, "Invalid path name Invalid file name: %s", p)
		}
	}
	return nil
}

func invalid(name, format string, args ...any) error {
	return ipc.Errorf(ClassJavaIllegalArgument, "Invalid value for webhdfs parameter %q: %s", name, fmt.Sprintf(format, args...))
}

// UnknownOp is the error for an op the HTTP method does not offer, worded
// as Hadoop's enum parsing words it.
func UnknownOp(method, op string) error {
	kind := map[string]string{http.MethodGet: "GetOpParam", http.MethodPut: "PutOpParam", http.MethodPost: "PostOpParam", http.MethodDelete: "DeleteOpParam"}[method]
	if kind == "" {
		return ipc.Errorf(ipc.ClassUnsupportedOperation, "HTTP method %s is not supported by WebHDFS", method)
	}
	return ipc.Errorf(ClassJavaIllegalArgument, "Invalid value for webhdfs parameter \"op\": No enum constant org.apache.hadoop.hdfs.web.resources.%s.Op.%s", kind, op)
}

// Has reports whether parameter name was given.
func (r *Request) Has(name string) bool { _, ok := r.params[name]; return ok }

// maxRepeatedParam bounds how often one parameter may repeat.
const maxRepeatedParam = 1024

// All returns every value of parameter name, in request order.
func (r *Request) All(name string) []string {
	if vs, ok := r.multi[name]; ok {
		return append([]string(nil), vs...)
	}
	if v, ok := r.params[name]; ok {
		return []string{v}
	}
	return nil
}

// String returns parameter name, or "".
func (r *Request) String(name string) string { return r.params[name] }

// Params returns a copy of the parameters, for building a redirect.
func (r *Request) Params() url.Values {
	v := url.Values{}
	for k, s := range r.params {
		v.Set(k, s)
	}
	return v
}

// Bool returns boolean parameter name ("true"/"false", any case), or def.
func (r *Request) Bool(name string, def bool) (bool, error) {
	s, ok := r.params[name]
	if !ok || s == "" {
		return def, nil
	}
	switch strings.ToLower(s) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, invalid(name, "Invalid value: %q does not belong to the domain true|false", s)
}

// Int returns integer parameter name within [lo, hi], or def when absent.
func (r *Request) Int(name string, def, lo, hi int64) (int64, error) {
	s, ok := r.params[name]
	if !ok || s == "" {
		return def, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, invalid(name, "Failed to parse %q as a radix-10 integer", s)
	}
	if v < lo || v > hi {
		return 0, invalid(name, "Invalid value: %d is outside [%d, %d]", v, lo, hi)
	}
	return v, nil
}

// permPattern is Hadoop's PermissionParam domain.
var permPattern = regexp.MustCompile(`^[0-1]?[0-7]?[0-7]?[0-7]$`)

// Permission returns the octal permission parameter, or def.
func (r *Request) Permission(def uint16) (uint16, error) {
	s, ok := r.params["permission"]
	if !ok || s == "" {
		return def, nil
	}
	if !permPattern.MatchString(s) {
		return 0, invalid("permission", "Invalid value: %q does not belong to the domain [0-1]?[0-7]?[0-7]?[0-7]", s)
	}
	v, _ := strconv.ParseUint(s, 8, 16)
	return uint16(v), nil
}

// Absolute returns path parameter name, which must be an absolute path.
func (r *Request) Absolute(name string) (string, error) {
	s := r.params[name]
	if !strings.HasPrefix(s, "/") {
		return "", invalid(name, "%q is not an absolute path", s)
	}
	return s, nil
}

// Required returns parameter name, which must be present and non-empty.
func (r *Request) Required(name string) (string, error) {
	s := r.params[name]
	if s == "" {
		return "", invalid(name, "%s is missing", name)
	}
	return s, nil
}

// CreateParams are CREATE's optional parameters.
type CreateParams struct {
	Overwrite bool
	// Perm is the new file's permission, applied without a umask (644 by
	// default), as Hadoop's WebHDFS does.
	Perm uint16
	// BlockSize and Replication are 0 for the NameNode's defaults.
	BlockSize   int64
	Replication int
}

// CreateParams parses and checks CREATE's parameters (buffersize is
// checked and otherwise ignored).
func (r *Request) CreateParams() (CreateParams, error) {
	var p CreateParams
	var err error
	if p.Overwrite, err = r.Bool("overwrite", false); err != nil {
		return p, err
	}
	if p.Perm, err = r.Permission(0o644); err != nil {
		return p, err
	}
	if p.BlockSize, err = r.Int("blocksize", 0, 1, 1<<62); err != nil {
		return p, err
	}
	repl, err := r.Int("replication", 0, 1, 32767)
	if err != nil {
		return p, err
	}
	p.Replication = int(repl)
	_, err = r.Int("buffersize", 0, 1, 1<<31-1)
	return p, err
}

// RemoteException is the body of every error response.
type RemoteException struct {
	Exception     string `json:"exception"`
	JavaClassName string `json:"javaClassName"`
	Message       string `json:"message"`
}

// StatusOf returns the HTTP status Hadoop's WebHDFS answers an exception
// of class with: 400 for illegal arguments and unsupported operations, 401
// for security failures, 404 for missing files, 500 for runtime errors and
// 403 for every other IOException (permissions, existing files, safe
// mode, ...).
func StatusOf(class string) int {
	switch class {
	case ipc.ClassFileNotFound:
		return http.StatusNotFound
	case ClassJavaIllegalArgument, ipc.ClassIllegalArgument, ipc.ClassInvalidPath, ipc.ClassUnsupportedOperation:
		return http.StatusBadRequest
	case ClassSecurity:
		return http.StatusUnauthorized
	case "java.lang.RuntimeException":
		return http.StatusInternalServerError
	}
	return http.StatusForbidden
}

// Exception converts err to the RemoteException it is reported as: a
// NameNode error keeps its Java class and message; any other error (a
// DataNode pipeline failure, a broken request body) is an IOException,
// or the exception its os sentinel stands for.
func Exception(err error) RemoteException {
	class, msg := ipc.ClassIOException, err.Error()
	var re *ipc.RemoteError
	var he *hdfs.RemoteError
	switch {
	case errors.As(err, &re):
		class, msg = re.Class, re.Message
	case errors.As(err, &he):
		class, msg = he.Class, he.Message
	case errors.Is(err, os.ErrNotExist):
		class = ipc.ClassFileNotFound
	case errors.Is(err, os.ErrPermission):
		class = ipc.ClassAccessControl
	case errors.Is(err, os.ErrExist):
		class = ipc.ClassFileAlreadyExists
	}
	simple := class[strings.LastIndexAny(class, ".$")+1:]
	return RemoteException{Exception: simple, JavaClassName: class, Message: msg}
}

// WriteError answers err as a RemoteException with its status.
func WriteError(w http.ResponseWriter, err error) {
	e := Exception(err)
	WriteJSON(w, StatusOf(e.JavaClassName), map[string]RemoteException{"RemoteException": e})
}

// WriteJSON answers v as compact JSON with status. URLs keep their "&"
// (no HTML escaping), as Hadoop writes them.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// WriteEmpty answers status with an empty body, as the operations that
// return nothing do.
func WriteEmpty(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(status)
}

// Redirect answers a two-step operation's first step: 307 with Location,
// or with noredirect=true, 200 and {"Location": ...}.
func Redirect(w http.ResponseWriter, r *Request, location string) error {
	noRedirect, err := r.Bool("noredirect", false)
	if err != nil {
		return err
	}
	if noRedirect {
		WriteJSON(w, http.StatusOK, map[string]string{"Location": location})
		return nil
	}
	w.Header().Set("Location", location)
	WriteEmpty(w, http.StatusTemporaryRedirect)
	return nil
}

// DataNodeURL is the URL a NameNode redirects r to on the DataNode whose
// HTTP server is at hostPort: the same path and parameters, with the
// acting user and the NameNode's RPC address made explicit.
func DataNodeURL(hostPort string, r *Request, nameNodeRPC string) string {
	v := r.Params()
	v.Del("noredirect")
	v.Set("op", r.Op)
	v.Set("user.name", r.User)
	v.Set("namenoderpcaddress", nameNodeRPC)
	u := url.URL{Scheme: "http", Host: hostPort, Path: Prefix + r.Path, RawQuery: v.Encode()}
	return u.String()
}

// FileStatus is Hadoop's FileStatus JSON object (fields in Hadoop's
// order, which is alphabetical).
type FileStatus struct {
	AccessTime int64 `json:"accessTime"`
	// AclBit is written (true) only for an inode with an ACL.
	AclBit           bool   `json:"aclBit,omitempty"`
	BlockSize        int64  `json:"blockSize"`
	ChildrenNum      int    `json:"childrenNum"`
	FileID           uint64 `json:"fileId"`
	Group            string `json:"group"`
	Length           int64  `json:"length"`
	ModificationTime int64  `json:"modificationTime"`
	Owner            string `json:"owner"`
	PathSuffix       string `json:"pathSuffix"`
	// Permission is the mode in octal without a leading zero ("755",
	// "1777").
	Permission    string `json:"permission"`
	Replication   int    `json:"replication"`
	StoragePolicy int    `json:"storagePolicy"`
	// Type is FILE, DIRECTORY or SYMLINK.
	Type string `json:"type"`
}

// FileStatuses is LISTSTATUS's FileStatuses object.
type FileStatuses struct {
	FileStatus []FileStatus `json:"FileStatus"`
}

// DirectoryListing is LISTSTATUS_BATCH's DirectoryListing object.
type DirectoryListing struct {
	PartialListing struct {
		FileStatuses FileStatuses `json:"FileStatuses"`
	} `json:"partialListing"`
	RemainingEntries int `json:"remainingEntries"`
}

// ContentSummary is GETCONTENTSUMMARY's object. strata has no quotas, so
// quota and spaceQuota are -1 (unset) as in Hadoop without quotas.
type ContentSummary struct {
	DirectoryCount         int64  `json:"directoryCount"`
	ECPolicy               string `json:"ecPolicy"`
	FileCount              int64  `json:"fileCount"`
	Length                 int64  `json:"length"`
	Quota                  int64  `json:"quota"`
	SnapshotDirectoryCount int64  `json:"snapshotDirectoryCount"`
	SnapshotFileCount      int64  `json:"snapshotFileCount"`
	SnapshotLength         int64  `json:"snapshotLength"`
	SnapshotSpaceConsumed  int64  `json:"snapshotSpaceConsumed"`
	SpaceConsumed          int64  `json:"spaceConsumed"`
	SpaceQuota             int64  `json:"spaceQuota"`
}

// FileChecksum is GETFILECHECKSUM's object: Bytes is the hex of Hadoop's
// MD5MD5CRC32FileChecksum serialization (bytes per CRC as a 4-byte
// big-endian int, CRCs per block as an 8-byte one, then the MD5), Length
// its size in bytes (28).
type FileChecksum struct {
	Algorithm string `json:"algorithm"`
	Bytes     string `json:"bytes"`
	Length    int    `json:"length"`
}

// BlockStoragePolicy is GETSTORAGEPOLICY's object.
type BlockStoragePolicy struct {
	CopyOnCreateFile     bool     `json:"copyOnCreateFile"`
	CreationFallbacks    []string `json:"creationFallbacks"`
	ID                   int      `json:"id"`
	Name                 string   `json:"name"`
	ReplicationFallbacks []string `json:"replicationFallbacks"`
	StorageTypes         []string `json:"storageTypes"`
}

// Boolean answers {"boolean": v}.
func Boolean(w http.ResponseWriter, v bool) {
	WriteJSON(w, http.StatusOK, map[string]bool{"boolean": v})
}

// parseDelegation decodes the delegation= parameter: the request acts as
// the token's owner. As Hadoop's JspHelper.checkUsername, a user.name or
// doas naming someone else is refused.
func (r *Request) parseDelegation() error {
	s, ok := r.params["delegation"]
	if !ok {
		return nil
	}
	t, err := delegation.DecodeURLString(s)
	if err != nil {
		return ipc.Errorf(delegation.ClassInvalidToken, "Invalid delegation token: %v", err)
	}
	id, err := delegation.DecodeIdentifier(t.Identifier)
	if err != nil {
		return ipc.Errorf(delegation.ClassInvalidToken, "Invalid delegation token: %v", err)
	}
	owner := id.User()
	for _, k := range []string{"user.name", "doas"} {
		if u, ok := r.params[k]; ok && u != owner {
			return ipc.Errorf(ipc.ClassIOException, "Usernames not matched: name=%s != expected=%s", u, owner)
		}
	}
	r.User = owner
	r.Delegation = &t
	return nil
}
