package proxies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"
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
	// Imported counts the proxies written (a proxy listed twice once).
	Imported int
	// New counts those that were not in the pool before.
	New int
	// Changed are the proxies already in the pool whose class or sites
	// the import changed (ImportOptions.Update).
	Changed []Change
}

// Import adds proxies to the pool in one script: all or nothing. A proxy
// already in the pool with the same class and sites stays as it is; one
// with another class or other sites is changed only with opt.Update.
// It returns how many were imported.
func (b *RedisBroker) Import(ctx context.Context, ps []Proxy, opt ImportOptions) (int, error) {
	r, err := b.ImportReport(ctx, ps, opt)
	if err != nil {
		return 0, err
	}
	return r.Imported, nil
}

// ImportReport is Import, saying which proxies were new and which
// changed. It refuses, writing nothing, a site the configuration does not
// know (*UnknownSiteError) and, without opt.Update, a change to a proxy
// already in the pool (*ChangeError). What it checked is what it writes:
// a proxy changed by someone else meanwhile makes it check again.
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
		written, err := b.writeImport(ctx, plan.args)
		if err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		if written {
			if err := b.noteModems(ctx, ready); err != nil {
				return nil, fmt.Errorf("import: %w", err)
			}
			b.log.Info("proxies imported", zap.Int("count", plan.result.Imported), zap.Int("new", plan.result.New),
				zap.Int("changed", len(plan.result.Changed)), zap.String("class", string(opt.Class)))
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

// importPlan is what one attempt of an import writes and reports.
type importPlan struct {
	// args are importScript's ARGV after the known fields: per proxy its
	// id, spec, class and the spec read ("" for none).
	args   []any
	result ImportResult
}

// planImport reads the pool's specs of ready's proxies and plans the
// write; a change without update is a *ChangeError.
func (b *RedisBroker) planImport(ctx context.Context, ready []Proxy, update bool) (*importPlan, error) {
	ids := make([]string, len(ready))
	for i, p := range ready {
		ids[i] = p.ID
	}
	old, err := b.rdb.HMGet(ctx, b.k.proxies(), ids...).Result()
	if err != nil {
		return nil, fmt.Errorf("import: read pool: %w", err)
	}
	plan := &importPlan{args: make([]any, 0, 4*len(ready)), result: ImportResult{Imported: len(ready)}}
	for i, p := range ready {
		was, _ := old[i].(string)
		if err := plan.add(b, p, was); err != nil {
			return nil, err
		}
	}
	if len(plan.result.Changed) > 0 && !update {
		return nil, &ChangeError{Changes: plan.result.Changed}
	}
	return plan, nil
}

// add plans p, whose spec in the pool is was ("" for none).
func (plan *importPlan) add(b *RedisBroker, p Proxy, was string) error {
	spec, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("import %s: %w", p.Masked(), err)
	}
	plan.args = append(plan.args, p.ID, string(spec), string(p.Class), was)
	if was == "" {
		plan.result.New++
		return nil
	}
	cur, err := b.specs.get(p.ID, was)
	if err != nil {
		return fmt.Errorf("proxy %s: %w", p.ID, err)
	}
	if from, to := placementOf(cur), placementOf(p); !from.equal(to) {
		plan.result.Changed = append(plan.result.Changed, Change{ID: p.ID, Proxy: p.Masked(), From: from, To: to})
	}
	return nil
}

// writeImport runs importScript with args; false when a proxy's spec
// changed since it was read (nothing written: plan again).
func (b *RedisBroker) writeImport(ctx context.Context, args []any) (bool, error) {
	var res int64
	err := b.withKnown(ctx, func(fields, ready []string) *redis.Cmd {
		keys := append([]string{b.k.proxies(), b.k.classes(), b.k.version(), b.k.known()}, ready...)
		cmd := importScript.Run(ctx, b.rdb, keys, append(knownArgs(fields), args...)...)
		res, _ = cmd.Int64()
		return cmd
	})
	return err == nil && res != importChanged, err
}

// importChanged is importScript's answer when a proxy's spec is not the
// one read.
const importChanged = -2

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

// Placement is which proxies' jobs a proxy serves: its class and sites.
type Placement struct {
	Class Class `json:"class"`
	// Sites limits the proxy to these sites; empty means every site.
	Sites []string `json:"sites,omitempty"`
}

func placementOf(p Proxy) Placement { return Placement{Class: p.Class, Sites: p.Sites} }

func (p Placement) equal(q Placement) bool {
	return p.Class == q.Class && slices.Equal(p.Sites, q.Sites)
}

// String is "datacenter on every site" or "residential on avito,ozon".
func (p Placement) String() string {
	if len(p.Sites) == 0 {
		return string(p.Class) + " on every site"
	}
	return string(p.Class) + " on " + strings.Join(p.Sites, ",")
}

// Change is a proxy already in the pool whose class or sites an import
// changes.
type Change struct {
	ID string `json:"id"`
	// Proxy is the masked address.
	Proxy string    `json:"proxy"`
	From  Placement `json:"from"`
	To    Placement `json:"to"`
}

// ErrWouldChange is wrapped by *ChangeError.
var ErrWouldChange = errors.New("import would change proxies already in the pool")

// ChangeError refuses an import that would change the class or sites of
// proxies already in the pool (ImportOptions.Update allows it).
type ChangeError struct{ Changes []Change }

func (e *ChangeError) Error() string {
	return fmt.Sprintf("%s already in the pool would change: %s", proxiesCount(len(e.Changes)), SummarizeChanges(e.Changes))
}

// Unwrap makes errors.Is(err, ErrWouldChange) true.
func (e *ChangeError) Unwrap() error { return ErrWouldChange }

// SummarizeChanges says what changes, grouped and most common first: "20
// from datacenter on every site to datacenter on amazon; 1 from …".
func SummarizeChanges(cs []Change) string {
	n := map[string]int{}
	for _, c := range cs {
		n["from "+c.From.String()+" to "+c.To.String()]++
	}
	moves := make([]string, 0, len(n))
	for m := range n {
		moves = append(moves, m)
	}
	sort.Slice(moves, func(i, j int) bool {
		if n[moves[i]] != n[moves[j]] {
			return n[moves[i]] > n[moves[j]]
		}
		return moves[i] < moves[j]
	})
	for i, m := range moves {
		moves[i] = fmt.Sprintf("%d %s", n[m], m)
	}
	return strings.Join(moves, "; ")
}

// proxiesCount is "1 proxy" or "N proxies".
func proxiesCount(n int) string {
	if n == 1 {
		return "1 proxy"
	}
	return fmt.Sprintf("%d proxies", n)
}
