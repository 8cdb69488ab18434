package proxies

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
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

// parseEntry reads one line of a proxy list: a proxy, then options. A
// username with {session} or a gateway option makes it a gateway, which
// expands into its slots.
func parseEntry(line string) ([]Proxy, error) {
	fields := strings.Fields(line)
	p, err := ParseLine(fields[0])
	if err != nil {
		return nil, err
	}
	gw, exit, modem, err := parseOptions(fields[1:], strings.Contains(p.User, SessionPlaceholder))
	if err != nil {
		return nil, err
	}
	p.Exit, p.Modem = exit, modem
	if gw == nil {
		return []Proxy{p}, nil
	}
	return gatewaySlots(p, *gw), nil
}

// optionNames lists the options a proxy line may carry, for errors.
const optionNames = "sessions=N, ttl=D, idle=D, exit=header:NAME, exit=probe[:URL], rotating, change=URL, change_method=GET|POST, change_every=D, change_settle=D or change_timeout=D"

// parseOptions reads the options after a proxy: a gateway's sessions=N,
// ttl=D, idle=D, rotating; exit=header:NAME, exit=probe[:URL]; a modem's
// change=URL and change_*. sticky says the username has a {session}.
func parseOptions(opts []string, sticky bool) (*Gateway, *ExitSource, *Modem, error) {
	gw := &Gateway{Sessions: 1, TTL: DefaultGatewayTTL, Idle: DefaultGatewayIdle}
	var exit *ExitSource
	var modem *Modem
	isGateway := sticky
	for _, o := range opts {
		k, v, _ := strings.Cut(o, "=")
		isModem, err := modemOption(&modem, k, v)
		if isModem {
			if err != nil {
				return nil, nil, nil, fmt.Errorf("option %s: %v", k, err)
			}
			continue
		}
		switch k {
		case "sessions":
			gw.Sessions, err = strconv.Atoi(v)
			if err == nil && (gw.Sessions < 1 || gw.Sessions > 100_000) {
				err = fmt.Errorf("want 1 to 100000")
			}
		case "ttl":
			gw.TTL, err = positiveDuration(v)
		case "idle":
			gw.Idle, err = positiveDuration(v)
		case "exit":
			exit, err = parseExitSource(v)
		case "rotating":
			gw.Rotating = true
		default:
			return nil, nil, nil, fmt.Errorf("unknown option %q (want %s)", k, optionNames)
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("option %s: %v", k, err)
		}
		isGateway = isGateway || k != "exit"
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
