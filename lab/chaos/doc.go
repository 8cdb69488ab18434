// Package chaos is crawlq's fault harness, `crawlq bench chaos`: it runs a
// real cluster on one machine (a queue Redis with AOF on its own port; a
// second Redis, also with AOF, for the proxy broker, sessions and results;
// the testbed in strict anti-bot mode; three `crawlq worker` processes),
// enqueues a mix of jobs on the three sites and, as the jobs finish, kills
// a worker with SIGKILL, kills a quarter of the farm's proxies, takes the
// broker's Redis away for ten seconds and restarts the queue Redis. At the
// end it counts what matters: jobs lost, invariant violations the sites
// saw, proxy leases still held, items written twice, archived jobs
// without a reason. With Options.Topology it runs on a Sentinel group or
// a Redis Cluster instead (one deployment for queue and broker) and kills
// its master -9 twice in place of the two outages (topology.go).
//
// Every process and directory it creates is removed when Run returns, on
// error and on cancellation too.
package chaos
