package conf

import (
	"errors"
	"fmt"
	"strings"
)

// KV is one key=value setting.
type KV struct {
	Key, Value string
}

// GenericOptions are Hadoop's generic command-line options, as parsed by
// ParseGenericOptions.
type GenericOptions struct {
	ConfDir string   // --config DIR: the configuration directory
	Files   []string // -conf FILE: extra resources, in order
	Defines []KV     // -D key=value, -fs URI and -jt host:port, in order
}

// ParseGenericOptions extracts Hadoop's generic options from args and
// returns them with the remaining arguments, in their original order.
// Unlike Hadoop's GenericOptionsParser it accepts the options anywhere
// among args, not only before the first other argument:
//
//	-D key=value, -Dkey=value   set key (the value may be empty: -D key=)
//	--config DIR, --config=DIR  configuration directory (see ConfigDir)
//	-conf FILE, -conf=FILE      load FILE after the site files; repeatable
//	-fs URI, -fs=URI            same as -D fs.defaultFS=URI
//	-jt ADDR, -jt=ADDR          same as -D mapreduce.jobtracker.address=ADDR
//
// As in Hadoop, -fs local means file:/// and an -fs value without a "/"
// (host:port) means hdfs://host:port. A "--" argument stops option
// processing: it and everything after it are returned unchanged, so the
// command's own flag parsing also stops there. A later --config overrides
// an earlier one.
func ParseGenericOptions(args []string) (GenericOptions, []string, error) {
	var g GenericOptions
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		// value returns the option's argument: after "=" in a, or the
		// next argument.
		value := func(opt, what string) (string, error) {
			if v, ok := strings.CutPrefix(a, opt+"="); ok {
				if v == "" {
					return "", fmt.Errorf("%s needs %s", opt, what)
				}
				return v, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs %s", opt, what)
			}
			i++
			return args[i], nil
		}
		opt, _, _ := strings.Cut(a, "=")
		switch {
		case a == "-D" || strings.HasPrefix(a, "-D"):
			kv := strings.TrimPrefix(a, "-D")
			if a == "-D" {
				if i+1 >= len(args) {
					return g, nil, errors.New("-D needs key=value")
				}
				i++
				kv = args[i]
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return g, nil, fmt.Errorf("-D needs key=value, got %q", kv)
			}
			if strings.TrimSpace(k) == "" {
				return g, nil, fmt.Errorf("-D: empty key in %q", kv)
			}
			g.Defines = append(g.Defines, KV{strings.TrimSpace(k), v})
		case opt == "--config":
			d, err := value(opt, "a directory")
			if err != nil {
				return g, nil, err
			}
			g.ConfDir = d
		case opt == "-conf":
			f, err := value(opt, "a file")
			if err != nil {
				return g, nil, err
			}
			g.Files = append(g.Files, f)
		case opt == "-fs":
			u, err := value(opt, "a file system URI")
			if err != nil {
				return g, nil, err
			}
			g.Defines = append(g.Defines, KV{"fs.defaultFS", fixFSName(u)})
		case opt == "-jt":
			addr, err := value(opt, "host:port")
			if err != nil {
				return g, nil, err
			}
			g.Defines = append(g.Defines, KV{"mapreduce.jobtracker.address", addr})
		default:
			rest = append(rest, a)
		}
	}
	return g, rest, nil
}

// fixFSName converts old-style file system names as Hadoop's
// FileSystem.fixName does: "local" is file:///, and a name without "/"
// (host:port) is an HDFS authority.
func fixFSName(name string) string {
	switch {
	case name == "local":
		return "file:///"
	case !strings.Contains(name, "/"):
		return "hdfs://" + name
	}
	return name
}

// Build returns the Configuration the options select, layered lowest
// first: the defaults, the site files in ConfigDir(g.ConfDir) (see
// LoadDir), each -conf file in order, then the defines in order (with
// Define, so they do not override keys a file marked final).
func (g GenericOptions) Build() (*Configuration, error) {
	c, err := Load(ConfigDir(g.ConfDir))
	if err != nil {
		return nil, err
	}
	for _, f := range g.Files {
		if err := c.LoadFile(f); err != nil {
			return nil, err
		}
	}
	for _, d := range g.Defines {
		c.Define(d.Key, d.Value)
	}
	return c, nil
}
