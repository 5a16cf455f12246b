//go:build darwin

package fsdataset

const oDirect = 0 // macOS has F_NOCACHE, not O_DIRECT
