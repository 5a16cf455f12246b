package shell

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
)

// -getfattr and -setfattr, Hadoop's XAttrCommands, on file systems with
// extended attributes (hdfs://).

// xattrFS is a file system with extended attributes (hdfs.Client).
type xattrFS interface {
	SetXAttr(ctx context.Context, p, name string, value []byte, flag int) error
	GetXAttrs(ctx context.Context, p string, names ...string) (map[string][]byte, error)
	RemoveXAttr(ctx context.Context, p, name string) error
}

// failRemote reports err about it as Hadoop's shell does for these
// commands: the NameNode's own message when there is one (its
// AccessControlExceptions name the attribute or entry at fault).
func (c *cmdCtx) failRemote(it *item, err error) {
	if m := remoteText(err); m != "" {
		c.fail(m)
		return
	}
	c.failPath(it.disp, err)
}

func xattrsOf(fsys fs.FileSystem, op string) (xattrFS, error) {
	if x, ok := fsys.(xattrFS); ok {
		return x, nil
	}
	return nil, fmt.Errorf("%s doesn't support %s", fsName(fsys), op)
}

// popOption removes every "opt" before "--" from args, as Hadoop's
// StringUtils.popOption (which removes the first).
func popOption(opt string, args []string) ([]string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if a == opt {
			return append(append([]string(nil), args[:i]...), args[i+1:]...), true
		}
	}
	return args, false
}

// xattrEncoding is Hadoop's XAttrCodec.
type xattrEncoding int

const (
	encText xattrEncoding = iota
	encHex
	encBase64
)

func encodeXAttr(v []byte, enc xattrEncoding) string {
	switch enc {
	case encHex:
		return "0x" + hex.EncodeToString(v)
	case encBase64:
		return "0s" + base64.StdEncoding.EncodeToString(v)
	}
	return `"` + string(v) + `"`
}

// decodeXAttr reads a -v value: "quoted" text, 0x hex, 0s base64, else
// the text as it is.
func decodeXAttr(s string) ([]byte, error) {
	if len(s) >= 2 {
		switch p := strings.ToLower(s[:2]); {
		case s[0] == '"' && s[len(s)-1] == '"':
			return []byte(s[1 : len(s)-1]), nil
		case p == "0x":
			b, err := hex.DecodeString(s[2:])
			if err != nil {
				return nil, fmt.Errorf("org.apache.commons.codec.DecoderException: %v", err)
			}
			return b, nil
		case p == "0s":
			b, err := base64.StdEncoding.DecodeString(s[2:])
			if err != nil {
				return nil, fmt.Errorf("invalid base64 value: %v", err)
			}
			return b, nil
		}
	}
	return []byte(s), nil
}

var cmdGetfattr = &command{
	name:  "getfattr",
	usage: "[-R] {-n name | -d} [-e en] <path>",
	help: `Displays the extended attribute names and values (if any) for a file or
directory.

-R         Recursively list the attributes for all files and directories.
-n name    Dump the named extended attribute value.
-d         Dump all extended attribute values associated with pathname.
-e <encoding> Encode values after retrieving them.Valid encodings are "text",
           "hex", and "base64". Values encoded as text strings are enclosed
           in double quotes ("), and values encoded as hexadecimal and
           base64 are prefixed with 0x and 0s, respectively.
<path>     The file or directory.`,
	run: func(c *cmdCtx, args []string) error {
		name, args, hasName, err := popOptionWithArgument("-n", args)
		if err != nil {
			return err
		}
		en, args, hasEn, err := popOptionWithArgument("-e", args)
		if err != nil {
			return err
		}
		enc := encText
		if hasEn {
			switch strings.ToUpper(en) {
			case "TEXT":
			case "HEX":
				enc = encHex
			case "BASE64":
				enc = encBase64
			default:
				return usageErrorf("Invalid/unsupported encoding option specified: %s", en)
			}
		}
		args, recursive := popOption("-R", args)
		args, dump := popOption("-d", args)
		if !dump && !hasName {
			return usageErrorf("Must specify '-n name' or '-d' option.")
		}
		if len(args) == 0 {
			return usageErrorf("<path> is missing.")
		}
		if len(args) > 1 {
			return usageErrorf("Too many arguments.")
		}
		c.walk(c.expandAll(args, false, false), recursive, func(it *item) {
			x, err := xattrsOf(it.fsys, "getXAttrs")
			if err != nil {
				c.fail(err.Error())
				return
			}
			var names []string
			if !dump {
				names = []string{name}
			}
			got, err := x.GetXAttrs(c.ctx, it.path, names...)
			fmt.Fprintf(c.out, "# file: %s\n", it.disp)
			if err != nil {
				c.failRemote(it, err)
				return
			}
			keys := names
			if dump {
				keys = make([]string, 0, len(got))
				for k := range got {
					keys = append(keys, k)
				}
				sort.Strings(keys)
			}
			for _, k := range keys {
				v, ok := got[k]
				if !ok {
					// The NameNode answers with the lower-case prefix.
					if i := strings.IndexByte(k, '.'); i > 0 {
						v, ok = got[strings.ToLower(k[:i])+k[i:]]
					}
				}
				switch {
				case !ok:
				case len(v) == 0:
					fmt.Fprintln(c.out, k)
				default:
					fmt.Fprintf(c.out, "%s=%s\n", k, encodeXAttr(v, enc))
				}
			}
		})
		return nil
	},
}

var cmdSetfattr = &command{
	name:  "setfattr",
	usage: "{-n name [-v value] | -x name} <path>",
	help: `Sets an extended attribute name and value for a file or directory.

-n name    The extended attribute name.
-v value   The extended attribute value. There are three different encoding
           methods for the value. If the argument is enclosed in double quotes,
           then the value is the string inside the quotes. If the argument is
           prefixed with 0x or 0X, then it is taken as a hexadecimal number. If
           the argument begins with 0s or 0S, then it is taken as a base64
           encoding.
-x name    Remove the extended attribute.
<path>     The file or directory.`,
	run: func(c *cmdCtx, args []string) error {
		name, args, hasName, err := popOptionWithArgument("-n", args)
		if err != nil {
			return err
		}
		v, args, hasValue, err := popOptionWithArgument("-v", args)
		if err != nil {
			return err
		}
		var value []byte
		if hasValue {
			if value, err = decodeXAttr(v); err != nil {
				return err
			}
		}
		xname, args, hasX, err := popOptionWithArgument("-x", args)
		if err != nil {
			return err
		}
		if hasName && hasX {
			return usageErrorf("Can not specify both '-n name' and '-x name' option.")
		}
		if !hasName && !hasX {
			return usageErrorf("Must specify '-n name' or '-x name' option.")
		}
		if len(args) == 0 {
			return usageErrorf("<path> is missing.")
		}
		if len(args) > 1 {
			return usageErrorf("Too many arguments.")
		}
		c.walk(c.expandAll(args, false, false), false, func(it *item) {
			x, err := xattrsOf(it.fsys, "setXAttr")
			if err == nil {
				if hasName {
					err = x.SetXAttr(c.ctx, it.path, name, value, hdfs.XAttrCreate|hdfs.XAttrReplace)
				} else {
					err = x.RemoveXAttr(c.ctx, it.path, xname)
				}
			}
			if err != nil {
				c.failRemote(it, err)
			}
		})
		return nil
	},
}
