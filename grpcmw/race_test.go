//go:build race

package grpcmw_test

// raceEnabled reports a build with the race detector, which slows the
// longest tests tenfold.
const raceEnabled = true
