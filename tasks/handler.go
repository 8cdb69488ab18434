package tasks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/proxies"
	"crawlq/results"
	"crawlq/sessions"
	"crawlq/tasks/site"
)

// HandlerConfig wires a Handler. Every field but Logger, Observe and Now
// is required.
type HandlerConfig struct {
	Sites *site.Registry
	// Sessions opens the jobs' sessions. One that shares its Redis
	// (sessions.Config.SharesRedis) shares Sink's: a job's session record
	// is read and written in the sink's pipelines and transactions.
	Sessions *sessions.Manager
	Fetcher  *fetcher.Fetcher
	// Rules are the detection rules; generic page jobs add their own.
	Rules detect.Rules
	Sink  *results.Sink
	// Gate, if set, holds a job before it starts while the results
	// backlog is over its bound (BacklogGate).
	Gate *BacklogGate
	// Client enqueues the jobs a search with follow finds.
	Client *asynq.Client
	// Holder names this server in logs.
	Holder string
	// Logger gets a line per page. Default zap.NewNop().
	Logger *zap.Logger
	// Observe, if set, is told every response's site, verdict and latency
	// (the worker's metrics).
	Observe func(site, verdict string, latency time.Duration)
	// OnConfirm, if set, is told every confirmation of a Suspect answer
	// from a second proxy: its decision, its extra requests and how long
	// it waited for a second proxy.
	OnConfirm func(ConfirmStats)
	// Browser clears JavaScript challenges (the browser tier); nil: a
	// Challenge fails the attempt with its reason, nobody is banned.
	Browser Solver
	// OnChallenge, if set, is told every browser visit.
	OnChallenge func(ChallengeStats)
	// OnPoW, if set, is told every challenge solved over HTTP by the
	// site's own Solve (Avito's proof of work), solved or not.
	OnPoW func(PoWStats)
	// OnDefect, if set, is told every request defect (the worker's
	// metrics count them per site, kind and reason).
	OnDefect func(DefectStats)
	// OnHandBack, if set, is told every attempt that handed its slot back
	// to wait for a proxy (HandedBack).
	OnHandBack func(HandBackStats)
	// Waker, if set, brings the jobs handed back at their turn; nil: at
	// Asynq's next look at the retry sets.
	Waker *Waker
	// Now stamps items. Default time.Now.
	Now func() time.Time
}

// Handler runs crawl jobs: one sticky session per job, each page paced,
// fetched, judged and parsed, items written with the page's progress.
type Handler struct {
	cfg    HandlerConfig
	detect *detect.Detector
	// shared: the sessions share the sink's Redis
	// (sessions.Config.SharesRedis), so a job's session record rides in
	// its reads and result transactions.
	shared bool
	// active counts the attempts running, until their leases are released
	// (Drain waits for them).
	active sync.WaitGroup
	// defects are the request defects this worker warned about.
	defects defects
	// handBacks counts the attempts that handed their slot back.
	handBacks atomic.Int64
}

var _ asynq.Handler = (*Handler)(nil)

// NewHandler builds a Handler.
func NewHandler(cfg HandlerConfig) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	shared := cfg.Sessions != nil && cfg.Sessions.SharesRedis()
	return &Handler{cfg: cfg, detect: detect.New(cfg.Rules, detect.WithRecognizer(Recognizer(cfg.Sites))), shared: shared}
}

// NewMux routes every task type to h: page:fetch and "site:kind" of
// every kind of the handler's registry (e.g. wildberries:search). A task
// of any other type is archived at once (SkipRetry) with a reason naming
// its type.
func NewMux(h *Handler) *asynq.ServeMux {
	mux := asynq.NewServeMux()
	reg := h.cfg.Sites
	if reg == nil {
		reg = site.Default()
	}
	types := []string{TypePageFetch}
	for _, name := range reg.Names() {
		if s, err := reg.Get(name); err == nil {
			for _, kind := range s.KindNames() {
				types = append(types, name+":"+kind)
			}
		}
	}
	slices.Sort(types)
	for _, t := range slices.Compact(types) {
		mux.Handle(t, h)
	}
	mux.Use(skipUnknownType)
	return mux
}

// skipUnknownType makes asynq's "handler not found" permanent: no retry
// teaches a worker a task type it does not know.
func skipUnknownType(next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		err := next.ProcessTask(ctx, t)
		if errors.Is(err, asynq.ErrHandlerNotFound) {
			return permanent(fmt.Errorf("unknown task type %q: %w", t.Type(), err))
		}
		return err
	})
}

// ProcessTask runs one attempt of a job. A bad payload is archived at once
// with its reason (SkipRetry); a ban retries soon on another proxy; a rate
// limit retries after its Retry-After.
func (h *Handler) ProcessTask(ctx context.Context, t *asynq.Task) (err error) {
	h.active.Add(1)
	defer h.active.Done()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panic: %v", p)
		}
	}()
	if err := h.cfg.Gate.Wait(ctx); err != nil {
		return err
	}
	j, err := DecodeJob(t.Payload())
	if err == nil {
		j, err = j.Normalize(h.cfg.Sites)
	}
	if err == nil && j.Type() != t.Type() {
		err = &JobError{"type", fmt.Sprintf("task type %q does not match the payload's %q", t.Type(), j.Type())}
	}
	if err != nil {
		return permanent(fmt.Errorf("task %s: %w", t.Type(), err))
	}
	r := h.newRun(ctx, j)
	err = r.crawl(ctx)
	if err != nil {
		r.sum.Error = err.Error()
	}
	r.sum.Empty = err == nil && r.sum.Items == 0
	r.sum.write(ctx, t)
	if d, ok := HandedBack(err); ok {
		h.handedBack(ctx, j.Site, d, err)
	}
	return err
}

// HandedBack is how many attempts handed their slot back to wait for a
// proxy.
func (h *Handler) HandedBack() int64 { return h.handBacks.Load() }

// Drain waits until every attempt that has started has returned (and so
// released its lease), or until timeout; it reports whether all returned.
// Call it only once no new attempt can start (after the Asynq server's
// Shutdown).
func (h *Handler) Drain(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() { h.active.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}

func (h *Handler) newRun(ctx context.Context, j Job) *run {
	id, _ := asynq.GetTaskID(ctx)
	n, _ := asynq.GetRetryCount(ctx)
	r := &run{h: h, job: j, task: id, det: h.detect, class: j.ProxyClass(h.cfg.Sites),
		sum: Summary{Task: id, Site: j.Site, Kind: j.Kind, Attempt: n + 1}}
	r.log = h.cfg.Logger.With(zap.String("server", h.cfg.Holder), zap.String("task", id), zap.String("site", j.Site))
	if j.Kind == KindFetch {
		r.det = detect.New(h.cfg.Rules.With(j.Site, "page", j.Fetch.rule()))
	}
	return r
}

// run is one attempt of one job.
type run struct {
	h    *Handler
	job  Job
	task string
	// class is the proxy class the job leases (Job.ProxyClass).
	class proxies.Class
	det   *detect.Detector
	sess  *sessions.Session
	// preloaded is the session record (and a fresh proxy's lease) read
	// with the progress, for the first open (shared Redis only).
	preloaded sessions.Preloaded
	// followed are the follow-ups of the page being done, recorded with it.
	followed []Queued
	// next is the URL the last page named for the next one (site.Page.NextURL).
	next string
	// hop is the redirect stub followed for a page, if any (redirect).
	hop hop
	// asked is the URL the page being done was asked at: with items, it
	// becomes its site's control (control.go).
	asked string
	// latency is the last response's, for the proxy's latency average
	// when the job releases it.
	latency time.Duration
	sum     Summary
	log     *zap.Logger
	// solves counts the attempt's browser visits (bounded by maxSolves);
	// reused says a kept clearance was tried; kept that the session's
	// cookies are a kept clearance no answer of the site has refused yet.
	solves int
	reused bool
	kept   bool
}

func (r *run) crawl(ctx context.Context) error {
	defer r.discardStored(ctx)
	prog, err := r.progress(ctx)
	if err != nil {
		return err
	}
	r.sum.Pages, r.sum.Items = prog.Pages, prog.Items
	for page := prog.Pages + 1; page <= r.job.Pages; page++ {
		more, err := r.page(ctx, page)
		if err != nil {
			r.pause(ctx)
			return err
		}
		if !more {
			break
		}
	}
	return r.close(ctx, proxies.OK(r.latency))
}

// progress reads how far earlier attempts got and, on a shared Redis, the
// stored session in the same round trip, with a fresh proxy's lease for
// the session if it has none (sessions.Manager.Preload).
func (r *run) progress(ctx context.Context) (results.Progress, error) {
	sink := r.h.cfg.Sink
	if !r.h.shared {
		return sink.Progress(ctx, results.RunID(r.task, r.job.Run))
	}
	var prog func() (results.Progress, error)
	_, err := sink.Redis().Pipelined(ctx, func(p redis.Pipeliner) error {
		prog = sink.ProgressIn(ctx, p, results.RunID(r.task, r.job.Run))
		r.preloaded = r.h.cfg.Sessions.Preload(ctx, p, r.task, r.job.Site, r.class)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) { // Nil: no stored session
		return results.Progress{}, fmt.Errorf("read progress of %s: %w", r.task, err)
	}
	return prog()
}

// close ends the session, if one is open, dropping its stored record.
func (r *run) close(ctx context.Context, o proxies.Outcome) error {
	if r.sess == nil {
		return nil
	}
	s := r.sess
	r.sess = nil
	return s.Finish(ctx, o)
}

// pause releases the proxy without judgement and keeps the stored session,
// so the next attempt resumes the same proxy and cookies.
func (r *run) pause(ctx context.Context) {
	if r.sess != nil {
		_ = r.sess.Close(ctx, proxies.Neutral())
		r.sess = nil
	}
}

// session opens (or resumes) the job's session when it has none.
func (r *run) session(ctx context.Context) error {
	if r.sess != nil {
		return nil
	}
	s, err := r.h.cfg.Sessions.OpenStored(ctx, r.preloaded, r.task, r.job.Site, r.class)
	r.preloaded = sessions.Preloaded{}
	switch {
	case err != nil && !IsFailure(err):
		return err // a wait: the job hands its slot back (HandedBack)
	case errors.Is(err, proxies.ErrNotServed):
		return permanent(err) // configuration, not a wait: no retry mends it
	case errors.Is(err, proxies.ErrPoolEmpty):
		return retryAfter(30*time.Second, err)
	case err != nil:
		return err
	}
	r.sess, r.kept = s, false
	r.loadClearance(ctx)
	p := s.Lease().Proxy
	r.sum.ProxyID, r.sum.Proxy, r.sum.Resumed = p.ID, p.Masked(), s.Resumed()
	return nil
}
