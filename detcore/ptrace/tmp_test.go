package ptrace

import (
	"slices"
	"testing"
)

func TestTmpNames(t *testing.T) {
	for _, c := range []struct {
		cwd  string
		strs []string
		all  bool
		want []string
	}{
		{"/root", []string{"/tmp/a/b/c", "/tmp/a/d"}, false, []string{"a"}},
		{"/tmp/w/x", []string{"/bin/sh"}, false, []string{"w"}},
		{"/tmp", []string{"./prog"}, true, nil},
		// In a shell script, an option's value and a PATH-like list.
		{"/", []string{`cat /tmp/s.txt; ls "/tmp/q t"`, "--out=/tmp/o", "PATH=/usr/bin:/tmp/bin:/bin"}, false, []string{"s.txt", "q", "o", "bin"}},
		// Globs pass as they are; an unexpanded variable is a wildcard.
		{"/", []string{"rm -rf /tmp/go-build*", "ls /tmp/x-$USER/y", "/tmp/${D}"}, true, nil},
		{"/", []string{"rm -rf /tmp/go-build*", "ls /tmp/x-$USER/y"}, false, []string{"go-build*", "x-*"}},
		// /tmp itself and . or .. name nothing; /var/tmp/v names v (showing
		// too much is harmless).
		{"/", []string{"TMPDIR=/tmp", "/tmp/", "/tmp/./", "/tmp/../etc", "/var/tmp/v"}, false, []string{"v"}},
	} {
		all, got := tmpNames(c.cwd, c.strs)
		if all != c.all || !slices.Equal(got, c.want) {
			t.Errorf("tmpNames(%q, %q) = %v, %q; want %v, %q", c.cwd, c.strs, all, got, c.all, c.want)
		}
	}
}
