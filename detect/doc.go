// Package detect turns every HTTP response into a verdict: OK, Blocked,
// RateLimited, ProxyFailure, NotFound or ServerError, with the evidence
// (which rule fired).
//
// Rules are per site and page kind ("search", "product", "default"; "item"
// is read as "product"): block and rate-limit status codes, captcha/login
// URL patterns on the final URL, body and <title> markers, expected CSS
// selectors or JSON paths of which at least one must be present, a minimum
// body size and a size drop against a running baseline of OK body sizes.
// Rules for wildberries, ozon and avito ship built in (builtin.yaml); a
// user's YAML file is merged over them with LoadRules. A Detector is safe
// for concurrent use.
package detect
