package shell

import (
	"fmt"
	"path"
	"strings"

	"github.com/stratafs/strata/fs"
)

var cmdFind = &command{
	name:  "find",
	usage: "<path> ... <expression> ...",
	help: `Finds all files that match the specified expression and
applies selected actions to them. If no <path> is specified
then defaults to the current working directory. If no
expression is specified then defaults to -print.

The following primary expressions are recognised:
  -name pattern
  -iname pattern
    Evaluates as true if the basename of the file matches the
    pattern using standard file system globbing.
    If -iname is used then the match is case insensitive.

  -print
  -print0
    Always evaluates to true. Causes the current pathname to be
    written to standard output followed by a newline. If the -print0
    expression is used then an ASCII NULL character is appended rather
    than a newline.

The following operators are recognised:
  expression -a expression
  expression -and expression
  expression expression
    Logical AND operator for joining two expressions. Returns
    true if the child expressions both return true. Implemented
    by concatenating two expressions. The second expression will
    not be applied if the first fails.`,
	run: func(c *cmdCtx, args []string) error {
		var paths []string
		for len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			paths, args = append(paths, args[0]), args[1:]
		}
		expr, err := parseFindExpr(args)
		if err != nil {
			return err
		}
		if len(paths) == 0 {
			paths = []string{"."}
		}
		c.walk(c.expandAll(paths, false, false), true, func(it *item) { expr.apply(c, it) })
		return nil
	},
}

// findTerm is one primary of a find expression; the expression is their
// conjunction, evaluated left to right until one is false.
type findTerm struct {
	op      string // "name", "iname", "print", "print0"
	pattern []string
}

type findExpr struct{ terms []findTerm }

func parseFindExpr(args []string) (*findExpr, error) {
	e := &findExpr{}
	printing := false
	for len(args) > 0 {
		a := args[0]
		args = args[1:]
		switch a {
		case "-a", "-and":
			if len(e.terms) == 0 || len(args) == 0 {
				return nil, usageErrorf("Unexpected argument: %s", a)
			}
		case "-name", "-iname":
			if len(args) == 0 {
				return nil, usageErrorf("Not enough arguments: expected 1 but got 0")
			}
			pat := args[0]
			args = args[1:]
			if a == "-iname" {
				pat = strings.ToLower(pat)
			}
			alts, err := fs.ExpandBraces(pat)
			if err != nil {
				return nil, usageErrorf("Illegal file pattern: %v", err)
			}
			for i, p := range alts {
				alts[i] = strings.ReplaceAll(p, "[!", "[^")
				if _, err := path.Match(alts[i], ""); err != nil {
					return nil, usageErrorf("Illegal file pattern: %s", pat)
				}
			}
			e.terms = append(e.terms, findTerm{op: a[1:], pattern: alts})
		case "-print", "-print0":
			printing = true
			e.terms = append(e.terms, findTerm{op: a[1:]})
		default:
			return nil, usageErrorf("Unexpected argument: %s", a)
		}
	}
	if !printing {
		e.terms = append(e.terms, findTerm{op: "print"})
	}
	return e, nil
}

func (e *findExpr) apply(c *cmdCtx, it *item) {
	name := path.Base(it.path)
	for _, t := range e.terms {
		switch t.op {
		case "name", "iname":
			n := name
			if t.op == "iname" {
				n = strings.ToLower(n)
			}
			ok := false
			for _, p := range t.pattern {
				if m, _ := path.Match(p, n); m {
					ok = true
					break
				}
			}
			if !ok {
				return
			}
		case "print":
			fmt.Fprintln(c.out, it.disp)
		case "print0":
			fmt.Fprint(c.out, it.disp+"\x00")
		}
	}
}
