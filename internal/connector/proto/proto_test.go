package proto

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	msgs := []any{
		&Hello{Name: "laptop", Roots: []string{"/home/u/p"}, Mode: ReadOnly, Capabilities: Capabilities{Ops: []string{OpRead}, Transfer: 1}, Limits: DefaultLimits, Version: "1"},
		&Welcome{HostID: "h1", Limits: DefaultLimits},
		&Op{OpID: "o1", Op: OpRead, Path: "a.txt", Caller: "ctx", TimeoutMS: 30000, Args: json.RawMessage(`{"line_from":1}`)},
		&Result{OpID: "o1", OK: true, Result: json.RawMessage(`{"content":"x"}`)},
		&Result{OpID: "o2", Error: &Error{Code: "read_only", Message: "Writes are disabled on this host."}},
		&Cancel{OpID: "o1"},
		&TransferStart{TransferID: 7, OpID: "o1", Kind: TypeResult, TotalBytes: 3, SHA256: Digest([]byte("abc"))},
		&TransferEnd{TransferID: 7},
		&TransferAbort{TransferID: 7, Reason: "idle"},
		&TransferCredit{TransferID: 7, OpID: "o1", Bytes: 512 << 10},
		&ErrorMsg{Code: "unknown_type", Message: "?"},
	}
	for _, m := range msgs {
		b, err := Encode(m)
		if err != nil {
			t.Fatalf("Encode(%T): %v", m, err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("Decode(%s): %v", b, err)
		}
		if diff := cmp.Diff(m, got); diff != "" {
			t.Errorf("%T round trip (-want +got):\n%s", m, diff)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ frame, want string }{
		{`not json`, "malformed message"},
		{`{"type":"frobnicate"}`, "unknown message type"},
		{`{"type":"hello","protocol":"fsplane-connector/9","name":"h","roots":["/"],"mode":"read_only"}`, "protocol"},
		{`{"type":"hello","protocol":"fsplane-connector/1","name":"h","roots":["/"],"mode":"god"}`, "mode"},
		{`{"type":"op","op":"read"}`, "op_id"},
		{`{"type":"result","op_id":"x","ok":false}`, "needs error"},
		{`{"type":"transfer_start","transfer_id":1,"kind":"op","total_bytes":1,"sha256":"ab"}`, "sha256"},
		{`{"type":"transfer_start","transfer_id":1,"kind":"blob","total_bytes":1,"sha256":"` + strings.Repeat("a", 64) + `"}`, "kind"},
		{`{"type":"op","op_id":5,"op":"read"}`, "malformed op"},
		{`{"type":"transfer_credit","transfer_id":1,"bytes":0}`, "bytes > 0"},
		{`{"type":"transfer_credit","transfer_id":1,"bytes":-5}`, "bytes > 0"},
		// segmentio recurses without a bound: deep enough, a peer's frame
		// would overflow the stack and kill the process.
		{`{"type":"op","op_id":"x","op":"read","args":{"zz":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`, "nests deeper"},
		{`{"type":"result","op_id":"x","ok":true,"result":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, "nests deeper"},
	} {
		_, err := Decode([]byte(tt.frame))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Decode(%s) = %v, want an error containing %q", tt.frame, err, tt.want)
		}
	}
	if _, err := Decode([]byte(`{"type":"zzz"}`)); !errors.Is(err, ErrUnknownType) {
		t.Errorf("unknown type is not ErrUnknownType: %v", err)
	}
}

func TestTransferRoundTrip(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("0123456789"), 100_001) // ~1 MB, not a chunk multiple
	start, frames, end := Split(3, "op-9", TypeResult, data, 64<<10)
	a := NewAssembler(Limits{})
	now := time.Unix(0, 0)
	if err := a.Start(*start, now); err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		id, idx, payload, err := DecodeChunk(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Chunk(id, idx, payload, now); err != nil {
			t.Fatal(err)
		}
	}
	ts, got, err := a.End(end.TransferID)
	if err != nil || !bytes.Equal(got, data) || ts.OpID != "op-9" || a.Open() != 0 {
		t.Fatalf("End: %v, %d bytes, %+v", err, len(got), ts)
	}
}

// TestAssemblerStarted: Started reports an open transfer's start message
// (its op id) without closing it, and nothing for one not open.
func TestAssemblerStarted(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	data := []byte("abc")
	start, frames, end := Split(1, "op-b", TypeOp, data, 2)
	a := NewAssembler(Limits{})
	if _, open := a.Started(1); open {
		t.Fatal("Started reports a transfer that was never started")
	}
	if err := a.Start(*start, now); err != nil {
		t.Fatal(err)
	}
	if ts, open := a.Started(1); !open || ts.OpID != "op-b" {
		t.Fatalf("Started(1) = %+v, %v; want op-b's transfer", ts, open)
	}
	for _, f := range frames {
		id, idx, p, _ := DecodeChunk(f)
		if err := a.Chunk(id, idx, p, now); err != nil {
			t.Fatalf("a chunk after Started: %v (Started must leave the transfer open)", err)
		}
	}
	if _, got, err := a.End(end.TransferID); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("End after Started: %v, %q", err, got)
	}
	if _, open := a.Started(1); open {
		t.Error("Started reports a transfer that ended")
	}
}

func TestTransferFailures(t *testing.T) {
	t.Parallel()
	now := time.Unix(100, 0)
	data := []byte("hello, transfer")
	start, frames, _ := Split(1, "o", TypeOp, data, 4)

	a := NewAssembler(Limits{})
	_ = a.Start(*start, now)
	_, idx, p, _ := DecodeChunk(frames[1])
	if err := a.Chunk(1, idx, p, now); err == nil || !strings.Contains(err.Error(), "chunk index 1 arrived; expected 0") {
		t.Errorf("out of order: %v", err)
	}
	if ts, open := a.Abort(1); !open || ts.OpID != "o" {
		t.Errorf("Abort after a bad chunk lost the transfer's op: %+v %v", ts, open)
	}

	a = NewAssembler(Limits{})
	_ = a.Start(*start, now)
	for _, f := range frames {
		id, idx, p, _ := DecodeChunk(f)
		_ = a.Chunk(id, idx, bytes.ToUpper(p), now)
	}
	if _, _, err := a.End(1); err == nil || err.Error() != "transfer SHA-256 mismatch" {
		t.Errorf("corrupted: %v", err)
	}

	a = NewAssembler(Limits{})
	for i := uint32(0); i < 4; i++ {
		s := *start
		s.TransferID = i
		if err := a.Start(s, now); err != nil {
			t.Fatal(err)
		}
	}
	s := *start
	s.TransferID = 9
	if err := a.Start(s, now); !errors.Is(err, ErrTooManyTransfers) {
		t.Errorf("fifth transfer: %v", err)
	}
	if exp := a.Expired(now.Add(IdleTimeout + time.Second)); len(exp) != 4 || a.Open() != 0 {
		t.Errorf("expired %d, open %d", len(exp), a.Open())
	}

	// An end for a transfer never started names it, so that the abort
	// answering it does (not transfer 0).
	if ts, _, err := a.End(7); !errors.Is(err, ErrUnknownTransfer) || ts.TransferID != 7 {
		t.Errorf("End of an unknown transfer = %+v, %v; want its id and ErrUnknownTransfer", ts, err)
	}

	a = NewAssembler(Limits{MaxTransferBytes: 10})
	if err := a.Start(*start, now); !errors.Is(err, ErrTransferTooLarge) {
		t.Errorf("too large: %v", err)
	}
	if _, _, _, err := DecodeChunk([]byte{1, 2}); err == nil {
		t.Error("short binary frame accepted")
	}
}

func TestLimitsMerge(t *testing.T) {
	t.Parallel()
	got := DefaultLimits.Merge(Limits{MaxMessageBytes: 512 << 10, MaxConcurrentTransfers: 8})
	want := Limits{MaxMessageBytes: 512 << 10, MaxTransferBytes: 256 << 20, MaxConcurrentTransfers: 4, ChunkBytes: 256 << 10, WindowBytes: 2 << 20}
	if got != want {
		t.Errorf("Merge = %+v, want %+v", got, want)
	}
}

// TestLimitsNegotiate: flow control needs both sides; a peer whose limits
// carry no window (one that predates it) turns it off for both.
func TestLimitsNegotiate(t *testing.T) {
	t.Parallel()
	old := DefaultLimits
	old.WindowBytes = 0
	small := DefaultLimits
	small.WindowBytes = 256 << 10
	for _, tt := range []struct {
		name       string
		own, peer  Limits
		wantWindow int64
	}{
		{"both", DefaultLimits, DefaultLimits, 2 << 20},
		{"smaller wins", DefaultLimits, small, 256 << 10},
		{"old peer", DefaultLimits, old, 0},
		{"old self", old, DefaultLimits, 0},
		{"under the minimum", DefaultLimits, Limits{WindowBytes: 1000}, MinWindowBytes},
		{"negative", DefaultLimits, Limits{WindowBytes: -1}, 0},
	} {
		if got := tt.own.Negotiate(tt.peer).WindowBytes; got != tt.wantWindow {
			t.Errorf("%s: window %d, want %d", tt.name, got, tt.wantWindow)
		}
	}
	if got := DefaultLimits.Negotiate(Limits{MaxMessageBytes: 1000}); got.MaxMessageBytes != 1000 || got.ChunkBytes != DefaultLimits.ChunkBytes {
		t.Errorf("Negotiate kept %+v, want the smaller message limit and the default chunk", got)
	}
}

// FuzzDecode feeds arbitrary frames to both decoders and an assembler: no
// panics, and a decoded message re-encodes to something that decodes equal.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"type":"op","op_id":"1","op":"read","path":"a"}`))
	f.Add([]byte(`{"type":"hello","protocol":"fsplane-connector/1","name":"h","roots":["/"],"mode":"read_write"}`))
	f.Add([]byte(`{"type":"transfer_start","transfer_id":1,"kind":"op","total_bytes":3,"sha256":"` + Digest([]byte("abc")) + `"}`))
	f.Add(EncodeChunk(1, 0, []byte("abc")))
	f.Add([]byte(`{"type":"transfer_credit","transfer_id":1,"op_id":"1","bytes":524288}`))
	f.Fuzz(func(t *testing.T, frame []byte) {
		msg, err := Decode(frame)
		if err == nil {
			b, err := Encode(msg)
			if err != nil {
				t.Fatalf("re-encode %T: %v", msg, err)
			}
			again, err := Decode(b)
			if err != nil || !cmp.Equal(msg, again) {
				t.Fatalf("re-decode: %v\n%#v\n%#v", err, msg, again)
			}
			if ts, ok := msg.(*TransferStart); ok {
				a := NewAssembler(Limits{MaxTransferBytes: 1 << 20})
				_ = a.Start(*ts, time.Unix(0, 0))
			}
		}
		if id, idx, payload, err := DecodeChunk(frame); err == nil {
			a := NewAssembler(Limits{})
			_ = a.Start(TransferStart{TransferID: id, Kind: TypeOp, TotalBytes: int64(len(payload)), SHA256: Digest(payload)}, time.Unix(0, 0))
			if err := a.Chunk(id, idx, payload, time.Unix(0, 0)); err == nil && idx == 0 {
				if _, got, err := a.End(id); err != nil || !bytes.Equal(got, payload) {
					t.Fatalf("single-chunk transfer: %v", err)
				}
			}
		}
	})
}

func TestDecodeResultFastPath(t *testing.T) {
	t.Parallel()
	content := strings.Repeat("line \"quoted\"\tand\\n escaped\n", 200)
	res := &Result{OpID: "op-1", OK: true, Result: json.RawMessage(`{"Content":` + strings.TrimSpace(mustJSON(t, content)) + `,"TotalLines":200}`)}
	frame, err := Encode(res)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := decodeResult(frame); !ok {
		t.Fatalf("decodeResult refused what encodeResult wrote: %.200s", frame)
	}
	for _, in := range []string{
		string(frame),
		`{"op_id":"a","type":"result","ok":false,"error":{"code":"not_found","message":"gone"}}`, // another order
		` { "type" : "result" , "op_id" : "a" , "ok" : true , "result" : [ 1 , 2 ] } `,
		`{"type":"result","op_id":"a","ok":true,"result":null}`,
		`{"type":"result","op_id":"a","OK":true}`,                 // a spelling only the general path knows
		`{"type":"result","op_id":"a","ok":true,"extra":1}`,       // an unknown key
		`{"type":"result","op_id":null,"ok":true}`,                // null
		`{"type":"result","op_id":"a","ok":false}`,                // fails validation either way
		`{"type":"result","op_id":"a","ok":true,"result":{"x":1}`, // truncated
		`{"type":"op","op_id":"a","op":"read"}`,
	} {
		want, wantErr := decodeWire([]byte(in))
		got, err := Decode([]byte(in))
		if (err != nil) != (wantErr != nil) || !cmp.Equal(got, want) {
			t.Errorf("Decode(%.80s) = %#v, %v; the general path gives %#v, %v", in, got, err, want, wantErr)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzDecodeResult checks Decode's fast path for results against the
// general path: what it accepts, the general path decodes the same.
func FuzzDecodeResult(f *testing.F) {
	f.Add([]byte(`{"type":"result","op_id":"1","ok":true,"result":{"Content":"a\nb\u00e9","TotalLines":2}}`))
	f.Add([]byte(`{"type":"result","op_id":"1","ok":false,"error":{"code":"stale","message":"m","details":{"lines":[1]}}}`))
	f.Add([]byte(`{"ok":true,"type":"result","op_id":"\u0031","result":[]}`))
	f.Fuzz(func(t *testing.T, frame []byte) {
		fast, ok := decodeResult(frame)
		if !ok {
			return
		}
		slow, err := decodeWire(frame)
		if err != nil {
			if validate(fast) == nil {
				t.Fatalf("fast path accepted %q, the general path refuses it: %v", frame, err)
			}
			return
		}
		if !cmp.Equal(any(fast), slow) {
			t.Fatalf("%q: fast path %#v, general path %#v", frame, fast, slow)
		}
	})
}
