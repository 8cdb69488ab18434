// Package chaos is crawlq's fault harness, `crawlq bench chaos`: it runs a
// real cluster on one machine (a queue Redis with AOF on its own port, a
// second Redis for the proxy broker, the testbed in strict anti-bot mode
// and three `crawlq worker` processes), enqueues a mix of jobs on the three
// sites and, as the jobs complete, kills a worker with SIGKILL, restarts
// the queue Redis, stops the broker's Redis for a while and kills a
// quarter of the farm's proxies. At the end it counts what matters: jobs
// lost, invariant violations seen by the sites, proxy leases still held,
// items written twice, archived jobs without a reason.
//
// Every process and directory it creates is removed when Run returns, on
// error and on cancellation too.
package chaos
