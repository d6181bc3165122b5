package trace_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/trace"
)

func TestDefaultDir(t *testing.T) {
	tests := []struct {
		name              string
		hermit, xdg, home string
		want              string
	}{
		{"HERMIT_TRACE_DIR wins", "/t/h", "/t/x", "/t/home", "/t/h"},
		{"XDG_DATA_HOME", "", "/t/x", "/t/home", "/t/x/hermit"},
		{"relative XDG_DATA_HOME is ignored", "", "rel", "/t/home", "/t/home/.local/share/hermit"},
		{"home", "", "", "/t/home", "/t/home/.local/share/hermit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HERMIT_TRACE_DIR", tt.hermit)
			t.Setenv("XDG_DATA_HOME", tt.xdg)
			t.Setenv("HOME", tt.home)
			if got := trace.DefaultDir(); got != tt.want {
				t.Errorf("DefaultDir() = %q, want %q", got, tt.want)
			}
		})
	}
}

// newTrace records a small trace of program in base and makes it the
// latest, as the recorder does.
func newTrace(t *testing.T, base, program string, created time.Time) string {
	t.Helper()
	dir, err := trace.NewDir(base, program)
	if err != nil {
		t.Fatal(err)
	}
	h := testHeader()
	h.Argv[0], h.Created = program, created
	w, err := trace.Create(dir, h)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		w.Append(&trace.Event{Kind: trace.KindTiming, Tid: 1, Time: int64(i)})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := trace.SetLatest(base, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestNewDirAndLatest(t *testing.T) {
	base := filepath.Join(t.TempDir(), "hermit")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := newTrace(t, base, "/usr/bin/ls", t0)
	b := newTrace(t, base, "ls", t0.Add(time.Hour))
	c := newTrace(t, base, "/weird/na me!", t0.Add(2*time.Hour))
	for _, tt := range []struct{ got, want string }{
		{a, "ls-1"}, {b, "ls-2"}, {c, "na_me_-1"},
	} {
		if filepath.Base(tt.got) != tt.want {
			t.Errorf("NewDir gave %s, want %s", filepath.Base(tt.got), tt.want)
		}
	}
	if fi, err := os.Stat(base); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("base dir: %v, %v; want mode 0700", fi.Mode(), err)
	}
	if target, err := os.Readlink(filepath.Join(base, "latest")); err != nil || target != "na_me_-1" {
		t.Errorf("latest -> %q, %v; want na_me_-1", target, err)
	}

	resolveTests := []struct{ arg, want string }{
		{"", c},
		{"latest", c},
		{"ls-1", a},
		{b, b},
	}
	for _, tt := range resolveTests {
		got, err := trace.Resolve(base, tt.arg)
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tt.arg, got, err, tt.want)
		}
	}
	for _, bad := range []string{"ls-9", base, filepath.Join(base, "nope")} {
		if got, err := trace.Resolve(base, bad); err == nil {
			t.Errorf("Resolve(%q) = %q, want an error", bad, got)
		}
	}
	if _, err := trace.Resolve(base, base); !errors.Is(err, trace.ErrNotTrace) {
		t.Errorf("Resolve(base dir) = %v, want ErrNotTrace", err)
	}
	if _, err := trace.Resolve(t.TempDir(), ""); err == nil || !strings.Contains(err.Error(), "no latest trace") {
		t.Errorf("Resolve(empty base, \"\") = %v", err)
	}

	ents, err := trace.List(base)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name)
		if e.Events != 3 || e.Err != nil || e.Size <= 0 || e.Header == nil {
			t.Errorf("entry %s: %+v", e.Name, e)
		}
		if e.Latest != (e.Path == c) {
			t.Errorf("entry %s: Latest = %v", e.Name, e.Latest)
		}
	}
	if got := strings.Join(names, " "); got != "ls-1 ls-2 na_me_-1" {
		t.Errorf("List names = %q, want oldest first", got)
	}
}

func TestRemove(t *testing.T) {
	base := filepath.Join(t.TempDir(), "hermit")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := newTrace(t, base, "a", t0)
	b := newTrace(t, base, "b", t0.Add(time.Hour))
	notTrace := filepath.Join(base, "notes")
	os.MkdirAll(notTrace, 0o700)
	if err := trace.Remove(notTrace); !errors.Is(err, trace.ErrNotTrace) {
		t.Errorf("Remove(non-trace) = %v, want ErrNotTrace", err)
	}
	if _, err := os.Stat(notTrace); err != nil {
		t.Errorf("Remove(non-trace) removed it: %v", err)
	}
	if err := trace.Remove(b); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(b); !os.IsNotExist(err) {
		t.Errorf("trace still there: %v", err)
	}
	if got, err := trace.Resolve(base, ""); err != nil || got != a {
		t.Errorf("after removing the latest, latest = %q, %v; want %q", got, err, a)
	}
	if err := trace.Remove(filepath.Join(base, "latest")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(base, "latest")); !os.IsNotExist(err) {
		t.Errorf("latest link survives its last trace: %v", err)
	}
	if ents, err := trace.List(base); err != nil || len(ents) != 0 {
		t.Errorf("List after removing all = %v, %v", ents, err)
	}
}

func TestListReportsDamage(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "cut")
	writeStream(t, dir, 1, 100, trace.Options{})
	os.Remove(filepath.Join(dir, "index"))
	ents, err := trace.List(base)
	if err != nil || len(ents) != 1 {
		t.Fatalf("List = %v, %v", ents, err)
	}
	if !errors.Is(ents[0].Err, trace.ErrTruncated) || ents[0].Events != 100 {
		t.Errorf("entry = %+v, want 100 events and a truncation", ents[0])
	}
	if ents, err := trace.List(filepath.Join(base, "missing")); err != nil || ents != nil {
		t.Errorf("List(missing dir) = %v, %v", ents, err)
	}
}
