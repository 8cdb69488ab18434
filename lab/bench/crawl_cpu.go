package bench

import (
	"bufio"
	"context"
	"math"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// CPUCost is the CPU time one unit of work (an OK page, a no-op task) cost
// over a measured window: in Redis (from INFO cpu; omitted when the Redis
// does not report it, as the embedded one) and in this process (the worker
// servers, the testbed's proxies and site, the feeder).
type CPUCost struct {
	RedisUS   *float64 `json:"redis_us,omitempty"`
	ProcessUS float64  `json:"process_us"`
	// RedisByMasterUS splits RedisUS by master (address) on a Cluster.
	RedisByMasterUS map[string]float64 `json:"redis_by_master_us,omitempty"`
	// RedisReads is Redis's read events (INFO stats total_reads_processed)
	// per unit: about the round trips it served.
	RedisReads *float64 `json:"redis_reads,omitempty"`
	// RedisCommands is, per unit, how often Redis ran each command and the
	// µs it spent in it (INFO commandstats: a script's own commands count
	// in its evalsha, the socket work in none).
	RedisCommands map[string]CommandCost `json:"redis_commands,omitempty"`
}

// CommandCost is one command's share of a unit of work.
type CommandCost struct {
	Calls float64 `json:"calls"`
	US    float64 `json:"us"`
}

// cpuMark is the CPU used so far by Redis (each master) and this process,
// and Redis's read events and command counters.
type cpuMark struct {
	redis    time.Duration
	redisOK  bool
	byMaster map[string]time.Duration
	proc     time.Duration
	reads    float64
	cmds     map[string]CommandCost
}

// markCPU reads both clocks (every master's on a Cluster); a Redis that
// does not answer INFO cpu with used_cpu_sys and used_cpu_user leaves
// redisOK false.
func markCPU(ctx context.Context, rdb redis.UniversalClient) cpuMark {
	m := cpuMark{byMaster: map[string]time.Duration{}, redisOK: true, cmds: map[string]CommandCost{}}
	m.proc = processCPU()
	err := eachMaster(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "cpu", "stats", "commandstats").Result()
		if err != nil {
			return err
		}
		m.addCounters(info)
		d, ok := redisCPU(info)
		m.redis += d
		m.redisOK = m.redisOK && ok
		m.byMaster[c.Options().Addr] = d
		return nil
	})
	m.redisOK = m.redisOK && err == nil
	return m
}

// cost is the CPU from m to now per unit of n.
func (m cpuMark) cost(ctx context.Context, rdb redis.UniversalClient, n int) *CPUCost {
	if n <= 0 {
		return nil
	}
	end := markCPU(ctx, rdb)
	per := func(d time.Duration) float64 {
		return math.Round(float64(d)/float64(time.Microsecond)/float64(n)*10) / 10
	}
	c := &CPUCost{ProcessUS: per(end.proc - m.proc)}
	if m.redisOK && end.redisOK {
		v := per(end.redis - m.redis)
		c.RedisUS = &v
	}
	if end.reads > 0 {
		v := math.Round((end.reads-m.reads)/float64(n)*100) / 100
		c.RedisReads = &v
	}
	for name, e := range end.cmds {
		d := CommandCost{Calls: e.Calls - m.cmds[name].Calls, US: e.US - m.cmds[name].US}
		if d.Calls <= 0 || name == "info" {
			continue
		}
		if c.RedisCommands == nil {
			c.RedisCommands = map[string]CommandCost{}
		}
		c.RedisCommands[name] = CommandCost{Calls: math.Round(d.Calls/float64(n)*100) / 100,
			US: math.Round(d.US/float64(n)*10) / 10}
	}
	if len(end.byMaster) > 1 {
		c.RedisByMasterUS = map[string]float64{}
		for a, d := range end.byMaster {
			c.RedisByMasterUS[a] = per(d - m.byMaster[a])
		}
	}
	return c
}

// plus is c and o added unit for unit (the parts of one unit of work
// measured in two windows); a figure either lacks stays out.
func (c *CPUCost) plus(o *CPUCost) *CPUCost {
	if c == nil || o == nil {
		return nil
	}
	sum := &CPUCost{ProcessUS: c.ProcessUS + o.ProcessUS}
	add := func(a, b *float64) *float64 {
		if a == nil || b == nil {
			return nil
		}
		v := math.Round((*a+*b)*100) / 100
		return &v
	}
	sum.RedisUS, sum.RedisReads = add(c.RedisUS, o.RedisUS), add(c.RedisReads, o.RedisReads)
	for _, part := range []map[string]float64{c.RedisByMasterUS, o.RedisByMasterUS} {
		for a, us := range part {
			if sum.RedisByMasterUS == nil {
				sum.RedisByMasterUS = map[string]float64{}
			}
			sum.RedisByMasterUS[a] += us
		}
	}
	for _, part := range []map[string]CommandCost{c.RedisCommands, o.RedisCommands} {
		for name, e := range part {
			if sum.RedisCommands == nil {
				sum.RedisCommands = map[string]CommandCost{}
			}
			t := sum.RedisCommands[name]
			sum.RedisCommands[name] = CommandCost{Calls: t.Calls + e.Calls, US: t.US + e.US}
		}
	}
	return sum
}

// redisCPU sums used_cpu_sys and used_cpu_user of an INFO cpu answer.
func redisCPU(info string) (time.Duration, bool) {
	var sum float64
	found := 0
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok || (k != "used_cpu_sys" && k != "used_cpu_user") {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, false
		}
		sum += f
		found++
	}
	return time.Duration(sum * float64(time.Second)), found == 2
}

// processCPU is this process's user plus system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// addCounters adds total_reads_processed and every cmdstat_NAME line
// (calls=…,usec=…) of an INFO answer.
func (m *cpuMark) addCounters(info string) {
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		if k == "total_reads_processed" {
			f, _ := strconv.ParseFloat(v, 64)
			m.reads += f
			continue
		}
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		e := m.cmds[name]
		for _, kv := range strings.Split(v, ",") {
			f, val, _ := strings.Cut(kv, "=")
			x, _ := strconv.ParseFloat(val, 64)
			switch f {
			case "calls":
				e.Calls += x
			case "usec":
				e.US += x
			}
		}
		m.cmds[name] = e
	}
}
