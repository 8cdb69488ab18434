package site

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Registry holds sites by name. It is safe for concurrent use; Get returns
// copies, so a caller never changes the registry by accident.
type Registry struct {
	mu    sync.RWMutex
	sites map[string]*Site
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{sites: map[string]*Site{}}
}

// defaultRegistry is where the site packages register in init.
var defaultRegistry = NewRegistry()

// Default returns the process-wide registry the site packages fill.
func Default() *Registry { return defaultRegistry }

// Register adds s to the default registry; it panics on a duplicate or an
// invalid site, since registration happens in init with constant data.
func Register(s *Site) {
	if err := defaultRegistry.Add(s); err != nil {
		panic(err)
	}
}

// Get returns a copy of the named site from the default registry.
func Get(name string) (*Site, error) { return defaultRegistry.Get(name) }

// Names lists the default registry's sites, sorted.
func Names() []string { return defaultRegistry.Names() }

// URL builds the URL of a request on the default registry.
func URL(site, kind string, r Request) (string, error) {
	s, err := Get(site)
	if err != nil {
		return "", err
	}
	return s.URL(kind, r)
}

// Parse parses a body of the given site and kind with the default registry.
func Parse(site, kind string, body []byte, pageURL string, fetchedAt time.Time) (Page, error) {
	return defaultRegistry.Parse(site, kind, body, pageURL, fetchedAt)
}

// ApplyConfig overrides the default registry's sites from cfg; on error
// nothing changes.
func ApplyConfig(cfg Config) error { return defaultRegistry.Apply(cfg) }

// Add registers s; the name must be new and the site valid.
func (r *Registry) Add(s *Site) error {
	if err := validate(s); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.sites[s.Name]; dup {
		return fmt.Errorf("site %s registered twice", s.Name)
	}
	r.sites[s.Name] = s.clone()
	return nil
}

// Get returns a copy of the named site, or an error wrapping ErrUnknownSite.
func (r *Registry) Get(name string) (*Site, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, ok := r.sites[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownSite, name, strings.Join(sortedKeys(r.sites), ", "))
	}
	return s.clone(), nil
}

// Names lists the registered sites, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return sortedKeys(r.sites)
}

// Clone returns an independent copy of the registry, for tests and for
// per-process overrides.
func (r *Registry) Clone() *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c := NewRegistry()
	for name, s := range r.sites {
		c.sites[name] = s.clone()
	}
	return c
}

// Parse parses a body of the given site and kind.
func (r *Registry) Parse(site, kind string, body []byte, pageURL string, fetchedAt time.Time) (Page, error) {
	s, err := r.Get(site)
	if err != nil {
		return Page{}, err
	}
	return s.Parse(kind, body, pageURL, fetchedAt)
}

func validate(s *Site) error {
	switch {
	case s == nil || s.Name == "":
		return fmt.Errorf("site without a name")
	case !s.Class.Valid():
		return fmt.Errorf("site %s: unknown proxy class %q", s.Name, s.Class)
	case len(s.Kinds) == 0:
		return fmt.Errorf("site %s: no kinds", s.Name)
	}
	for name, k := range s.Kinds {
		if k.Name != name || k.Normalize == nil || k.Build == nil || k.Parse == nil {
			return fmt.Errorf("site %s: kind %q is incomplete", s.Name, name)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.SortedFunc(maps.Keys(m), cmp.Compare[string])
}
