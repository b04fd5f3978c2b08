package grpcmw

import (
	"context"

	"google.golang.org/grpc"
)

// limitedStream is the ServerStream a stream's handler gets when it needs
// more than the server's: the context the policy handed on
// (httplimit.WithDecisionInContext), and, under WithMessages, a decision on
// each message it receives.
type limitedStream struct {
	grpc.ServerStream
	ctx    context.Context // the handler's: the Pass's
	base   context.Context // the call's, which message decisions run on
	method string
	i      *Interceptor
	ended  error // the denial that ended the stream, returned ever after
}

// Context returns the context the policy handed on.
func (s *limitedStream) Context() context.Context { return s.ctx }

// RecvMsg receives a message and, under WithMessages, has the policy decide
// it: a message it does not admit ends the stream (see WithMessages).
func (s *limitedStream) RecvMsg(m any) error {
	if s.ended != nil {
		return s.ended
	}
	if err := s.ServerStream.RecvMsg(m); err != nil || !s.i.messages {
		return err
	}
	c := newCall(s.base, s.method)
	c.msg, c.hasMsg = m, true
	pass, ok := s.i.h.Handle(s.base, c, c)
	// The Pass is dropped: a message's cost is never given back (see
	// WithMessages), and its context is the call's; a message runs no
	// handler, so an in-flight slot it took is given back at once.
	pass.Release()
	if !ok {
		if c.status != 0 || c.decided && !c.decision.Allowed {
			s.ended = c.answer()
		} else {
			s.ended = gone(s.base)
		}
		if md := c.headerMD(); md != nil {
			s.ServerStream.SetTrailer(md) // the header may be sent already
		}
	}
	c.release()
	return s.ended
}

// SendMsg sends m, unless a message's denial ended the stream.
func (s *limitedStream) SendMsg(m any) error {
	if s.ended != nil {
		return s.ended
	}
	return s.ServerStream.SendMsg(m)
}
