package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
)

// Hadoop's glob patterns: * ? [abc] [a-z] [!a] {a,b} (nested), \ escapes;
// matched component by component, listing only directories where a
// component has wildcards, as Hadoop's Globber does.

// Glob matches an absolute pattern component by component, listing
// only directories where a component has wildcards (Hadoop's Globber).
func Glob(ctx context.Context, fsys FileSystem, pattern string) ([]FileStatus, error) {
	type cand struct {
		path string
		st   *FileStatus
	}
	cands := []cand{{path: "/"}}
	for _, comp := range strings.Split(strings.Trim(pattern, "/"), "/") {
		if comp == "" {
			continue
		}
		var next []cand
		if !HasWildcard(comp) {
			name := UnescapeGlob(comp)
			for _, cd := range cands {
				next = append(next, cand{path: path.Join(cd.path, name)})
			}
		} else {
			pat := toGoPattern(comp)
			if _, err := path.Match(pat, ""); err != nil {
				return nil, fmt.Errorf("Illegal file pattern: %v in %s: %w", err, comp, ErrInvalid)
			}
			for _, cd := range cands {
				if cd.st != nil && !cd.st.IsDir {
					continue
				}
				sts, err := fsys.List(ctx, cd.path)
				if err != nil {
					if errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrNotDir) {
						continue
					}
					return nil, err
				}
				for i := range sts {
					st := &sts[i]
					if st.Path == cd.path && !st.IsDir {
						break // cd is a file
					}
					if ok, _ := path.Match(pat, st.Name()); ok {
						next = append(next, cand{path: path.Join(cd.path, st.Name()), st: st})
					}
				}
			}
		}
		cands = next
		if len(cands) == 0 {
			return nil, nil
		}
	}
	out := make([]FileStatus, 0, len(cands))
	for _, cd := range cands {
		if cd.st == nil {
			st, err := fsys.Stat(ctx, cd.path)
			if err != nil {
				if errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrNotDir) {
					continue
				}
				return nil, err
			}
			cd.st = &st
		}
		s := *cd.st
		s.Path = cd.path
		out = append(out, s)
	}
	return out, nil
}

// HasWildcard reports unescaped glob characters.
func HasWildcard(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?', '[', '{':
			return true
		}
	}
	return false
}

func UnescapeGlob(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// toGoPattern turns a Hadoop glob component into a path.Match pattern:
// "[!...]" negation becomes "[^...]".
func toGoPattern(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '\\' && i+1 < len(s) {
			b.WriteByte(ch)
			i++
			b.WriteByte(s[i])
			continue
		}
		b.WriteByte(ch)
		if ch == '[' && i+1 < len(s) && s[i+1] == '!' {
			b.WriteByte('^')
			i++
		}
	}
	return b.String()
}

// ExpandBraces expands {a,b} alternatives (nested ones too) into separate
// patterns, as Hadoop's GlobExpander.
func ExpandBraces(s string) ([]string, error) {
	open := -1
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == '{' {
			open = i
			break
		}
	}
	if open < 0 {
		return []string{s}, nil
	}
	depth := 0
	var alts []string
	start := open + 1
	closeAt := -1
	for i := open; i < len(s) && closeAt < 0; i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				alts = append(alts, s[start:i])
				closeAt = i
			}
		case ',':
			if depth == 1 {
				alts = append(alts, s[start:i])
				start = i + 1
			}
		}
	}
	if closeAt < 0 {
		return nil, fmt.Errorf("unclosed group in %q", s)
	}
	var out []string
	for _, alt := range alts {
		more, err := ExpandBraces(s[:open] + alt + s[closeAt+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// confInt reads an integer (size suffixes allowed) with a default for an
