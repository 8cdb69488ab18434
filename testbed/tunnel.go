package testbed

import (
	"io"
	"net"
	"sync"
)

// pipe copies client (reading through r, which may hold buffered bytes)
// to up and back until either side ends, then closes both.
func pipe(client net.Conn, r io.Reader, up net.Conn) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(up, r)
		closeWrite(up)
	}()
	io.Copy(client, up)
	client.Close()
	up.Close()
	wg.Wait()
}

// closeWrite half-closes c when it can, so the peer sees EOF.
func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
		return
	}
	c.Close()
}
