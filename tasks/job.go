package tasks

import (
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/internal/yamlstrict"
	"crawlq/proxies"
	"crawlq/tasks/site"
)

// MaxPages bounds a listing job's pages.
const MaxPages = 100

// ErrBadJob is wrapped by every validation error of a job.
var ErrBadJob = errors.New("bad job")

// JobError names the field of a job that is wrong and why.
type JobError struct {
	Field, Reason string
}

func (e *JobError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Reason) }

// Unwrap makes errors.Is(err, ErrBadJob) true.
func (e *JobError) Unwrap() error { return ErrBadJob }

// Job is the payload of every crawl task, and one line of a jobs.jsonl file.
type Job struct {
	// Site is a site of the registry (any name for page:fetch).
	Site string `json:"site"`
	// Kind is "search", "category", "product", "item" or "fetch".
	Kind string `json:"kind"`
	site.Request
	// Pages is how many listing pages to crawl, from 1. Default 1.
	Pages int `json:"pages,omitempty"`
	// Follow enqueues the product/item jobs a listing page links to.
	Follow bool `json:"follow,omitempty"`
	// Class is the proxy class the job needs. Empty (the default): its
	// site's class in the configuration of the worker that runs it
	// (ProxyClass), so the class is decided where the configuration lives
	// and nothing is baked into the queued job.
	Class proxies.Class `json:"class,omitempty"`
	// Fetch describes a generic page:fetch job.
	Fetch *PageSpec `json:"fetch,omitempty"`
	// Schedule names the schedule that queued the job ("" when queued by
	// hand).
	Schedule string `json:"schedule,omitempty"`
	// Run tells this queueing of the job from earlier ones under the same
	// task ID: NewTask draws it. Its progress is kept per run, so a job
	// queued again once Asynq forgot the finished task crawls its pages
	// again, while a retry of the same run resumes where it stopped.
	Run string `json:"run,omitempty"`
}

// Type is the job's Asynq task type.
func (j Job) Type() string {
	if j.Kind == KindFetch {
		return TypePageFetch
	}
	return j.Site + ":" + j.Kind
}

// Normalize validates j against the registry and returns its canonical
// form: defaults filled in, query trimmed, IDs taken from pasted URLs.
func (j Job) Normalize(reg *site.Registry) (Job, error) {
	if j.Kind == KindFetch {
		return j.normalizeFetch()
	}
	s, err := reg.Get(j.Site)
	if err != nil {
		return j, &JobError{"site", fmt.Sprintf("%q is not a known site (known: %s)", j.Site, strings.Join(reg.Names(), ", "))}
	}
	k, err := s.Kind(j.Kind)
	if err != nil {
		return j, &JobError{"kind", fmt.Sprintf("%q is not a kind of %s (kinds: %s)", j.Kind, j.Site, strings.Join(s.KindNames(), ", "))}
	}
	if err := j.normalizeCommon(); err != nil {
		return j, err
	}
	if !k.Listing {
		j.Pages, j.Follow = 1, false // one page: the product or item
	}
	req := j.Request
	req.Page = 1
	req, err = s.Normalize(j.Kind, req)
	if err != nil {
		return j, requestError(err)
	}
	req.Page = 0
	j.Request = req
	return j, nil
}

func (j *Job) normalizeCommon() error {
	switch {
	case j.Pages < 0 || j.Pages > MaxPages:
		return &JobError{"pages", fmt.Sprintf("%d is out of range 1..%d", j.Pages, MaxPages)}
	case j.Pages == 0:
		j.Pages = 1
	}
	if j.Class != "" && !j.Class.Valid() {
		return &JobError{"class", fmt.Sprintf("%q: want datacenter, residential or mobile", j.Class)}
	}
	return nil
}

// ProxyClass is the proxy class the job leases: its own Class when it
// names one, else its site's in reg (the configuration of the worker that
// runs it); datacenter for a page job, or a site reg does not know.
func (j Job) ProxyClass(reg *site.Registry) proxies.Class {
	if j.Class != "" {
		return j.Class
	}
	if j.Kind != KindFetch {
		if s, err := reg.Get(j.Site); err == nil {
			return s.Class
		}
	}
	return proxies.Datacenter
}

func requestError(err error) error {
	var re *site.RequestError
	if errors.As(err, &re) {
		return &JobError{re.Field, re.Reason}
	}
	return &JobError{"request", err.Error()}
}

// Target is the canonical thing the job crawls.
func (j Job) Target() string {
	if j.Kind == KindFetch {
		return j.Fetch.URL
	}
	r := j.Request
	return strings.Join([]string{r.Query, r.Location, r.Category, r.ID}, "\x1f")
}

// crawl is the canonical job without what does not change its crawl (its
// schedule and run): its target and how it is crawled (pages, follow,
// proxy class, a page job's selectors).
func (j Job) crawl() string {
	how := fmt.Sprintf("%d\x1f%t\x1f%s", j.Pages, j.Follow, j.Class)
	if j.Kind == KindFetch {
		spec, _ := json.Marshal(j.Fetch) // map keys sorted: canonical
		return string(spec) + "\x1f" + how
	}
	return j.Target() + "\x1f" + how
}

// TaskID is "site:kind:<hash of the canonical job>": the same job queued
// again is refused by Asynq as a duplicate, while the same target with
// other pages, follow, proxy class or selectors is another job.
func (j Job) TaskID() string {
	sum := sha1.Sum([]byte(j.crawl()))
	return j.Site + ":" + j.Kind + ":" + hex.EncodeToString(sum[:10])
}

// DecodeJob reads a task payload or a jobs file's line strictly: unknown
// fields (named with the likely one meant) and "pages": 0 are errors.
func DecodeJob(payload []byte) (Job, error) {
	var j Job
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return j, decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return j, &JobError{"payload", "data after the job object"}
	}
	if givesZeroPages(payload) {
		return j, &JobError{"pages", fmt.Sprintf("0 is out of range 1..%d (leave pages out for 1)", MaxPages)}
	}
	return j, nil
}

// givesZeroPages reports whether payload says "pages": 0, which Job
// cannot tell from no pages (the default, 1) once decoded.
func givesZeroPages(payload []byte) bool {
	var p struct {
		Pages *int `json:"pages"`
	}
	return json.Unmarshal(payload, &p) == nil && p.Pages != nil && *p.Pages == 0
}

// decodeError is err of a job's JSON as a *JobError; an unknown field is
// named with the field it was most likely meant to be.
func decodeError(err error) error {
	key, ok := strings.CutPrefix(err.Error(), `json: unknown field "`)
	if !ok {
		return &JobError{"payload", err.Error()}
	}
	key = strings.TrimSuffix(key, `"`)
	top, fetch := jsonNames(reflect.TypeFor[Job]()), jsonNames(reflect.TypeFor[PageSpec]())
	if s := yamlstrict.Suggest(key, top); s != "" {
		return &JobError{key, "unknown field (did you mean " + s + "?)"}
	}
	if s := yamlstrict.Suggest(key, fetch); s != "" {
		return &JobError{key, "unknown field (did you mean " + s + " in fetch?)"}
	}
	return &JobError{key, "unknown field (want one of " + strings.Join(top, ", ") + ")"}
}

// jsonNames are the JSON names of struct t's fields, those of embedded
// structs included, in order.
func jsonNames(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case f.Anonymous && name == "":
			out = append(out, jsonNames(f.Type)...)
		case name != "":
			out = append(out, name)
		default:
			out = append(out, f.Name)
		}
	}
	return out
}

// Defaults for the tasks NewTask builds.
const (
	// DefaultMaxRetry is how often a job is retried before it is archived.
	DefaultMaxRetry = 12
	// DefaultRetention keeps a finished task and its result for the UI.
	DefaultRetention = 24 * time.Hour
	// DefaultTimeout bounds one attempt of a job.
	DefaultTimeout = 10 * time.Minute
)

// NewTask validates and normalizes j and builds its Asynq task: the site's
// queue, the derived task ID, retries, retention and timeout.
func NewTask(reg *site.Registry, j Job, opts ...asynq.Option) (*asynq.Task, error) {
	j, err := j.Normalize(reg)
	if err != nil {
		return nil, err
	}
	if j.Run == "" {
		j.Run = newRun()
	}
	payload, err := json.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("encode job: %w", err)
	}
	base := []asynq.Option{asynq.Queue(queueOf(reg, j)), asynq.TaskID(j.TaskID()),
		asynq.MaxRetry(DefaultMaxRetry), asynq.Retention(DefaultRetention), asynq.Timeout(DefaultTimeout)}
	return asynq.NewTask(j.Type(), payload, append(base, opts...)...), nil
}

// newRun is a run ID: 8 random bytes in hex.
func newRun() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail on Linux
	return hex.EncodeToString(b[:])
}

func queueOf(reg *site.Registry, j Job) string {
	if j.Kind == KindFetch {
		return PageQueue
	}
	s, err := reg.Get(j.Site)
	if err != nil || s.Queue == "" {
		return j.Site
	}
	return s.Queue
}

// NewPageFetchTask builds a generic page:fetch job.
func NewPageFetchTask(spec PageSpec) (*asynq.Task, error) {
	return NewTask(site.Default(), Job{Kind: KindFetch, Fetch: &spec})
}
