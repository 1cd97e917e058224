package watch

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// encodeEvents lays events out as the kernel does: a header (wd, mask,
// cookie, len) and the name NUL-terminated and padded to a multiple of the
// header size; len is 0 for no name.
func encodeEvents(evs []kernelEvent) []byte {
	var b []byte
	for _, ev := range evs {
		n := 0
		if ev.name != "" {
			n = (len(ev.name) + eventHeader) / eventHeader * eventHeader
		}
		b = binary.NativeEndian.AppendUint32(b, uint32(ev.wd))
		b = binary.NativeEndian.AppendUint32(b, ev.mask)
		b = binary.NativeEndian.AppendUint32(b, ev.cookie)
		b = binary.NativeEndian.AppendUint32(b, uint32(n))
		b = append(b, ev.name...)
		b = append(b, make([]byte, n-len(ev.name))...)
	}
	return b
}

func parseAll(b []byte) []kernelEvent {
	evs := []kernelEvent{}
	parseEvents(b, func(ev kernelEvent, _, _ int) { evs = append(evs, ev) })
	return evs
}

// FuzzParseEvents checks parseEvents against the layout of struct
// inotify_event: each event is the record at its offset (name cut at its
// first NUL), parsing stops only where no whole record is left, and
// events laid out again parse back to themselves.
func FuzzParseEvents(f *testing.F) {
	f.Add(encodeEvents([]kernelEvent{
		{wd: 1, mask: inCreate, name: "a.txt"},
		{wd: 2, mask: inMovedFrom | inIsDir, cookie: 7, name: "exactly16bytes.."},
		{wd: -1, mask: inOverflow},
		{wd: 3, mask: inMovedTo, cookie: 7, name: strings.Repeat("n", 255)},
	}))
	whole := encodeEvents([]kernelEvent{{wd: 1, mask: inModify, name: "f"}, {wd: 1, mask: inDelete, name: "g"}})
	f.Add(whole[:len(whole)-1]) // the second record cut short
	f.Add(append(slices.Clone(whole), 1, 2, 3))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		got := parseAll(b)
		off := 0
		for i, ev := range got {
			if len(b)-off < eventHeader {
				t.Fatalf("event %d parsed from %d bytes past the last record", i, len(b)-off)
			}
			n := uint64(binary.NativeEndian.Uint32(b[off+12:]))
			if n > uint64(len(b)-off-eventHeader) {
				t.Fatalf("event %d parsed from a record whose name runs past the end", i)
			}
			name, _, _ := bytes.Cut(b[off+eventHeader:off+eventHeader+int(n)], []byte{0})
			want := kernelEvent{
				wd:     int32(binary.NativeEndian.Uint32(b[off:])),
				mask:   binary.NativeEndian.Uint32(b[off+4:]),
				cookie: binary.NativeEndian.Uint32(b[off+8:]),
				name:   string(name),
			}
			if ev != want {
				t.Fatalf("event %d at offset %d: got %+v, want %+v", i, off, ev, want)
			}
			off += eventHeader + int(n)
		}
		if rest := b[off:]; len(rest) >= eventHeader && uint64(binary.NativeEndian.Uint32(rest[12:])) <= uint64(len(rest)-eventHeader) {
			t.Fatalf("stopped at byte %d of %d with a whole record left", off, len(b))
		}
		if diff := cmp.Diff(got, parseAll(encodeEvents(got)), cmp.AllowUnexported(kernelEvent{})); diff != "" {
			t.Fatalf("events laid out again parse differently (-want +got):\n%s", diff)
		}
	})
}
