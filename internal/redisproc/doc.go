// Package redisproc starts real Redis deployments from redis-server on
// PATH, on free loopback ports in temp dirs: one server, a Sentinel group
// (one master, one replica, three sentinels) and a Redis Cluster (three
// masters with a replica each), for tests and benchmarks. Servers can be
// killed and started again on their port; every process is asked to exit
// when the process that started it dies (Linux).
package redisproc
