// Package deps pins modules the packages under construction will import, so
// go.mod stays tidy while they are written. Remove imports as they land.
package deps

import (
	_ "github.com/PuerkitoBio/goquery"
	_ "github.com/andybalholm/brotli"
	_ "github.com/chromedp/chromedp"
	_ "github.com/compose-spec/compose-go/v2/loader"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/hibiken/asynq/x/metrics"
	_ "github.com/hibiken/asynqmon"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/common/expfmt"
	_ "go.uber.org/goleak"
	_ "golang.org/x/net/proxy"
	_ "gopkg.in/yaml.v3"
)
