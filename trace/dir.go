package trace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LatestLink is the name of the symbolic link, in the trace directory, to
// the most recent trace.
const LatestLink = "latest"

// DefaultDir returns the directory that holds traces: $HERMIT_TRACE_DIR if
// set, else $XDG_DATA_HOME/hermit if XDG_DATA_HOME is an absolute path, else
// ~/.local/share/hermit. Without a home directory it falls back to
// hermit-UID in the system temporary directory.
func DefaultDir() string {
	if d := os.Getenv("HERMIT_TRACE_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "hermit")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".local", "share", "hermit")
	}
	return filepath.Join(os.TempDir(), "hermit-"+strconv.Itoa(os.Getuid()))
}

// IsTrace reports whether dir holds a trace header (intact or not).
func IsTrace(dir string) bool {
	f, err := os.Open(filepath.Join(dir, headerFile))
	if err != nil {
		return false
	}
	defer f.Close()
	var m [len(headerMagic)]byte
	_, err = io.ReadFull(f, m[:])
	return err == nil && m == headerMagic
}

// Resolve turns a TRACE argument into a trace directory. An empty arg means
// the latest trace in base. An arg containing a path separator is a path;
// otherwise it names a trace in base, or failing that a directory in the
// current one. Symbolic links are resolved, so the result names the trace
// itself. Resolve fails if the result is not a trace (ErrNotTrace).
func Resolve(base, arg string) (string, error) {
	var p string
	switch {
	case arg == "":
		p = filepath.Join(base, LatestLink)
		if _, err := os.Lstat(p); err != nil {
			return "", fmt.Errorf("no latest trace in %s", base)
		}
	case strings.ContainsRune(arg, filepath.Separator) || arg == "." || arg == "..":
		p = arg
	default:
		p = filepath.Join(base, arg)
		if _, err := os.Lstat(p); err != nil {
			if _, err := os.Stat(arg); err != nil {
				return "", fmt.Errorf("no trace %q in %s", arg, base)
			}
			p = arg
		}
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, unwrapPathError(err))
	}
	if !IsTrace(real) {
		return "", fmt.Errorf("%s: %w", real, ErrNotTrace)
	}
	return filepath.Abs(real)
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// NewDir creates a new, empty trace directory in base for a recording of
// program, named after the program's base name and a number one higher than
// any earlier recording of it: base/ls-1, base/ls-2, ... base is created
// (mode 0700) if needed.
func NewDir(base, program string) (string, error) {
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fmt.Errorf("new trace dir: %w", err)
	}
	name := traceName(program)
	ents, err := os.ReadDir(base)
	if err != nil {
		return "", fmt.Errorf("new trace dir: %w", err)
	}
	n := 0
	for _, e := range ents {
		if rest, ok := strings.CutPrefix(e.Name(), name+"-"); ok {
			if k, err := strconv.Atoi(rest); err == nil && k > n {
				n = k
			}
		}
	}
	for range 1000 {
		n++
		dir := filepath.Join(base, name+"-"+strconv.Itoa(n))
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("new trace dir: %w", err)
		}
	}
	return "", fmt.Errorf("new trace dir: no free name for %s in %s", name, base)
}

// traceName derives a file name from a program path.
func traceName(program string) string {
	name := []byte(filepath.Base(program))
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			name[i] = '_'
		}
	}
	s := strings.TrimLeft(string(name), ".")
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" || s == LatestLink {
		s = "trace"
	}
	return s
}

// SetLatest points the latest link in base at trace directory dir,
// atomically replacing any earlier link.
func SetLatest(base, dir string) error {
	target := dir
	if abs, err := filepath.Abs(dir); err == nil {
		target = abs
	}
	if absBase, err := filepath.Abs(base); err == nil && filepath.Dir(target) == absBase {
		target = filepath.Base(target) // relative, so base can move
	}
	tmp := filepath.Join(base, fmt.Sprintf(".%s-%d-%d", LatestLink, os.Getpid(), rand.Uint32()))
	if err := os.Symlink(target, tmp); err != nil {
		return fmt.Errorf("set latest trace: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(base, LatestLink)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("set latest trace: %w", err)
	}
	return nil
}

// Entry describes one trace found by List.
type Entry struct {
	Name   string // directory name
	Path   string
	Latest bool    // the latest link points here
	Header *Header // nil if the header is unreadable
	Events uint64  // events the trace holds (up to the damage, if any)
	Size   int64   // bytes used by all its files
	Err    error   // why it cannot be opened, or its truncation or damage
}

// List returns the traces in base, oldest first. A missing base holds no
// traces. Directories without a trace header are skipped.
func List(base string) ([]Entry, error) {
	ents, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	latest, _ := filepath.EvalSymlinks(filepath.Join(base, LatestLink))
	var out []Entry
	for _, de := range ents {
		if !de.IsDir() {
			continue
		}
		p := filepath.Join(base, de.Name())
		if !IsTrace(p) {
			continue
		}
		e := Entry{Name: de.Name(), Path: p, Size: dirSize(p)}
		if real, err := filepath.EvalSymlinks(p); err == nil && real == latest {
			e.Latest = true
		}
		r, err := Open(p)
		if err != nil {
			e.Err = err
		} else {
			e.Header, e.Events, e.Err = r.Header(), r.Count(), r.Truncation()
			r.Close()
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b Entry) int {
		return created(a).Compare(created(b))
	})
	return out, nil
}

func created(e Entry) time.Time {
	if e.Header == nil {
		return time.Time{}
	}
	return e.Header.Created
}

// dirSize sums the sizes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Remove deletes the trace in dir. It refuses (ErrNotTrace) a directory
// without a trace header. If the latest link next to dir pointed at it, the
// link moves to the newest remaining trace, or is removed.
func Remove(dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("remove trace: %w", err)
	}
	if !IsTrace(real) {
		return fmt.Errorf("remove trace %s: %w", real, ErrNotTrace)
	}
	base := filepath.Dir(real)
	link := filepath.Join(base, LatestLink)
	latest, _ := filepath.EvalSymlinks(link)
	if err := os.RemoveAll(real); err != nil {
		return fmt.Errorf("remove trace: %w", err)
	}
	if latest != real {
		return nil
	}
	ents, err := List(base)
	if err != nil || len(ents) == 0 {
		if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove latest link: %w", err)
		}
		return nil
	}
	return SetLatest(base, ents[len(ents)-1].Path)
}
