package grpcmw_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/grpcmw"
	"github.com/ratewarden/ratewarden/httplimit"
	"github.com/ratewarden/ratewarden/keyfuncs"
	"github.com/ratewarden/ratewarden/store/memory"
)

// discard is a logger that drops what the policy logs.
var discard = slog.New(slog.DiscardHandler)

// failingStore is a store that is down: every Take fails with err.
type failingStore struct{ err error }

func (s *failingStore) Take(context.Context, core.TakeRequest) (core.Decision, error) {
	return core.Decision{}, s.err
}

func TestAllowedAndDenied(t *testing.T) {
	clk := core.NewManualClock(t0)
	lim := newLimiter(t, clk, core.FixedWindow, core.PerMinute(2))
	ic, err := grpcmw.New(lim)
	require.NoError(t, err)
	h := start(t, ic)

	r := h.unary(codes.OK, peerA)
	require.NoError(t, r.err)
	assert.Equal(t, `"default";q=2;w=60`, r.field("ratelimit-policy"))
	assert.Equal(t, `"default";r=1;t=60`, r.field("ratelimit"))
	assert.Equal(t, "2", r.field("x-ratelimit-limit"))
	assert.Equal(t, "1", r.field("x-ratelimit-remaining"))
	assert.Equal(t, "60", r.field("x-ratelimit-reset"))
	assert.Empty(t, r.field("retry-after"), "an allowed call gets no retry-after")
	assert.Equal(t, []string{"application/grpc"}, r.header.Get("content-type"), "the policy's Content-Type is not sent")

	r = h.unary(codes.NotFound, peerA)
	assert.Equal(t, codes.NotFound, status.Code(r.err), "the handler's own status")
	assert.Equal(t, `"default";r=0;t=60`, r.field("ratelimit"), "fields are set before a handler that fails")

	clk.Advance(10*time.Second + 500*time.Millisecond)
	r = h.unary(codes.OK, peerA)
	assert.Equal(t, codes.ResourceExhausted, status.Code(r.err))
	assert.Equal(t, "50", r.field("retry-after"), "whole seconds, rounded up")
	assert.Equal(t, `"default";r=0;t=50`, r.field("ratelimit"))
	assert.Equal(t, `"default";q=2;w=60`, r.field("ratelimit-policy"))
	ri, qf := details(t, r.err)
	require.NotNil(t, ri, "RetryInfo")
	assert.Equal(t, 49*time.Second+500*time.Millisecond, ri.GetRetryDelay().AsDuration(), "the exact wait")
	require.NotNil(t, qf, "QuotaFailure")
	require.Len(t, qf.GetViolations(), 1)
	v := qf.GetViolations()[0]
	assert.Equal(t, "default", v.GetSubject(), "the policy's name, never the key")
	assert.Equal(t, "default", v.GetQuotaId())
	assert.Equal(t, int64(2), v.GetQuotaValue())
	assert.NotContains(t, v.GetDescription(), "192.0.2.1")
	assert.Equal(t, int64(2), h.srv.calls.Load(), "a denied call never reaches its handler")

	r = h.unary(codes.OK, peerB)
	assert.NoError(t, r.err, "another peer has its own budget")
}

func TestRetryInfoNeverRoundedDown(t *testing.T) {
	clk := core.NewManualClock(t0)
	lim := newLimiter(t, clk, core.GCRA, core.Every(1, 3*time.Second))
	ic, err := grpcmw.New(lim)
	require.NoError(t, err)
	h := start(t, ic)
	require.NoError(t, h.unary(codes.OK, peerA).err)
	clk.Advance(2999 * time.Millisecond)
	r := h.unary(codes.OK, peerA)
	require.Equal(t, codes.ResourceExhausted, status.Code(r.err))
	ri, _ := details(t, r.err)
	assert.Equal(t, time.Millisecond, ri.GetRetryDelay().AsDuration(), "1 ms, not 0")
	assert.Equal(t, "1", r.field("retry-after"))
}

func TestKeyErrors(t *testing.T) {
	clk := core.NewManualClock(t0)
	key, err := keyfuncs.Header("X-Api-Key")
	require.NoError(t, err)
	ic, err := grpcmw.New(newLimiter(t, clk, core.GCRA, core.PerMinute(5)), httplimit.WithKey(key))
	require.NoError(t, err)
	h := start(t, ic)

	r := h.unary(codes.OK, peerA)
	assert.Equal(t, codes.Unauthenticated, status.Code(r.err), "no key")
	assert.NotContains(t, status.Convert(r.err).Message(), "X-Api-Key", "no error text in the status")
	require.NoError(t, h.unary(codes.OK, peerA, "x-api-key", "k1").err)
	assert.Equal(t, int64(1), h.srv.calls.Load())

	ipic, err := grpcmw.New(newLimiter(t, clk, core.GCRA, core.PerMinute(5)), httplimit.WithLogger(discard))
	require.NoError(t, err)
	ip := start(t, ipic)
	for _, peerAddr := range []string{"", "@", "/run/app.sock"} { // bufconn's own peer, and unix sockets
		r := ip.unary(codes.OK, peerAddr)
		assert.Equal(t, codes.Internal, status.Code(r.err), "peer %q is not an IP: the server's configuration", peerAddr)
	}
}

func TestFailModes(t *testing.T) {
	down := &failingStore{err: errors.New("store down")}
	for _, tc := range []struct {
		name string
		opts []httplimit.Option
		code codes.Code
	}{
		{"fail open by default", nil, codes.OK},
		{"fail closed", []httplimit.Option{httplimit.WithFailClosed()}, codes.Unavailable},
		{"fail closed, a retry-after of its own", []httplimit.Option{httplimit.WithFailClosed(), httplimit.WithUnavailableRetryAfter(2500 * time.Millisecond)}, codes.Unavailable},
		{"a dry run fails open", []httplimit.Option{httplimit.WithFailClosed(), httplimit.WithDryRun()}, codes.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim, err := core.NewLimiter(down, core.GCRA, core.PerMinute(5))
			require.NoError(t, err)
			ic, err := grpcmw.New(lim, append(tc.opts, httplimit.WithStoreTimeout(time.Second), httplimit.WithLogger(discard))...)
			require.NoError(t, err)
			r := start(t, ic).unary(codes.OK, peerA)
			require.Equal(t, tc.code, status.Code(r.err))
			if tc.code == codes.OK {
				return
			}
			ri, qf := details(t, r.err)
			require.NotNil(t, ri)
			assert.Nil(t, qf, "no quota was exceeded")
			want := time.Second
			if len(tc.opts) > 1 {
				want = 3 * time.Second // the retry-after field's whole seconds
			}
			assert.Equal(t, want, ri.GetRetryDelay().AsDuration())
			assert.Equal(t, "ratewarden: rate limiting is unavailable", status.Convert(r.err).Message())
		})
	}
}

func TestStoreFull(t *testing.T) {
	clk := core.NewManualClock(t0)
	st, err := memory.New(memory.WithMaxKeys(1), memory.WithRefuseWhenFull(), memory.WithShards(1), memory.WithSweepInterval(0), memory.WithClock(clk))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lim, err := core.NewLimiter(st, core.GCRA, core.PerMinute(5), core.WithClock(clk))
	require.NoError(t, err)
	ic, err := grpcmw.New(lim, httplimit.WithLogger(discard))
	require.NoError(t, err)
	h := start(t, ic)
	require.NoError(t, h.unary(codes.OK, peerA).err)
	r := h.unary(codes.OK, peerB)
	assert.Equal(t, codes.Unavailable, status.Code(r.err), "a full store refuses a new key")
	ri, _ := details(t, r.err)
	require.NotNil(t, ri)
	assert.Equal(t, time.Second, ri.GetRetryDelay().AsDuration())
}

func TestDryRunNeverDenies(t *testing.T) {
	clk := core.NewManualClock(t0)
	ic, err := grpcmw.New(newLimiter(t, clk, core.FixedWindow, core.PerMinute(1)), httplimit.WithDryRun())
	require.NoError(t, err)
	h := start(t, ic)
	for range 3 {
		r := h.unary(codes.OK, peerA)
		require.NoError(t, r.err)
		assert.Equal(t, `"default";r=0;t=60`, r.field("ratelimit"), "the truth")
		assert.Empty(t, r.field("retry-after"))
	}
	assert.Equal(t, int64(3), h.srv.calls.Load())
}

func TestRefundCountsOnlyFailures(t *testing.T) {
	clk := core.NewManualClock(t0)
	var refunded []int
	ic, err := grpcmw.New(newLimiter(t, clk, core.FixedWindow, core.PerMinute(2)),
		httplimit.WithRefund(func(status int) bool {
			refunded = append(refunded, status)
			return status < 400
		}))
	require.NoError(t, err)
	h := start(t, ic)
	for range 5 {
		require.NoError(t, h.unary(codes.OK, peerA).err, "successes are given back")
	}
	assert.Equal(t, codes.PermissionDenied, status.Code(h.unary(codes.PermissionDenied, peerA).err))
	assert.Equal(t, codes.Internal, status.Code(h.unary(codes.Internal, peerA).err))
	assert.Equal(t, codes.ResourceExhausted, status.Code(h.unary(codes.OK, peerA).err), "two failures spent the quota")
	assert.Equal(t, []int{200, 200, 200, 200, 200, 403, 500}, refunded, "the predicate saw each code's HTTP status")
}

func TestDecisionInContext(t *testing.T) {
	clk := core.NewManualClock(t0)
	ic, err := grpcmw.New(newLimiter(t, clk, core.GCRA, core.PerMinute(5)), httplimit.WithDecisionInContext())
	require.NoError(t, err)
	h := start(t, ic)
	require.NoError(t, h.unary(codes.OK, peerA).err)
	d := h.srv.decision.Load()
	require.NotNil(t, d, "the handler read the decision")
	assert.Equal(t, int64(4), d.Remaining)

	stream, err := h.client.FullDuplexCall(outgoing(peerA))
	require.NoError(t, err)
	require.NoError(t, stream.CloseSend())
	_, err = stream.Recv()
	require.Error(t, err) // io.EOF: the stream ended
	assert.Equal(t, int64(3), h.srv.decision.Load().Remaining, "the stream's handler read it from its context")
}

func TestConstructors(t *testing.T) {
	clk := core.NewManualClock(t0)
	lim := newLimiter(t, clk, core.GCRA, core.PerMinute(5))
	var nilPolicy *httplimit.Policy
	for name, build := range map[string]func() (*grpcmw.Interceptor, error){
		"nil limiter":     func() (*grpcmw.Interceptor, error) { return grpcmw.New(nil) },
		"nil option":      func() (*grpcmw.Interceptor, error) { return grpcmw.New(lim, nil) },
		"bad option":      func() (*grpcmw.Interceptor, error) { return grpcmw.New(lim, httplimit.WithStoreTimeout(-1)) },
		"nil handler":     func() (*grpcmw.Interceptor, error) { return grpcmw.Middleware(nil) },
		"nil policy":      func() (*grpcmw.Interceptor, error) { return grpcmw.Middleware(nilPolicy) },
		"nil grpc option": func() (*grpcmw.Interceptor, error) { return grpcmw.Middleware(mustPolicy(t, lim), nil) },
	} {
		t.Run(name, func(t *testing.T) {
			ic, err := build()
			assert.Nil(t, ic)
			require.ErrorIs(t, err, core.ErrInvalidOption)
			assert.Contains(t, err.Error(), "grpcmw")
		})
	}
	for _, limit := range []string{"100/fortnight", "", "-1/s", "1/0s"} {
		v := func() (v any) {
			defer func() { v = recover() }()
			grpcmw.PerIP(limit)
			return nil
		}()
		assert.Contains(t, v, "PerIP", "PerIP(%q) panics, naming itself", limit)
	}
}

func mustPolicy(t *testing.T, lim *core.Limiter, opts ...httplimit.Option) *httplimit.Policy {
	t.Helper()
	p, err := httplimit.New(lim, opts...)
	require.NoError(t, err)
	return p
}

func TestCodes(t *testing.T) {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		s := grpcmw.HTTPStatus(c)
		assert.True(t, s >= 200 && s <= 599, "%s maps to a status", c)
		if c != codes.OK && c != codes.FailedPrecondition && c != codes.OutOfRange && c != codes.AlreadyExists && c != codes.Unknown && c != codes.DataLoss {
			assert.Equal(t, c, grpcmw.Code(s), "%s round-trips through %d", c, s)
		}
	}
	assert.Equal(t, 500, grpcmw.HTTPStatus(codes.Code(99)))
	assert.Equal(t, codes.FailedPrecondition, grpcmw.Code(418))
	assert.Equal(t, codes.Unknown, grpcmw.Code(302))
}

// slowStore never answers: it waits until the call's store deadline ends.
type slowStore struct{}

func (slowStore) Take(ctx context.Context, _ core.TakeRequest) (core.Decision, error) {
	<-ctx.Done()
	return core.Decision{}, ctx.Err()
}

func TestStoreTimeoutFailsClosed(t *testing.T) {
	lim, err := core.NewLimiter(slowStore{}, core.GCRA, core.PerMinute(5))
	require.NoError(t, err)
	ic, err := grpcmw.New(lim, httplimit.WithFailClosed(), httplimit.WithStoreTimeout(5*time.Millisecond), httplimit.WithLogger(discard))
	require.NoError(t, err)
	h := start(t, ic)
	r := h.unary(codes.OK, peerA)
	assert.Equal(t, codes.Unavailable, status.Code(r.err), "the store's deadline passed: fail closed")
	assert.Equal(t, "1", r.field("retry-after"))
	assert.Equal(t, int64(0), h.srv.calls.Load())
}

func TestTiersAndOverrides(t *testing.T) {
	clk := core.NewManualClock(t0)
	lim := newLimiter(t, clk, core.FixedWindow, core.PerMinute(1).Named("free"))
	paid, err := lim.Tier("paid", core.PerMinute(3))
	require.NoError(t, err)
	plan, err := keyfuncs.Header("x-plan")
	require.NoError(t, err)
	ic, err := grpcmw.New(lim, httplimit.WithTiers(plan, paid),
		httplimit.WithOverrides(map[string]httplimit.Override{"192.0.2.9": {Unlimited: true}}))
	require.NoError(t, err)
	h := start(t, ic)

	r := h.unary(codes.OK, peerA, "x-plan", "paid")
	require.NoError(t, r.err)
	assert.Equal(t, `"paid";q=3;w=60`, r.field("ratelimit-policy"))
	require.NoError(t, h.unary(codes.OK, peerB).err)
	r = h.unary(codes.OK, peerB)
	require.Equal(t, codes.ResourceExhausted, status.Code(r.err))
	_, qf := details(t, r.err)
	assert.Equal(t, "free", qf.GetViolations()[0].GetSubject(), "the tier that denied")
	for range 3 {
		r = h.unary(codes.OK, "192.0.2.9:1")
		require.NoError(t, r.err, "an unlimited key")
		assert.Empty(t, r.field("ratelimit-policy"))
	}
}

func TestDeniedHandlerAndResponders(t *testing.T) {
	clk := core.NewManualClock(t0)
	for _, tc := range []struct {
		name string
		opt  httplimit.Option
		code codes.Code
	}{
		{"a denied handler that writes nothing", httplimit.WithDeniedHandler(func(httplimit.ResponseWriter, keyfuncs.Request, core.Decision) {}), codes.ResourceExhausted},
		{"a denied handler's status", httplimit.WithDeniedHandler(func(w httplimit.ResponseWriter, _ keyfuncs.Request, _ core.Decision) {
			w.WriteHeader(503)
			_, _ = w.Write([]byte("never sent"))
		}), codes.Unavailable},
		{"a responder's status", httplimit.WithResponder(func(keyfuncs.Request, core.Decision) httplimit.Response {
			return httplimit.Response{Status: 403, Body: []byte("never sent")}
		}), codes.PermissionDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ic, err := grpcmw.New(newLimiter(t, clk, core.FixedWindow, core.PerMinute(1)), tc.opt)
			require.NoError(t, err)
			h := start(t, ic)
			require.NoError(t, h.unary(codes.OK, peerA).err)
			r := h.unary(codes.OK, peerA)
			require.Equal(t, tc.code, status.Code(r.err))
			assert.NotContains(t, status.Convert(r.err).Message(), "never sent")
			ri, qf := details(t, r.err)
			require.NotNil(t, ri, "a denial carries its details whatever the code")
			require.NotNil(t, qf)
			assert.Equal(t, "60", r.field("retry-after"))
		})
	}
	key, err := keyfuncs.Header("x-api-key")
	require.NoError(t, err)
	ic, err := grpcmw.New(newLimiter(t, clk, core.FixedWindow, core.PerMinute(1)), httplimit.WithKey(key),
		httplimit.WithKeyErrorResponder(func(keyfuncs.Request, error) httplimit.Response { return httplimit.Response{Status: 400} }))
	require.NoError(t, err)
	assert.Equal(t, codes.InvalidArgument, status.Code(start(t, ic).unary(codes.OK, peerA).err), "a key-error responder's status")
}
