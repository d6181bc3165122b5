package ptrace

import (
	"reflect"
	"testing"

	"golang.org/x/sys/unix"
)

func TestTermInputSignals(t *testing.T) {
	cooked := TermInput{ISIG: true, Intr: 3, Quit: 0x1c, Susp: 0x1a}
	for _, c := range []struct {
		name string
		in   TermInput
		data string
		want []int
	}{
		{"plain text", cooked, "ls -l\n", nil},
		{"^C", cooked, "\x03", []int{int(unix.SIGINT)}},
		{"^Z then ^\\ then ^Z", cooked, "a\x1ab\x1c\x1a", []int{int(unix.SIGTSTP), int(unix.SIGQUIT)}},
		{"raw mode", TermInput{Intr: 3}, "\x03", nil},
		{"INTR disabled", TermInput{ISIG: true}, "\x00\x03", nil},
		{"INTR changed to ^X", TermInput{ISIG: true, Intr: 0x18}, "\x03\x18", []int{int(unix.SIGINT)}},
	} {
		if got := c.in.Signals([]byte(c.data)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q sends %v, want %v", c.name, c.data, got, c.want)
		}
	}
}
