package fiber3mw

// ResponseHeader returns the response header name as the handler set it, ""
// when it set none (httplimit.ResponseHeaderReader): a policy that settles
// a request's cost from a response header (httplimit.WithSettleHeader) reads
// it here, from fasthttp's response, when the handler has returned.
func (v request[C]) ResponseHeader(name string) string {
	return string(v.c.Response().Header.Peek(name))
}
