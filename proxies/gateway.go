package proxies

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"crawlq/internal/yamlstrict"
)

// SessionPlaceholder marks where a gateway's username takes the session
// id: brd-customer-C-zone-Z-session-{session}.
const SessionPlaceholder = "{session}"

// Gateway defaults: a provider's sticky session lasts 10 minutes and ends
// after 60 s without a request unless the line says otherwise.
const (
	DefaultGatewayTTL  = 10 * time.Minute
	DefaultGatewayIdle = 60 * time.Second
)

// Gateway says how a proxy sold as one endpoint in front of many exit IPs
// works. A gateway line imports as Sessions slots: proxies of the pool
// that share the endpoint, each leased like any proxy and each session
// on it given a session id of its own (the username's {session}).
type Gateway struct {
	// Sessions is how many sessions the plan allows at once.
	Sessions int `json:"sessions"`
	// Slot is this proxy's slot, 1..Sessions.
	Slot int `json:"slot"`
	// TTL is how long the provider keeps a session on its exit IP, Idle
	// how long without a request ends it sooner.
	TTL  time.Duration `json:"ttl"`
	Idle time.Duration `json:"idle"`
	// Rotating: no sticky sessions, every connection a new exit IP. Such
	// a gateway cannot keep a site's min_interval (I2) and is imported
	// only when told to (ImportOptions.AllowRotating).
	Rotating bool `json:"rotating,omitempty"`
}

// ExitSource says how a proxy's exit IP is learned. A proxy without one
// is its endpoint: the IP the site sees is its host.
type ExitSource struct {
	// Header names the provider's response header that tells the exit IP
	// (on the CONNECT reply too), e.g. x-luminati-ip.
	Header string `json:"header,omitempty"`
	// ProbeURL is an IP-echo URL asked through the proxy; "" for the
	// worker's default. With Header set, the probe reads the header.
	ProbeURL string `json:"probe_url,omitempty"`
}

// Sticky says whether the proxy's sessions keep an exit IP: a gateway
// with a {session} in its username, or any plain proxy.
func (p Proxy) Sticky() bool { return p.Gateway == nil || !p.Gateway.Rotating }

// LearnsExit says whether the proxy's exit IP must be learned before a
// site sees a request: a sticky gateway's, or a proxy told to probe.
func (p Proxy) LearnsExit() bool { return p.Exit != nil && p.Sticky() }

// WithSession is the proxy's URL with session id in its username: the
// address a gateway session dials. A proxy without the placeholder
// returns its URL.
func (p Proxy) WithSession(id string) *url.URL {
	q := p
	q.User = strings.ReplaceAll(p.User, SessionPlaceholder, id)
	return q.URL()
}

// listEntry is one proxy of a list as written: the proxy and its
// options, each with the line it is on (a YAML mapping gives each option
// a line of its own).
type listEntry struct {
	proxy string
	line  int
	opts  []lineOption
}

// lineOption is one option of a list entry, as key=value ("rotating"
// alone).
type lineOption struct {
	text string
	line int
}

// lineEntry is a line of a text list: the proxy, then options separated
// by spaces, all on line n.
func lineEntry(line string, n int) listEntry {
	fields := strings.Fields(line)
	e := listEntry{proxy: fields[0], line: n}
	for _, f := range fields[1:] {
		e.opts = append(e.opts, lineOption{text: f, line: n})
	}
	return e
}

// parseEntry reads one proxy of a list and its options; file names the
// list in errors, each a *LineError on the line of the option at fault
// (the entry's own for the proxy and for options that do not go
// together). A username with {session} or a gateway option makes it a
// gateway, which expands into its slots. Every proxy's At is FILE:LINE.
func parseEntry(e listEntry, file string) ([]Proxy, error) {
	p, err := ParseLine(e.proxy)
	if err != nil {
		return nil, &LineError{File: file, Line: e.line, Reason: err.Error()}
	}
	p.At = fmt.Sprintf("%s:%d", file, e.line)
	gw, exit, modem, err := parseOptions(e, strings.Contains(p.User, SessionPlaceholder))
	var le *LineError
	if errors.As(err, &le) {
		le.File = file
		return nil, le
	}
	if err != nil {
		return nil, &LineError{File: file, Line: e.line, Reason: err.Error()}
	}
	p.Exit, p.Modem = exit, modem
	if gw == nil {
		return []Proxy{p}, nil
	}
	return gatewaySlots(p, *gw), nil
}

// optionKeys are the options a proxy line may carry.
var optionKeys = []string{"sessions", "ttl", "idle", "exit", "rotating",
	"change", "change_method", "change_every", "change_settle", "change_timeout"}

// optionNames lists the options a proxy line may carry, for errors.
const optionNames = "sessions=N, ttl=D, idle=D, exit=header:NAME, exit=probe[:URL], rotating, change=URL, change_method=GET|POST, change_every=D, change_settle=D or change_timeout=D"

// unknownOption says a key is no option, with the one it was most likely
// meant to be.
func unknownOption(k string) string {
	if s := yamlstrict.Suggest(k, optionKeys); s != "" {
		return fmt.Sprintf("unknown option %q (did you mean %s?)", k, s)
	}
	return fmt.Sprintf("unknown option %q (want %s)", k, optionNames)
}

// parseOptions reads the options of e: a gateway's sessions=N, ttl=D,
// idle=D, rotating; exit=header:NAME, exit=probe[:URL]; a modem's
// change=URL and change_*. sticky says the username has a {session}. An
// error about one option is a *LineError on its line (File left empty);
// any other is about the options together.
func parseOptions(e listEntry, sticky bool) (*Gateway, *ExitSource, *Modem, error) {
	gw := &Gateway{Sessions: 1, TTL: DefaultGatewayTTL, Idle: DefaultGatewayIdle}
	var exit *ExitSource
	var modem *Modem
	isGateway := sticky
	first := map[string]int{}
	for _, o := range e.opts {
		k, v, _ := strings.Cut(o.text, "=")
		if line, twice := first[k]; twice {
			return nil, nil, nil, optionError(o.line, "option %s given twice (first on line %d)", k, line)
		}
		first[k] = o.line
		isModem, err := modemOption(&modem, k, v)
		if !isModem {
			var known bool
			if known, err = gatewayOption(gw, &exit, k, v); !known {
				return nil, nil, nil, optionError(o.line, "%s", unknownOption(k))
			}
			isGateway = isGateway || k != "exit"
		}
		if err != nil {
			return nil, nil, nil, optionError(o.line, "option %s: %v", k, err)
		}
	}
	g, exit, err := gatewayOf(gw, exit, isGateway, sticky)
	if err == nil {
		err = checkModem(modem, g, &exit)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return g, exit, modem, nil
}

// gatewayOption reads option k=v of a gateway (sessions, ttl, idle,
// rotating) into gw, or of its exit source into exit; known is false for
// a key that is neither.
func gatewayOption(gw *Gateway, exit **ExitSource, k, v string) (known bool, err error) {
	switch k {
	case "sessions":
		gw.Sessions, err = sessionCount(v)
	case "ttl":
		gw.TTL, err = positiveDuration(v)
	case "idle":
		gw.Idle, err = positiveDuration(v)
	case "exit":
		*exit, err = parseExitSource(v)
	case "rotating":
		gw.Rotating = true
	default:
		return false, nil
	}
	return true, err
}

// optionError is a *LineError on line, its file left to the caller.
func optionError(line int, format string, args ...any) *LineError {
	return &LineError{Line: line, Reason: fmt.Sprintf(format, args...)}
}

// sessionCount reads sessions=N: 1 to 100000.
func sessionCount(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 100_000 {
		return 0, fmt.Errorf("want 1 to 100000, got %q", v)
	}
	return n, nil
}

// gatewayOf checks what the options made: a sticky gateway needs its
// {session}, a rotating one must not have it; a sticky gateway learns
// its exit IP by a probe unless told how.
func gatewayOf(gw *Gateway, exit *ExitSource, isGateway, sticky bool) (*Gateway, *ExitSource, error) {
	switch {
	case !isGateway:
		return nil, exit, nil
	case gw.Rotating && sticky:
		return nil, nil, fmt.Errorf("a rotating gateway has no %s in its username", SessionPlaceholder)
	case !gw.Rotating && !sticky:
		return nil, nil, fmt.Errorf("a gateway needs %s in its username (or the option rotating: a new exit IP per connection)", SessionPlaceholder)
	case !gw.Rotating && exit == nil:
		exit = &ExitSource{}
	}
	return gw, exit, nil
}

func positiveDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive duration like 10m or 60s, got %q", v)
	}
	return d, nil
}

// parseExitSource reads header:NAME, probe or probe:URL.
func parseExitSource(v string) (*ExitSource, error) {
	kind, arg, _ := strings.Cut(v, ":")
	switch {
	case kind == "header" && arg != "":
		return &ExitSource{Header: arg}, nil
	case kind == "probe" && arg == "":
		return &ExitSource{}, nil
	case kind == "probe":
		u, err := url.Parse(arg)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("want probe:http(s)://host/path, got %q", v)
		}
		return &ExitSource{ProbeURL: arg}, nil
	}
	return nil, fmt.Errorf("want header:NAME, probe or probe:URL, got %q", v)
}

// gatewaySlots expands a gateway into its slots: the same endpoint and
// template, IDs "<id>-<slot>". A rotating gateway is one proxy per
// session too: Sessions connections at once.
func gatewaySlots(p Proxy, gw Gateway) []Proxy {
	base := computeID(p)
	out := make([]Proxy, gw.Sessions)
	for i := range out {
		s := gw
		s.Slot = i + 1
		q := p
		q.Gateway = &s
		q.ID = base + "-" + strconv.Itoa(s.Slot)
		out[i] = q
	}
	return out
}
