package testbed

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Avito's proof of work, as QRATOR served it on 2026-08-27 (the captured
// page and cookie timeline: internal/samples/testdata/avito/README.md).
// A request without a valid clearance is answered StatusAvitoPoW with the
// page "Доступ ограничен: проверка безопасности" and the cookie
// AvitoPoWCookie (five minutes). The page's script posts that cookie to
// AvitoPoWGetPath and gets a JWT whose payload names the work (id) and
// its difficulty (compl); it finds a nonce whose sha256 of "id:nonce"
// starts with compl hex zeros and posts it with the JWT to
// AvitoPoWVerifyPath, whose answer sets the clearance cookie
// AvitoClearanceCookie; the page then reloads.
const (
	StatusAvitoPoW       = 439
	AvitoPoWGetPath      = "/web/3/firewallPow/get"
	AvitoPoWVerifyPath   = "/web/3/firewallPow/verify"
	AvitoPoWCookie       = "pow_challenge"
	AvitoClearanceCookie = "_adcc"
	// AvitoPoWChallengeTTL is how long the pow_challenge cookie (and the
	// work it gets) lasts: Max-Age 300 in the capture.
	AvitoPoWChallengeTTL = 5 * time.Minute
	// DefaultPoWCompl is the default difficulty: 4 hex zeros (some 65,000
	// hashes), what public clients' solve times (0.12–0.26 s in Python)
	// suggest; the capture does not show the real figure.
	DefaultPoWCompl = 4
	maxPoWCompl     = 6
)

// VerdictPoW: a request of Avito's proof-of-work exchange answered (the
// work handed out, or a right nonce verified): neither a page nor a
// refusal.
const VerdictPoW Verdict = "pow"

// avitoPoW is the proof of work's state: the challenge cookies and works
// handed out, each bound to the (IP, User-Agent) it went to. Clearances
// are the site's challenge grants (challenges.issue). Safe for concurrent
// use.
type avitoPoW struct {
	compl int
	key   [32]byte // signs the JWTs
	mu    sync.Mutex
	// challenges: pow_challenge value -> grant; works: work id -> grant.
	challenges, works map[string]*nonceGrant
}

func newAvitoPoW(compl int) *avitoPoW {
	p := &avitoPoW{compl: compl, challenges: map[string]*nonceGrant{}, works: map[string]*nonceGrant{}}
	_, _ = rand.Read(p.key[:])
	return p
}

// grant records a new random token for (ip, ua) in m until now+ttl.
func (p *avitoPoW) grant(m map[string]*nonceGrant, ip, ua string, now time.Time) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	p.mu.Lock()
	defer p.mu.Unlock()
	m[token] = &nonceGrant{ip: ip, ua: ua, expires: now.Add(AvitoPoWChallengeTTL)}
	return token
}

// take says whether token of m went to (ip, ua) and is still valid; a
// work is taken once.
func (p *avitoPoW) take(m map[string]*nonceGrant, token, ip, ua string, now time.Time, once bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	g := m[token]
	if g == nil || !now.Before(g.expires) || g.ip != ip || g.ua != ua || g.used {
		return false
	}
	g.used = once
	return true
}

// powClaims is the payload of a work's JWT.
type powClaims struct {
	ID    string `json:"id"`
	Compl int    `json:"compl"`
	Exp   int64  `json:"exp"`
}

var jwtHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// sign makes the JWT of c.
func (p *avitoPoW) sign(c powClaims) string {
	body, _ := json.Marshal(c)
	head := jwtHeader + "." + base64.RawURLEncoding.EncodeToString(body)
	return head + "." + base64.RawURLEncoding.EncodeToString(p.mac(head))
}

func (p *avitoPoW) mac(s string) []byte {
	m := hmac.New(sha256.New, p.key[:])
	m.Write([]byte(s))
	return m.Sum(nil)
}

// open checks a JWT's signature and gives its claims.
func (p *avitoPoW) open(jwt string) (powClaims, bool) {
	var c powClaims
	i := strings.LastIndexByte(jwt, '.')
	sig, err := base64.RawURLEncoding.DecodeString(jwt[i+1:])
	if i < 0 || err != nil || !hmac.Equal(sig, p.mac(jwt[:i])) {
		return c, false
	}
	_, payload, _ := strings.Cut(jwt[:i], ".")
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	return c, err == nil && json.Unmarshal(raw, &c) == nil
}

// PoWSolves says whether nonce solves the work id at difficulty compl:
// the hex sha256 of "id:nonce" starts with compl zeros.
func PoWSolves(id string, nonce uint64, compl int) bool {
	sum := sha256.Sum256([]byte(id + ":" + strconv.FormatUint(nonce, 10)))
	return strings.HasPrefix(hex.EncodeToString(sum[:]), strings.Repeat("0", compl))
}

// isAvitoPoWPath says r is one of the proof of work's endpoints.
func isAvitoPoWPath(path string) bool { return path == AvitoPoWGetPath || path == AvitoPoWVerifyPath }

// avitoPoWExchange answers the proof of work's endpoints.
func (s *Site) avitoPoWExchange(w http.ResponseWriter, r *http.Request, e *Entry) Verdict {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return VerdictPoW
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 4096))
	if err != nil {
		return VerdictChallenge
	}
	if r.URL.Path == AvitoPoWGetPath {
		return s.avitoPoWGet(w, r, e, raw)
	}
	return s.avitoPoWVerify(w, r, e, raw)
}

// avitoPoWGet hands out a work for a pow_challenge issued to the
// request's (IP, User-Agent): {"success":{"result":{"challenge_jwt":…}}}.
// Another challenge gets 400 (the real answer to one was not captured).
func (s *Site) avitoPoWGet(w http.ResponseWriter, r *http.Request, e *Entry, raw []byte) Verdict {
	p, ua := s.challenge.pow, r.UserAgent()
	var in struct {
		Challenge string `json:"challenge"`
	}
	if json.Unmarshal(raw, &in) != nil || !p.take(p.challenges, in.Challenge, e.IP, ua, e.Start, false) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"bad challenge"}}`)
		return VerdictChallenge
	}
	id := p.grant(p.works, e.IP, ua, e.Start)
	jwt := p.sign(powClaims{ID: id, Compl: p.compl, Exp: e.Start.Add(AvitoPoWChallengeTTL).Unix()})
	writeJSON(w, map[string]any{"success": map[string]any{"result": map[string]any{"challenge_jwt": jwt}}})
	return VerdictPoW
}

// avitoPoWVerify checks a nonce posted with its work's JWT: right, for a
// work handed to the request's (IP, User-Agent) and not used yet, it sets
// the clearance cookie, bound to them, for the rule's TTL and answers
// verified; anything else answers verified false.
func (s *Site) avitoPoWVerify(w http.ResponseWriter, r *http.Request, e *Entry, raw []byte) Verdict {
	c, ua := s.challenge, r.UserAgent()
	var in struct {
		Challenge string `json:"challenge"`
		Nonce     uint64 `json:"nonce"`
	}
	var claims powClaims
	ok := json.Unmarshal(raw, &in) == nil
	if ok {
		claims, ok = c.pow.open(in.Challenge)
	}
	ok = ok && PoWSolves(claims.ID, in.Nonce, claims.Compl) && c.pow.take(c.pow.works, claims.ID, e.IP, ua, e.Start, true)
	if ok {
		http.SetCookie(w, &http.Cookie{Name: c.cookie, Value: c.issue(e.IP, ua, e.Start), Path: "/",
			MaxAge: int(c.rule.TTL / time.Second), HttpOnly: true})
	}
	writeJSON(w, map[string]any{"success": map[string]any{"result": map[string]any{"verified": ok}}})
	if !ok {
		return VerdictChallenge
	}
	return VerdictPoW
}

// serveAvitoPoW answers a request without a clearance: 439, a new
// pow_challenge cookie for its (IP, User-Agent), and the page.
func (s *Site) serveAvitoPoW(w http.ResponseWriter, r *http.Request, e *Entry) {
	p := s.challenge.pow
	http.SetCookie(w, &http.Cookie{Name: AvitoPoWCookie, Value: p.grant(p.challenges, e.IP, r.UserAgent(), e.Start),
		Path: "/", MaxAge: int(AvitoPoWChallengeTTL / time.Second)})
	render(w, StatusAvitoPoW, avitoPoWTmpl, nil)
}

// avitoPoWTmpl is the captured page's frame and text, with a script of
// the testbed's own that runs the same exchange (crypto.subtle, as the
// real one: a secure context, which loopback addresses are).
var avitoPoWTmpl = template.Must(template.New("avito-pow").Parse(`<!DOCTYPE html>
<html lang="ru"><head><meta charset="UTF-8" />
<title>Доступ ограничен: проверка безопасности</title></head>
<body><div class="firewall-container">
<h2 class="firewall-title">Доступ ограничен: проверка безопасности</h2>
<div class="firewall-status" id="pow-status"><span class="firewall-spinner" id="pow-spinner"></span>
<span id="pow-status-text">Выполняется проверка, подождите...</span></div>
<div class="firewall-error" id="pow-error"></div>
<p class="text firewall-p-bold">Что можно сделать, если проблема повторяется</p>
<p class="text">Не сработает — <a href="https://support.avito.ru/request/720?eventData[contextId]=117">напишите поддержке</a>. Обязательно укажите свой город, провайдера и&nbsp;IP.</p>
</div>
<script>(async function(){
var m=document.cookie.match(/(?:^|; )` + AvitoPoWCookie + `=([^;]*)/);if(!m)return;
async function post(u,b){var r=await fetch(u,{method:'POST',headers:{'Content-Type':'application/json'},body:JSON.stringify(b)});return r.json()}
var jwt=(await post('` + AvitoPoWGetPath + `',{challenge:decodeURIComponent(m[1])})).success.result.challenge_jwt;
var c=JSON.parse(atob(jwt.split('.')[1].replace(/-/g,'+').replace(/_/g,'/'))),z='0'.repeat(c.compl),n=0;
for(;;n++){var h=new Uint8Array(await crypto.subtle.digest('SHA-256',new TextEncoder().encode(c.id+':'+n)));
var x=Array.from(h.slice(0,4),function(b){return('0'+b.toString(16)).slice(-2)}).join('');if(x.startsWith(z))break}
var v=await post('` + AvitoPoWVerifyPath + `',{challenge:jwt,nonce:n});
if(v.success.result.verified){document.cookie='pow_solved=1; Path=/; Max-Age=10; SameSite=Lax';location.reload()}})();</script>
</body></html>
`))
