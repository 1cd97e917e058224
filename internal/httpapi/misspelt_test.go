package httpapi_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
)

// TestMisspeltGuardFields: a field that would make a change conditional or
// a preview is never silently ignored — misspelt, written in camelCase, or
// sent to a route that does not take it, the body is refused (422) and
// nothing changes; other unknown fields are still ignored, as AIO does.
func TestMisspeltGuardFields(t *testing.T) {
	t.Parallel()
	const stale = "00000000000000000000000000000000"
	for _, tc := range []struct {
		name, route, body string
		field, message    string // "": the call succeeds
	}{
		{name: "misspelt expected_version", route: "/v2/fs/edit",
			body:  `{"command":"str_replace","path":"f.txt","old_str":"ha","new_str":"he","expected_verison":"` + stale + `"}`,
			field: "expected_verison", message: `did you mean "expected_version"?`},
		{name: "camelCase expected_version", route: "/v2/fs/write",
			body:  `{"path":"f.txt","content":"x","expectedVersion":"` + stale + `"}`,
			field: "expectedVersion", message: `is not "expected_version": field names are snake_case`},
		{name: "dry_run on a route without dry runs", route: "/v2/fs/edit",
			body:  `{"command":"str_replace","path":"f.txt","old_str":"ha","new_str":"he","dry_run":true}`,
			field: "dry_run", message: `this route takes no "dry_run". The request was refused: ignored, the change would be made for real.`},
		{name: "misspelt expected_version on a route without it", route: "/v2/fs/delete",
			body:  `{"path":"f.txt","expected_verson":"` + stale + `"}`,
			field: "expected_verson", message: `did you mean "expected_version"?`},
		{name: "camelCase dry_run on patch", route: "/v2/fs/patch",
			body:  `{"patch":"@@\n-ha\n+he","path":"f.txt","dryRun":true}`,
			field: "dryRun", message: `is not "dry_run"`},
		{name: "v1 route", route: "/v1/file/str_replace_editor",
			body:  `{"command":"str_replace","path":"f.txt","old_str":"ha","new_str":"he","expected_versio":"` + stale + `"}`,
			field: "expected_versio", message: `did you mean "expected_version"?`},
		{name: "an unrelated unknown field is ignored", route: "/v2/fs/edit",
			body: `{"command":"str_replace","path":"f.txt","old_str":"ha","new_str":"he","client_request_id":"abc"}`},
		{name: "a field of the route written exactly", route: "/v2/fs/edit",
			body: `{"command":"str_replace","path":"f.txt","old_str":"ha","new_str":"he","replace_mode":"ALL"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, map[string]string{"f.txt": "ha\n"}, httpapi.Options{})
			status, body := e.raw("POST", tc.route, tc.body)
			if tc.field == "" {
				if status != 200 || e.file("f.txt") == "ha\n" {
					t.Fatalf("status %d, f.txt %q: %v", status, e.file("f.txt"), body)
				}
				return
			}
			if status != 422 {
				t.Fatalf("status %d: %v", status, body)
			}
			errs, _ := body["errors"].([]any)
			if len(errs) != 1 {
				t.Fatalf("errors %v", body["errors"])
			}
			first := errs[0].(map[string]any)
			if !cmp.Equal(first["location"], []any{"body", tc.field}) || first["type"] != "value_error.extra" ||
				!strings.Contains(first["message"].(string), tc.message) {
				t.Errorf("error %v, want %s: %s", first, tc.field, tc.message)
			}
			if got := e.file("f.txt"); got != "ha\n" {
				t.Errorf("a refused body changed f.txt: %q", got)
			}
		})
	}
}

// TestV2PatchExpectedVersion: with path, expected_version guards that
// file as on the other routes; without path it is a bad request; a dry
// run's output says nothing was written.
func TestV2PatchExpectedVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"f.txt": "ha\n"}, httpapi.Options{})
	const stale = "00000000000000000000000000000000"
	_, err := e.c.Patch(bg, client.PatchRequest{Patch: "@@\n-ha\n+he", Path: "f.txt", ExpectedVersion: stale})
	wantErr(t, err, 409, "stale_version")
	_, err = e.c.Patch(bg, client.PatchRequest{Patch: "*** Begin Patch\n*** Update File: f.txt\n@@\n-ha\n+he\n*** End Patch", ExpectedVersion: stale})
	wantErr(t, err, 400, "bad_request")
	if got := e.file("f.txt"); got != "ha\n" {
		t.Fatalf("a refused patch changed f.txt: %q", got)
	}
	dry, err := e.c.Patch(bg, client.PatchRequest{Patch: "@@\n-ha\n+he", Path: "f.txt", DryRun: true})
	if err != nil || !strings.HasPrefix(dry.Output, "Dry run: nothing was written.") || !strings.Contains(dry.Output, "M f.txt") {
		t.Fatalf("dry run output %q, %v", dry.Output, err)
	}
	r, err := e.c.Read(bg, client.ReadQuery{Path: "f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.c.Patch(bg, client.PatchRequest{Patch: "@@\n-ha\n+he", Path: "f.txt", ExpectedVersion: r.Version})
	if err != nil || !strings.HasPrefix(res.Output, "Success.") || e.file("f.txt") != "he\n" {
		t.Fatalf("patch with the current version: %+v, %v, f.txt %q", res, err, e.file("f.txt"))
	}
}
