package replay

import (
	"bytes"
	"crypto/sha256"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/trace"
)

// blobs is an in-memory blob store for BuildRoot.
type blobs map[trace.BlobID][]byte

func (b blobs) add(content string) trace.BlobID {
	id := trace.BlobID(sha256.Sum256([]byte(content)))
	b[id] = []byte(content)
	return id
}

func (b blobs) open(id trace.BlobID) (io.ReadCloser, error) {
	c, ok := b[id]
	if !ok {
		return nil, &trace.MissingBlobError{ID: id}
	}
	return io.NopCloser(bytes.NewReader(c)), nil
}

func dirEntry(p string, perm uint32) trace.File {
	return trace.File{Path: p, Mode: trace.ModeDir | perm}
}
func linkEntry(p, target string) trace.File {
	return trace.File{Path: p, Mode: trace.ModeSymlink | 0o777, Target: target}
}

// want describes one path of a built root.
type want struct {
	path    string
	mode    fs.FileMode // type and permission bits, as Lstat reports them
	content string      // regular files
	target  string      // symbolic links
}

func checkRoot(t *testing.T, dir string, wants []want) {
	t.Helper()
	for _, w := range wants {
		p := filepath.Join(dir, w.path)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Errorf("%s: %v", w.path, err)
			continue
		}
		if got := fi.Mode() & (fs.ModeType | fs.ModePerm | fs.ModeSticky | fs.ModeSetuid | fs.ModeSetgid); got != w.mode {
			t.Errorf("%s: mode %v, want %v", w.path, got, w.mode)
		}
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil || string(b) != w.content {
				t.Errorf("%s: content %q (%v), want %q", w.path, b, err, w.content)
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			if got, err := os.Readlink(p); err != nil || got != w.target {
				t.Errorf("%s: target %q (%v), want %q", w.path, got, err, w.target)
			}
		}
	}
}

func TestBuildRoot(t *testing.T) {
	bs := blobs{}
	hello, script, other := bs.add("hello\n"), bs.add("#!/bin/sh\necho hi\n"), bs.add("second")
	files := []trace.File{
		dirEntry("/", 0o755),
		{Path: "/etc/motd", Mode: trace.ModeRegular | 0o644, Blob: hello},
		// Listed after it was made as a parent of /etc/motd.
		dirEntry("/etc", 0o750),
		{Path: "/usr/bin/hi", Mode: trace.ModeRegular | 0o755, Blob: script},
		{Path: "/usr/bin/su", Mode: trace.ModeRegular | 0o4755, Blob: script},
		{Path: "/usr/share/ro", Mode: trace.ModeRegular | 0o444, Blob: hello},
		{Path: "/empty", Mode: trace.ModeRegular | 0o600},
		dirEntry("/tmp", 0o1777),
		dirEntry("/locked", 0o500),
		{Path: "/locked/inside", Mode: trace.ModeRegular | 0o400, Blob: hello},
		linkEntry("/bin", "usr/bin"),
		linkEntry("/etc/abs", "/etc/motd"),
		linkEntry("/etc/escape", "../../../../etc/passwd"),
		linkEntry("/dangling", "/nowhere"),
		// Duplicates and conflicts: the first entry wins.
		{Path: "/etc/motd", Mode: trace.ModeRegular | 0o600, Blob: other},
		dirEntry("/etc/motd", 0o700),
		{Path: "/tmp", Mode: trace.ModeRegular | 0o644, Blob: other},
		{Path: "/bin", Mode: trace.ModeRegular | 0o644, Blob: other},
		dirEntry("/tmp", 0o700),
		// Below a regular file: skipped.
		{Path: "/etc/motd/x", Mode: trace.ModeRegular | 0o644, Blob: other},
		// Neither directory, file nor link: skipped.
		{Path: "/dev/null", Mode: 0o020000 | 0o666},
		// Not clean, but harmless.
		{Path: "//var/./log/", Mode: trace.ModeDir | 0o700},
	}
	dir := t.TempDir()
	if err := BuildRoot(dir, files, bs.open); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "locked"), 0o700) })
	checkRoot(t, dir, []want{
		{path: ".", mode: fs.ModeDir | 0o755},
		{path: "etc", mode: fs.ModeDir | 0o750},
		{path: "etc/motd", mode: 0o644, content: "hello\n"},
		{path: "usr", mode: fs.ModeDir | 0o755},
		{path: "usr/bin", mode: fs.ModeDir | 0o755},
		{path: "usr/bin/hi", mode: 0o755, content: "#!/bin/sh\necho hi\n"},
		{path: "usr/bin/su", mode: 0o755, content: "#!/bin/sh\necho hi\n"},
		{path: "usr/share/ro", mode: 0o444, content: "hello\n"},
		{path: "empty", mode: 0o600},
		{path: "tmp", mode: fs.ModeDir | fs.ModeSticky | 0o777},
		{path: "locked", mode: fs.ModeDir | 0o500},
		{path: "locked/inside", mode: 0o400, content: "hello\n"},
		{path: "bin", mode: fs.ModeSymlink | 0o777, target: "usr/bin"},
		{path: "etc/abs", mode: fs.ModeSymlink | 0o777, target: "/etc/motd"},
		{path: "etc/escape", mode: fs.ModeSymlink | 0o777, target: "../../../../etc/passwd"},
		{path: "dangling", mode: fs.ModeSymlink | 0o777, target: "/nowhere"},
		{path: "var/log", mode: fs.ModeDir | 0o700},
	})
	for _, p := range []string{"dev", "etc/motd/x"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s exists, want skipped", p)
		}
	}
}

func TestBuildRootHostile(t *testing.T) {
	bs := blobs{}
	evil := bs.add("pwned")
	tests := []struct {
		name  string
		files []trace.File
		want  string // in the error
	}{
		{"relative", []trace.File{{Path: "etc/passwd", Mode: trace.ModeRegular | 0o644, Blob: evil}}, `"etc/passwd": not an absolute path`},
		{"empty", []trace.File{{Path: "", Mode: trace.ModeDir | 0o755}}, `"": not an absolute path`},
		{"dotdot", []trace.File{{Path: "/../outside", Mode: trace.ModeRegular | 0o644, Blob: evil}}, `"/../outside": path contains ".."`},
		{"dotdot inside", []trace.File{{Path: "/a/../../outside", Mode: trace.ModeRegular | 0o644, Blob: evil}}, `path contains ".."`},
		{"nul", []trace.File{{Path: "/a\x00b", Mode: trace.ModeDir | 0o755}}, "NUL"},
		{"through absolute link", []trace.File{
			linkEntry("/evil", "/"),
			{Path: "/evil/outside", Mode: trace.ModeRegular | 0o644, Blob: evil},
		}, "/evil/outside: parent /evil is a symbolic link"},
		{"through relative link", []trace.File{
			dirEntry("/a", 0o755),
			linkEntry("/a/up", "../../.."),
			dirEntry("/a/up/outside", 0o755),
		}, "/a/up/outside: parent /a/up is a symbolic link"},
		{"through deep link", []trace.File{
			linkEntry("/l", "/tmp"),
			{Path: "/l/x/y/outside", Mode: trace.ModeRegular | 0o644, Blob: evil},
		}, "parent /l is a symbolic link"},
		{"missing blob", []trace.File{
			{Path: "/etc/shadow", Mode: trace.ModeRegular | 0o600, Blob: trace.BlobID{1}},
		}, "replay root: /etc/shadow: missing blob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "root")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			err := BuildRoot(dir, tt.files, bs.open)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got error %v, want one containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
			// Nothing was created beside the root.
			ents, _ := os.ReadDir(parent)
			if len(ents) != 1 {
				t.Errorf("%d entries beside the root, want none", len(ents)-1)
			}
		})
	}
}

// A symbolic link at a path does not let a later entry for the same path
// write through it.
func TestBuildRootLinkThenFile(t *testing.T) {
	bs := blobs{}
	parent := t.TempDir()
	victim := filepath.Join(parent, "victim")
	if err := os.WriteFile(victim, []byte("safe"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "root")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	files := []trace.File{
		linkEntry("/f", victim),
		{Path: "/f", Mode: trace.ModeRegular | 0o644, Blob: bs.add("pwned")},
		linkEntry("/d", parent),
		dirEntry("/d", 0o777),
	}
	if err := BuildRoot(dir, files, bs.open); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "safe" {
		t.Errorf("victim now holds %q", b)
	}
	if fi, _ := os.Stat(parent); fi.Mode().Perm() == 0o777 {
		t.Errorf("the parent of the root was made %v", fi.Mode())
	}
}

func TestBuildRootNotADirectory(t *testing.T) {
	err := BuildRoot(filepath.Join(t.TempDir(), "missing"), nil, blobs{}.open)
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v, want a one-line error", err)
	}
}
