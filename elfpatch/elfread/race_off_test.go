//go:build !race

package elfread

// raceEnabled says the tests run under the race detector, whose
// instrumentation makes allocations larger than a plain build's.
const raceEnabled = false
