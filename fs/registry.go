package fs

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
)

// Opener opens the FileSystem for u, which holds only a scheme and an
// authority (host[:port], possibly empty). env has its defaults filled in
// (see Env.WithDefaults).
type Opener func(ctx context.Context, u *url.URL, env Env) (FileSystem, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Opener{}
)

// Register makes o the Opener for scheme (case-insensitive), replacing any
// earlier one. Implementations call it from an init function; "file" is
// registered by this package.
func Register(scheme string, o Opener) {
	registryMu.Lock()
	defer registryMu.Unlock()
	registry[strings.ToLower(scheme)] = o
}

// Schemes returns the registered schemes, sorted.
func Schemes() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]string, 0, len(registry))
	for s := range registry {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func opener(scheme string) Opener {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return registry[scheme]
}

// UnsupportedSchemeError is returned by Get for a scheme nobody registered.
// It wraps ErrInvalid.
type UnsupportedSchemeError struct{ Scheme string }

func (e *UnsupportedSchemeError) Error() string {
	return fmt.Sprintf("No FileSystem for scheme %q", e.Scheme)
}

func (e *UnsupportedSchemeError) Unwrap() error { return ErrInvalid }

// splitArg splits a path string the way Hadoop's PathData.stringToUri does:
// "scheme:" only when the colon is directly followed by a slash, then an
// authority when "//" follows (hasAuth, possibly empty), then the path.
// Unlike Hadoop, a leading "//" without a scheme is not an authority.
func splitArg(s string) (scheme, auth string, hasAuth bool, p string) {
	start := 0
	colon := strings.IndexByte(s, ':')
	slash := strings.IndexByte(s, '/')
	if colon > 0 && slash == colon+1 {
		scheme = strings.ToLower(s[:colon])
		start = colon + 1
	}
	if scheme != "" && strings.HasPrefix(s[start:], "//") && len(s)-start > 2 {
		start += 2
		end := strings.IndexByte(s[start:], '/')
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		auth, hasAuth = s[start:end], true
		start = end
	}
	return scheme, auth, hasAuth, s[start:]
}

// fsURI returns the scheme and authority of the file system uri names:
// fs.defaultFS for a URI without a scheme, and fs.defaultFS's authority for
// one whose scheme matches fs.defaultFS's but has no authority.
func fsURI(uri string, env Env) (*url.URL, error) {
	scheme, auth, _, _ := splitArg(uri)
	def, err := DefaultURI(env.Conf)
	if err != nil {
		return nil, err
	}
	if scheme == "" {
		return def, nil
	}
	if auth == "" && scheme == def.Scheme {
		auth = def.Host
	}
	return &url.URL{Scheme: scheme, Host: auth}, nil
}

// Get opens the FileSystem for uri's scheme and authority; the URI's path,
// if any, is ignored. A URI without a scheme means fs.defaultFS; one without
// an authority (hdfs:///x) takes fs.defaultFS's authority when the schemes
// match. Nothing is cached: the caller must Close what Get returns (see
// Cache for a caching alternative).
func Get(ctx context.Context, uri string, env Env) (FileSystem, error) {
	env = env.WithDefaults()
	u, err := fsURI(uri, env)
	if err != nil {
		return nil, err
	}
	return open(ctx, u, env)
}

func open(ctx context.Context, u *url.URL, env Env) (FileSystem, error) {
	o := opener(u.Scheme)
	if o == nil {
		return nil, &UnsupportedSchemeError{Scheme: u.Scheme}
	}
	return o(ctx, u, env)
}

// errEmptyPath is Hadoop's message for an empty path argument.
var errEmptyPath = fmt.Errorf("Can not create a Path from an empty string: %w", ErrInvalid)

// Resolve turns a user's path argument into a FileSystem and an absolute,
// cleaned path on it. arg may be a full URI (hdfs://host:port/a/b,
// file:///a/b, hdfs:/a/b), an absolute path (/a/b, on fs.defaultFS) or a
// relative one (a/b, relative to the FileSystem's Home()). "." and ".."
// elements are resolved, duplicate and trailing slashes removed; ".." above
// the root stays at the root. A URI without a path means the root. The
// caller must Close the FileSystem.
func Resolve(ctx context.Context, arg string, env Env) (FileSystem, string, error) {
	env = env.WithDefaults()
	return resolve(arg, func(u *url.URL) (FileSystem, error) { return open(ctx, u, env) }, env)
}

func resolve(arg string, get func(*url.URL) (FileSystem, error), env Env) (FileSystem, string, error) {
	if arg == "" {
		return nil, "", errEmptyPath
	}
	scheme, _, _, p := splitArg(arg)
	u, err := fsURI(arg, env)
	if err != nil {
		return nil, "", err
	}
	fsys, err := get(u)
	if err != nil {
		return nil, "", err
	}
	return fsys, Abs(fsys, p, scheme != ""), nil
}

// Abs makes p absolute on fsys: a relative p is taken relative to
// fsys.Home(); the result is cleaned. With uri set (p came from a URI), an
// empty p means the root.
func Abs(fsys FileSystem, p string, uri bool) string {
	switch {
	case p == "" && uri:
		p = "/"
	case !strings.HasPrefix(p, "/"):
		p = fsys.Home() + "/" + p
	}
	return path.Clean(p)
}

// Qualify returns the full URI string of p on fsys, e.g.
// hdfs://host:8020/user/alice or file:///tmp/x.
func Qualify(fsys FileSystem, p string) string {
	u := fsys.URI()
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return u.Scheme + "://" + u.Host + p
}

// Cache opens each file system once and hands out the same FileSystem for
// later requests of the same scheme and authority, as Hadoop's
// FileSystem.get cache does, for a command that touches many paths. The
// FileSystems belong to the Cache: callers must not Close them, and must
// not use them after Cache.Close. A Cache is safe for concurrent use.
type Cache struct {
	env Env
	mu  sync.Mutex
	m   map[string]FileSystem
}

// NewCache returns an empty Cache opening file systems with env.
func NewCache(env Env) *Cache {
	return &Cache{env: env.WithDefaults(), m: map[string]FileSystem{}}
}

// Env returns the Env (with defaults filled in) the Cache opens with.
func (c *Cache) Env() Env { return c.env }

// Get is like the package's Get but returns the cached FileSystem.
func (c *Cache) Get(ctx context.Context, uri string) (FileSystem, error) {
	u, err := fsURI(uri, c.env)
	if err != nil {
		return nil, err
	}
	return c.get(ctx, u)
}

func (c *Cache) get(ctx context.Context, u *url.URL) (FileSystem, error) {
	key := u.Scheme + "://" + strings.ToLower(u.Host)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		return nil, errors.New("fs: Cache used after Close")
	}
	if fsys, ok := c.m[key]; ok {
		return fsys, nil
	}
	fsys, err := open(ctx, u, c.env)
	if err != nil {
		return nil, err
	}
	c.m[key] = fsys
	return fsys, nil
}

// Resolve is like the package's Resolve but uses the cached FileSystem.
func (c *Cache) Resolve(ctx context.Context, arg string) (FileSystem, string, error) {
	return resolve(arg, func(u *url.URL) (FileSystem, error) { return c.get(ctx, u) }, c.env)
}

// Close closes every FileSystem the Cache opened.
func (c *Cache) Close() error {
	c.mu.Lock()
	m := c.m
	c.m = nil
	c.mu.Unlock()
	var errs []error
	for _, fsys := range m {
		if err := fsys.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Access modes for Accessor.Access, Hadoop's FsAction bits.
const (
	AccessRead    uint8 = 4
	AccessWrite   uint8 = 2
	AccessExecute uint8 = 1
)

// Accessor is implemented by file systems that can check whether the
// acting user may access a path (Hadoop's FileSystem.access). Access returns
// nil when all the requested mode bits are granted, an error wrapping
// os.ErrPermission when not, os.ErrNotExist for a missing path.
type Accessor interface {
	Access(ctx context.Context, path string, mode uint8) error
}
