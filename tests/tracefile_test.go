package tests

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/trace"
)

// Files of a trace directory that rewriteTrace produces itself; everything
// else in the directory (blobs/ and anything a later format adds) is copied.
var traceOwnFiles = map[string]bool{"header": true, "events": true, "index": true, "blobs": true}

// copyTree copies the directory tree src to dst, which must not exist,
// keeping regular files' and directories' permission bits and symbolic
// links as links.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		return copyEntry(p, filepath.Join(dst, rel), d)
	})
	if err != nil {
		t.Fatalf("copy %s to %s: %v", src, dst, err)
	}
}

// copyEntry copies one directory entry (not its children).
func copyEntry(src, dst string, d fs.DirEntry) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	switch {
	case d.IsDir():
		if err := os.Mkdir(dst, info.Mode().Perm()|0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return nil
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case info.Mode().IsRegular():
		return copyFile(src, dst, info.Mode().Perm())
	default:
		return fmt.Errorf("%s: cannot copy a %v", src, info.Mode().Type())
	}
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// rewriteTrace writes a new trace at dst through the trace package: the
// header of src, each of its events after edit has seen it (edit may change
// the event in place; it returns whether it did), and a copy of its blobs
// and any other files. It returns the numbers of the events edit changed.
// src must be intact: any damage fails t.
func rewriteTrace(t *testing.T, src, dst string, edit func(n uint64, ev *trace.Event) bool) []uint64 {
	t.Helper()
	r, err := trace.Open(src)
	if err != nil {
		t.Fatalf("open trace %s: %v", src, err)
	}
	defer r.Close()
	w, err := trace.Create(dst, *r.Header())
	if err != nil {
		t.Fatalf("create trace %s: %v", dst, err)
	}
	var changed []uint64
	for n, ev := range r.Events() {
		if edit(n, ev) {
			changed = append(changed, n)
		}
		if err := w.Append(ev); err != nil {
			t.Fatalf("rewrite event %d: %v", n, err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatalf("read trace %s: %v", src, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close trace %s: %v", dst, err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		switch {
		case e.Name() == "blobs":
			// Create made an empty blobs directory: fill it.
			blobs, err := os.ReadDir(filepath.Join(src, "blobs"))
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range blobs {
				copyTree(t, filepath.Join(src, "blobs", b.Name()), filepath.Join(dst, "blobs", b.Name()))
			}
		case !traceOwnFiles[e.Name()]:
			copyTree(t, filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()))
		}
	}
	return changed
}

// describeEvents lists the external syscall events of the trace in dir, for
// a failure message.
func describeEvents(t *testing.T, dir string) string {
	t.Helper()
	r, err := trace.Open(dir)
	if err != nil {
		return fmt.Sprintf("open trace: %v", err)
	}
	defer r.Close()
	var b strings.Builder
	total, external := 0, 0
	for n, ev := range r.Events() {
		total++
		if ev.Kind != trace.KindSyscall || !ev.External {
			continue
		}
		external++
		if external <= 40 {
			fmt.Fprintf(&b, "  event %d: tid %d sysno %d result %d", n, ev.Tid, ev.Sysno, ev.Result)
			for _, m := range ev.Mem {
				fmt.Fprintf(&b, " mem{%#x %q blob %v}", m.Addr, truncated(m.Data, 40), !m.Blob.IsZero())
			}
			b.WriteByte('\n')
		}
	}
	return fmt.Sprintf("%d events, %d external syscalls (damage: %v):\n%s", total, external, r.Err(), b.String())
}

func truncated(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// intactEvents returns how many events a reader finds in the trace at dir
// if its events file is cut to size bytes, and whether it then reports the
// trace as damaged. It works on a scratch copy in tmp.
func intactEvents(t *testing.T, dir, tmp string, size int64) (uint64, bool) {
	t.Helper()
	scratch, err := os.MkdirTemp(tmp, "cut-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(scratch)
	for _, name := range []string{"header", "events", "index"} {
		if err := copyFile(filepath.Join(dir, name), filepath.Join(scratch, name), 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	cutEvents(t, scratch, size)
	r, err := trace.Open(scratch)
	if err != nil {
		t.Fatalf("open trace cut at %d bytes: %v", size, err)
	}
	defer r.Close()
	return r.Count(), r.Truncation() != nil
}

// cutEvents truncates the events file of the trace at dir to size bytes.
func cutEvents(t *testing.T, dir string, size int64) {
	t.Helper()
	if err := os.Truncate(filepath.Join(dir, "events"), size); err != nil {
		t.Fatalf("cut the events file: %v", err)
	}
}

// eventsSize returns the size of the events file of the trace at dir.
func eventsSize(t *testing.T, dir string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, "events"))
	if err != nil {
		t.Fatalf("trace %s: %v", dir, err)
	}
	return fi.Size()
}

// lastBlockStart returns the offset in the events file of the trace at dir
// where its last block starts: the smallest cut that keeps every event but
// the last block's. It fails t if the trace has a single block.
func lastBlockStart(t *testing.T, dir string) int64 {
	t.Helper()
	tmp := t.TempDir()
	size := eventsSize(t, dir)
	keep, damaged := intactEvents(t, dir, tmp, size-1)
	if !damaged {
		t.Fatalf("a trace with its events file cut by one byte reads as intact")
	}
	if keep == 0 {
		t.Fatalf("the trace has a single block of events (%s); the guest must make more events", describeEvents(t, dir))
	}
	lo, hi := int64(0), size-1 // intact(lo) < keep, intact(hi) == keep
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if n, _ := intactEvents(t, dir, tmp, mid); n == keep {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
