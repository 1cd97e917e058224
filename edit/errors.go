package edit

import "fmt"

// Stable error codes returned by this package. They are the same strings as
// fsplane's internal error codes, so callers can map them in one table.
const (
	CodeBadRequest     = "bad_request"
	CodeNoMatch        = "no_match"
	CodeAmbiguousMatch = "ambiguous_match"
)

// Error is the error type of the edit and edit/patch packages. Nothing is
// ever changed when an Error is returned.
type Error struct {
	Code    string // a stable code: bad_request, no_match, ambiguous_match
	Message string // what went wrong, for a person or a model
	Hint    string // what to do instead; may be empty
	Lines   []int  // 1-based lines involved (the first maxReportedLines candidates of an ambiguous match; Message gives the count)
}

func (e *Error) Error() string { return e.Message }

// ErrorCode returns e.Code.
func (e *Error) ErrorCode() string { return e.Code }

// ErrorHint returns e.Hint.
func (e *Error) ErrorHint() string { return e.Hint }

// ErrorLines returns e.Lines.
func (e *Error) ErrorLines() []int { return e.Lines }

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
