package testpg

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// stopWithParent starts a watcher, in its own session, that stops the
// server once the test binary is gone (however it ended).
func stopWithParent(pgctl, data string) {
	w := exec.Command("sh", "-c", `while kill -0 "$1" 2>/dev/null; do sleep 1; done; "$2" -D "$3" -m immediate stop >/dev/null 2>&1`,
		"watch", strconv.Itoa(os.Getpid()), pgctl, data)
	w.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	_ = w.Start()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
