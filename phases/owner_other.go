//go:build !linux

package phases

import "errors"

// processStart is unknown here: liveness falls back to the heartbeat.
func processStart(pid int) (string, error) { return "", errors.New("no process table to read") }

// signalStop cannot reach another process here: the stop goes through the
// run's row.
func signalStop(o Owner) error { return errors.New("no signals to send here") }
