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
}

// cpuMark is the CPU used so far by Redis (each master) and this process.
type cpuMark struct {
	redis    time.Duration
	redisOK  bool
	byMaster map[string]time.Duration
	proc     time.Duration
}

// markCPU reads both clocks (every master's on a Cluster); a Redis that
// does not answer INFO cpu with used_cpu_sys and used_cpu_user leaves
// redisOK false.
func markCPU(ctx context.Context, rdb redis.UniversalClient) cpuMark {
	m := cpuMark{byMaster: map[string]time.Duration{}, redisOK: true}
	m.proc = processCPU()
	err := eachMaster(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "cpu").Result()
		if err != nil {
			return err
		}
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
	if len(end.byMaster) > 1 {
		c.RedisByMasterUS = map[string]float64{}
		for a, d := range end.byMaster {
			c.RedisByMasterUS[a] = per(d - m.byMaster[a])
		}
	}
	return c
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
