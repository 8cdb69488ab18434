//go:build !linux

package testredis

import "syscall"

func parentDeathAttr() *syscall.SysProcAttr { return nil }
