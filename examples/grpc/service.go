package main

import (
	"context"
	"errors"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// maxPayload bounds the payloads a request may ask for (response_size), so
// that no call can make the server allocate without limit.
const maxPayload = 64 << 10

// testService is grpc.testing.TestService with trivial behaviour: what the
// limiter is tried on. UnaryCall and CacheableUnaryCall answer with the status
// their request's response_status asks for (the failures
// -count-only-failures counts) and a payload of response_size zero bytes;
// StreamingInputCall adds up the payloads it receives; StreamingOutputCall
// sends one response per response parameter; FullDuplexCall answers each
// request as it comes. HalfDuplexCall, which would buffer a whole stream, and
// UnimplementedCall are Unimplemented.
type testService struct {
	testgrpc.UnimplementedTestServiceServer
}

func (testService) EmptyCall(context.Context, *testgrpc.Empty) (*testgrpc.Empty, error) {
	return &testgrpc.Empty{}, nil
}

func (testService) UnaryCall(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	if err := askedStatus(req.GetResponseStatus()); err != nil {
		return nil, err
	}
	payload, err := newPayload(req.GetResponseSize())
	if err != nil {
		return nil, err
	}
	return &testgrpc.SimpleResponse{Payload: payload}, nil
}

func (s testService) CacheableUnaryCall(ctx context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return s.UnaryCall(ctx, req)
}

func (testService) StreamingInputCall(stream grpc.ClientStreamingServer[testgrpc.StreamingInputCallRequest, testgrpc.StreamingInputCallResponse]) error {
	var total int32
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return stream.SendAndClose(&testgrpc.StreamingInputCallResponse{AggregatedPayloadSize: total})
		}
		if err != nil {
			return err
		}
		total += int32(len(req.GetPayload().GetBody()))
	}
}

func (testService) StreamingOutputCall(req *testgrpc.StreamingOutputCallRequest, stream grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error {
	if err := askedStatus(req.GetResponseStatus()); err != nil {
		return err
	}
	return sendResponses(stream, req.GetResponseParameters())
}

func (testService) FullDuplexCall(stream grpc.BidiStreamingServer[testgrpc.StreamingOutputCallRequest, testgrpc.StreamingOutputCallResponse]) error {
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := askedStatus(req.GetResponseStatus()); err != nil {
			return err
		}
		params := req.GetResponseParameters()
		if len(params) == 0 {
			params = []*testgrpc.ResponseParameters{{}}
		}
		if err := sendResponses(stream, params); err != nil {
			return err
		}
	}
}

// sendResponses sends one response per parameter, with a payload of its
// size.
func sendResponses(stream grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse], params []*testgrpc.ResponseParameters) error {
	for _, p := range params {
		payload, err := newPayload(p.GetSize())
		if err != nil {
			return err
		}
		if err := stream.Send(&testgrpc.StreamingOutputCallResponse{Payload: payload}); err != nil {
			return err
		}
	}
	return nil
}

// askedStatus is the status a request's response_status asks for: nil for
// none or OK.
func askedStatus(s *testgrpc.EchoStatus) error {
	if s.GetCode() == 0 {
		return nil
	}
	return status.Error(codes.Code(s.GetCode()), s.GetMessage())
}

// newPayload returns a payload of size zero bytes, at most maxPayload.
func newPayload(size int32) (*testgrpc.Payload, error) {
	if size < 0 || size > maxPayload {
		return nil, status.Errorf(codes.InvalidArgument, "a payload of %d bytes: want 0 to %d", size, maxPayload)
	}
	return &testgrpc.Payload{Body: make([]byte, size)}, nil
}
