package browser

import (
	"os"
	"strconv"
	"strings"
)

// processAlive says whether pid runs (and is not a zombie), from /proc.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	state, _, ok := procStat(pid)
	return ok && state != "Z" && state != "X"
}

// procStat reads a process's state and parent pid from /proc/PID/stat.
func procStat(pid int) (state string, ppid int, ok bool) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')') // the command may hold spaces
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[0], ppid, true
}

// treeRSS sums the proportional resident memory of pid and its descendants, in bytes,
// from /proc (0 where /proc is not there).
func treeRSS(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	parent := map[int]int{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if _, pp, ok := procStat(p); ok {
			parent[p] = pp
		}
	}
	var total int64
	for p := range parent {
		if descends(p, pid, parent) {
			total += rss(p)
		}
	}
	return total
}

// descends says whether p is root or one of its descendants.
func descends(p, root int, parent map[int]int) bool {
	for i := 0; i < 64 && p > 1; i++ {
		if p == root {
			return true
		}
		p = parent[p]
	}
	return p == root
}

// rss is one process's proportional resident memory (PSS: its private
// pages plus its share of the pages it shares with other processes, so a
// tree's sum counts the shared libraries once) from
// /proc/PID/smaps_rollup, or its RSS from /proc/PID/statm where PSS is
// not available.
func rss(pid int) int64 {
	if raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "Pss:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				return kb << 10
			}
		}
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(raw))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// DescendantsRSS is the proportional resident memory of every process pid
// started (not pid itself), in bytes: a worker's browser processes.
func DescendantsRSS(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	return treeRSS(pid) - rss(pid)
}
