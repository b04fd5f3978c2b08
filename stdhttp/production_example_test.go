package stdhttp_test

// The README's "In production" snippets, line for line, so that they compile
// and run with every change to the API.

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/keyfuncs/jwtkey"
	"github.com/ratewarden/ratewarden/stdhttp"
	"github.com/ratewarden/ratewarden/store/memory"
)

// prodStore is a memory store on a clock that stands still, and lim a limiter
// of one request a minute on it.
func prodStore() (*memory.Store, *core.Limiter) {
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	store, err := memory.New(memory.WithSweepInterval(0), memory.WithClock(clk))
	if err != nil {
		panic(err)
	}
	lim, err := core.NewLimiter(store, core.GCRA, core.PerMinute(1), core.WithClock(clk))
	if err != nil {
		panic(err)
	}
	return store, lim
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "hello") })

// authenticate stands for real authentication: it stores the X-User header's
// value as the user.
func authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("X-User"); id != "" {
			r = r.WithContext(context.WithValue(r.Context(), userKey{}, id))
		}
		next.ServeHTTP(w, r)
	})
}

// Key by the signed-in user.
func ExampleNew_signedInUser() {
	_, lim := prodStore()
	app := hello
	user, err := keyfuncs.ContextValue(userKey{}) // what auth stored: context.WithValue(r.Context(), userKey{}, id)
	if err != nil {
		log.Fatal(err)
	}
	mw, err := stdhttp.New(lim, httplimit.WithKey(user))
	if err != nil {
		log.Fatal(err)
	}
	handler := authenticate(mw(app)) // authenticate runs first and stores the user

	skipAdmins := httplimit.WithSkip(func(r keyfuncs.Request) bool {
		req, ok := stdhttp.Native(r) // ginmw.Native(r) gives the *gin.Context, and so on
		return ok && req.Context().Value(roleKey{}) == "admin"
	})
	_, err = stdhttp.New(lim, skipAdmins)

	send(handler, "X-User", "alice")
	send(handler, "X-User", "alice")
	send(handler, "X-User", "bob")
	fmt.Println(err)
	// Output:
	// 200 hello
	// 429 Too Many Requests
	// 200 hello
	// <nil>
}

// Behind nginx on a unix socket: the socket is a trusted proxy, so the
// forwarded client IP is the key.
func ExampleNew_unixSocket() {
	_, lim := prodStore()
	ip, err := keyfuncs.IP(keyfuncs.WithTrustedProxies("unix", "10.0.0.0/8")) // "unix" is keyfuncs.TrustUnixSocket
	if err != nil {
		log.Fatal(err)
	}
	mw, err := stdhttp.New(lim, httplimit.WithKey(ip))
	if err != nil {
		log.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.RemoteAddr = "@" // what net/http reports for a unix-socket peer
		mw(hello).ServeHTTP(w, r)
	})
	send(h, "X-Forwarded-For", "203.0.113.7")
	send(h, "X-Forwarded-For", "203.0.113.7")
	send(h, "X-Forwarded-For", "198.51.100.9")
	// Output:
	// 200 hello
	// 429 Too Many Requests
	// 200 hello
}

// Tiers picked by a JWT claim: a paid token gets the paid tier, a token
// without a plan the free one.
func ExampleNew_tiers() {
	clk := core.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	store, err := memory.New(memory.WithSweepInterval(0), memory.WithClock(clk))
	if err != nil {
		log.Fatal(err)
	}
	secret := []byte("an HMAC secret of at least 32 bytes!")
	user, err := jwtkey.Subject(jwtkey.WithHMACSecret(secret))
	if err != nil {
		log.Fatal(err)
	}
	free, err := core.NewLimiter(store, core.GCRA, core.PerSecond(10).Named("free"))
	if err != nil {
		log.Fatal(err)
	}
	paid, err := free.Tier("paid", core.PerSecond(100))
	if err != nil {
		log.Fatal(err)
	}
	plan, err := jwtkey.Subject(jwtkey.WithHMACSecret(secret), jwtkey.WithClaim("plan")) // or keyfuncs.Header("X-Plan"), keyfuncs.ContextValue("plan")
	if err != nil {
		log.Fatal(err)
	}
	mw, err := stdhttp.New(free, httplimit.WithKey(user), httplimit.WithTiers(plan, paid))
	if err != nil {
		log.Fatal(err)
	}
	for _, claims := range []gojwt.MapClaims{{"sub": "ann", "plan": "paid"}, {"sub": "bob"}} {
		token, _ := gojwt.NewWithClaims(gojwt.SigningMethodHS256, claims).SignedString(secret)
		rec := record(mw(hello), "Authorization", "Bearer "+token)
		fmt.Println(claims["sub"], rec.Code, rec.Header().Get("RateLimit-Policy"))
	}
	// Output:
	// ann 200 "paid";q=100;w=1
	// bob 200 "free";q=10;w=1
}

// An observer that logs failures to open.
func ExampleNew_observer() {
	lim, err := core.NewLimiter(down{}, core.GCRA, core.PerSecond(10))
	if err != nil {
		log.Fatal(err)
	}
	log.SetFlags(0)
	log.SetOutput(stdout{})
	defer func() { log.SetFlags(log.LstdFlags); log.SetOutput(os.Stderr) }()
	seen := httplimit.ObserverFunc(func(e httplimit.Event) {
		if e.Outcome == httplimit.OutcomeFailedOpen {
			log.Printf("rate limiter failed open under %s after %s: %v", e.Policy, e.StoreLatency.Round(time.Millisecond), e.Err)
		}
	})
	mw, err := stdhttp.New(lim, httplimit.WithObserver(seen))
	if err != nil {
		log.Fatal(err)
	}
	send(mw(hello))
	// Output:
	// rate limiter failed open under default after 0s: connection refused
	// ERROR ratewarden: rate limiter failed; requests pass unlimited (fail open) policy=default err="connection refused" suppressed=0
	// 200 hello
}

// Reset and peek on the limiter, and reset under every tier through the
// policy.
func ExampleMiddleware() {
	_, free := prodStore()
	ctx := context.Background()
	paid, err := free.Tier("paid", core.PerSecond(100))
	if err != nil {
		log.Fatal(err)
	}
	plan, err := keyfuncs.Header("X-Plan")
	if err != nil {
		log.Fatal(err)
	}
	_, _ = free.Allow(ctx, "203.0.113.7")
	_, _ = paid.Allow(ctx, "user-42")

	lim := free
	if err := lim.Reset(ctx, "203.0.113.7"); err != nil { // the key exactly as the key function made it
		log.Fatal(err)
	}
	d, err := lim.Peek(ctx, "203.0.113.7") // what it may spend now, spending nothing
	fmt.Println(d.Remaining, err)

	p, err := httplimit.New(free, httplimit.WithTiers(plan, paid))
	if err != nil {
		log.Fatal(err)
	}
	mw, err := stdhttp.Middleware(p) // ginmw.Middleware(p), and so on
	if err != nil {
		log.Fatal(err)
	}
	err = p.Reset(ctx, "user-42") // under free and paid
	d, _ = paid.Peek(ctx, "user-42")
	fmt.Println(d.Remaining, err, mw != nil)
	// Output:
	// 1 <nil>
	// 100 <nil> true
}

// Count only failures, and a 429 body with one field changed.
func ExampleNew_refundAndResponder() {
	_, lim := prodStore()
	mw, err := stdhttp.New(lim, httplimit.WithRefund(func(status int) bool { return status < 400 })) // 5 failed logins a minute, any number of successes
	if err != nil {
		log.Fatal(err)
	}
	send(mw(hello))
	send(mw(hello))

	mw, err = stdhttp.New(lim, httplimit.WithResponder(func(r keyfuncs.Request, d core.Decision) httplimit.Response {
		pd := httplimit.DeniedProblem(d)
		pd.Detail = "Upgrade to the paid plan for more."
		return pd.Response(r) // problem+json or plain text, as the client accepts
	}))
	if err != nil {
		log.Fatal(err)
	}
	send(mw(hello))
	send(mw(hello), "Accept", "application/json")
	// Output:
	// 200 hello
	// 200 hello
	// 200 hello
	// 429 {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,"detail":"Upgrade to the paid plan for more.","violated-policies":["default"]}
}

// record serves GET / from 192.0.2.1 with header pairs kv and returns the
// recorded response.
func record(h http.Handler, kv ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = "192.0.2.1:1234"
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// stdout is an io.Writer to os.Stdout that the log package can use in an
// Example (whose output is checked).
type stdout struct{}

func (stdout) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
