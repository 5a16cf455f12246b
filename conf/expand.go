package conf

import (
	"os"
	"os/user"
	"slices"
	"strings"
	"sync"
)

const (
	// maxDepth bounds nested expansion, as Hadoop's MAX_SUBST (20) does.
	maxDepth = 20
	// maxExpansions bounds the references one Get expands in total, so
	// values referring to each other many times cannot blow up.
	maxExpansions = 1000
)

// Expand expands ${...} references in s as Get does for values.
func (c *Configuration) Expand(s string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e := expander{c: c, budget: maxExpansions}
	return e.expand(s, nil)
}

// expander expands references for one Get; c.mu is read-locked.
type expander struct {
	c      *Configuration
	budget int
}

// expand replaces each ${name} in s by name's expanded value. active holds
// the names being expanded (outermost first): a reference to one of them is
// a cycle and stays literal, as does one nested deeper than maxDepth, one
// past the budget, or one that does not resolve.
func (e *expander) expand(s string, active []string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		n := varNameLen(s[i+2:])
		if n == 0 {
			// Not a reference: keep the "$" and scan on from the "{".
			b.WriteByte('$')
			s = s[i+1:]
			continue
		}
		name, ref := s[i+2:i+2+n], s[i:i+3+n]
		s = s[i+3+n:]
		id, val, ok := e.resolve(name)
		if !ok || e.budget <= 0 || len(active) >= maxDepth || slices.Contains(active, id) {
			b.WriteString(ref)
			continue
		}
		e.budget--
		b.WriteString(e.expand(val, append(active, id)))
	}
}

// varNameLen returns the length of the reference name at the start of s,
// or 0 if s does not start with a name followed by "}". As in Hadoop a
// name is non-empty and holds no "$", "{" or white space.
func varNameLen(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '}':
			return i
		case '$', '{', ' ', '\t', '\n', '\r':
			return 0
		}
	}
	return 0
}

// resolve returns the raw value of the reference name and the identity
// used to detect cycles: ${env.NAME} (also ${env.NAME:-default}, used when
// NAME is unset or empty, and ${env.NAME-default}, used when NAME is unset,
// whichever separator comes first, as in Hadoop) from the environment,
// ${user.name} as the operating-system user, any other name as the
// configuration's value or default (a deprecated name as its replacement).
func (e *expander) resolve(name string) (id, val string, ok bool) {
	if env, isEnv := strings.CutPrefix(name, "env."); isEnv && env != "" {
		if i := strings.IndexByte(env, '-'); i >= 0 {
			if i > 0 && env[i-1] == ':' {
				if x := os.Getenv(env[:i-1]); x != "" {
					return name, x, true
				}
				return name, env[i+1:], true
			}
			if x, set := os.LookupEnv(env[:i]); set {
				return name, x, true
			}
			return name, env[i+1:], true
		}
		val, ok = os.LookupEnv(env)
		return name, val, ok
	}
	if name == userNameKey {
		u := userName()
		return name, u, u != ""
	}
	id = canonical(name)
	val, ok = e.c.rawLocked(id)
	return id, val, ok
}

// userName returns the operating-system user's login name, like Java's
// user.name system property, or "" if it cannot be found.
var userName = sync.OnceValue(func() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	for _, v := range []string{"USER", "LOGNAME", "USERNAME"} {
		if s := os.Getenv(v); s != "" {
			return s
		}
	}
	return ""
})
