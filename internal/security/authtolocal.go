package security

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// AuthToLocal maps Kerberos principals to local user names by Hadoop's
// KerberosName rules (hadoop.security.auth_to_local):
//
//	RULE:[n:fmt](regex)s/pattern/replacement/g/L
//	DEFAULT
//
// A RULE applies to principals of n components (1: user@REALM, 2:
// service/host@REALM); fmt builds a string from $0 (the realm), $1 and $2
// (the components); the rule matches when regex matches all of it; the
// optional sed substitution (g: every match) then makes the name, and /L
// lower-cases it. DEFAULT maps a principal of the default realm to its
// first component. Rules are tried in order; the first that matches wins.
type AuthToLocal struct {
	rules        []rule
	mit          bool   // hadoop.security.auth_to_local.mechanism=mit
	DefaultRealm string // the realm DEFAULT accepts (krb5.conf's default_realm)
}

type rule struct {
	isDefault bool
	n         int
	format    string
	match     *regexp.Regexp // nil: matches everything
	from      *regexp.Regexp // nil: no substitution
	to        string         // in Go's Expand syntax
	global    bool
	lower     bool
	text      string
}

// ruleRE is the grammar of one rule, as KerberosName's ruleParser.
var ruleRE = regexp.MustCompile(`^\s*((DEFAULT)|(RULE:\[(\d*):([^\]]*)](\(([^)]*)\))?(s/([^/]*)/([^/]*)/(g)?)?))/?(L)?`)

// ParseAuthToLocal parses rules (one or more separated by white space; ""
// is DEFAULT) and mechanism ("" or hadoop: a name with / or @ left after
// the rules is an error, and a principal no rule matches is refused; mit:
// such names are allowed and an unmatched principal maps to itself).
func ParseAuthToLocal(rules, mechanism string) (*AuthToLocal, error) {
	a := &AuthToLocal{}
	switch strings.ToLower(strings.TrimSpace(mechanism)) {
	case "", "hadoop":
	case "mit":
		a.mit = true
	default:
		return nil, fmt.Errorf("%s: %q: want hadoop or mit", KeyAuthToLocalMech, mechanism)
	}
	s := strings.TrimSpace(rules)
	if s == "" {
		s = "DEFAULT"
	}
	for s != "" {
		m := ruleRE.FindStringSubmatchIndex(s)
		if m == nil {
			return nil, fmt.Errorf("%s: invalid rule: %s", KeyAuthToLocal, s)
		}
		g := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return s[m[2*i]:m[2*i+1]]
		}
		r := rule{text: strings.TrimSpace(s[:m[1]]), lower: g(12) == "L"}
		if g(2) != "" {
			r.isDefault = true
		} else {
			n, err := strconv.Atoi(g(4))
			if err != nil {
				return nil, fmt.Errorf("%s: invalid rule %s: bad component count", KeyAuthToLocal, r.text)
			}
			r.n, r.format = n, g(5)
			if m[2*6] >= 0 {
				re, err := regexp.Compile("^(?:" + g(7) + ")$")
				if err != nil {
					return nil, fmt.Errorf("%s: rule %s: %v", KeyAuthToLocal, r.text, err)
				}
				r.match = re
			}
			if m[2*8] >= 0 {
				re, err := regexp.Compile(g(9))
				if err != nil {
					return nil, fmt.Errorf("%s: rule %s: %v", KeyAuthToLocal, r.text, err)
				}
				r.from, r.to, r.global = re, javaReplacement(g(10)), g(11) == "g"
			}
		}
		a.rules = append(a.rules, r)
		s = strings.TrimSpace(s[m[1]:])
	}
	return a, nil
}

// javaReplacement converts a java.util.regex replacement ($1, \$) to Go's
// Expand syntax (${1}, $$).
func javaReplacement(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(s[i])
			}
		case c == '$':
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == i+1 {
				b.WriteString("$$")
			} else {
				b.WriteString("${" + s[i+1:j] + "}")
				i = j - 1
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// NoMatchingRuleError is KerberosName.NoMatchingRule.
type NoMatchingRuleError struct{ Msg string }

func (e *NoMatchingRuleError) Error() string { return e.Msg }

// ShortName maps principal to a local user name.
func (a *AuthToLocal) ShortName(principal string) (string, error) {
	primary, instance, realm := SplitPrincipal(principal)
	if realm == "" {
		// A name without a realm is already local.
		if instance == "" {
			return primary, nil
		}
	}
	params := []string{realm, primary}
	if instance != "" {
		params = append(params, instance)
	}
	for _, r := range a.rules {
		out, ok, err := r.apply(params, a.DefaultRealm)
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		if !a.mit && strings.ContainsAny(out, "/@") {
			return "", &NoMatchingRuleError{Msg: fmt.Sprintf("Non-simple name %s after auth_to_local rule %s", out, r.text)}
		}
		return out, nil
	}
	if a.mit {
		return principal, nil
	}
	return "", &NoMatchingRuleError{Msg: "No rules applied to " + principal}
}

func (r *rule) apply(params []string, defaultRealm string) (string, bool, error) {
	var out string
	if r.isDefault {
		if params[0] != defaultRealm {
			return "", false, nil
		}
		out = params[1]
	} else {
		if len(params)-1 != r.n {
			return "", false, nil
		}
		base, err := expandFormat(r.format, params)
		if err != nil {
			return "", false, err
		}
		if r.match != nil && !r.match.MatchString(base) {
			return "", false, nil
		}
		out = base
		if r.from != nil {
			out = substitute(r.from, base, r.to, r.global)
		}
	}
	if r.lower {
		out = strings.ToLower(out)
	}
	return out, true, nil
}

// expandFormat replaces $0, $1, $2 in format with params.
func expandFormat(format string, params []string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '$' {
			b.WriteByte(format[i])
			continue
		}
		j := i + 1
		for j < len(format) && format[j] >= '0' && format[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(format[i+1 : j])
		if err != nil || n >= len(params) {
			return "", fmt.Errorf("%s: index %s from %s is outside of the valid range 0 to %d", KeyAuthToLocal, format[i+1:j], format, len(params)-1)
		}
		b.WriteString(params[n])
		i = j - 1
	}
	return b.String(), nil
}

// substitute is Java's replaceFirst / replaceAll.
func substitute(re *regexp.Regexp, s, tmpl string, global bool) string {
	if global {
		return re.ReplaceAllString(s, tmpl)
	}
	loc := re.FindStringSubmatchIndex(s)
	if loc == nil {
		return s
	}
	dst := re.ExpandString(nil, tmpl, s, loc)
	return s[:loc[0]] + string(dst) + s[loc[1]:]
}
