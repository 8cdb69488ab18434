package detect

import (
	"fmt"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// Detector judges responses by a set of rules. Build it once and share it:
// it is safe for concurrent use, and its size baseline learns from every
// OK response.
type Detector struct {
	sites     map[string]*siteRules
	fallback  *compiled // Rules.Default, for sites without rules
	base      *baseline
	now       func() time.Time
	recognize Recognizer
}

// siteRules are one site's compiled rules.
type siteRules struct {
	def   *compiled
	kinds map[string]*compiled
}

// Option tunes a Detector.
type Option func(*Detector)

// WithClock sets the clock used to turn an HTTP-date Retry-After into a
// duration. Default time.Now.
func WithClock(now func() time.Time) Option { return func(d *Detector) { d.now = now } }

// WithBaselineAlpha sets the weight of a new sample in the running mean of
// OK body sizes, in (0, 1]. Default 0.2.
func WithBaselineAlpha(alpha float64) Option {
	return func(d *Detector) {
		if alpha > 0 && alpha <= 1 {
			d.base.alpha = alpha
		}
	}
}

// New builds a Detector. The rules must be valid: Builtin and LoadRules
// return valid rules; check hand-built ones with Rules.Validate. New
// panics on an invalid rule.
func New(rules Rules, opts ...Option) *Detector {
	if err := rules.Validate(); err != nil {
		panic(fmt.Sprintf("detect: invalid rules: %v", err))
	}
	d := &Detector{sites: map[string]*siteRules{}, base: newBaseline(0.2), now: time.Now}
	d.fallback = mustCompile(rules.Effective("", "default"))
	for name, s := range rules.Sites {
		sr := &siteRules{def: mustCompile(rules.Effective(name, "default")), kinds: map[string]*compiled{}}
		for kind := range s.Kinds {
			sr.kinds[kind] = mustCompile(rules.Effective(name, kind))
		}
		d.sites[name] = sr
	}
	for _, o := range opts {
		o(d)
	}
	return d
}

// mustCompile compiles a validated rule.
func mustCompile(r Rule) *compiled {
	c, err := compile(r)
	if err != nil {
		panic(fmt.Sprintf("detect: %v", err))
	}
	return c
}

// rule returns the compiled rule for (site, kind).
func (d *Detector) rule(site, kind string) *compiled {
	s, ok := d.sites[site]
	if !ok {
		return d.fallback
	}
	if c, ok := s.kinds[NormalizeKind(kind)]; ok {
		return c
	}
	return s.def
}

// Judge returns the verdict on r, fetched from site for a page of kind
// ("search", "product", "item", "default" or a user's kind). Checks run
// cheapest first: transport error, challenge status and markers, status,
// final URL, markers, size,
// expected content (HTML is parsed only here), size drop. An OK body
// updates the size baseline of (site, kind, format).
func (d *Detector) Judge(site, kind string, r *Response) Verdict {
	v, _ := d.JudgeDocument(site, kind, r)
	return v
}

// JudgeDocument is Judge that also returns the HTML document it parsed for
// the selector rules, so a caller parsing the page next does not parse it
// twice. The document is nil when no selector rule needed it.
func (d *Detector) JudgeDocument(site, kind string, r *Response) (Verdict, *goquery.Document) {
	if r == nil {
		return Verdict{Kind: ProxyFailure, Reason: "no response", Rule: "nil response"}, nil
	}
	c := d.rule(site, kind)
	if r.Err != nil {
		if v, ok := c.redirectLoop(r.Err); ok {
			return v, nil
		}
		return judgeErr(r.Err), nil
	}
	if v, ok := c.challenge(r); ok {
		return v, nil
	}
	if v, done := d.judgeStatus(c, r); done {
		return v, nil
	}
	j := &judgement{r: r, site: site, kind: kind}
	v := d.judgeBody(c, j)
	v.Status = r.Status
	return v, j.doc
}

// judgement is one body being judged: the response and the HTML document
// once parsed.
type judgement struct {
	r          *Response
	site, kind string
	doc        *goquery.Document
}
