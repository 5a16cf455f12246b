package jobtracker

import (
	"os/user"
	"strings"
)

// ACL is an access control list in Hadoop's format (AccessControlList):
// "user1,user2 group1,group2" — users, a blank, groups; "*" allows
// everyone; " " (or "") allows no one.
type ACL struct {
	all    bool
	users  map[string]bool
	groups map[string]bool
}

// ParseACL reads s in Hadoop's ACL format.
func ParseACL(s string) ACL {
	a := ACL{users: map[string]bool{}, groups: map[string]bool{}}
	if strings.TrimSpace(s) == "*" {
		a.all = true
		return a
	}
	users, groups, _ := strings.Cut(s, " ")
	for _, u := range strings.Split(users, ",") {
		if u = strings.TrimSpace(u); u != "" {
			a.users[u] = true
		}
	}
	for _, g := range strings.Split(groups, ",") {
		if g = strings.TrimSpace(g); g != "" {
			a.groups[g] = true
		}
	}
	return a
}

// Allows says whether user, a member of groups, is on the list.
func (a ACL) Allows(user string, groups []string) bool {
	if a.all {
		return true
	}
	if a.users[user] {
		return true
	}
	for _, g := range groups {
		if a.groups[g] {
			return true
		}
	}
	return false
}

// String is the list in Hadoop's format.
func (a ACL) String() string {
	if a.all {
		return "*"
	}
	join := func(m map[string]bool) string {
		var s []string
		for k := range m {
			s = append(s, k)
		}
		return strings.Join(s, ",")
	}
	return join(a.users) + " " + join(a.groups)
}

// OSGroups is the groups of an OS user (see osGroups).
func OSGroups(name string) []string { return osGroups(name) }

// osGroups is the groups of an OS user, as Hadoop's default
// ShellBasedUnixGroupsMapping finds them (none for an unknown user).
func osGroups(name string) []string {
	u, err := user.Lookup(name)
	if err != nil {
		return nil
	}
	ids, err := u.GroupIds()
	if err != nil {
		ids = []string{u.Gid}
	}
	var out []string
	for _, id := range ids {
		if g, err := user.LookupGroupId(id); err == nil {
			out = append(out, g.Name)
		}
	}
	return out
}
