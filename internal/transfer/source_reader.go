package transfer

import (
	"io"
	"time"
)

// Reader returns a reader of the pinned file's bytes, from the start to
// the size it had when opened. It reads through the Source's descriptor;
// the Source must stay open while it is used.
func (s *Source) Reader() *io.SectionReader { return io.NewSectionReader(s.file, 0, s.info.Size()) }

// ModTime returns the modification time the file had when opened.
func (s *Source) ModTime() time.Time { return s.info.ModTime() }
