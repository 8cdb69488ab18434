package proxies

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ModemStats are the pool's modem figures over the last StatsWindow.
type ModemStats struct {
	// Modems counts the pool's modems; Rotating those changing IP now.
	Modems   int `json:"modems"`
	Rotating int `json:"rotating"`
	// Rotations and Failed count the rotations that ended in the window
	// (Failed: no new IP, the modem was quarantined instead).
	Rotations int `json:"rotations"`
	Failed    int `json:"failed"`
	// PerMinute is Rotations per minute of the window.
	PerMinute float64 `json:"rotations_per_min"`
	// P50 and P90 are the rotations' times, from the ban (or the
	// rotate_after) to the new IP, over the last 1000 done.
	P50 time.Duration `json:"p50"`
	P90 time.Duration `json:"p90"`
	// Requests counts the requests sent through modems in the window;
	// PerModemHour is Requests per modem-hour, the figure mobile proxies
	// are bought by.
	Requests     int64   `json:"requests"`
	PerModemHour float64 `json:"requests_per_modem_hour"`
}

// StatsWindow is the span ModemStats counts over.
const StatsWindow = 10 * time.Minute

// ModemStats reads the rotation log, the live rotations and the request
// counters of the last StatsWindow.
func (b *RedisBroker) ModemStats(ctx context.Context) (ModemStats, error) {
	n, err := b.rdb.SCard(ctx, b.k.modems()).Result()
	if err != nil {
		return ModemStats{}, err
	}
	st := ModemStats{Modems: int(n)}
	if st.Modems == 0 {
		return st, nil
	}
	now, err := b.rdb.Time(ctx).Result()
	if err != nil {
		return st, err
	}
	nowMs := now.UnixMilli() + b.cfg.skew()
	minutes := int64(StatsWindow / time.Minute)
	p := b.rdb.Pipeline()
	rot := p.HGetAll(ctx, b.k.rotating())
	log := p.LRange(ctx, b.k.modemLog(), 0, 999)
	sent := make([]string, 0, minutes)
	for m := nowMs/60000 - minutes + 1; m <= nowMs/60000; m++ {
		sent = append(sent, b.k.modemSent(m))
	}
	counts := p.MGet(ctx, sent...)
	if _, err := p.Exec(ctx); err != nil {
		return st, err
	}
	st.Rotating = liveRotations(rot.Val(), nowMs)
	st.addLog(log.Val(), nowMs)
	for _, v := range counts.Val() {
		if s, ok := v.(string); ok {
			n, _ := strconv.ParseInt(s, 10, 64)
			st.Requests += n
		}
	}
	st.PerMinute = float64(st.Rotations) / StatsWindow.Minutes()
	st.PerModemHour = float64(st.Requests) / (float64(st.Modems) * StatsWindow.Hours())
	return st, nil
}

// liveRotations counts the marks whose deadline is after now.
func liveRotations(marks map[string]string, now int64) int {
	n := 0
	for _, v := range marks {
		f := strings.SplitN(v, "|", 3)
		if len(f) == 3 {
			if dl, _ := strconv.ParseInt(f[1], 10, 64); dl > now {
				n++
			}
		}
	}
	return n
}

// addLog counts the window's rotations and the percentiles of the done
// ones in the log ("end-ms|took-ms|ok|id").
func (st *ModemStats) addLog(entries []string, now int64) {
	var took []time.Duration
	for _, e := range entries {
		f := strings.SplitN(e, "|", 4)
		if len(f) != 4 {
			continue
		}
		end, _ := strconv.ParseInt(f[0], 10, 64)
		ms, _ := strconv.ParseInt(f[1], 10, 64)
		if f[2] == "1" {
			took = append(took, time.Duration(ms)*time.Millisecond)
		}
		if now-end > StatsWindow.Milliseconds() {
			continue
		}
		st.Rotations++
		if f[2] != "1" {
			st.Failed++
		}
	}
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	st.P50 = took[(len(took)-1)*50/100]
	st.P90 = took[(len(took)-1)*90/100]
}

// noteModems keeps the set of the pool's modems after an import of ps:
// the modems in, the others out (a line that lost its change link).
func (b *RedisBroker) noteModems(ctx context.Context, ps []Proxy) error {
	var in, out []any
	for _, p := range ps {
		if p.Modem != nil {
			in = append(in, p.ID)
		} else {
			out = append(out, p.ID)
		}
	}
	pipe := b.rdb.Pipeline()
	if len(in) > 0 {
		pipe.SAdd(ctx, b.k.modems(), in...)
	}
	if len(out) > 0 {
		pipe.SRem(ctx, b.k.modems(), out...)
	}
	_, err := pipe.Exec(ctx)
	return err
}

func toAny(ids []string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}
