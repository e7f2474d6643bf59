package failpoint

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/ledger"
)

func TestParse(t *testing.T) {
	t.Parallel()
	s, err := Parse(" batch:contacts:2=error, batch:deal:3=exit,commit:activities:1=error, plan=sleep:5ms ,finalize=error,phase:3=exit", canon.ParseKind)
	require.NoError(t, err)
	require.Equal(t, &Error{Point: "batch:contact:2"}, s.Hit(Batch(ledger.Contact, 2)))
	require.NoError(t, s.Hit(Batch(ledger.Contact, 1)))
	require.NoError(t, s.Hit(Batch(ledger.Deal, 2)))
	require.Equal(t, &Error{Point: "commit:activity:1"}, s.Hit(Commit(ledger.Activity, 1)))
	require.NoError(t, s.Hit("plan"))
	require.Error(t, s.Hit("finalize"))

	none, err := Parse("  ", canon.ParseKind)
	require.NoError(t, err)
	require.Nil(t, none)
	require.NoError(t, none.Hit("plan"), "a nil set does nothing")
}

func TestParseRefusesUnknown(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]string{
		"batch:ticket:1=error":   `unknown kind "ticket"`,
		"batch:contact:x=error":  "batch number",
		"batch:contact:0=error":  "batch number",
		"bath:contact:1=error":   "unknown point",
		"batch:contact:1=boom":   `unknown action "boom"`,
		"batch:contact:1":        "is not POINT=ACTION",
		"plan=sleep:soon":        "bad sleep duration",
		"phase:0=exit":           "phase must be",
		"finalize=exit,nope=err": `unknown point "nope"`,
	} {
		_, err := Parse(spec, canon.ParseKind)
		require.ErrorContains(t, err, want, spec)
		require.ErrorContains(t, err, Env, spec)
	}
}

// TestPauseAndFault: at a batch point a sleep happens before the batch's
// transaction (Pause) and an error in its middle (Fault); neither runs the
// other's action.
func TestPauseAndFault(t *testing.T) {
	t.Parallel()
	s, err := Parse("batch:contact:1=sleep:30ms,batch:contact:2=error", canon.ParseKind)
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, s.Fault(Batch(ledger.Contact, 1)), "Fault does not sleep")
	require.Less(t, time.Since(start), 30*time.Millisecond)
	s.Pause(Batch(ledger.Contact, 1))
	require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
	s.Pause(Batch(ledger.Contact, 2)) // not a sleep: returns at once
	require.Equal(t, &Error{Point: "batch:contact:2"}, s.Fault(Batch(ledger.Contact, 2)))
	var none *Set
	none.Pause("plan")
	require.NoError(t, none.Fault("plan"))
}
