package ozon

import (
	"testing"

	"crawlq/tasks/site"
)

// TestChallengeOnThePageAPIClearsOnItsPage: a challenge met on a page
// API call is cleared by opening the page the call is made from (its
// url parameter), which the browser loads as a page; a challenged page
// is opened itself. The API call carries that page as its Referer.
func TestChallengeOnThePageAPIClearsOnItsPage(t *testing.T) {
	s := New()
	web := s.Endpoint(site.EndpointWeb)
	api := web + "/api/entrypoint-api.bx/page/json/v2?url=%2Fsearch%2F%3Ftext%3Dx%26page%3D2"
	tests := []struct{ name, url, want string }{
		{"page api", api, web + "/search/?text=x&page=2"},
		{"page api without url", web + "/api/entrypoint-api.bx/page/json/v2", web + "/"},
		{"html page", web + "/search/?text=x", web + "/search/?text=x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.ChallengeURL(tt.url); got != tt.want {
				t.Errorf("ChallengeURL(%s) = %s, want %s", tt.url, got, tt.want)
			}
		})
	}
	if got := s.XHRFrom(api); got != web+"/search/?text=x&page=2" {
		t.Errorf("XHRFrom = %s, want the search page", got)
	}
}
