package mask

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestText masks secrets inside messages: URLs as Go's errors quote them,
// known passwords (raw and escaped), user:pass@ and password=.
func TestText(t *testing.T) {
	tests := []struct {
		name, in string
		known    []string
		want     string
		secrets  []string
	}{
		{name: "url.Error", in: `Post "https://alerts.example/bot1:T0kenT0ken/send#Fr4g": dial tcp 127.0.0.1:1: connection refused`,
			want:    `Post "https://alerts.example/bot1:***/***#***": dial tcp 127.0.0.1:1: connection refused`,
			secrets: []string{"T0kenT0ken", "Fr4g"}},
		{name: "known webhook", in: "webhook https://h.example/hook?k=v answered",
			known: []string{"https://h.example/hook?k=v"}, want: "webhook https://h.example/hook?k=*** answered"},
		{name: "known password, raw and escaped", in: "auth p@ss/1 failed (p%40ss%2F1)",
			known: []string{"p@ss/1"}, want: "auth *** failed (***)", secrets: []string{"p@ss", "p%40ss"}},
		{name: "url at the end of a sentence", in: "postgres at postgres://u:PgPass@db/crawlq: refused.",
			want: "postgres at postgres://u:***@db/crawlq: refused.", secrets: []string{"PgPass"}},
		{name: "url in brackets", in: "(see http://u:Pr0xy@h:1).", want: "(see http://u:***@h:1).", secrets: []string{"Pr0xy"}},
		{name: "bare credentials", in: "dial user:Pr0xy@10.0.0.1:8080 failed",
			want: "dial user:***@10.0.0.1:8080 failed", secrets: []string{"Pr0xy"}},
		{name: "key=value password", in: `cannot connect: host=db password=PgPass dbname=x`,
			want: "cannot connect: host=db password=*** dbname=x", secrets: []string{"PgPass"}},
		{name: "nothing secret", in: "site ozon: 3 items from https://www.ozon.example/search",
			want: "site ozon: 3 items from https://www.ozon.example/search"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Text(tc.in, tc.known...)
			if got != tc.want {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
			}
			for _, s := range tc.secrets {
				if strings.Contains(got, s) {
					t.Errorf("Text(%q) = %q shows %q", tc.in, got, s)
				}
			}
		})
	}
}

// TestErr masks the message and keeps the chain.
func TestErr(t *testing.T) {
	sentinel := errors.New("refused")
	err := fmt.Errorf("dial http://u:Pr0xy@h:1: %w", sentinel)
	got := Err(err, "Pr0xy")
	if got.Error() != "dial http://u:***@h:1: refused" || !errors.Is(got, sentinel) {
		t.Errorf("Err(%v) = %v, want it masked and still a %v", err, got, sentinel)
	}
	if plain := fmt.Errorf("x: %w", sentinel); Err(plain) != plain {
		t.Error("Err changed an error with nothing to hide")
	}
	if Err(nil) != nil {
		t.Error("Err(nil) is not nil")
	}
}
