package fetcher

import "net/url"

// MaskProxy prints a proxy URL with its password masked:
// scheme://user:***@host:port. It returns "" for nil.
func MaskProxy(p *url.URL) string {
	if p == nil {
		return ""
	}
	s := p.Scheme + "://"
	if p.User != nil {
		s += url.User(p.User.Username()).String()
		if _, ok := p.User.Password(); ok {
			s += ":***"
		}
		s += "@"
	}
	return s + p.Host
}
