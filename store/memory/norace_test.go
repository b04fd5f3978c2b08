//go:build !race

package memory_test

// raceEnabled reports that the race detector is on, which makes a flood of
// keys about thirty times slower.
const raceEnabled = false
