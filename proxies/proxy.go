package proxies

// Class is a proxy's kind; a job names the class it needs.
type Class string

// Proxy classes.
const (
	Datacenter  Class = "datacenter"
	Residential Class = "residential"
	Mobile      Class = "mobile"
)

// Proxy is one proxy endpoint. Its identity includes the credentials:
// gateway providers give many proxies on one host:port that differ only by
// username.
type Proxy struct {
	// ID is stable for the same scheme, host, port, user and password.
	ID       string `json:"id"`
	Scheme   string `json:"scheme"` // http, https or socks5
	Host     string `json:"host"`
	Port     string `json:"port"`
	User     string `json:"user,omitempty"`
	Password string `json:"password,omitempty"`
	Class    Class  `json:"class"`
	// Sites limits the proxy to these sites; empty means every site. In
	// partitioned mode each proxy serves exactly one site.
	Sites []string `json:"sites,omitempty"`
}
