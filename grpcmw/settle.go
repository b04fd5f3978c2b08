package grpcmw

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// A policy that settles a call's cost from its response
// (httplimit.WithSettleHeader, WithSettle) reads the metadata the handler
// set: the trailer's value when it set one (a cost known once the answer is
// done, as an LLM's tokens), else the header's. The interceptor records
// them only for a call whose policy settles (Pass.WantsStatus): the
// handler's grpc.SetHeader, grpc.SendHeader and grpc.SetTrailer, or the
// stream's SetHeader, SendHeader and SetTrailer, reach the transport as
// before, and are seen on the way.

// sentMD holds the metadata a handler set, as it set it.
type sentMD struct {
	mu              sync.Mutex
	header, trailer metadata.MD
}

// add records md into *dst.
func (s *sentMD) add(dst *metadata.MD, md metadata.MD) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*dst = metadata.Join(*dst, md)
}

// get returns name's last trailer value, else its last header value.
func (s *sentMD) get(name string) string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, md := range []metadata.MD{s.trailer, s.header} {
		if v := md.Get(name); len(v) > 0 {
			return v[len(v)-1]
		}
	}
	return ""
}

// recordingTransport is a unary call's transport stream that records the
// metadata its handler sets.
type recordingTransport struct {
	grpc.ServerTransportStream
	sent *sentMD
}

func (r *recordingTransport) SetHeader(md metadata.MD) error {
	r.sent.add(&r.sent.header, md)
	return r.ServerTransportStream.SetHeader(md)
}

func (r *recordingTransport) SendHeader(md metadata.MD) error {
	r.sent.add(&r.sent.header, md)
	return r.ServerTransportStream.SendHeader(md)
}

func (r *recordingTransport) SetTrailer(md metadata.MD) error {
	r.sent.add(&r.sent.trailer, md)
	return r.ServerTransportStream.SetTrailer(md)
}

// recordUnary returns ctx whose transport stream records what the handler
// sets, and the record; ctx itself and nil when it has no transport stream.
func recordUnary(ctx context.Context) (context.Context, *sentMD) {
	ts := grpc.ServerTransportStreamFromContext(ctx)
	if ts == nil {
		return ctx, nil
	}
	sent := &sentMD{}
	return grpc.NewContextWithServerTransportStream(ctx, &recordingTransport{ServerTransportStream: ts, sent: sent}), sent
}

// recordingStream is a stream that records the metadata its handler sets.
type recordingStream struct {
	grpc.ServerStream
	sent *sentMD
}

func (r *recordingStream) SetHeader(md metadata.MD) error {
	r.sent.add(&r.sent.header, md)
	return r.ServerStream.SetHeader(md)
}

func (r *recordingStream) SendHeader(md metadata.MD) error {
	r.sent.add(&r.sent.header, md)
	return r.ServerStream.SendHeader(md)
}

func (r *recordingStream) SetTrailer(md metadata.MD) {
	r.sent.add(&r.sent.trailer, md)
	r.ServerStream.SetTrailer(md)
}

// settleWriter is the writer a settle rewrites the rate-limit fields on
// (the call's), reading the metadata the handler set
// (httplimit.ResponseHeaderReader).
type settleWriter struct {
	*call
	sent *sentMD
}

// ResponseHeader returns the metadata value name the handler set: its
// trailer's, else its header's; "" when none.
func (w settleWriter) ResponseHeader(name string) string { return w.sent.get(name) }
