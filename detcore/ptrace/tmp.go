package ptrace

import (
	"os"
	"path/filepath"
	"strings"
)

// The host's /tmp holds other programs' scratch: other test runs'
// directories, other JVMs' hsperfdata, sockets. A guest that lists it (the
// JVM seeds SHA1PRNG from java.io.tmpdir's names) would see it change from
// run to run. So the private /tmp shows, of the host's, only the entries
// the run names: those its command line, environment or working directory
// mention as /tmp/NAME. What it names is its input, like the working
// directory's files; the rest is hidden (overlayfs whiteouts, made by the
// launcher before it mounts the overlay).

// tmpSpec is the value of envTmp: "0" (the host's /tmp), "1" (a private
// /tmp showing all of the host's) or "1/" followed by the names of the
// host's entries to show, separated by '/' (which no name holds). A name
// may be a glob (fnmatch), for a shell pattern on the command line.
func tmpSpec(o Options) string {
	if !o.PrivateTmp || o.Root != "" {
		return "0"
	}
	if o.WholeTmp {
		return "1"
	}
	dir := o.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	strs := append([]string{o.Path}, o.Argv...)
	strs = append(strs, o.Env...)
	// Through a symbolic link too: the launcher enters the working
	// directory by its real path.
	for _, p := range []string{dir, o.Path} {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			strs = append(strs, real)
		}
	}
	all, names := tmpNames(filepath.Clean(dir), strs)
	if all {
		return "1"
	}
	return "1/" + strings.Join(names, "/")
}

// tmpNames returns the names of the host's /tmp entries that the working
// directory cwd lies in or strs mention
// (each "/tmp/NAME" in them, anywhere: in a shell script, a PATH-like list
// or an option's value), or all when the working directory is /tmp itself
// (then the whole of it is the run's input). A name is cut where a path
// component or a shell word ends; what follows an unexpanded "$" or "{" or
// "`" is a wildcard; when that leaves nothing (/tmp/$X), all are named.
func tmpNames(cwd string, strs []string) (all bool, names []string) {
	if cwd == "/tmp" {
		return true, nil
	}
	seen := map[string]bool{}
	for _, s := range append([]string{cwd + "/"}, strs...) {
		for {
			i := strings.Index(s, "/tmp/")
			if i < 0 {
				break
			}
			s = s[i+len("/tmp/"):]
			name := s
			if end := strings.IndexAny(name, "/ \t\n\x00'\":;,=()<>|&\\"); end >= 0 {
				name = name[:end]
			}
			if i := strings.IndexAny(name, "${`"); i >= 0 {
				name = name[:i] + "*"
			}
			if name == "*" {
				// /tmp/$X: any of them.
				return true, nil
			}
			if name == "" || name == "." || name == ".." || seen[name] {
				continue
			}
			seen[name] = true
			names = append(names, name)
		}
	}
	return false, names
}
