package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/delegation"
)

// `strata fetchdt` is Hadoop's `hdfs fetchdt` (DelegationTokenFetcher):
// fetch a delegation token from the NameNode into a token file (Hadoop's
// Credentials format, version 0 as fetchdt writes it), or print, renew or
// cancel the tokens of one (version 0 or 1). Renewals and cancellations
// go to the NameNode of fs.defaultFS.

func init() {
	register(command{name: "fetchdt", summary: "fetch, print, renew or cancel HDFS delegation tokens: fetchdt [--renewer NAME] [--print|--renew|--cancel] FILE", run: runFetchdt})
}

func fetchdtUsage(w io.Writer) {
	fmt.Fprint(w, `fetchdt retrieves delegation tokens from the NameNode

fetchdt <opts> <token file>
Options:
  --renewer <name>    Name of the delegation token renewer
  --cancel            Cancel the delegation token
  --renew             Renew the delegation token.  Delegation token must have been fetched using the --renewer <name> option.
  --print             Print the delegation token
  --verbose           Print verbose information
`)
}

type fetchdtOpts struct {
	renewer                       string
	cancel, renew, print, verbose bool
	file                          string
}

func parseFetchdt(args []string) (fetchdtOpts, error) {
	var o fetchdtOpts
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			rest = append(rest, a)
			continue
		}
		switch strings.TrimLeft(a, "-") {
		case "renewer":
			if i+1 == len(args) {
				return o, errors.New("ERROR: Missing argument for option: renewer")
			}
			i++
			o.renewer = args[i]
		case "cancel":
			o.cancel = true
		case "renew":
			o.renew = true
		case "print":
			o.print = true
		case "verbose":
			o.verbose = true
		case "webservice":
			return o, errors.New("ERROR: --webservice is not supported; WebHDFS's GETDELEGATIONTOKEN serves tokens over http")
		default:
			return o, fmt.Errorf("ERROR: Unrecognized option: %s", a)
		}
	}
	n := 0
	for _, b := range []bool{o.cancel, o.renew, o.print} {
		if b {
			n++
		}
	}
	if n > 1 {
		return o, errors.New("ERROR: Only specify cancel, renew or print.")
	}
	if len(rest) != 1 {
		return o, errors.New("ERROR: Must specify exactly one token file")
	}
	o.file = rest[0]
	return o, nil
}

// managed reports whether a token is one fetchdt renews and cancels
// (Token.isManaged: the kinds with an HDFS token renewer).
func managed(t delegation.Token) bool {
	return t.Kind == delegation.Kind || t.Kind == delegation.WebHDFSKind
}

func runFetchdt(ctx context.Context, env *Env, args []string) int {
	o, err := parseFetchdt(args)
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		fetchdtUsage(env.Stderr)
		return 1
	}
	fail := func(err error) int {
		var re *hdfs.RemoteError
		if errors.As(err, &re) {
			fmt.Fprintf(env.Stderr, "fetchdt: %s: %s\n", re.Class, re.Message)
		} else {
			fmt.Fprintf(env.Stderr, "fetchdt: %v\n", err)
		}
		return 1
	}
	if o.print || o.renew || o.cancel {
		tokens, err := delegation.ReadCredentialsFile(o.file)
		if err != nil {
			return fail(err)
		}
		if o.print {
			for _, at := range tokens {
				id, err := delegation.DecodeIdentifier(at.Token.Identifier)
				if err != nil {
					return fail(err)
				}
				s := id.StableString()
				if o.verbose {
					s = id.String()
				}
				fmt.Fprintf(env.Stdout, "Token (%s) for %s\n", s, at.Token.Service)
			}
			return 0
		}
		c, err := hdfsClient(env)
		if err != nil {
			return fail(err)
		}
		defer c.Close()
		for _, at := range tokens {
			if !managed(at.Token) {
				continue
			}
			t := at.Token
			if o.renew {
				exp, err := c.RenewDelegationToken(ctx, &t)
				if err != nil {
					return fail(err)
				}
				if o.verbose {
					fmt.Fprintf(env.Stdout, "Renewed token for %s until: %s\n", t.Service, time.UnixMilli(exp).Format("2006-01-02 15:04:05,000-0700"))
				}
			} else {
				if err := c.CancelDelegationToken(ctx, &t); err != nil {
					return fail(err)
				}
				if o.verbose {
					fmt.Fprintf(env.Stdout, "Cancelled token for %s\n", t.Service)
				}
			}
		}
		return 0
	}
	c, err := hdfsClient(env)
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	t, err := c.GetDelegationToken(ctx, o.renewer)
	if err != nil {
		return fail(err)
	}
	if t == nil {
		fmt.Fprintf(env.Stderr, "ERROR: Failed to fetch token from %s\n", c.URI())
		return 1
	}
	// Tokens are credentials: the file is the user's alone.
	if err := delegation.WriteCredentialsFile(o.file, []delegation.AliasToken{{Alias: t.Service, Token: *t}}); err != nil {
		return fail(err)
	}
	fmt.Fprintf(env.Stdout, "Fetched token for %s into %s\n", t.Service, fileURI(o.file))
	return 0
}

// fileURI is how Hadoop prints a local token file: file:/absolute/path.
func fileURI(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return "file:" + p
}
