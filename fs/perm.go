package fs

// PermString renders permission bits as Hadoop's FsPermission.toString
// and ls: "rwxr-xr-x", the sticky bit as t (with other's x) or T in the
// last place.
func PermString(perm uint16) string {
	const rwx = "rwxrwxrwx"
	b := []byte("---------")
	for i := range b {
		if perm&(1<<(8-i)) != 0 {
			b[i] = rwx[i]
		}
	}
	if perm&0o1000 != 0 {
		if b[8] == 'x' {
			b[8] = 't'
		} else {
			b[8] = 'T'
		}
	}
	return string(b)
}

// ModeString is PermString after ls's type letter: "drwxr-xr-x" for a
// directory, "-rw-r--r--" for a file.
func ModeString(dir bool, perm uint16) string {
	if dir {
		return "d" + PermString(perm)
	}
	return "-" + PermString(perm)
}
