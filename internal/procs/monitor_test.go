package procs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMonitorEnv(t *testing.T) {
	t.Parallel()
	const set = "GODEBUG=" + MonitorSetting
	for _, tc := range []struct {
		name    string
		in, out []string
		changed bool
	}{
		{"no GODEBUG", []string{"HOME=/h", "PATH=/bin"}, []string{"HOME=/h", "PATH=/bin", set}, true},
		{"empty", nil, []string{set}, true},
		{"empty GODEBUG", []string{"GODEBUG=", "A=1"}, []string{set, "A=1"}, true},
		{"other settings kept", []string{"A=1", "GODEBUG=madvdontneed=1,gctrace=0"}, []string{"A=1", "GODEBUG=madvdontneed=1,gctrace=0," + MonitorSetting}, true},
		{"already set", []string{set, "A=1"}, []string{set, "A=1"}, false},
		{"the user's own schedtrace", []string{"GODEBUG=gctrace=1,schedtrace=1000"}, []string{"GODEBUG=gctrace=1,schedtrace=1000"}, false},
		{"the user's schedtrace off", []string{"GODEBUG=schedtrace=0"}, []string{"GODEBUG=schedtrace=0"}, false},
		{"not a prefix of another key", []string{"GODEBUG=xschedtrace=1"}, []string{"GODEBUG=xschedtrace=1," + MonitorSetting}, true},
		{"only the first GODEBUG counts", []string{"GODEBUG=a=1", "GODEBUG=schedtrace=5"}, []string{"GODEBUG=a=1," + MonitorSetting, "GODEBUG=schedtrace=5"}, true},
		{"a name that merely starts alike", []string{"GODEBUGX=1"}, []string{"GODEBUGX=1", set}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := append([]string(nil), tc.in...)
			out, changed := MonitorEnv(in)
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if diff := cmp.Diff(tc.out, out); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.in, in); diff != "" {
				t.Errorf("the input was modified (-was +now):\n%s", diff)
			}
		})
	}
}
