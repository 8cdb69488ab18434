package chaos

import "syscall"

// childAttr puts a child in its own process group and has the kernel kill
// it when the harness dies.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
