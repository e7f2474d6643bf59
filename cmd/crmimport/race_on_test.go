//go:build race

package main

// raceDetector: these tests are built with -race (make race), whose shadow
// memory multiplies what a process holds: the memory bounds of the README
// are the program's as built without it (make test), and under the race
// detector a bound only catches a memory that grows without one (rssBound).
const raceDetector = true
