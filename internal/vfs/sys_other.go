//go:build !linux && !darwin

package vfs

import "errors"

func statfs(string) (DiskUsage, error) { return DiskUsage{}, errors.ErrUnsupported }
