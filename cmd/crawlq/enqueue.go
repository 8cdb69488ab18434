package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"crawlq/internal/redisx"
	"crawlq/internal/statusline"
	"crawlq/proxies"
	"crawlq/tasks"
	"crawlq/tasks/site"
)

type enqueueFlags struct {
	file, location, category, class, config, item string
	pages                                         int
	follow, wait, json, again                     bool
	fields, expect                                []string
	timeout                                       time.Duration
}

func newEnqueueCmd(a *app) *cobra.Command {
	var f enqueueFlags
	cmd := &cobra.Command{
		Use:   "enqueue SITE KIND ARGS… | enqueue -f jobs.jsonl",
		Short: "Queue crawl jobs (validated first: one bad job and nothing is queued)",
		Example: `  crawlq enqueue wildberries search "кроссовки" --pages 3 --follow
  crawlq enqueue avito search --location moskva "iphone 15"
  crawlq enqueue ozon product https://www.ozon.ru/product/...-747122168/
  crawlq enqueue page fetch https://example.com/list --item .card --field title=h2 --field price=.price
  crawlq enqueue -f jobs.jsonl --wait
  crawlq enqueue wildberries search "кроссовки" --pages 3 --again   # the same job once more`,
		RunE: func(cmd *cobra.Command, args []string) error { return runEnqueue(cmd, a, f, args) },
	}
	fl := cmd.Flags()
	f.bindJob(fl)
	fl.BoolVar(&f.wait, "wait", false, "show progress until the batch and the follow-up jobs it queues finish, then a summary")
	fl.DurationVar(&f.timeout, "wait-timeout", 0, "with --wait, give up after this long (0: never)")
	fl.BoolVar(&f.json, "json", false, "print the batch (and with --wait the final counts) as JSON")
	fl.BoolVar(&f.again, "again", false, "run the jobs again even if the same jobs are queued, running or finished")
	return cmd
}

// bindJob defines the flags that describe jobs (shared with `schedule add`).
func (f *enqueueFlags) bindJob(fl *pflag.FlagSet) {
	fl.StringVarP(&f.file, "file", "f", "", "JSON lines file of jobs ({\"site\":…,\"kind\":…,\"query\":…})")
	fl.IntVar(&f.pages, "pages", 1, "listing pages to crawl")
	fl.BoolVar(&f.follow, "follow", false, "also crawl the product/item pages a listing links to")
	fl.StringVar(&f.class, "class", "", "proxy class: datacenter, residential or mobile (default: the site's in the configuration of the worker that runs the job)")
	fl.StringVar(&f.location, "location", "", "Avito region slug (moskva, krasnodar…)")
	fl.StringVar(&f.category, "category", "", "site category (for KIND category)")
	fl.StringVar(&f.config, "config", "", "YAML config file (site overrides)")
	fl.StringVar(&f.item, "item", "", "page fetch: CSS selector of each item")
	fl.StringArrayVar(&f.fields, "field", nil, "page fetch: FIELD=SELECTOR[@attr] (repeat)")
	fl.StringArrayVar(&f.expect, "expect", nil, "page fetch: selector that must match (repeat)")
}

func runEnqueue(cmd *cobra.Command, a *app, f enqueueFlags, args []string) error {
	loaded, err := tasks.LoadConfig(f.config)
	if err != nil {
		return err
	}
	if err := checkKind(loaded.Sites, f.file, args); err != nil {
		return err
	}
	jobs, where, err := f.jobs(args)
	if err != nil {
		return err
	}
	enq := &tasks.Enqueuer{Sites: loaded.Sites, Again: f.again}
	ts, err := enq.Build(jobs, func(i int) string { return where[i] })
	if err != nil {
		return err // validated before Redis is touched: nothing queued
	}
	ctx := cmd.Context()
	conn, err := a.redis(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	enq.Client = asynq.NewClient(conn.Asynq)
	defer enq.Client.Close()
	enq.Inspector = asynq.NewInspector(conn.Asynq)
	defer enq.Inspector.Close()
	b, err := enq.Enqueue(ctx, ts)
	if err != nil {
		return err
	}
	report(cmd.OutOrStdout(), b, f.json, time.Now())
	if !f.wait {
		return nil
	}
	return waitBatch(ctx, cmd, conn, b, f)
}

// checkKind refuses SITE KIND (without -f) when the site has no such
// kind, before any argument is read as a query or an ID: the kind is what
// is wrong, not the query. An unknown site is left to the job's own check.
func checkKind(reg *site.Registry, file string, args []string) error {
	if file != "" || len(args) < 2 || args[1] == tasks.KindFetch {
		return nil
	}
	s, err := reg.Get(args[0])
	if err != nil {
		return nil
	}
	if _, err := s.Kind(args[1]); err != nil {
		return fmt.Errorf("unknown kind %q for %s; kinds: %s", args[1], s.Name, strings.Join(s.KindNames(), ", "))
	}
	return nil
}

// jobs builds the jobs from -f or from SITE KIND ARGS…, with their origin.
func (f enqueueFlags) jobs(args []string) ([]tasks.Job, []string, error) {
	if f.file != "" {
		if len(args) > 0 {
			return nil, nil, fmt.Errorf("give either -f FILE or SITE KIND ARGS, not both")
		}
		r, err := os.Open(f.file)
		if err != nil {
			return nil, nil, err
		}
		defer r.Close()
		return tasks.ReadJobs(r, f.file)
	}
	if len(args) < 2 {
		return nil, nil, fmt.Errorf("want SITE KIND ARGS… (e.g. wildberries search \"кроссовки\") or -f jobs.jsonl")
	}
	return f.argJobs(args[0], args[1], args[2:])
}

func (f enqueueFlags) argJobs(siteName, kind string, rest []string) ([]tasks.Job, []string, error) {
	base := tasks.Job{Site: siteName, Kind: kind, Pages: f.pages, Follow: f.follow, Class: proxies.Class(f.class),
		Request: site.Request{Location: f.location, Category: f.category}}
	if f.pages < 1 {
		return nil, nil, fmt.Errorf("--pages %d: want at least 1", f.pages)
	}
	switch kind {
	case "search":
		base.Query = strings.Join(rest, " ")
		return []tasks.Job{base}, []string{"arguments"}, nil
	case "category":
		return []tasks.Job{base}, []string{"arguments"}, nil
	case tasks.KindFetch:
		return f.fetchJobs(base, rest)
	}
	if len(rest) == 0 {
		return nil, nil, fmt.Errorf("%s %s: give one or more IDs or URLs", siteName, kind)
	}
	var jobs []tasks.Job
	var where []string
	for i, arg := range rest {
		j := base
		j.Request = site.Request{}
		if strings.Contains(arg, "/") {
			j.URL = arg
		} else {
			j.ID = arg
		}
		jobs, where = append(jobs, j), append(where, fmt.Sprintf("argument %d (%s)", i+3, arg))
	}
	return jobs, where, nil
}

func (f enqueueFlags) fetchJobs(base tasks.Job, urls []string) ([]tasks.Job, []string, error) {
	fields := map[string]string{}
	for _, kv := range f.fields {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, nil, fmt.Errorf("--field %q: want FIELD=SELECTOR", kv)
		}
		fields[k] = v
	}
	if base.Site == "page" {
		base.Site = ""
	}
	var jobs []tasks.Job
	var where []string
	for i, u := range urls {
		j := base
		j.Request = site.Request{}
		j.Fetch = &tasks.PageSpec{URL: u, Item: f.item, Fields: fields, Expect: f.expect}
		jobs, where = append(jobs, j), append(where, fmt.Sprintf("argument %d (%s)", i+3, u))
	}
	if len(jobs) == 0 {
		return nil, nil, fmt.Errorf("page fetch: give one or more URLs")
	}
	return jobs, where, nil
}

func report(w io.Writer, b *tasks.Batch, asJSON bool, now time.Time) {
	if asJSON {
		_ = json.NewEncoder(w).Encode(b)
		return
	}
	for _, q := range b.Enqueued {
		fmt.Fprintf(w, "enqueued %s %s (queue %s)\n", q.Type, q.ID, q.Queue)
	}
	for _, q := range b.Duplicates {
		fmt.Fprintf(w, "duplicate %s %s: %s\n", q.Type, q.ID, q.Refusal(now))
	}
	fmt.Fprintf(w, "%d enqueued, %d duplicates\n", len(b.Enqueued), len(b.Duplicates))
}

// waitBatch waits for the batch and for the follow-up jobs its jobs queue.
func waitBatch(ctx context.Context, cmd *cobra.Command, conn *redisx.Conn, b *tasks.Batch, f enqueueFlags) error {
	insp := asynq.NewInspector(conn.Asynq)
	defer insp.Close()
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	line := statusline.New(cmd.ErrOrStderr(), statusline.DefaultEvery)
	c, err := tasks.Wait(ctx, insp, conn.Client, b.All(), 500*time.Millisecond, func(c tasks.Counts) { line.Show(progressBar(c)) })
	line.End()
	if f.json {
		_ = json.NewEncoder(cmd.OutOrStdout()).Encode(c)
	} else {
		fmt.Fprintf(cmd.OutOrStdout(), "done: %s, %d failed (archived), %d of %d (%d of them follow-ups)\n",
			c.CompletedText(), c.Failed, c.Completed+c.Failed, c.Total, c.FollowUps)
	}
	if err != nil {
		return fmt.Errorf("wait: %w", err)
	}
	if c.Failed > 0 {
		return fmt.Errorf("%d of %d jobs failed: see `crawlq status` or the web UI's archived tasks", c.Failed, c.Total)
	}
	return nil
}

// progressBar is the wait's status line.
func progressBar(c tasks.Counts) string {
	const width = 30
	done := c.Completed + c.Failed
	n := 0
	if c.Total > 0 {
		n = done * width / c.Total
	}
	return fmt.Sprintf("[%s%s] %d/%d done, %d failed, %d retrying, %d active",
		strings.Repeat("#", n), strings.Repeat(".", width-n), done, c.Total, c.Failed, c.Retrying, c.Active)
}
