// Package edit is fsplane's pure edit engine: text in, text out, no I/O.
//
// It implements the operations every fsplane front shares:
//
//   - Replace: old text → new text, located by a ladder of matchers
//     (exact, line-ending-normalised, trailing-whitespace-insensitive,
//     trimmed, indentation-normalised, typographic-punctuation-normalised).
//     The first tier that finds any match decides; several matches in
//     unique mode is an ambiguous_match error, none is no_match with a hint
//     that names the difference (line endings, blank space, tabs for
//     spaces) and, under Strict, the tier that would match; ReplaceOptions
//     Names words it in the caller's parameter names.
//   - EditLines: edits by 1-based line ranges, all referring to the
//     original text, applied together or not at all.
//   - Insert after a line, and View with cat -n numbering.
//
// Line endings (LF, CRLF, lone CR) and a UTF-8 byte order mark survive
// every operation: matching may normalise, but writing never does; the
// replacement is converted to the line ending of the span it replaces.
//
// Functions here never modify their inputs and are safe for concurrent use.
// Content is []byte because files can be large (a 100 MB file is a normal
// input); needles and replacements are strings. Errors are *Error with a
// stable Code; when an error is returned nothing has changed.
package edit
