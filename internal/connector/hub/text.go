package hub

import "github.com/fsplane/fsplane/internal/jsonx"

// text is a string field decoded by jsonx.Unquote. The results of the operations
// agents call most (read) carry file text: a line break every few dozen
// bytes, each escaped in JSON. segmentio/encoding re-encodes an escaped
// string rune by rune (about 20 µs for 4 KiB of source) where Unquote
// copies the runs between escapes.
type text string

// UnmarshalJSON leaves t as it is for null, as encoding/json does for a
// string (and asks of every Unmarshaler).
func (t *text) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	s, err := jsonx.Unquote(b)
	if err != nil {
		return err
	}
	*t = text(s)
	return nil
}
