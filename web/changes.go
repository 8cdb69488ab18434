package web

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"time"

	"crawlq/results/pgsink"
)

// PriceChange is one row of the "latest changes" section: an item's price
// went From → To at At (ChangePct in percent of From, negative for a
// fall, as pgsink.ChangePct).
type PriceChange struct {
	At        time.Time
	Site, ID  string
	Title     string
	From, To  int64
	ChangePct float64
}

// ChangesSection is the pool page's "latest price changes" table (the
// durable store's, when `crawlq web` has --postgres): list gives the
// newest changes.
func ChangesSection(list func(ctx context.Context) ([]PriceChange, error)) Section {
	return Section{ID: "changes", Title: "Latest price changes (24 h)", Render: func(ctx context.Context) (template.HTML, error) {
		cs, err := list(ctx)
		if err != nil {
			return "", err
		}
		var b bytes.Buffer
		if err := changesTmpl.Execute(&b, cs); err != nil {
			return "", err
		}
		return template.HTML(b.String()), nil
	}}
}

var changesTmpl = template.Must(template.New("changes").Funcs(template.FuncMap{
	"rub": func(k int64) string { return fmt.Sprintf("%d.%02d", k/100, k%100) },
	"ts":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") },
	// pct is safe HTML: digits, a point and a sign (html/template would
	// write "+" as &#43;).
	"pct":     func(v float64) template.HTML { return template.HTML(pgsink.FormatChange(v)) },
	"itemURL": ItemURL,
}).Parse(`{{if .}}<table class="changes"><thead><tr><th class="l">at (UTC)</th><th class="l">site</th><th class="l">id</th><th class="l">title</th><th>from</th><th>to</th><th>change</th></tr></thead><tbody>
{{range .}}<tr><td class="l">{{ts .At}}</td><td class="l">{{.Site}}</td><td class="l"><a href="{{itemURL .Site .ID}}">{{.ID}}</a></td><td class="l"><a href="{{itemURL .Site .ID}}">{{.Title}}</a></td><td>{{rub .From}}</td><td>{{rub .To}}</td><td>{{pct .ChangePct}}</td></tr>
{{end}}</tbody></table>{{else}}<p>No price changes in the last 24 hours.</p>{{end}}`))
