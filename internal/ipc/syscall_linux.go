package ipc

import "syscall"

const syscallEMFILE = syscall.EMFILE
