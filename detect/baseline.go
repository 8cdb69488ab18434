package detect

import "sync"

// baseline keeps a running mean (EWMA) of OK body sizes per site, page
// kind and body format. It is safe for concurrent use.
type baseline struct {
	alpha float64
	mu    sync.Mutex
	sizes map[string]*ewma
}

// ewma is one running mean and how many samples made it.
type ewma struct {
	mean float64
	n    int
}

// newBaseline makes a baseline whose mean moves by alpha per sample.
func newBaseline(alpha float64) *baseline {
	return &baseline{alpha: alpha, sizes: map[string]*ewma{}}
}

// get returns the mean and sample count for key.
func (b *baseline) get(key string) (mean float64, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.sizes[key]; ok {
		return e.mean, e.n
	}
	return 0, 0
}

// add folds an OK body size into key's mean.
func (b *baseline) add(key string, size int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.sizes[key]
	if !ok {
		b.sizes[key] = &ewma{mean: float64(size), n: 1}
		return
	}
	e.mean += b.alpha * (float64(size) - e.mean)
	e.n++
}
