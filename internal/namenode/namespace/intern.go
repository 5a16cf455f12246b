package namespace

// interner hands out one copy of each distinct string it is given, so that
// the owners and groups of millions of inodes share a few strings. The
// strings are kept while the tree lives (there are few: users and groups).
// Past internMax distinct strings — a client inventing user names under
// simple authentication — it interns no more: new strings are then kept
// as themselves, one copy per inode, and the interner stops growing.
type interner map[string]string

// internMax bounds the distinct strings an interner keeps.
const internMax = 1 << 16

// of returns the interned copy of s, or s when the interner is full.
func (in interner) of(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	if len(in) < internMax {
		in[s] = s
	}
	return s
}

// ofBytes returns the interned string with b's bytes, copying b only the
// first time (every time when the interner is full).
func (in interner) ofBytes(b []byte) string {
	if v, ok := in[string(b)]; ok { // no allocation for the lookup
		return v
	}
	s := string(b)
	if len(in) < internMax {
		in[s] = s
	}
	return s
}
