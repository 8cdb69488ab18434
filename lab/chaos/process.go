package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// process is a started child with its exit watched, so signals, waits and
// cleanup never race on cmd.Wait.
type process struct {
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	mu   sync.Mutex
	err  error
}

// startProcess starts cmd with stdout and stderr appended to logPath, in
// its own process group (a Ctrl-C to the harness is not the children's)
// and, on Linux, killed if the harness dies.
func startProcess(cmd *exec.Cmd, logPath string) (*process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	p := &process{cmd: cmd, log: f, done: make(chan struct{})}
	go p.wait()
	return p, nil
}

func (p *process) wait() {
	err := p.cmd.Wait()
	p.mu.Lock()
	p.err = err
	p.mu.Unlock()
	p.log.Close()
	close(p.done)
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitErr is the process's exit error once it has ended.
func (p *process) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *process) signal(sig syscall.Signal) error {
	if p.exited() {
		return errNotRunning
	}
	return p.cmd.Process.Signal(sig)
}

// terminate sends SIGTERM and waits up to grace for the exit, then kills.
func (p *process) terminate(grace time.Duration) error {
	if err := p.signal(syscall.SIGTERM); err != nil {
		return nil // already gone
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
		p.kill()
		return fmt.Errorf("pid %d ignored SIGTERM for %s: killed", p.cmd.Process.Pid, grace)
	}
}

// kill sends SIGKILL and waits for the exit.
func (p *process) kill() {
	_ = p.signal(syscall.SIGKILL)
	<-p.done
}
