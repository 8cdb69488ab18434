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
// and given up, the last delivery error (its webhook masked), and per
// rule its state and figures, so a dead webhook shows here, by its rule,
// and not only in the sink's log.
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
{{if .LastError}}<p class="bad">Last delivery error ({{ts .LastErrorAt}} UTC): {{.LastError}}</p>{{end}}
{{with .PerRule}}<table class="alert-rules"><thead><tr><th class="l">rule</th><th class="l">site</th><th class="l">state</th><th>delivered</th><th>pending</th><th>failing</th><th>given up</th><th class="l">last error (UTC)</th></tr></thead><tbody>
{{range .}}<tr><td class="l">{{.Rule}}</td><td class="l">{{.Site}}</td><td class="l{{if ne .State "ok"}} bad{{end}}">{{.State}}</td><td>{{.Delivered}}</td><td>{{.Pending}}</td><td>{{.Failing}}</td><td>{{.GivenUp}}</td><td class="l">{{if .LastError}}{{ts .LastErrorAt}}: {{.LastError}}{{else}}–{{end}}</td></tr>
{{end}}</tbody></table>{{end}}{{end}}`))
