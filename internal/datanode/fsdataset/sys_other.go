//go:build !linux && !darwin

package fsdataset

import "errors"

const oDirect = 0

func statfs(p string) (DiskUsage, error) { return DiskUsage{}, errors.ErrUnsupported }
