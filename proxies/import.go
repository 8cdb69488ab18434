package proxies

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"
)

// ImportOptions apply to every proxy of one import.
type ImportOptions struct {
	// Class overrides each proxy's class; empty keeps it (empty: datacenter).
	Class Class
	// Sites, if set, limits every imported proxy to these sites. Each must
	// be a site of the broker's Config.Sites (when it has any) or a host
	// name (a page job's site).
	Sites []string
	// Update lets the import change the class or sites of proxies already
	// in the pool. Without it such an import is refused with a
	// *ChangeError naming the changes, and nothing is written.
	Update bool
	// AllowRotating imports a rotating gateway (a new exit IP per
	// connection) for sites with a min_interval, which it cannot keep.
	// Without it such an import is refused with *RotatingError.
	AllowRotating bool
}

// RotatingError refuses a rotating gateway for sites with a min_interval:
// with a new exit IP per connection, two requests of one IP can come
// closer than the site allows and crawlq cannot know (I2).
type RotatingError struct {
	// At is where the proxy was read (FILE:LINE), if known.
	At    string
	Proxy string   // masked
	Sites []string // the sites whose min_interval it cannot keep
}

func (e *RotatingError) Error() string {
	return fmt.Sprintf("%s%s is a rotating gateway (no sticky sessions: a new exit IP per connection), so it cannot keep the min_interval of %s; give it a %s in its username, or allow it knowingly",
		at(e.At), e.Proxy, strings.Join(e.Sites, ", "), SessionPlaceholder)
}

// ImportResult is what an import did.
type ImportResult struct {
	// Imported counts the proxies written (a proxy listed twice once, a
	// gateway's slots each).
	Imported int
	// New counts those that were not in the pool before.
	New int
	// Removed counts the gateway slots removed (their sessions lowered).
	Removed int
	// Entries counts what the list names by kind: each proxy, modem and
	// gateway (with its sessions) once. NewEntries counts those not in the
	// pool before.
	Entries    Tally
	NewEntries int
	// Changed are the entries already in the pool whose class, sites,
	// options or slots the import changed (ImportOptions.Update).
	Changed []Change
}

// Import adds proxies to the pool in one script: all or nothing. A proxy
// already in the pool as the list gives it stays as it is; one with
// another class, other sites or other options (a gateway with other
// sessions) is changed only with opt.Update. It returns how many proxies
// were imported.
func (b *RedisBroker) Import(ctx context.Context, ps []Proxy, opt ImportOptions) (int, error) {
	r, err := b.ImportReport(ctx, ps, opt)
	if err != nil {
		return 0, err
	}
	return r.Imported, nil
}

// ImportReport is Import, saying which entries were new and which
// changed. It refuses, writing nothing, a site the configuration does not
// know (*UnknownSiteError) and, without opt.Update, a change to an entry
// already in the pool (*ChangeError). With opt.Update a gateway's slots
// are added, changed and removed in the one write; a live lease on a
// removed slot ends (its holder's next extend or release is refused as
// stale). What it checked is what it writes: a proxy changed by someone
// else meanwhile makes it check again.
func (b *RedisBroker) ImportReport(ctx context.Context, ps []Proxy, opt ImportOptions) (*ImportResult, error) {
	ready, err := b.prepareAll(ps, opt)
	if err != nil {
		return nil, err
	}
	if len(ready) == 0 {
		return &ImportResult{}, nil
	}
	for range 10 {
		plan, err := b.planImport(ctx, ready, opt.Update)
		if err != nil {
			return nil, err
		}
		written, err := b.writeImport(ctx, plan)
		if err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		if written {
			if err := b.noteModems(ctx, ready); err != nil {
				return nil, fmt.Errorf("import: %w", err)
			}
			b.log.Info("proxies imported", zap.Int("count", plan.result.Imported), zap.Int("new", plan.result.New),
				zap.Int("changed", len(plan.result.Changed)), zap.Int("removed", plan.result.Removed),
				zap.String("class", string(opt.Class)))
			return &plan.result, nil
		}
	}
	return nil, errors.New("import: the pool keeps changing, try again")
}

// prepareAll applies opt to every proxy, checks them and their sites, and
// drops repeated proxies.
func (b *RedisBroker) prepareAll(ps []Proxy, opt ImportOptions) ([]Proxy, error) {
	out := make([]Proxy, 0, len(ps))
	seen := map[string]bool{}
	for _, p := range ps {
		p, err := prepare(p, opt)
		if err != nil {
			return nil, err
		}
		if err := b.checkSites(p.Sites); err != nil {
			return nil, err
		}
		if err := b.checkRotating(p, opt.AllowRotating); err != nil {
			return nil, err
		}
		if !seen[p.ID] {
			seen[p.ID] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// checkRotating refuses a rotating gateway for sites with a
// min_interval unless allowed.
func (b *RedisBroker) checkRotating(p Proxy, allowed bool) error {
	if p.Sticky() || allowed {
		return nil
	}
	sites := p.Sites
	if len(sites) == 0 {
		sites = b.cfg.partitionSites()
	}
	var paced []string
	for _, s := range sites {
		if b.cfg.site(s).MinInterval > 0 {
			paced = append(paced, s)
		}
	}
	if len(sites) == 0 && b.cfg.site("").MinInterval > 0 {
		paced = []string{"every site (the default min_interval)"}
	}
	if len(paced) == 0 {
		return nil
	}
	return &RotatingError{At: p.At, Proxy: p.Masked(), Sites: paced}
}

// at is "FILE:LINE: " for a proxy read at where, "" if unknown.
func at(where string) string {
	if where == "" {
		return ""
	}
	return where + ": "
}

// prepare applies opt and checks p.
func prepare(p Proxy, opt ImportOptions) (Proxy, error) {
	if err := p.validate(); err != nil {
		return p, fmt.Errorf("%simport %s: %w", at(p.At), p.Masked(), err)
	}
	if opt.Class != "" {
		p.Class = opt.Class
	}
	if p.Class == "" {
		p.Class = Datacenter
	}
	if !p.Class.Valid() {
		return p, &ConfigError{Field: "class", Reason: fmt.Sprintf("unknown class %q", p.Class)}
	}
	if len(opt.Sites) > 0 {
		p.Sites = append([]string(nil), opt.Sites...)
	}
	for _, s := range p.Sites {
		if s == "" || strings.ContainsAny(s, "\t:{}") {
			return p, &ConfigError{Field: "sites", Reason: fmt.Sprintf("bad site name %q", s)}
		}
	}
	if p.ID == "" {
		p.ID = computeID(p)
	}
	return p, nil
}

// checkSites refuses a site the configuration does not know: one not in
// Config.Sites (when it has any) that is not a host name either (a page
// job's site is its URL's host).
func (b *RedisBroker) checkSites(sites []string) error {
	if len(b.cfg.Sites) == 0 {
		return nil
	}
	for _, s := range sites {
		if _, ok := b.cfg.Sites[s]; !ok && !strings.Contains(s, ".") {
			return &UnknownSiteError{Site: s, Known: b.cfg.partitionSites()}
		}
	}
	return nil
}

// UnknownSiteError refuses an import limited to a site the configuration
// does not know.
type UnknownSiteError struct {
	Site string
	// Known are the configuration's sites, sorted.
	Known []string
}

func (e *UnknownSiteError) Error() string {
	return fmt.Sprintf("site %q is not a site of the configuration (known: %s; or a page job's host, such as shop.example.com)",
		e.Site, strings.Join(e.Known, ", "))
}
