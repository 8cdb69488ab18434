package fetcher_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"

	"crawlq/fetcher"
)

// A session sends every request with its own proxy, jar and profile; here
// the proxy is nil (direct) to keep the example short.
func ExampleFetcher_Do() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Header.Get("Accept-Language"))
	}))
	defer site.Close()
	f := fetcher.New(fetcher.Config{})
	defer f.Close()
	jar, _ := cookiejar.New(nil)
	resp, err := f.Do(context.Background(), fetcher.Request{
		URL:     site.URL,
		Jar:     jar,
		Profile: fetcher.ProfileFor("task-1"), // proxy: Proxy: leaseURL
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Status, string(resp.Body))
	// Output: 200 ru-RU,ru;q=0.9,en-US;q=0.8,en;q=0.7
}
