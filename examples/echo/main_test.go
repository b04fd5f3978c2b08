package main

import (
	"testing"

	"github.com/ratewarden/ratewarden/examples/internal/servertest"
)

// start serves the Echo main serves on a loopback listener.
var start = servertest.ServeHandler(newEcho)

func TestClassic(t *testing.T)   { servertest.Classic(t, start) }
func TestCalendar(t *testing.T)  { servertest.Calendar(t, start) }
func TestRulesMode(t *testing.T) { servertest.RulesMode(t, start) }
func TestSettle(t *testing.T)    { servertest.Settle(t, start) }
func TestInFlight(t *testing.T)  { servertest.InFlight(t, start) }
func TestPenalty(t *testing.T)   { servertest.Penalty(t, start) }
