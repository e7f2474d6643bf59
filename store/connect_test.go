package store

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// issue 23 item 22: a --db naming a server that accepts a connection and
// never answers (a port forwarded to nothing) waited forever. Every open
// of a postgres:// address gives up after ConnectTimeout, unless the
// address says otherwise, saying what happened and what to do.
func TestAServerThatNeverAnswersIsGivenUpOn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // accepted, and never a word
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	addr := "postgres://crm@" + ln.Addr().String() + "/crm?search_path=acme"

	for _, open := range []struct {
		name string
		f    func(context.Context, string) error
	}{
		{"Open", func(ctx context.Context, a string) error { _, err := Open(ctx, a); return err }},
		{"OpenReader", func(ctx context.Context, a string) error { _, err := OpenReader(ctx, a); return err }},
		{"LedgerOnly", func(ctx context.Context, a string) error { _, err := LedgerOnly(ctx, a); return err }},
	} {
		t.Run(open.name, func(t *testing.T) {
			t.Parallel()
			done := make(chan error, 1)
			start := time.Now()
			go func() { done <- open.f(context.Background(), addr) }()
			select {
			case err := <-done:
				took := time.Since(start)
				require.Error(t, err)
				require.GreaterOrEqual(t, took, ConnectTimeout-time.Second, "it waited for the timeout: %v", err)
				require.ErrorContains(t, err, "the server did not answer within 10s")
				require.ErrorContains(t, err, "connect_timeout=SECONDS")
				require.ErrorContains(t, err, ln.Addr().String(), "the message names the server")
			case <-time.After(ConnectTimeout + 15*time.Second):
				t.Fatalf("%s of a server that never answers still waits after %v: no connect timeout", open.name, time.Since(start))
			}
		})
	}

	// The address's own connect_timeout holds.
	start := time.Now()
	_, err = OpenExisting(context.Background(), addr+"&connect_timeout=1")
	require.ErrorContains(t, err, "did not answer within 1s")
	require.Less(t, time.Since(start), 5*time.Second)
}
