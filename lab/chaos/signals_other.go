//go:build !unix

package chaos

import "syscall"

const supported = false

const (
	stopSignal = syscall.Signal(-1)
	contSignal = syscall.Signal(-1)
)

func childAttr() *syscall.SysProcAttr { return nil }
