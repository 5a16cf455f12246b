//go:build linux

package fsdataset

import "syscall"

const oDirect = syscall.O_DIRECT
