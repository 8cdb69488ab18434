package proxies

import (
	"context"
	"fmt"
	"time"
)

// WaitSeats bound the jobs waiting in their worker slots for a proxy of
// a (site, class), across the cluster: the site's live leases of the
// class plus those waiting stay within its proxies not quarantined, the
// most jobs the site can serve at once. A job refused a seat hands its
// slot back at once, so a worker holds no more of its slots in a site's
// leases and lease waits than the site can use, and the others go to
// sites that can use them.
type WaitSeats interface {
	// Seat takes a seat for waiter (holder|task) kept at most keep;
	// false with the figures when the site can use no more.
	Seat(ctx context.Context, site string, class Class, waiter string, keep time.Duration) (Seat, error)
	// Unseat gives waiter's seat back.
	Unseat(ctx context.Context, site string, class Class, waiter string) error
}

// Seat is WaitSeats.Seat's answer.
type Seat struct {
	// Taken says the job may wait in its slot.
	Taken bool
	// Usable are the class's proxies not quarantined for the site,
	// Leases their live leases, Waiting the jobs that held a seat before.
	Usable, Leases, Waiting int
}

var _ WaitSeats = (*RedisBroker)(nil)

// waitSeatScript: Seat and Unseat (lua/wait_seat.lua).
var waitSeatScript = newScript("wait_seat")

// waitSeats is a ZSET of the jobs waiting in their slots for a proxy of
// site and class (wait_seat.lua): waiter -> deadline (ms, Redis clock).
func (k keys) waitSeats(site string, c Class) string {
	return k.prefix + "seats:" + site + ":" + string(c)
}

// Seat takes a wait seat (WaitSeats).
func (b *RedisBroker) Seat(ctx context.Context, site string, class Class, waiter string, keep time.Duration) (Seat, error) {
	res, err := b.runSeat(ctx, site, class, waiter, max(keep.Milliseconds(), 1))
	if err != nil {
		return Seat{}, err
	}
	return Seat{Taken: num(res[0]) == 1, Usable: int(num(res[1])), Leases: int(num(res[2])), Waiting: int(num(res[3]))}, nil
}

// Unseat gives a wait seat back (WaitSeats).
func (b *RedisBroker) Unseat(ctx context.Context, site string, class Class, waiter string) error {
	_, err := b.runSeat(ctx, site, class, waiter, 0)
	return err
}

func (b *RedisBroker) runSeat(ctx context.Context, site string, class Class, waiter string, keep int64) ([]any, error) {
	res, err := waitSeatScript.Run(ctx, b.rdb, []string{b.k.waitSeats(site, class), b.k.ready(site, class),
		b.k.quarantine(site, class), b.k.leases(site)}, b.cfg.skew(), waiter, keep).Slice()
	if err != nil {
		return nil, fmt.Errorf("wait seat %s/%s: %w", site, class, err)
	}
	return res, nil
}
