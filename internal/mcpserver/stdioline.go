package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/fsplane/fsplane/internal/jsonx"
)

// The input side of StdioTransport: framing lines and deciding which ones
// the SDK may see.

const (
	idHead  = 4 << 10 // bytes of a too long line's start searched for its id
	idTail  = 64      // bytes of its end searched likewise
	keepBuf = 1 << 20 // a line buffer bigger than this is not kept for the next line
)

// lineReader frames its input into lines ending in '\n'. It holds at most
// maxLine+2 bytes of a line: a longer one is read and discarded up to its
// line break, keeping only its first idHead and last idTail bytes.
type lineReader struct {
	br      *bufio.Reader
	maxLine int
	buf     []byte // the current line, reused for the next
	tail    []byte // the last idTail bytes read of a too long line
}

// inputLine is one line of input.
type inputLine struct {
	// text is the line without its line break and without JSON white
	// space around it; nil when the line is over maxLine bytes.
	text []byte
	size int // the line's length, line break excluded
	// id is, for a line over maxLine bytes, the id of the request it
	// holds when its start or end shows it.
	id jsonrpc.ID
}

// next reads the next line. err is the read error that ended it, io.EOF
// for the last one (which need not end in a line break, and is empty when
// the input did); text is valid until the next call.
func (r *lineReader) next() (inputLine, error) {
	if cap(r.buf) > keepBuf {
		r.buf = nil
	}
	buf, size, long := r.buf[:0], 0, false
	var err error
	for {
		var chunk []byte
		chunk, err = r.br.ReadSlice('\n')
		size += len(chunk)
		switch {
		case long:
			r.keepTail(chunk)
		case len(buf)+len(chunk) <= r.maxLine+2: // 2: room for "\r\n"
			buf = append(buf, chunk...)
		default:
			long = true
			r.tail = r.tail[:0]
			r.keepTail(buf[max(0, len(buf)-idTail):])
			r.keepTail(chunk)
			buf = append(buf, chunk[:min(len(chunk), max(0, idHead-len(buf)))]...)
		}
		if err != bufio.ErrBufferFull {
			break
		}
	}
	r.buf = buf
	end := buf
	if long {
		end = r.tail
	}
	brk := 0 // bytes of the line break
	if bytes.HasSuffix(end, []byte("\n")) {
		brk = 1
		if bytes.HasSuffix(end[:len(end)-1], []byte("\r")) {
			brk = 2
		}
	}
	size -= brk
	if !long && size <= r.maxLine {
		return inputLine{text: bytes.Trim(buf[:size], jsonSpace), size: size}, err
	}
	var tail []byte
	if long {
		tail = r.tail[:len(r.tail)-brk]
	} else {
		tail = buf[max(0, size-idTail):size]
	}
	id := headID(buf[:min(len(buf), idHead)])
	if !id.IsValid() {
		id = tailID(tail)
	}
	return inputLine{size: size, id: id}, err
}

// jsonSpace is the white space JSON allows around values.
const jsonSpace = " \t\r\n"

// keepTail appends b to r.tail, keeping the last idTail bytes.
func (r *lineReader) keepTail(b []byte) {
	if len(b) >= idTail {
		r.tail = append(r.tail[:0], b[len(b)-idTail:]...)
		return
	}
	r.tail = append(r.tail, b...)
	if n := len(r.tail); n > idTail {
		r.tail = append(r.tail[:0], r.tail[n-idTail:]...)
	}
}

// headID reads the id of the JSON-RPC request whose line starts with
// head, when it comes before the first member head cuts off (as the Go
// and Python SDKs write requests: id before params).
func headID(head []byte) jsonrpc.ID {
	dec := json.NewDecoder(bytes.NewReader(head))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return jsonrpc.ID{}
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			break
		}
		if key == "id" {
			// A number the head cuts off decodes as a shorter one:
			// take the id only when something follows it in head.
			var v json.RawMessage
			if dec.Decode(&v) != nil || dec.InputOffset() >= int64(len(head)) {
				break
			}
			return idFrom(v)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	return jsonrpc.ID{}
}

// tailID reads the id of the JSON-RPC request whose line ends with tail,
// when the id is the top-level object's last member (as the TypeScript SDK
// writes requests: `...,"jsonrpc":"2.0","id":7}`). In JSON a quote inside
// a string is escaped, so `,"id":` (or `{"id":`) with unescaped quotes
// right before the closing brace is a top-level member.
func tailID(tail []byte) jsonrpc.ID {
	b := bytes.TrimRight(tail, jsonSpace)
	if !bytes.HasSuffix(b, []byte("}")) {
		return jsonrpc.ID{}
	}
	b = bytes.TrimRight(b[:len(b)-1], jsonSpace)
	start := len(bytes.TrimRight(b, "0123456789+-.eE")) // a number
	if bytes.HasSuffix(b, []byte(`"`)) {                // a string
		start = -1
		for i := len(b) - 2; i >= 0; i-- {
			if b[i] == '"' && (len(b[:i])-len(bytes.TrimRight(b[:i], `\`)))%2 == 0 {
				start = i
				break
			}
		}
	}
	if start < 0 || start == len(b) {
		return jsonrpc.ID{}
	}
	value, rest := b[start:], bytes.TrimRight(b[:start], jsonSpace)
	rest, ok := bytes.CutSuffix(rest, []byte(":"))
	if !ok {
		return jsonrpc.ID{}
	}
	rest, ok = bytes.CutSuffix(bytes.TrimRight(rest, jsonSpace), []byte(`"id"`))
	if rest = bytes.TrimRight(rest, jsonSpace); !ok || !(bytes.HasSuffix(rest, []byte(",")) || bytes.HasSuffix(rest, []byte("{"))) {
		return jsonrpc.ID{}
	}
	return idFrom(value)
}

// admit checks one input line (trimmed, not empty). It returns the line
// that answers it with a JSON-RPC error; or, when it may go to the SDK,
// no reply and the lines to hand it (nil: the line as it is), after
// registering the ids of the calls it holds as in flight. See
// StdioTransport for what is refused, and splitBatch for the lines a
// batch becomes.
func (c *stdioConn) admit(line []byte) (reply []byte, lines [][]byte) {
	if end, ok := jsonx.ScanValue(line, 0); !ok || end != len(line) {
		return errorLine(jsonrpc.ID{}, jsonrpc.CodeParseError,
			"Parse error: "+syntaxError(line)+"; send each JSON-RPC message as one JSON object on one line"), nil
	}
	msgs, raws, batch, err := decodeLine(line)
	if err != nil {
		var id jsonrpc.ID
		if !batch {
			id = peekID(line)
		}
		return errorLine(id, jsonrpc.CodeInvalidRequest, "Invalid request: "+err.Error()), nil
	}
	var calls, cancels []jsonrpc.ID
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		switch {
		case !ok:
		case req.IsCall():
			calls = append(calls, req.ID)
		case req.Method == "notifications/cancelled":
			if id := cancelledID(req.Params); id.IsValid() {
				cancels = append(cancels, id)
			}
		}
	}
	if off, what := jsonx.InvalidText(line); off >= 0 {
		msg := fmt.Sprintf("%s at byte offset %d of the message: JSON text must be valid UTF-8 "+
			"(decoding would replace it with U+FFFD), so the request was not run; send the text as UTF-8", what, off)
		if !batch && len(calls) == 1 {
			return errorLine(calls[0], jsonrpc.CodeInvalidParams, "Invalid params: "+msg), nil
		}
		return errorLine(jsonrpc.ID{}, jsonrpc.CodeParseError, "Parse error: "+msg), nil
	}
	if !c.register(calls) {
		return errorLine(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
			"Invalid request: the id is that of a call still in flight (or repeated in the batch); give each call its own id"), nil
	}
	for _, id := range cancels {
		c.cancel(id)
	}
	if !batch {
		return nil, nil
	}
	if len(calls) > 0 {
		c.batched.Store(true)
	}
	return nil, splitBatch(msgs, raws)
}

// splitBatch cuts a batch into the lines the SDK's transport can take:
// one batch of its calls alone, and each of its other members
// (notifications, responses to the server's requests) on a line of its
// own: those before the first call before the batch, the others after
// it (JSON-RPC lets a batch's members be processed in any order). The
// SDK's transport waits for an answer to every request of a batch,
// notifications included, before it writes the batch's answers: a batch
// holding a notification was never answered, and a second batch with a
// notification (whose missing id it takes for one already seen) ended the
// session.
func splitBatch(msgs []jsonrpc.Message, raws []json.RawMessage) [][]byte {
	var before, calls, after [][]byte
	for i, m := range msgs {
		switch req, ok := m.(*jsonrpc.Request); {
		case ok && req.IsCall():
			calls = append(calls, raws[i])
		case len(calls) == 0:
			before = append(before, raws[i])
		default:
			after = append(after, raws[i])
		}
	}
	if len(calls) == 0 {
		return before
	}
	batch := append([]byte{'['}, bytes.Join(calls, []byte{','})...)
	batch = append(batch, ']')
	return append(append(before, batch), after...)
}

// decodeLine decodes a line that is one JSON value as a JSON-RPC message
// or batch, as the SDK's transport will; raws are a batch's members.
func decodeLine(line []byte) (msgs []jsonrpc.Message, raws []json.RawMessage, batch bool, err error) {
	if line[0] != '[' {
		m, err := decodeMessage(line)
		return []jsonrpc.Message{m}, nil, false, err
	}
	if tooDeep(line, sdkMaxDepth) {
		return nil, nil, true, fmt.Errorf("the batch nests deeper than %d levels", sdkMaxDepth)
	}
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, nil, true, err
	}
	if len(raws) == 0 {
		return nil, nil, true, errors.New("empty batch")
	}
	for i, raw := range raws {
		m, err := decodeMessage(raw)
		if err != nil {
			return nil, nil, true, fmt.Errorf("batch member %d: %w", i, err)
		}
		msgs = append(msgs, m)
	}
	return msgs, raws, true, nil
}

// sdkMaxDepth is the deepest nesting of objects and arrays the SDK's JSON
// decoder accepts. jsonrpc.DecodeMessage checks it for a message; the
// SDK checks it for a batch as a whole too.
const sdkMaxDepth = 1000

// tooDeep reports whether the JSON value b nests objects and arrays
// deeper than limit.
func tooDeep(b []byte, limit int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = c == '\\'
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > limit {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// decodeMessage decodes one JSON value as a JSON-RPC message.
func decodeMessage(raw []byte) (jsonrpc.Message, error) {
	if !bytes.HasPrefix(bytes.TrimLeft(raw, jsonSpace), []byte("{")) {
		return nil, errors.New("a JSON-RPC message is a JSON object")
	}
	if err := checkID(raw); err != nil {
		return nil, err
	}
	return jsonrpc.DecodeMessage(raw)
}

// checkID refuses ids that JSON-RPC 2.0 permits and MCP does not, which
// the SDK would mishandle: null (the SDK takes the call for a
// notification, so it is neither run nor answered), a number it would
// answer as another (see numberIDError), and more than one "id" member
// (the SDK takes the last, which the others would have hidden from these
// checks: `"id":1,"id":null` went unanswered).
func checkID(msg []byte) error {
	var err error
	seen := false
	jsonx.Members(msg, func(key, value []byte) bool {
		if k, _ := jsonx.String(key); k != "id" {
			return true
		}
		if seen {
			err = errors.New(`the message has more than one "id" member: give it one`)
			return false
		}
		seen = true
		switch {
		case string(value) == "null":
			err = errors.New(`the id is null, which MCP does not allow: give a call a string or integer id (a notification has no "id" member)`)
		case value[0] == '-' || '0' <= value[0] && value[0] <= '9':
			err = numberIDError(value)
		}
		return err == nil
	})
	return err
}

// numberIDError refuses a numeric id (the JSON number lit) the SDK would
// answer as another: it reads ids as float64 and answers with that
// number's int64, so a fraction (1.5 → 1), an integer past 2^53 that a
// float64 does not hold exactly (2^53+1 → 2^53) and one outside int64
// (→ -2^63) would each come back as the id of another call, if any.
func numberIDError(lit []byte) error {
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return nil // not a number JSON can hold: the SDK refuses it
	}
	if f != math.Trunc(f) {
		return fmt.Errorf("the id %s is not an integer: give a call a string or integer id", lit)
	}
	exact, ok := new(big.Rat).SetString(string(lit))
	if !ok || f < -(1<<63) || f >= 1<<63 || !exact.IsInt() || !exact.Num().IsInt64() || exact.Num().Int64() != int64(f) {
		return fmt.Errorf("the id %s is too large to be answered exactly (numeric ids are read as 64-bit floats): give a call a string id or an integer of at most 2^53", lit)
	}
	return nil
}

// idFrom is the id a request's raw "id" member names, when the SDK
// would answer with that very id: a string, or an integer number
// numberIDError accepts. Otherwise (null, another type, a number the SDK
// would change) it is not valid, and an error goes out with id null
// rather than with the id of another call.
func idFrom(raw []byte) jsonrpc.ID {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return jsonrpc.ID{}
	}
	var v any
	switch c := raw[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return jsonrpc.ID{}
		}
		v = s
	case c == '-' || '0' <= c && c <= '9':
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || numberIDError(raw) != nil {
			return jsonrpc.ID{}
		}
		v = f
	default:
		return jsonrpc.ID{}
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		return jsonrpc.ID{}
	}
	return id
}

// cancelledID is the id of the call a notifications/cancelled names (its
// params' requestId), or an invalid id when it names none the SDK could
// have answered.
func cancelledID(params json.RawMessage) jsonrpc.ID {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return jsonrpc.ID{}
	}
	return idFrom(p.RequestID)
}

// peekID reads the id of a message that is not a valid request, so that
// the error can be matched to it.
func peekID(line []byte) jsonrpc.ID {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil {
		return jsonrpc.ID{}
	}
	return idFrom(m.ID)
}

// syntaxError says why line is not one JSON value.
func syntaxError(line []byte) string {
	var se *json.SyntaxError
	if err := json.Unmarshal(line, new(json.RawMessage)); errors.As(err, &se) {
		return fmt.Sprintf("%v (byte offset %d of the line)", se, se.Offset)
	} else if err != nil {
		return err.Error()
	}
	return "the line is not one JSON value"
}

// tooLong is the answer to a line of size bytes, over limit.
func tooLong(id jsonrpc.ID, size, limit int) []byte {
	return errorLine(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf(
		"Request too large: the message is %s, over fsplane mcp's limit of %d bytes (%s) per message, and was discarded unread. "+
			"Send big content in parts (write the start, then add the rest with edit or patch), "+
			"or upload the file through fsplane's HTTP API (POST /v2/fs/upload, multipart/form-data)",
		humanSize(int64(size)), limit, humanSize(int64(limit))))
}

// errorLine is the JSON-RPC error response line for id (null when id is
// not valid).
func errorLine(id jsonrpc.ID, code int64, msg string) []byte {
	line, err := json.Marshal(struct {
		JSONRPC string        `json:"jsonrpc"`
		ID      any           `json:"id"`
		Error   jsonrpc.Error `json:"error"`
	}{"2.0", id.Raw(), jsonrpc.Error{Code: code, Message: msg}})
	if err != nil { // cannot happen: strings and numbers only
		panic(err)
	}
	return append(line, '\n')
}
