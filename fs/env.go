package fs

import (
	"fmt"
	"net/url"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/stratafs/strata/conf"
)

// Configuration keys read by this package.
const (
	// KeyDefaultFS names the default file system, used for paths without a
	// scheme (Hadoop's fs.defaultFS). Unset means file:///.
	KeyDefaultFS = "fs.defaultFS"
	// keyDefaultName is the deprecated Hadoop 1 name of fs.defaultFS.
	keyDefaultName = "fs.default.name"
	// KeyUmask is the umask applied when creating files and directories,
	// octal ("022") or symbolic ("u=rwx,g=rx,o=rx").
	KeyUmask = "fs.permissions.umask-mode"
)

// DefaultUmask is Hadoop's default fs.permissions.umask-mode.
const DefaultUmask uint16 = 0o022

// Env is what opening a FileSystem needs: the configuration and the user to
// act as.
type Env struct {
	// Conf holds the settings (fs.defaultFS, ...); nil means conf.New().
	Conf *conf.Configuration
	// User is the acting user; "" means CurrentUser().
	User string
}

// WithDefaults returns e with a nil Conf replaced by conf.New() and an empty
// User replaced by CurrentUser(). Get passes such an Env to Openers.
func (e Env) WithDefaults() Env {
	if e.Conf == nil {
		e.Conf = conf.New()
	}
	if e.User == "" {
		e.User = CurrentUser()
	}
	return e
}

// CurrentUser returns the user name strata acts as by default: the
// HADOOP_USER_NAME environment variable if set, else the operating system
// user, as Hadoop's UserGroupInformation does for simple authentication.
func CurrentUser() string {
	if u := loginUser.Load(); u != nil {
		return *u
	}
	if u := os.Getenv("HADOOP_USER_NAME"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		name := u.Username
		// On Windows the name is DOMAIN\user; Hadoop uses the short name.
		if i := strings.LastIndexByte(name, '\\'); i >= 0 {
			name = name[i+1:]
		}
		return name
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return strconv.Itoa(os.Getuid())
}

// loginUser is the Kerberos login's user in secure mode (SetLoginUser).
var loginUser atomic.Pointer[string]

// SetLoginUser makes CurrentUser return user ("" undoes it): in kerberos
// mode the user is the one the credentials prove, and HADOOP_USER_NAME is
// ignored, as Hadoop's UserGroupInformation does.
func SetLoginUser(user string) {
	if user == "" {
		loginUser.Store(nil)
		return
	}
	loginUser.Store(&user)
}

// DefaultURI returns the default file system's URI from fs.defaultFS
// (scheme and authority only). An unset value means file:///; a bare
// "host:port" (deprecated in Hadoop) means hdfs://host:port.
func DefaultURI(c *conf.Configuration) (*url.URL, error) {
	v := ""
	if c != nil {
		v = strings.TrimSpace(c.Get(KeyDefaultFS))
		if v == "" {
			v = strings.TrimSpace(c.Get(keyDefaultName))
		}
	}
	if v == "" {
		v = "file:///"
	}
	if !strings.Contains(v, ":/") {
		v = "hdfs://" + v
	}
	u, err := url.Parse(v)
	if err != nil {
		return nil, fmt.Errorf("invalid %s %q: %w", KeyDefaultFS, v, err)
	}
	if u.Scheme == "" {
		return nil, fmt.Errorf("invalid %s %q: no scheme", KeyDefaultFS, v)
	}
	return &url.URL{Scheme: strings.ToLower(u.Scheme), Host: u.Host}, nil
}

// Umask returns the umask from fs.permissions.umask-mode (default 022).
// Octal ("022", "0027") and symbolic forms ("u=rwx,g=rx,o=", naming the
// bits to keep, as Hadoop's UmaskParser reads them) are accepted; an
// unparsable value gives the default.
func Umask(c *conf.Configuration) uint16 {
	if c == nil {
		return DefaultUmask
	}
	v := strings.TrimSpace(c.Get(KeyUmask))
	if v == "" {
		return DefaultUmask
	}
	if n, err := strconv.ParseUint(v, 8, 16); err == nil {
		return uint16(n) & 0o777
	}
	if keep, ok := parseSymbolicUmask(v); ok {
		return ^keep & 0o777
	}
	return DefaultUmask
}

// parseSymbolicUmask reads "u=rwx,g=rx,o=" into the permission bits to keep.
func parseSymbolicUmask(s string) (uint16, bool) {
	keep := uint16(0)
	for _, clause := range strings.Split(s, ",") {
		clause = strings.TrimSpace(clause)
		i := strings.IndexAny(clause, "=+-")
		if i < 0 {
			return 0, false
		}
		who, op, what := clause[:i], clause[i], clause[i+1:]
		var bits uint16
		for _, r := range what {
			switch r {
			case 'r':
				bits |= 4
			case 'w':
				bits |= 2
			case 'x':
				bits |= 1
			default:
				return 0, false
			}
		}
		if who == "" {
			who = "a"
		}
		for _, w := range who {
			var shifts []uint
			switch w {
			case 'u':
				shifts = []uint{6}
			case 'g':
				shifts = []uint{3}
			case 'o':
				shifts = []uint{0}
			case 'a':
				shifts = []uint{6, 3, 0}
			default:
				return 0, false
			}
			for _, sh := range shifts {
				switch op {
				case '=':
					keep = keep&^(7<<sh) | bits<<sh
				case '+':
					keep |= bits << sh
				case '-':
					keep &^= bits << sh
				}
			}
		}
	}
	return keep, true
}
