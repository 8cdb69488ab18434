package masktest

import "strings"

// Marker is in every planted secret: any output holding it shows a
// secret, whole or in part.
const Marker = "PL4NT"

// The planted secrets, one per kind crawlq must never print. Each is
// valid where it is planted (a URL's password, path or query, Redis's
// requirepass) without escaping.
const (
	ProxyPassword    = Marker + "proxyPW"
	GatewayPassword  = Marker + "gatewayPW"
	RedisPassword    = Marker + "redisPW"
	PostgresPassword = Marker + "pgPW"
	ChangeKey        = Marker + "changeKEY"
	WebhookToken     = Marker + "webhookTOK"
	WebhookFragment  = Marker + "fragment"
)

// Secrets are the planted secrets, by name.
var Secrets = map[string]string{
	"ProxyPassword": ProxyPassword, "GatewayPassword": GatewayPassword,
	"RedisPassword": RedisPassword, "PostgresPassword": PostgresPassword,
	"ChangeKey": ChangeKey, "WebhookToken": WebhookToken, "WebhookFragment": WebhookFragment,
}

// leaks are the lines of text that show a planted secret, each with the
// secrets replaced by their names (a report never repeats them).
func leaks(text string) []string {
	if !strings.Contains(text, Marker) {
		return nil
	}
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, Marker) {
			out = append(out, hide(line))
		}
	}
	return out
}

// hide replaces each planted secret in line by <Name>, and what is left
// of the marker by <part of a secret>.
func hide(line string) string {
	for name, s := range Secrets {
		line = strings.ReplaceAll(line, s, "<"+name+">")
	}
	return strings.ReplaceAll(line, Marker, "<part of a secret>")
}
