package mask

import (
	"strings"
	"testing"
)

// TestURL runs every kind of URL crawlq prints through URL: the exact
// output, none of the case's secrets in it, and masking twice changes
// nothing.
func TestURL(t *testing.T) {
	const bot = "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	tests := []struct {
		name, in, want string
		secrets        []string
	}{
		// proxies
		{name: "http proxy", in: "http://user1:Pr0xyPass@10.0.0.1:8080",
			want: "http://user1:***@10.0.0.1:8080", secrets: []string{"Pr0xyPass"}},
		{name: "https proxy", in: "https://alice:Pr0xyPass@proxy.example:443",
			want: "https://alice:***@proxy.example:443", secrets: []string{"Pr0xyPass"}},
		{name: "socks5 proxy, escaped password", in: "socks5://bob:p%40ss%2Fw0rd@[::1]:1080",
			want: "socks5://bob:***@[::1]:1080", secrets: []string{"p%40ss", "w0rd"}},
		{name: "proxy without credentials", in: "http://10.0.0.1:3128", want: "http://10.0.0.1:3128"},
		{name: "user name alone is the credential", in: "http://sk_live_abc@proxy.example:8886",
			want: "http://***@proxy.example:8886", secrets: []string{"sk_live_abc"}},
		{name: "user name with an empty password", in: "http://APIKEYabc:@proxy.example:8001",
			want: "http://***@proxy.example:8001", secrets: []string{"APIKEYabc"}},
		{name: "password with @ / ? # unescaped", in: "http://user:p@ss/w?r#d@proxy.example:1",
			want: "http://user:***@proxy.example:1", secrets: []string{"p@ss", "w?r", "#d"}},
		{name: "password with a bad escape", in: "http://user:%zzSecret@proxy.example:1",
			want: "http://user:***@proxy.example:1", secrets: []string{"zzSecret"}},
		{name: "host:port:user:pass behind a scheme", in: "http://10.0.0.1:8080:user:Pr0xyPass",
			want: "***", secrets: []string{"Pr0xyPass"}},
		// gateways
		{name: "gateway template", in: "http://brd-customer-hl_1a2b3c4d-zone-res-session-{session}:GwPass@brd.superproxy.io:22225",
			want:    "http://brd-customer-hl_***-zone-res-session-{session}:***@brd.superproxy.io:22225",
			secrets: []string{"GwPass", "1a2b3c4d"}},
		{name: "gateway template, escaped", in: "http://customer-acme-sessid-%7Bsession%7D:GwPass@pr.oxylabs.io:7777",
			want: "http://customer-acme-sessid-{session}:***@pr.oxylabs.io:7777", secrets: []string{"GwPass"}},
		{name: "gateway session filled in", in: "http://user-sp12345-session-7f3a9c21b0d4:GwPass@gate.example:7000",
			want: "http://user-sp12345-session-***:***@gate.example:7000", secrets: []string{"GwPass", "7f3a9c21b0d4"}},
		{name: "escaped user name that would not read back", in: "http://a%3Ab%40c:GwPass@gate.example:7000",
			want: "http://a%3Ab%40c:***@gate.example:7000", secrets: []string{"GwPass"}},
		// modem change links
		{name: "change key in the query", in: "http://192.168.8.1/api/changeip?key=k9&name=m1",
			want: "http://192.168.8.1/api/***?key=***&name=***", secrets: []string{"k9"}},
		{name: "change key as a path segment", in: "https://changeip.example/changeip/Xy7kQ2/modem1",
			want: "https://changeip.example/changeip/***/***", secrets: []string{"Xy7kQ2"}},
		{name: "short change key", in: "https://i.fxdx.example/api-rt/changeip/ab1/",
			want: "https://i.fxdx.example/api-rt/***/***/", secrets: []string{"ab1"}},
		{name: "short key as the only segment", in: "http://modem.example:8080/k3y",
			want: "http://modem.example:8080/***", secrets: []string{"k3y"}},
		{name: "bot token as the first segment of a change link", in: "http://modem.example/bot123456:" + bot + "/reboot",
			want: "http://modem.example/bot123456:***/***", secrets: []string{bot}},
		{name: "key-like first segment", in: "http://modem.example/0123456789abcdef",
			want: "http://modem.example/***", secrets: []string{"0123456789abcdef"}},
		{name: "long letters-only first segment", in: "http://modem.example/QWErtyUIOpasDFGhjk",
			want: "http://modem.example/***", secrets: []string{"QWErtyUIOpasDFGhjk"}},
		{name: "bare query value", in: "https://mobileproxy.example/reload?Zk2Lm9",
			want: "https://mobileproxy.example/reload?***", secrets: []string{"Zk2Lm9"}},
		// webhooks
		{name: "telegram", in: "https://api.telegram.org/bot123456789:" + bot + "/sendMessage?chat_id=-100123",
			want: "https://api.telegram.org/bot123456789:***/***?chat_id=***", secrets: []string{bot, "-100123"}},
		{name: "slack", in: "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
			want: "https://hooks.slack.com/services/***/***/***", secrets: []string{"XXXXXXXX", "T00000000"}},
		{name: "discord", in: "https://discord.com/api/webhooks/1234567890/tok_en-AB",
			want: "https://discord.com/api/***/***/***", secrets: []string{"tok_en-AB"}},
		{name: "token in the query", in: "https://alerts.example/hook?token=t0k&room=ops",
			want: "https://alerts.example/hook?token=***&room=***", secrets: []string{"t0k"}},
		{name: "key-like query name", in: "https://alerts.example/hook?a1b2c3d4e5=1",
			want: "https://alerts.example/hook?***=***", secrets: []string{"a1b2c3d4e5"}},
		{name: "fragment", in: "https://alerts.example/hook#Fr4gSecret",
			want: "https://alerts.example/hook#***", secrets: []string{"Fr4gSecret"}},
		{name: "fragment with a query in it", in: "https://alerts.example/h?x=1#a?b=Fr4gSecret",
			want: "https://alerts.example/h?x=***#***", secrets: []string{"Fr4gSecret"}},
		{name: "webhook with user info", in: "https://ops:WhPass@alerts.example/hook",
			want: "https://ops:***@alerts.example/hook", secrets: []string{"WhPass"}},
		{name: "webhook without path", in: "https://alerts.example", want: "https://alerts.example"},
		// Redis
		{name: "redis password", in: "redis://:R3disPass@host:6379/2",
			want: "redis://:***@host:6379/2", secrets: []string{"R3disPass"}},
		{name: "rediss user and password", in: "rediss://app:R3disPass@host:6380/0",
			want: "rediss://app:***@host:6380/0", secrets: []string{"R3disPass"}},
		{name: "redis sentinel", in: "redis-sentinel://:R3disPass@s1:26379,s2:26379/mymaster/0?sentinel_password=S3ntPass",
			want:    "redis-sentinel://:***@s1:26379,s2:26379/mymaster/0?sentinel_password=***",
			secrets: []string{"R3disPass", "S3ntPass"}},
		{name: "redis cluster", in: "rediss-cluster://app:R3disPass@n1:7000,n2:7001",
			want: "rediss-cluster://app:***@n1:7000,n2:7001", secrets: []string{"R3disPass"}},
		{name: "redis, bad port after the credentials", in: "redis-cluster://:R3disPass@n1:7000,n2:70x1",
			want: "redis-cluster://:***@n1:7000,n2:70x1", secrets: []string{"R3disPass"}},
		{name: "redis without password", in: "redis://host:6379/0", want: "redis://host:6379/0"},
		{name: "redis address", in: "127.0.0.1:6379", want: "127.0.0.1:6379"},
		{name: "redis user:pass without scheme", in: "app:R3disPass@host", want: "app:***@host", secrets: []string{"R3disPass"}},
		// PostgreSQL
		{name: "postgres URL", in: "postgres://crawlq:PgPass@db:5432/crawlq?sslmode=disable",
			want: "postgres://crawlq:***@db:5432/crawlq?sslmode=***", secrets: []string{"PgPass"}},
		{name: "postgresql URL, password in the query", in: "postgresql://crawlq@db/crawlq2?password=PgPass",
			want: "postgresql://***@db/crawlq2?password=***", secrets: []string{"PgPass"}},
		{name: "postgres key=value", in: "host=db user=crawlq password=PgPass dbname=crawlq",
			want: "host=db user=crawlq password=*** dbname=crawlq", secrets: []string{"PgPass"}},
		{name: "postgres key=value, quoted", in: "host=db password = 'Pg Pa\\'ss' sslpassword=Ssl0 dbname=x",
			want: "host=db password=*** sslpassword=*** dbname=x", secrets: []string{"Pg Pa", "ss'", "Ssl0"}},
		// not URLs
		{name: "empty", in: "", want: ""},
		{name: "key-like scheme", in: "Zk2Lm9Xq4Rt8://hooks.example/x",
			want: "***", secrets: []string{"Zk2Lm9Xq4Rt8"}},
		{name: "invalid scheme", in: "0://h/x?key=K3yValue", want: "***", secrets: []string{"K3yValue"}},
		{name: "words", in: "not a url Secr3t", want: "***", secrets: []string{"Secr3t"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := URL(tc.in)
			if got != tc.want {
				t.Errorf("URL(%q) = %q, want %q", tc.in, got, tc.want)
			}
			for _, s := range tc.secrets {
				if strings.Contains(got, s) {
					t.Errorf("URL(%q) = %q shows %q", tc.in, got, s)
				}
			}
			if again := URL(got); again != got {
				t.Errorf("URL(URL(%q)) = %q, want it unchanged %q", tc.in, again, got)
			}
		})
	}
}
