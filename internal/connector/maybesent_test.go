package connector

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/fsplane/fsplane/internal/connector/proto"
)

// TestSendSaysWhetherTheMessageLeft: when the connection breaks under a
// gathered write (as the host's are), Send says whether the message had
// left whole: ErrMaybeSent when its last byte was written (and the peer
// does handle it), ErrBroken when it was not (and the peer handles
// nothing). Send used to say ErrBroken either way, and a caller told
// "nothing was sent" may repeat an insert that ran.
func TestSendSaysWhetherTheMessageLeft(t *testing.T) {
	t.Parallel()
	op := &proto.Op{OpID: "op-1", Op: proto.OpInsert, Path: "notes.txt", Args: json.RawMessage(`{"Line":1,"Text":"once"}`)}
	enc, err := proto.Encode(op)
	if err != nil {
		t.Fatal(err)
	}
	frame := len(wsFrame(true, 0x1, true, enc)) // the client's frames are masked
	for _, tt := range []struct {
		name    string
		room    int // bytes of the op's write that reach the network
		want    error
		handled bool // the peer gets the op
	}{
		{"the op's last byte was written", frame, ErrMaybeSent, true},
		{"one byte short", frame - 1, ErrBroken, false},
		{"nothing written", 0, ErrBroken, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			under := &breakingConn{room: -1}
			client, server := pair(t, pairOpts{gather: true, wrap: func(c net.Conn) net.Conn { under.Conn = c; return under }})
			got := make(chan *proto.Op, 1)
			ended := make(chan error, 1)
			go func() {
				ended <- server.Run(context.Background(), func(msg any) {
					if m, ok := msg.(*proto.Op); ok {
						got <- m
					}
				})
			}()
			under.arm(tt.room)
			err := client.Send(context.Background(), op)
			other := ErrMaybeSent
			if tt.want == ErrMaybeSent {
				other = ErrBroken
			}
			if !errors.Is(err, tt.want) || errors.Is(err, other) {
				t.Errorf("Send after %d of the op's %d bytes = %v; want %v, not %v", tt.room, frame, err, tt.want, other)
			}
			select {
			case <-ended: // the peer read to the break
			case <-time.After(10 * time.Second):
				t.Fatal("the peer did not see the connection break")
			}
			if handled := len(got) == 1; handled != tt.handled {
				t.Errorf("the peer handled the op: %v, want %v", handled, tt.handled)
			}
		})
	}
}

// TestSendSaysAnEncodingFailure: a message Send cannot encode is
// ErrEncode (nothing was sent, and sending it again fails the same way),
// not a failure of the connection.
func TestSendSaysAnEncodingFailure(t *testing.T) {
	t.Parallel()
	client, server := pairWith(t, false)
	go server.Run(context.Background(), func(any) {}) // to answer the close
	err := client.Send(context.Background(), struct{ Note string }{"no such message"})
	if !errors.Is(err, ErrEncode) || errors.Is(err, ErrBroken) || errors.Is(err, ErrClosed) {
		t.Errorf("Send of a message it cannot encode = %v, want ErrEncode", err)
	}
}
