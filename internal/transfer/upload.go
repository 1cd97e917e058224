package transfer

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
)

// FormError is a malformed upload form: AIO answers it with 422 and the
// field's location.
type FormError struct {
	Field   string // "file", "path" or "" for the body as a whole
	Message string
	Missing bool // the field is absent (value_error.missing)
}

func (e *FormError) Error() string { return e.Message }

var bodyBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 1<<20) }}

// maxPathField bounds the path form field.
const maxPathField = 8 << 10

// ReadUpload reads a multipart/form-data upload as a stream: it collects
// the path field, hands the first file part to store together with the
// target path and the part's file name, and reads the rest of the form
// to its end. The file's bytes are never buffered here; store reads them.
//
// The target is the path field when it comes before the file part, else
// queryPath (the ?path= parameter). A file part with neither is a
// FormError naming path, so is a form without a file part (naming file)
// and a body that is not multipart/form-data. Errors from store are
// returned as they are.
func ReadUpload(r *http.Request, queryPath string, store func(path, filename string, file io.Reader) error) error {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return &FormError{Message: "expected a multipart/form-data body with the fields path and file"}
	}
	// multipart reads through a 4 KiB buffer of its own; a large one
	// under it turns 4 KiB read(2)s of the socket into 1 MiB ones.
	br := bodyBufs.Get().(*bufio.Reader)
	br.Reset(r.Body)
	defer func() {
		br.Reset(nil)
		bodyBufs.Put(br)
	}()
	mr := multipart.NewReader(br, params["boundary"])
	target, stored := queryPath, false
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			if stored {
				return nil // the file is in place; trailing garbage is not our concern
			}
			return &FormError{Message: fmt.Sprintf("malformed multipart body: %v", err)}
		}
		switch name := part.FormName(); {
		case name == "path" && !stored:
			b, err := io.ReadAll(io.LimitReader(part, maxPathField+1))
			if err != nil {
				return &FormError{Field: "path", Message: "could not read the path field"}
			}
			if len(b) > maxPathField {
				return &FormError{Field: "path", Message: fmt.Sprintf("the path field exceeds %d bytes", maxPathField)}
			}
			if p := strings.TrimSpace(string(b)); p != "" {
				target = p
			}
		case name == "file" && !stored:
			if target == "" {
				return &FormError{Field: "path", Missing: true,
					Message: "missing field `path`: send it before the `file` part, or pass ?path="}
			}
			if err := store(target, part.FileName(), part); err != nil {
				return err
			}
			stored = true
		}
		if err := drain(part); err != nil && !stored {
			return &FormError{Message: fmt.Sprintf("malformed multipart body: %v", err)}
		}
	}
	if !stored {
		return &FormError{Field: "file", Missing: true, Message: "missing field `file`"}
	}
	return nil
}

func drain(r io.Reader) error {
	_, err := io.Copy(io.Discard, r)
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
