//go:build !linux

package redisproc

import "syscall"

func parentDeathAttr() *syscall.SysProcAttr { return nil }
