package proxies

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrNotServed is wrapped by *NotServedError: the pool has proxies, but
// none of the class asked may serve the site. A configuration error (the
// job's class, the site's class, or the proxies' classes and sites), not
// a wait: no proxy frees up to end it.
var ErrNotServed = errors.New("no proxy of the class serves the site")

// NotServedError says no proxy of Class may serve Site while the pool
// holds Total proxies, Others of them of other classes for Site.
type NotServedError struct {
	Site  string
	Class Class
	// Others counts, per other class, the proxies that may serve Site.
	Others map[Class]int
	// Total is the pool's size.
	Total int
}

// Error is "no residential proxy serves avito; the pool has 20
// datacenter proxies for it".
func (e *NotServedError) Error() string {
	head := fmt.Sprintf("no %s proxy serves %s; ", e.Class, e.Site)
	if len(e.Others) == 0 {
		return head + fmt.Sprintf("the pool's %s are for other sites only", plural(e.Total, "proxy", "proxies"))
	}
	classes := make([]string, 0, len(e.Others))
	for c := range e.Others {
		classes = append(classes, string(c))
	}
	sort.Strings(classes)
	parts := make([]string, len(classes))
	for i, c := range classes {
		n := e.Others[Class(c)]
		parts[i] = strings.Replace(plural(n, "proxy", "proxies"), " ", " "+c+" ", 1)
	}
	return head + "the pool has " + strings.Join(parts, " and ") + " for it"
}

// Unwrap makes errors.Is(err, ErrNotServed) true.
func (e *NotServedError) Unwrap() error { return ErrNotServed }

// noneReady is the error of a lease that found no proxy of class for
// site: ErrPoolEmpty when the pool has none at all (not imported yet, or
// lost with Redis's data: a wait for an import), else a *NotServedError
// counting the proxies of the other classes that serve site. It reads the
// pool: O(N), on this path only.
func (b *RedisBroker) noneReady(ctx context.Context, site string, class Class) error {
	ps, err := b.List(ctx)
	if err != nil {
		return fmt.Errorf("site %s class %s: %w (%v)", site, class, ErrPoolEmpty, err)
	}
	if len(ps) == 0 {
		return fmt.Errorf("site %s class %s: %w", site, class, ErrPoolEmpty)
	}
	e := &NotServedError{Site: site, Class: class, Others: map[Class]int{}, Total: len(ps)}
	parts := b.cfg.partitionSites()
	for _, p := range ps {
		if b.serves(p, site, parts) {
			e.Others[p.Class]++
		}
	}
	if e.Others[class] > 0 {
		// served since the lease looked (an import in between): look again
		return &NotReadyError{Site: site, Class: class}
	}
	delete(e.Others, class)
	return e
}
