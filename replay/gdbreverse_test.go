package replay

import (
	"strings"
	"testing"
)

// TestCheckpointLines: info checkpoints without the user's checkpoints
// says so before the runs kept automatically (it printed "and 5 runs
// kept automatically", after nothing).
func TestCheckpointLines(t *testing.T) {
	mine := []CheckpointInfo{{ID: 1, Event: 40, Where: "at event 40", Ready: true, RSS: 2 << 20}}
	auto := []CheckpointInfo{{RSS: 1 << 20}, {RSS: 1 << 20}}
	for _, tc := range []struct {
		mine, auto []CheckpointInfo
		want       string
	}{
		{nil, nil, ""},
		{nil, auto, "no checkpoints; 2 runs kept automatically, 2.0 MiB of guest memory"},
		{mine, nil, "1: event 40, at event 40 (ready, 2.0 MiB of guest memory)"},
		{mine, auto, "1: event 40, at event 40 (ready, 2.0 MiB of guest memory)|and 2 runs kept automatically, 2.0 MiB of guest memory"},
	} {
		if got := strings.Join(checkpointLines(tc.mine, tc.auto), "|"); got != tc.want {
			t.Errorf("%d of mine, %d kept: %q, want %q", len(tc.mine), len(tc.auto), got, tc.want)
		}
	}
}
