//go:build !linux && !darwin

package fsdataset

const oDirect = 0
