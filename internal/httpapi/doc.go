// Package httpapi is fsplane's HTTP front: AIO Sandbox's file API (v1 and
// v2, same paths, fields, envelope, statuses and limits) plus fsplane's
// extensions (versions, tolerant edits, patches, undo). It is a thin
// adapter: handlers decode and validate a request, call one internal/ops
// method, and encode the result; they never touch the file system.
//
// Every JSON route answers with AIO's envelope {success, message, data,
// hint}. Failures carry AIO's structured file error in data; errors.go holds
// the one table that maps fsplane's error codes to HTTP statuses. Schema
// failures are 422 with an errors list. v1 answers expected file failures
// with 200 and success:false, as AIO does.
//
// Before authentication, a guard (browserGuard, auth.go) refuses requests
// made by web pages and, without an API key, requests addressed to a name
// other than localhost, an IP address or an allowed host: a loopback
// server is reachable from any page the user opens, by simple requests
// and by DNS rebinding.
//
// Request bodies are decoded stricter than encoding/json alone: keys that
// match a field only when case is ignored, invalid UTF-8 and unpaired
// surrogate escapes are refused rather than resolved or replaced silently.
//
// Routes are registered through Server.handle only, which records them;
// the OpenAPI document is built from the same records and a test checks
// that both agree with what the server actually serves.
package httpapi
