package site

import (
	"fmt"
	"slices"
	"strings"
)

// ItemID returns the ID of the item arg names: an ID, or a pasted product
// or listing URL (any arg with a "/"), both read by the site's item kind
// as `crawlq enqueue SITE product|item ARG` reads them.
func (s *Site) ItemID(arg string) (string, error) {
	kind := s.itemKind()
	if kind == "" {
		return "", fmt.Errorf("site %s: no product or item kind to read %q with", s.Name, arg)
	}
	r := Request{ID: arg}
	if strings.Contains(arg, "/") {
		r = Request{URL: arg}
	}
	n, err := s.Normalize(kind, r)
	if err != nil {
		return "", err
	}
	return n.ID, nil
}

// itemKind is the kind the site's listings follow ("product", "item");
// "" for a site without listings.
func (s *Site) itemKind() string {
	for _, name := range s.KindNames() {
		if f := s.Kinds[name].Follow; f != "" && slices.Contains(s.KindNames(), f) {
			return f
		}
	}
	return ""
}
