package store

import "context"

// noticeKey is the key of the function that a context carries for store's
// notices (WithNotice).
type noticeKey struct{}

// WithNotice returns a context under which store tells notice what the
// user should know while it works and what it returns would not say: a
// write that has waited LockNotice for another writer's lock, and whose
// it is (issue 23 item 22: a writer waited without a word); a copy that
// a killed dry run left behind, removed by the next one. store writes
// nowhere itself; each face says where its notices go (the command line's
// stderr, the desktop's log), as net/http/httptrace's hooks ride a
// request's context. Without one, nothing is told and nothing waits to
// tell it.
func WithNotice(ctx context.Context, notice func(msg string)) context.Context {
	return context.WithValue(ctx, noticeKey{}, notice)
}

// noticeOf is the function ctx carries for store's notices, or nil.
func noticeOf(ctx context.Context) func(string) {
	f, _ := ctx.Value(noticeKey{}).(func(string))
	return f
}
