//go:build unix

package chaos

import "syscall"

// supported: the harness freezes and thaws processes with job-control
// signals, which only Unix has.
const supported = true

const (
	stopSignal = syscall.SIGSTOP
	contSignal = syscall.SIGCONT
)
