package namespace

// interner hands out one copy of each distinct string it is given, so that
// the owners and groups of millions of inodes share a few strings. The
// strings are kept while the tree lives (there are few: users and groups).
type interner map[string]string

// of returns the interned copy of s.
func (in interner) of(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	in[s] = s
	return s
}

// ofBytes returns the interned string with b's bytes, copying b only the
// first time.
func (in interner) ofBytes(b []byte) string {
	if v, ok := in[string(b)]; ok { // no allocation for the lookup
		return v
	}
	s := string(b)
	in[s] = s
	return s
}
