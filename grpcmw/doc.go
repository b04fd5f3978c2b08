// Package grpcmw is ratewarden's interceptors for gRPC servers.
package grpcmw
