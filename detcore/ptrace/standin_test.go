package ptrace

import "testing"

// TestParseStandIn: the trace's fds entries, of this hermit and of
// recordings made before it kept their kinds, decode; damaged ones do
// not.
func TestParseStandIn(t *testing.T) {
	for text, want := range map[string]StandIn{
		"3":         {Fd: 3},
		"4/p/0":     {Fd: 4, Kind: 'p', Flags: 0},
		"5/f/33793": {Fd: 5, Kind: 'f', Flags: 33793},
		"6/s/2050":  {Fd: 6, Kind: 's', Flags: 2050},
	} {
		got, ok := ParseStandIn(text)
		if !ok || got != want {
			t.Errorf("ParseStandIn(%q) = %+v, %v; want %+v", text, got, ok, want)
		}
		if got.String() != text {
			t.Errorf("%+v encodes as %q, want %q", got, got.String(), text)
		}
	}
	for _, bad := range []string{"", "x", "-1", "3/p", "3/q/0", "3/p/x", "3/p/-2", "3//0", "3/p/0/1"} {
		if got, ok := ParseStandIn(bad); ok {
			t.Errorf("ParseStandIn(%q) = %+v, want a refusal", bad, got)
		}
	}
}
