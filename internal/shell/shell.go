// Package shell is strata's FS shell, `strata dfs ...`, the counterpart of
// Hadoop's FsShell (`hadoop fs ...`): the same commands, flags, output
// formats, error messages and exit codes, over any fs.FileSystem.
package shell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/term"
)

// Exit codes. Hadoop returns -1 (255 for the process) for usage errors and
// 1 when some path failed.
const (
	exitUsage       = 255
	exitFailed      = 1
	exitInterrupted = 130
)

const usagePrefix = "Usage: strata dfs [generic options]"

const genericUsage = `Generic options supported are:
-conf <configuration file>        specify an application configuration file
-D <property=value>               define a value for a given property
-fs <file:///|hdfs://namenode:port> specify default filesystem URL to use, overrides 'fs.defaultFS' property from configurations.

The general command line syntax is:
command [genericOptions] [commandOptions]
`

// Shell runs FS shell commands with the given environment and streams.
type Shell struct {
	Env    fs.Env
	Stdin  io.Reader // read by "-put - DST"
	Stdout io.Writer
	Stderr io.Writer
}

// Run runs one FS shell command: args is everything after `strata dfs`,
// generic options (-D, -conf, -fs) already applied to env by the caller,
// e.g. ["-ls", "-R", "/user"]. It returns the process exit code: 0 on
// success, 1 when some path failed (or a -test was false), 255 for usage
// errors and unknown commands.
func Run(ctx context.Context, env fs.Env, args []string, stdout, stderr io.Writer) int {
	sh := &Shell{Env: env, Stdin: os.Stdin, Stdout: stdout, Stderr: stderr}
	return sh.Run(ctx, args)
}

// Run is like the package's Run, with sh's streams.
func (sh *Shell) Run(ctx context.Context, args []string) int {
	if sh.Stdin == nil {
		sh.Stdin = strings.NewReader("")
	}
	if sh.Stdout == nil {
		sh.Stdout = io.Discard
	}
	if sh.Stderr == nil {
		sh.Stderr = io.Discard
	}
	if len(args) == 0 {
		printUsage(sh.Stderr)
		return exitUsage
	}
	name := args[0]
	cmd := lookup(name)
	if cmd == nil {
		fmt.Fprintf(sh.Stderr, "%s: Unknown command\n", name)
		if !strings.HasPrefix(name, "-") && lookup("-"+name) != nil {
			fmt.Fprintf(sh.Stderr, "Did you mean -%s?  This command begins with a dash.\n", name)
		}
		printUsage(sh.Stderr)
		return exitUsage
	}
	c := &cmdCtx{
		ctx:   ctx,
		sh:    sh,
		cache: fs.NewCache(sh.Env),
		name:  cmd.name,
		out:   bufio.NewWriter(sh.Stdout),
		// Copies show progress only to someone watching a terminal.
		progress: term.IsTerminal(sh.Stdout) && term.IsTerminal(sh.Stderr),
	}
	defer c.cache.Close()
	err := cmd.run(c, args[1:])
	c.out.Flush()
	var uerr usageError
	switch {
	case errors.As(err, &uerr):
		fmt.Fprintf(sh.Stderr, "%s: %s\n", name, uerr.msg)
		printUsage(sh.Stderr)
		fmt.Fprintf(sh.Stderr, "%s -%s\n", usagePrefix, cmd.synopsis())
		return exitUsage
	case err != nil:
		c.fail(message(err))
	}
	if ctx.Err() != nil {
		fmt.Fprintf(sh.Stderr, "%s: Interrupted\n", c.name)
		return exitInterrupted
	}
	if c.errs > 0 {
		return exitFailed
	}
	return c.exit
}

// command is one FS shell command.
type command struct {
	name  string // without the dash
	usage string // options and arguments
	help  string // description, one line per line, printed indented
	run   func(c *cmdCtx, args []string) error
}

func (cmd *command) synopsis() string {
	if cmd.usage == "" {
		return cmd.name
	}
	return cmd.name + " " + cmd.usage
}

var commands []*command

func init() {
	commands = []*command{
		cmdAppendToFile, cmdCat, cmdChecksum, cmdChgrp, cmdChmod, cmdChown,
		cmdCopyFromLocal, cmdCopyToLocal, cmdCount, cmdCp, cmdDf, cmdDu, cmdGet,
		cmdExpunge, cmdFind, cmdGetmerge, cmdMoveToLocal,
		cmdHead, cmdHelp, cmdLs, cmdMkdir, cmdMoveFromLocal, cmdMv, cmdPut, cmdRm,
		cmdRmdir, cmdSetrep, cmdStat, cmdTail, cmdTest, cmdText, cmdTouch,
		cmdTouchz, cmdTruncate, cmdUsage,
	}
	commands = append(commands, cmdGetfacl, cmdGetfattr, cmdSetfacl, cmdSetfattr)
	commands = append(commands, cmdCreateSnapshot, cmdDeleteSnapshot, cmdRenameSnapshot)
	sort.Slice(commands, func(i, j int) bool { return commands[i].name < commands[j].name })
}

func lookup(arg string) *command {
	if !strings.HasPrefix(arg, "-") {
		return nil
	}
	for _, c := range commands {
		if "-"+c.name == arg {
			return c
		}
	}
	return nil
}

func printUsage(out io.Writer) {
	fmt.Fprintln(out, usagePrefix)
	for _, c := range commands {
		fmt.Fprintf(out, "\t[-%s]\n", c.synopsis())
	}
	fmt.Fprintln(out)
	fmt.Fprint(out, genericUsage)
}

func printHelp(out io.Writer, c *command) {
	fmt.Fprintf(out, "-%s :\n", c.synopsis())
	for _, line := range strings.Split(strings.TrimRight(c.help, "\n"), "\n") {
		if line == "" {
			fmt.Fprintln(out)
		} else {
			fmt.Fprintf(out, "  %s\n", line)
		}
	}
}

var cmdHelp = &command{
	name:  "help",
	usage: "[cmd ...]",
	help:  "Displays help for given command or all commands if none is specified.",
	run: func(c *cmdCtx, args []string) error {
		if len(args) == 0 {
			fmt.Fprintln(c.out, usagePrefix)
			for _, cmd := range commands {
				fmt.Fprintf(c.out, "\t[-%s]\n", cmd.synopsis())
			}
			for _, cmd := range commands {
				fmt.Fprintln(c.out)
				printHelp(c.out, cmd)
			}
			fmt.Fprintln(c.out)
			fmt.Fprint(c.out, genericUsage)
			return nil
		}
		for _, a := range args {
			cmd := lookup("-" + strings.TrimPrefix(a, "-"))
			if cmd == nil {
				return usageErrorf("`%s': Unknown command", a)
			}
			printHelp(c.out, cmd)
		}
		return nil
	},
}

var cmdUsage = &command{
	name:  "usage",
	usage: "[cmd ...]",
	help:  "Displays the usage for given command or all commands if none is specified.",
	run: func(c *cmdCtx, args []string) error {
		if len(args) == 0 {
			printUsage(c.out)
			return nil
		}
		for _, a := range args {
			cmd := lookup("-" + strings.TrimPrefix(a, "-"))
			if cmd == nil {
				return usageErrorf("`%s': Unknown command", a)
			}
			fmt.Fprintf(c.out, "%s -%s\n", usagePrefix, cmd.synopsis())
		}
		return nil
	},
}

// usageError is a bad command line (Hadoop's IllegalArgumentException):
// reported with the usage, exit 255.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usageErrorf(format string, a ...any) error {
	return usageError{fmt.Sprintf(format, a...)}
}

// parseOpts parses leading flags the way Hadoop's CommandFormat does: each
// flag a separate argument ("-R", "-skipTrash"), "--" ends them, "-" is an
// argument. It checks that min..max arguments remain.
func parseOpts(args []string, min, max int, flags ...string) (map[string]bool, []string, error) {
	set := map[string]bool{}
	known := map[string]bool{}
	for _, f := range flags {
		known[f] = true
	}
	rest := append([]string(nil), args...)
	for len(rest) > 0 {
		a := rest[0]
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		if a == "--" {
			rest = rest[1:]
			break
		}
		if !known[a[1:]] {
			return nil, nil, usageErrorf("Illegal option %s", a)
		}
		set[a[1:]] = true
		rest = rest[1:]
	}
	if err := checkCount(rest, min, max); err != nil {
		return nil, nil, err
	}
	return set, rest, nil
}

func checkCount(args []string, min, max int) error {
	if len(args) < min {
		return usageErrorf("Not enough arguments: expected %d but got %d", min, len(args))
	}
	if max >= 0 && len(args) > max {
		return usageErrorf("Too many arguments: expected %d but got %d", max, len(args))
	}
	return nil
}

const unlimited = -1

// popOptionWithArgument removes "opt VALUE" from args (before any "--"),
// as Hadoop's StringUtils.popOptionWithArgument does. ok reports whether
// the option was there.
func popOptionWithArgument(opt string, args []string) (val string, rest []string, ok bool, err error) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if a == opt {
			if i+1 >= len(args) {
				return "", nil, false, usageErrorf("option %s requires 1 argument.", opt)
			}
			rest = append(append([]string(nil), args[:i]...), args[i+2:]...)
			return args[i+1], rest, true, nil
		}
	}
	return "", args, false, nil
}

// cmdCtx is the state of one command run.
type cmdCtx struct {
	ctx   context.Context
	sh    *Shell
	cache *fs.Cache
	name  string
	out   *bufio.Writer
	errs  int
	exit  int
	// progress: show the progress of long copies on stderr.
	progress bool
}

// fail reports an error as Hadoop's Command.displayError does and makes the
// command exit 1.
func (c *cmdCtx) fail(msg string) {
	c.errs++
	c.out.Flush()
	fmt.Fprintf(c.sh.Stderr, "%s: %s\n", c.name, msg)
}

// failPath reports err about the path displayed as disp.
func (c *cmdCtx) failPath(disp string, err error) {
	c.fail(pathMessage(disp, err))
}

// quote is how Hadoop's PathIOException shows a path.
func quote(p string) string { return "`" + p + "'" }

// pathError is an error about one path with Hadoop's text, e.g.
// "`/x': No such file or directory".
type pathError struct {
	disp   string
	target string // for two-path errors ("`a' to `b': are identical")
	msg    string
}

func (e *pathError) Error() string {
	s := quote(e.disp)
	if e.target != "" {
		s += " to " + quote(e.target)
	}
	return s + ": " + e.msg
}

// reason returns Hadoop's text for err's kind ("No such file or
// directory", ...), or "" when err is none of the known kinds.
func reason(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotEmpty):
		return "Directory is not empty"
	case errors.Is(err, os.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, os.ErrPermission):
		return "Permission denied"
	case errors.Is(err, fs.ErrIsDir):
		return "Is a directory"
	case errors.Is(err, fs.ErrNotDir):
		return "Is not a directory"
	case errors.Is(err, os.ErrExist):
		return "File exists"
	}
	return ""
}

// remoteMessage returns the message of a permission error that carries
// Hadoop's own text (an HDFS AccessControlException), else "".
func remoteMessage(err error) string {
	if !errors.Is(err, os.ErrPermission) {
		return ""
	}
	s := err.Error()
	if i := strings.Index(s, "Permission denied: "); i >= 0 {
		return firstLine(s[i:])
	}
	return ""
}

// remoteText is the message of an exception the NameNode sent back, which
// Hadoop's shell prints as it is (without strata's "op path: " prefix),
// else "".
func remoteText(err error) string {
	var re *hdfs.RemoteError
	if errors.As(err, &re) {
		return firstLine(re.Error())
	}
	return ""
}

// busyMessage is the NameNode's text for a file another client (or a
// lease or block recovery) holds open, AlreadyBeingCreatedException, which
// says more than "File exists"; else "".
func busyMessage(err error) string {
	var re *hdfs.RemoteError
	if errors.As(err, &re) && re.Class == ipc.ClassAlreadyBeingCreated {
		return firstLine(re.Error())
	}
	return ""
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// pathMessage formats err about the path shown as disp the way Hadoop's
// shell does.
func pathMessage(disp string, err error) string {
	var pe *pathError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	if m := remoteMessage(err); m != "" {
		return m
	}
	if m := busyMessage(err); m != "" {
		return m
	}
	if r := reason(err); r != "" {
		return quote(disp) + ": " + r
	}
	if m := remoteText(err); m != "" {
		return m
	}
	return firstLine(err.Error())
}

// message formats an error not tied to one path.
func message(err error) string {
	var pe *pathError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	if m := remoteMessage(err); m != "" {
		return m
	}
	if m := remoteText(err); m != "" {
		return m
	}
	return firstLine(err.Error())
}

// bareMessage is Hadoop's e.getMessage() for errors wrapped in another
// message ("changing permissions of '/x': <message>").
func bareMessage(err error) string {
	if m := remoteMessage(err); m != "" {
		return m
	}
	if m := busyMessage(err); m != "" {
		return m
	}
	if r := reason(err); r != "" {
		return r
	}
	if m := remoteText(err); m != "" {
		return m
	}
	return firstLine(err.Error())
}

func notFound(disp string) error {
	return &pathError{disp: disp, msg: "No such file or directory"}
}
