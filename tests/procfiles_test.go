package tests

import (
	"path/filepath"
	"regexp"
	"testing"
)

// procGlobalScript reads /proc/uptime and /proc/loadavg before and after a
// 2 s sleep.
const procGlobalScript = "cat /proc/uptime /proc/loadavg; sleep 2; cat /proc/uptime"

// TestProcUptimeLoadavg: /proc/uptime and /proc/loadavg tell the guest's
// virtual uptime (advanced by its own sleep) and its own threads, the same
// on every run and in replay, not the host's.
func TestProcUptimeLoadavg(t *testing.T) {
	argv := tool("sh", "-c", procGlobalScript)(t)
	first := hermitRun(t, nil, argv)
	want := regexp.MustCompile(`\A(\d+)\.(\d\d) \d+\.\d\d\n0\.00 0\.00 0\.00 1/\d+ \d+\n(\d+)\.(\d\d) \d+\.\d\d\n\z`)
	m := want.FindStringSubmatch(string(first.Stdout))
	if first.Exit != 0 || m == nil {
		t.Fatalf("hermit run: want two uptimes around a loadavg line; %s", describe(first))
	}
	if before, after := atoi(t, []byte(m[1])), atoi(t, []byte(m[3])); after-before != 2 || m[2] != m[4] {
		t.Errorf("uptime went from %s.%s to %s.%s over a 2 s sleep; want exactly 2 s more", m[1], m[2], m[3], m[4])
	}
	for i := 2; i <= 3; i++ {
		if r := hermitRun(t, nil, argv); string(r.Stdout) != string(first.Stdout) {
			t.Errorf("hermit run %d: %q, run 1 printed %q", i, r.Stdout, first.Stdout)
		}
	}
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, argv)
	if got := replay(t, dir); string(got.Stdout) != string(rec.Stdout) || got.Exit != rec.Exit {
		t.Errorf("replay: %s; recorded %s", describe(got), describe(rec))
	}
}
