package mcpserver

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStdioTransportBatchesWithNotifications: a batch's notifications
// get no answer, and its calls one array of answers. The SDK's transport
// waited for an answer to the notifications too, so a batch holding one
// was never answered, and a second such batch (its notification's missing
// id taken for one already seen) ended the session.
func TestStdioTransportBatchesWithNotifications(t *testing.T) {
	t.Parallel()
	const (
		note  = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}}`
		note2 = `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`
	)
	ping := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` }
	for _, tc := range []struct {
		name  string
		batch string
		ids   []float64 // the ids answered, in one array; none: no answer
	}{
		{"a call and a notification", `[` + ping("1") + `,` + note + `]`, []float64{1}},
		{"a notification first", `[` + note + `,` + ping("2") + `,` + ping("3") + `]`, []float64{2, 3}},
		{"notifications around calls", `[` + note + `,` + ping("4") + `,` + note2 + `,` + ping("5") + `,` + note + `]`, []float64{4, 5}},
		{"notifications alone", `[` + note + `]`, nil},
		{"notifications alone again", `[` + note + `,` + note2 + `]`, nil},
		{"a call and a notification again", `[` + note2 + `,` + ping("6") + `]`, []float64{6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newRawClient(t, nil, "2025-03-26")
			for range 2 { // twice: the first must leave no trace that breaks the second
				c.send(tc.batch)
				if tc.ids != nil {
					got, ok := c.recv().([]any)
					if !ok {
						t.Fatalf("answered %v, want an array", got)
					}
					var ids []float64
					for _, r := range got {
						m := r.(map[string]any)
						if m["error"] != nil {
							t.Errorf("answer %v", m)
						}
						ids = append(ids, m["id"].(float64))
					}
					sort.Float64s(ids)
					if d := cmp.Diff(tc.ids, ids); d != "" {
						t.Errorf("ids answered (-want +got):\n%s", d)
					}
				}
				c.wantPong() // no answer to notifications alone: the pong comes next
			}
		})
	}
}
