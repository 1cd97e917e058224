// Package transfer moves whole files and directory trees as streams:
// downloads served by http.ServeContent on the raw *os.File (so the
// kernel's sendfile path is taken), upload forms read part by part, and
// directory trees as tar archives, out and in, with limits.
//
// Writing is not done here: uploads and extracted trees go to disk
// through internal/workspace (WriteStream, CreateTree), the only writer,
// with its confinement to the roots. This package parses and checks what
// arrives (form fields, tar headers, member names, link targets, sizes
// and counts) and decides what the client sees.
package transfer
