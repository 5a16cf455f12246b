//go:build !(linux || darwin || freebsd)

package spill

// freeSpace returns -1: unknown on this platform.
func freeSpace(string) int64 { return -1 }
