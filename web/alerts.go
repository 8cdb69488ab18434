package web

import (
	"bytes"
	"context"
	"html/template"
	"time"

	"crawlq/results/pgsink"
)

// AlertsSection is the pool page's "Alerts" part (when `crawlq web` has
// --postgres): how many rules there are, the alerts delivered, pending
// and given up, and the last delivery error (its webhook masked), so a
// dead webhook shows here and not only in the sink's log.
func AlertsSection(read func(ctx context.Context) (pgsink.AlertState, error)) Section {
	return Section{ID: "alerts", Title: "Alerts", Render: func(ctx context.Context) (template.HTML, error) {
		st, err := read(ctx)
		if err != nil {
			return "", err
		}
		var b bytes.Buffer
		if err := alertsTmpl.Execute(&b, st); err != nil {
			return "", err
		}
		return template.HTML(b.String()), nil
	}}
}

var alertsTmpl = template.Must(template.New("alerts").Funcs(template.FuncMap{
	"ts": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") },
}).Parse(`{{if not .Rules}}<p>No alert rules: add one with <code>crawlq alert add NAME --site S --drop-pct 10 --webhook URL</code>.</p>{{else}}<table class="alerts"><thead><tr><th>rules</th><th>delivered</th><th>pending</th><th>failing</th><th>given up</th></tr></thead><tbody>
<tr><td>{{.Rules}}</td><td>{{.Delivered}}</td><td>{{.Pending}}</td><td{{if .Failing}} class="bad"{{end}}>{{.Failing}}</td><td{{if .GivenUp}} class="bad"{{end}}>{{.GivenUp}}</td></tr></tbody></table>
{{if .LastError}}<p class="bad">Last delivery error ({{ts .LastErrorAt}} UTC): {{.LastError}}</p>{{end}}{{end}}`))
