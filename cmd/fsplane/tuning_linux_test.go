package main

import (
	"bytes"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/procs"
)

// godebugOf returns the GODEBUG the running process pid was started with
// ("" without one).
func godebugOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if v, ok := strings.CutPrefix(string(kv), "GODEBUG="); ok {
			return v
		}
	}
	return ""
}

// TestServeRestartsWithTheMonitorSetting: serve starts itself again, in
// place (the same process, which then serves), with the runtime monitor's
// setting added to GODEBUG, unless told not to or GODEBUG sets schedtrace
// already.
func TestServeRestartsWithTheMonitorSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"by default", []string{"GODEBUG="}, nil, procs.MonitorSetting},
		{"other settings kept", []string{"GODEBUG=madvdontneed=1"}, nil, "madvdontneed=1," + procs.MonitorSetting},
		{"the user's schedtrace left alone", []string{"GODEBUG=schedtrace=0"}, nil, "schedtrace=0"},
		{"--latency-tuning=false", []string{"GODEBUG="}, []string{"--latency-tuning=false"}, ""},
		{"FSPLANE_LATENCY_TUNING=false", []string{"GODEBUG=", "FSPLANE_LATENCY_TUNING=false"}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServerEnv(t, t.TempDir(), tc.env, tc.args...)
			if got := godebugOf(t, s.cmd.Process.Pid); got != tc.want {
				t.Errorf("GODEBUG=%q, want %q", got, tc.want)
			}
			res, err := http.Get(s.url + "/health")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Errorf("/health: %s", res.Status)
			}
			if strings.Contains(s.logs.String(), "cannot restart") {
				t.Errorf("the restart failed:\n%s", s.logs)
			}
		})
	}
}

// TestConnectRestartsWithTheMonitorSetting: so does connect, and the
// restarted host connects.
func TestConnectRestartsWithTheMonitorSetting(t *testing.T) {
	t.Parallel()
	if strings.Contains(os.Getenv("GODEBUG"), "schedtrace=") {
		t.Skip("GODEBUG sets schedtrace here; connect leaves it alone")
	}
	h := startHub(t)
	h.connect(t, "tuned", "read-only", map[string]string{"a.txt": "a\n"})
	if got := godebugOf(t, h.hosts["tuned"].cmd.Process.Pid); !strings.Contains(got, procs.MonitorSetting) {
		t.Errorf("the host's GODEBUG=%q, want it to hold %s", got, procs.MonitorSetting)
	}
}
