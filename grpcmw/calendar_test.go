package grpcmw_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ratewarden/ratewarden/core"
	"github.com/ratewarden/ratewarden/grpcmw"
)

// A calendar quota's denial says the quota as its text ("1/month in ...")
// rather than its nominal Period, and waits exactly to the month's end.
func TestCalendarQuotaDenial(t *testing.T) {
	clk := core.NewManualClock(time.Date(2026, 2, 27, 12, 0, 0, 0, time.UTC))
	lim := newLimiter(t, clk, core.FixedWindow, core.Monthly(1).In("Europe/Berlin"))
	ic, err := grpcmw.New(lim)
	require.NoError(t, err)
	h := start(t, ic)

	require.NoError(t, h.unary(codes.OK, peerA).err)
	r := h.unary(codes.OK, peerA)
	require.Equal(t, codes.ResourceExhausted, status.Code(r.err))
	ri, qf := details(t, r.err)
	require.NotNil(t, qf, "QuotaFailure")
	desc := qf.GetViolations()[0].GetDescription()
	assert.Equal(t, "quota of "+core.Monthly(1).In("Europe/Berlin").String()+" exceeded", desc)
	assert.NotContains(t, desc, "720h", "a month is not its nominal Period")
	// March 1st, 00:00 in Berlin is February 28th, 23:00 UTC.
	assert.Equal(t, 35*time.Hour, ri.GetRetryDelay().AsDuration())
}
