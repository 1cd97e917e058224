// Package ops is fsplane's single operation layer. Every front (HTTP, MCP,
// the connector host, the CLI) is a thin adapter over an *Engine: one
// method per operation, a typed request and result each, so an edit means
// the same thing everywhere.
//
// Ops combines the pure engine (edit, edit/patch) with the workspace (the
// only writer) and adds what neither has: freshness. Stateless fronts pass
// ExpectedVersion; stateful fronts pass a Caller, and the engine keeps, per
// caller and file, the version that caller last saw (see Tracker). An
// Engine is safe for concurrent use.
//
// Errors are *fserr.Error with stable codes; fronts map them in one table
// each.
package ops
