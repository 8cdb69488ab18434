package proxies

import (
	"context"
	"fmt"
	"time"
)

// ClearanceMarker is a Broker that leases the proxies holding a site's
// clearance first: a JavaScript challenge's clearance is bound to the IP,
// so a lease on a proxy without one costs a browser visit. RedisBroker,
// and FallbackBroker through its Redis (Capabilities.Clearances).
type ClearanceMarker interface {
	// MarkCleared notes that proxyID holds the site's clearance for ttl:
	// until then, Lease and LeaseWait of the site take it before a proxy
	// without one, and wait up to the site's ClearanceWait for it. A proxy
	// no longer in the pool (removed while leased) is not marked.
	MarkCleared(ctx context.Context, site, proxyID string, ttl time.Duration) error
	// ForgetCleared drops the mark (the site refused the clearance).
	ForgetCleared(ctx context.Context, site, proxyID string) error
}

var _ ClearanceMarker = (*RedisBroker)(nil)

// MarkCleared implements ClearanceMarker.
func (b *RedisBroker) MarkCleared(ctx context.Context, site, proxyID string, ttl time.Duration) error {
	if ttl < time.Millisecond {
		return nil
	}
	if err := markClearedScript.Run(ctx, b.rdb, b.k.markClearedKeys(site), b.cfg.skew(), ttl.Milliseconds(), proxyID).Err(); err != nil {
		return fmt.Errorf("mark proxy %s cleared on %s: %w", proxyID, site, err)
	}
	return nil
}

// ForgetCleared implements ClearanceMarker.
func (b *RedisBroker) ForgetCleared(ctx context.Context, site, proxyID string) error {
	if err := b.rdb.ZRem(ctx, b.k.cleared(site), proxyID).Err(); err != nil {
		return fmt.Errorf("forget the clearance of proxy %s on %s: %w", proxyID, site, err)
	}
	return nil
}
