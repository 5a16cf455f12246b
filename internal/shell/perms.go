package shell

import (
	"fmt"
	"regexp"
	"strings"
)

// chmodMode is a parsed chmod mode, Hadoop's ChmodParser: symbolic
// ("u+x,go-w", "a=r", "+t") or octal ("755", "1777").
type chmodMode struct {
	userMode, groupMode, othersMode, stickyMode int
	userType, groupType, othersType, stickyType byte
}

var (
	chmodSymbolic = regexp.MustCompile(`^\s*([ugoa]*)([+=-]+)([rwxXt]+)([,\s]*)\s*`)
	chmodOctal    = regexp.MustCompile(`^\s*[+]?([01]?)([0-7]{3})\s*$`)
)

func parseChmod(s string) (*chmodMode, error) {
	m := &chmodMode{userType: '+', groupType: '+', othersType: '+', stickyType: '+'}
	bad := fmt.Errorf("chmod : mode '%s' does not match the expected pattern.", s)
	if g := chmodSymbolic.FindStringSubmatch(s); g != nil {
		pos := 0
		for first := true; first || pos < len(s); first = false {
			g := chmodSymbolic.FindStringSubmatch(s[pos:])
			if g == nil {
				return nil, bad
			}
			pos += len(g[0])
			typ := g[2][len(g[2])-1]
			user, group, others := false, false, false
			for _, c := range g[1] {
				switch c {
				case 'u':
					user = true
				case 'g':
					group = true
				case 'o':
					others = true
				}
			}
			if !user && !group && !others {
				user, group, others = true, true, true
			}
			mode, sticky := 0, false
			for _, c := range g[3] {
				switch c {
				case 'r':
					mode |= 4
				case 'w':
					mode |= 2
				case 'x':
					mode |= 1
				case 'X':
					mode |= 8
				case 't':
					sticky = true
				}
			}
			if user {
				m.userMode, m.userType = mode, typ
			}
			if group {
				m.groupMode, m.groupType = mode, typ
			}
			if others {
				m.othersMode, m.othersType = mode, typ
				m.stickyMode, m.stickyType = 0, typ
				if sticky {
					m.stickyMode = 1
				}
			}
			if pos < len(s) && !strings.Contains(g[4], ",") {
				return nil, bad
			}
		}
		return m, nil
	}
	if g := chmodOctal.FindStringSubmatch(s); g != nil {
		m.userType, m.groupType, m.othersType = '=', '=', '='
		if g[1] != "" {
			m.stickyMode, m.stickyType = int(g[1][0]-'0'), '='
		}
		m.userMode = int(g[2][0] - '0')
		m.groupMode = int(g[2][1] - '0')
		m.othersMode = int(g[2][2] - '0')
		return m, nil
	}
	return nil, bad
}

// apply returns the new permission bits (0o1777) for a path with the
// existing ones.
func (m *chmodMode) apply(existing uint16, isDir bool) uint16 {
	e := int(existing & 0o1777)
	exeOk := isDir || e&0o111 != 0
	return uint16(combine(m.stickyType, m.stickyMode, e>>9, false)<<9 |
		combine(m.userType, m.userMode, e>>6&7, exeOk)<<6 |
		combine(m.groupType, m.groupMode, e>>3&7, exeOk)<<3 |
		combine(m.othersType, m.othersMode, e&7, exeOk))
}

func combine(typ byte, mode, existing int, exeOk bool) int {
	capX := false
	if mode&8 != 0 { // X: x only for directories or if some x is set
		capX = true
		mode = mode&^8 | 1
	}
	switch typ {
	case '+':
		mode |= existing
	case '-':
		mode = ^mode & existing
	}
	if capX && !exeOk && mode&1 != 0 && existing&1 == 0 {
		mode &^= 1
	}
	return mode
}

const nameChars = `[-_./@a-zA-Z0-9]`

var (
	chownPattern = regexp.MustCompile(`^\s*(` + nameChars + `+)?([:](` + nameChars + `*))?\s*$`)
	chgrpPattern = regexp.MustCompile(`^\s*(` + nameChars + `+)\s*$`)
)

// parseOwner parses chown's [OWNER][:[GROUP]].
func parseOwner(s string) (owner, group string, err error) {
	g := chownPattern.FindStringSubmatch(s)
	if g == nil {
		return "", "", usageErrorf("'%s' does not match expected pattern for [owner][:group].", s)
	}
	owner, group = g[1], g[3]
	if owner == "" && group == "" {
		return "", "", usageErrorf("'%s' does not specify owner or group.", s)
	}
	return owner, group, nil
}

func parseGroup(s string) (string, error) {
	g := chgrpPattern.FindStringSubmatch(s)
	if g == nil {
		return "", usageErrorf("'%s' does not match expected pattern for group", s)
	}
	return g[1], nil
}
