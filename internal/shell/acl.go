package shell

import (
	"context"
	"fmt"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
)

// -getfacl and -setfacl, Hadoop's AclCommands.

// aclFS is a file system with ACLs (hdfs.Client).
type aclFS interface {
	SetACL(ctx context.Context, p string, spec []hdfs.ACLEntry) error
	ModifyACLEntries(ctx context.Context, p string, spec []hdfs.ACLEntry) error
	RemoveACLEntries(ctx context.Context, p string, spec []hdfs.ACLEntry) error
	RemoveDefaultACL(ctx context.Context, p string) error
	RemoveACL(ctx context.Context, p string) error
	GetACLStatus(ctx context.Context, p string) (*hdfs.ACLStatus, error)
}

func aclsOf(fsys fs.FileSystem, op string) (aclFS, error) {
	if a, ok := fsys.(aclFS); ok {
		return a, nil
	}
	return nil, fmt.Errorf("%s doesn't support %s", fsName(fsys), op)
}

var cmdGetfacl = &command{
	name:  "getfacl",
	usage: "[-R] <path>",
	help: `Displays the Access Control Lists (ACLs) of files and directories. If a
directory has a default ACL, then getfacl also displays the default ACL.

-R      List the ACLs of all files and directories recursively.
<path>  File or directory to list.`,
	run: func(c *cmdCtx, args []string) error {
		o, args, err := parseOpts(args, 0, unlimited, "R")
		if err != nil {
			return err
		}
		if len(args) == 0 {
			return usageErrorf("<path> is missing")
		}
		if len(args) > 1 {
			return usageErrorf("Too many arguments")
		}
		c.walk(c.expandAll(args, false, false), o["R"], func(it *item) {
			var st *hdfs.ACLStatus
			if it.st.HasACL {
				a, err := aclsOf(it.fsys, "getAclStatus")
				if err == nil {
					st, err = a.GetACLStatus(c.ctx, it.path)
				}
				if err != nil {
					c.failRemote(it, err)
					return
				}
			}
			printACL(c, it, st)
		})
		return nil
	},
}

// printACL prints one path's ACL as Hadoop's GetfaclCommand: the header,
// the access entries, the default entries (each scope with #effective:
// where a mask cuts an entry's permissions), and a blank line.
func printACL(c *cmdCtx, it *item, st *hdfs.ACLStatus) {
	perm := it.st.Perm
	fmt.Fprintf(c.out, "# file: %s\n# owner: %s\n# group: %s\n", it.disp, it.st.Owner, it.st.Group)
	if perm&0o1000 != 0 {
		t := "T"
		if perm&1 != 0 {
			t = "t"
		}
		fmt.Fprintf(c.out, "# flags: --%s\n", t)
	}
	var entries []hdfs.ACLEntry
	if st != nil {
		entries = st.Entries
		perm = st.Perm
	} else {
		st = &hdfs.ACLStatus{Perm: perm}
	}
	// AclUtil.getAclFromPermAndEntries: user:: from the owner bits, the
	// access entries, mask:: (group:: without access entries) from the
	// group bits, other::, then the default entries.
	acl := []hdfs.ACLEntry{{Type: hdfs.ACLUser, Perm: perm >> 6 & 7}}
	i := 0
	for ; i < len(entries) && !entries[i].Default; i++ {
		acl = append(acl, entries[i])
	}
	groupType := hdfs.ACLGroup
	if i > 0 {
		groupType = hdfs.ACLMask
	}
	acl = append(acl, hdfs.ACLEntry{Type: groupType, Perm: perm >> 3 & 7}, hdfs.ACLEntry{Type: hdfs.ACLOther, Perm: perm & 7})
	access := acl
	printACLScope(c, st, access)
	printACLScope(c, st, entries[i:])
	fmt.Fprintln(c.out)
}

func printACLScope(c *cmdCtx, st *hdfs.ACLStatus, entries []hdfs.ACLEntry) {
	minimal := len(entries) == 3
	for _, e := range entries {
		eff := st.EffectivePerm(e)
		if minimal || e.Type == hdfs.ACLMask || eff == e.Perm {
			fmt.Fprintln(c.out, e.String())
			continue
		}
		fmt.Fprintf(c.out, "%s\t#effective:%s\n", e, hdfs.PermSymbol(eff))
	}
}

var cmdSetfacl = &command{
	name:  "setfacl",
	usage: "[-R] [{-b|-k} {-m|-x <acl_spec>} <path>]|[--set <acl_spec> <path>]",
	help: `Sets Access Control Lists (ACLs) of files and directories.
Options:
-b          Remove all but the base ACL entries. The entries for user, group
            and others are retained for compatibility with permission bits.
-k          Remove the default ACL.
-R          Apply operations to all files and directories recursively.
-m          Modify ACL. New entries are added to the ACL, and existing entries
            are retained.
-x          Remove specified ACL entries. Other ACL entries are retained.
--set       Fully replace the ACL, discarding all existing entries. The
            <acl_spec> must include entries for user, group, and others for
            compatibility with permission bits. If the ACL spec contains only
            access entries, then the existing default entries are retained. If
            the ACL spec contains only default entries, then the existing
            access entries are retained. If the ACL spec contains both access
            and default entries, then both are replaced.
<acl_spec>  Comma separated list of ACL entries.
<path>      File or directory to modify.`,
	run: func(c *cmdCtx, args []string) error {
		o, args, err := parseOpts(args, 0, unlimited, "b", "k", "R", "m", "x", "-set")
		if err != nil {
			return err
		}
		remove := o["b"] || o["k"]
		modify := o["m"] || o["x"]
		set := o["-set"]
		if o["b"] && o["k"] || o["m"] && o["x"] || remove && modify || set && (remove || modify) {
			return usageErrorf("Specified flags contains both remove and modify flags")
		}
		var spec []hdfs.ACLEntry
		if modify || set {
			if len(args) == 0 {
				return usageErrorf("Missing arguments: <acl_spec> <path>")
			}
			if len(args) < 2 {
				return usageErrorf("Missing either <acl_spec> or <path>")
			}
			if spec, err = hdfs.ParseACLSpec(args[0], !o["x"]); err != nil {
				return usageErrorf("%s", err.Error())
			}
			if len(spec) == 0 {
				return usageErrorf("Missing <acl_spec> entry")
			}
			args = args[1:]
		}
		if len(args) == 0 {
			return usageErrorf("<path> is missing")
		}
		if len(args) > 1 {
			return usageErrorf("Too many arguments")
		}
		if !remove && !modify && !set {
			return usageErrorf("Expected one of -b, -k, -m, -x or --set options")
		}
		// Only directories take default entries: a recursive change gives
		// files the access entries alone.
		var accessSpec []hdfs.ACLEntry
		for _, e := range spec {
			if !e.Default {
				accessSpec = append(accessSpec, e)
			}
		}
		c.walk(c.expandAll(args, false, false), o["R"], func(it *item) {
			a, err := aclsOf(it.fsys, "setAcl")
			if err != nil {
				c.failPath(it.disp, err)
				return
			}
			s := spec
			if o["R"] && !it.st.IsDir {
				s = accessSpec
			}
			switch {
			case o["b"]:
				err = a.RemoveACL(c.ctx, it.path)
			case o["k"]:
				err = a.RemoveDefaultACL(c.ctx, it.path)
			case o["m"]:
				if len(s) > 0 {
					err = a.ModifyACLEntries(c.ctx, it.path, s)
				}
			case o["x"]:
				if len(s) > 0 {
					err = a.RemoveACLEntries(c.ctx, it.path, s)
				}
			case set:
				if len(s) > 0 {
					err = a.SetACL(c.ctx, it.path, s)
				}
			}
			if err != nil {
				c.failRemote(it, err)
			}
		})
		return nil
	},
}
