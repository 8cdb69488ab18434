package detect

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// titleWindow is how far into a body <title> is looked for.
const titleWindow = 64 << 10

// judgeBody judges a 2xx body; its baseline is (site, kind, format).
func (d *Detector) judgeBody(c *compiled, j *judgement) Verdict {
	r, key := j.r, j.site+"/"+NormalizeKind(j.kind)
	if v, bad := c.markerHit(r.Body); bad {
		return v
	}
	if n := len(r.Body); n < c.rule.MinSize {
		return Verdict{Kind: Blocked, Reason: "body too small", Rule: fmt.Sprintf("size %d < min %d", n, c.rule.MinSize)}
	}
	asJSON := isJSON(r.Body)
	if v, done := c.expected(j, asJSON); done {
		return v
	}
	if v, refused := d.unrecognized(c, j); refused {
		return v
	}
	if asJSON {
		key += "/json"
	} else {
		key += "/html"
	}
	return d.judgeSize(c, key, r)
}

// markerHit looks for body markers, then title markers.
func (c *compiled) markerHit(body []byte) (Verdict, bool) {
	for _, m := range c.markers {
		if bytes.Contains(body, m) {
			return Verdict{Kind: Blocked, Reason: "block page", Rule: fmt.Sprintf("marker %q", m)}, true
		}
	}
	if len(c.titleMarkers) == 0 {
		return Verdict{}, false
	}
	title := strings.ToLower(titleOf(body))
	for _, m := range c.titleMarkers {
		if title != "" && strings.Contains(title, m) {
			return Verdict{Kind: Blocked, Reason: "block page", Rule: fmt.Sprintf("title marker %q", m)}, true
		}
	}
	return Verdict{}, false
}

// titleOf returns the text of the first <title> in the body's first
// titleWindow bytes, or "".
func titleOf(body []byte) string {
	head := body[:min(len(body), titleWindow)]
	i := indexFold(head, "<title")
	if i < 0 {
		return ""
	}
	rest := head[i:]
	gt := bytes.IndexByte(rest, '>')
	if gt < 0 {
		return ""
	}
	rest = rest[gt+1:]
	if end := bytes.IndexByte(rest, '<'); end >= 0 {
		rest = rest[:end]
	}
	return string(rest)
}

// indexFold finds an ASCII tag name in any case: "<title" or "<TITLE".
func indexFold(b []byte, s string) int {
	if i := bytes.Index(b, []byte(s)); i >= 0 {
		return i
	}
	return bytes.Index(b, []byte(strings.ToUpper(s)))
}

// expected checks that at least one expected selector or JSON path is
// there; done means v is the verdict (an empty list gives a final OK). A JSON body is checked by JSON paths, an HTML body by selectors;
// a body of the other format than all the rule expects is Blocked. A cut
// (truncated) body is not judged missing.
func (c *compiled) expected(j *judgement, asJSON bool) (Verdict, bool) {
	switch {
	case len(c.paths) == 0 && len(c.selectors) == 0:
		return Verdict{}, false
	case asJSON && len(c.paths) > 0:
		return c.expectJSON(j.r)
	case !asJSON && len(c.selectors) > 0:
		return c.expectHTML(j)
	case asJSON:
		return missingVerdict("selector", c.selectors[0].src+" (body is JSON)"), true
	}
	return missingVerdict("json path", c.paths[0].src+" (body is not JSON)"), true
}

// expectJSON looks the JSON paths up. One present: the answer is
// judged on. Else the site's own "nothing found" (an empty JSON path
// present), or an expected list present but empty, is an empty list
// (see emptyList). Else the expected content is missing: Blocked, or
// Suspect where the rule says an unknown JSON is no evidence by itself.
func (c *compiled) expectJSON(r *Response) (Verdict, bool) {
	best, at := missing, c.paths[0].src
	for _, p := range c.paths {
		switch p.lookup(r.Body) {
		case present:
			return Verdict{}, false
		case emptyList:
			if best != emptyList {
				best, at = emptyList, p.src
			}
		}
	}
	if p, ok := firstPresent(c.emptyPaths, r.Body); ok {
		return c.emptyList(r, p)
	}
	if best == emptyList {
		return c.emptyList(r, at)
	}
	if r.Truncated {
		return Verdict{}, false
	}
	v := missingVerdict("json path", joinPaths(c.paths))
	if !c.rule.UnknownJSONSuspect {
		return v, true
	}
	v.Shape = v.Rule
	return c.suspect(v, Blocked, OK), true
}

// firstPresent returns the first of paths present in body.
func firstPresent(paths []jsonPath, body []byte) (string, bool) {
	for _, p := range paths {
		if p.lookup(body) == present {
			return p.src, true
		}
	}
	return "", false
}

// emptyList judges a present but empty list. A page past the end the
// answer's own total describes (page_size, pastEnd) is OK: the end of the
// list, asked of nobody else. Where the rule expects items
// (empty_list_blocked) it is Suspect on every other page: a soft ban or a
// true "no results" on page 1, and on a later page a soft ban or the end
// of the list, which the page before had announced (a crawler asks for
// page N only then). Alone (confirm: 0) it is Blocked on page 1 and "no
// results" after. Where the rule reads it as a gone item
// (empty_list_not_found) it is Suspect, NotFound once confirmed. Else it
// is OK "empty list". An empty list never feeds or meets the size
// baseline.
func (c *compiled) emptyList(r *Response, path string) (Verdict, bool) {
	page := pageOf(r)
	rule := fmt.Sprintf("empty list %s on page %d", path, page)
	shape := "empty " + path + totalOf(r.Body)
	switch {
	case c.pastEnd(r.Body, page):
		return Verdict{Kind: OK, Reason: "end of list", Rule: rule + " past its" + totalOf(r.Body)}, true
	case c.rule.EmptyListBlocked && page == 1:
		return c.suspect(Verdict{Reason: "empty list on page 1", Rule: rule, Shape: shape}, Blocked, OK), true
	case c.rule.EmptyListBlocked:
		return c.suspect(Verdict{Reason: "empty list", Rule: rule, Shape: shape}, OK, OK), true
	case c.rule.EmptyListNotFound:
		return c.suspect(Verdict{Reason: "empty list", Rule: rule, Shape: shape}, NotFound, NotFound), true
	}
	return Verdict{Kind: OK, Reason: "empty list", Rule: rule}, true
}

// expectHTML parses the body once and tries the selectors in order.
func (c *compiled) expectHTML(j *judgement) (Verdict, bool) {
	r := j.r
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body))
	if err != nil {
		return Verdict{Kind: Blocked, Reason: "unparsable page", Rule: "html: " + err.Error()}, true
	}
	j.doc = doc
	for _, s := range c.selectors {
		if s.sel.MatchFirst(doc.Nodes[0]) != nil {
			return Verdict{}, false
		}
	}
	if r.Truncated {
		return Verdict{}, false
	}
	srcs := make([]string, len(c.selectors))
	for i, s := range c.selectors {
		srcs[i] = s.src
	}
	v := missingVerdict("selector", strings.Join(srcs, " | "))
	if !wellFormed(doc) {
		return v, true
	}
	v.Shape = v.Rule
	return c.suspect(v, Blocked, OK), true
}

// missingVerdict is the verdict for absent expected content.
func missingVerdict(what, which string) Verdict {
	return Verdict{Kind: Blocked, Reason: "expected content missing", Rule: "missing " + what + " " + which}
}

// joinPaths lists the JSON paths for evidence.
func joinPaths(ps []jsonPath) string {
	srcs := make([]string, len(ps))
	for i, p := range ps {
		srcs[i] = p.src
	}
	return strings.Join(srcs, " | ")
}

// judgeSize compares the body with the baseline of OK sizes, then adds
// an OK body to it.
func (d *Detector) judgeSize(c *compiled, key string, r *Response) Verdict {
	size := len(r.Body)
	if r.Truncated {
		return Verdict{Kind: OK, Reason: "truncated body"}
	}
	mean, n := d.base.get(key)
	if c.rule.DropFraction > 0 && n >= max(c.rule.BaselineSamples, 1) && float64(size) < c.rule.DropFraction*mean {
		v := Verdict{Reason: "placeholder", Shape: fmt.Sprintf("size below %.2f of baseline", c.rule.DropFraction),
			Rule: fmt.Sprintf("size drop %.2f of baseline (%d < %.0f)", float64(size)/mean, size, mean)}
		return c.suspect(v, Blocked, OK)
	}
	d.base.add(key, size)
	return Verdict{Kind: OK}
}
