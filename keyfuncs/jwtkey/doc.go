// Package jwtkey keys requests by a claim of the JSON Web Token they carry in
// "Authorization: Bearer <token>": [Subject] verifies the token (signature,
// algorithm, exp, nbf, and iss and aud when asked) through
// github.com/golang-jwt/jwt/v5 and keys by its "sub" claim or another;
// [SubjectUnverified] is for apps behind a gateway that has verified it
// already, and says so in its name.
//
// Two keys meet here, and the names keep them apart: the rate-limit key is
// what Subject returns (a claim's value), while the options that check the
// signature say what they hold (WithHMACSecret, With...PublicKey,
// WithVerificationKeyLookup).
//
// It is a package of its own so that only the applications that key by JWT
// link golang-jwt: package keyfuncs and the adapters do not import it.
//
// A missing, malformed, unverifiable or expired token is a key error wrapping
// keyfuncs.ErrKey: the HTTP policy answers it with its key-error response
// (401 by default) and never lets the request through unlimited.
package jwtkey
