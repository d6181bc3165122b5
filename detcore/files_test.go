package detcore

import (
	"bytes"
	"testing"
)

func TestEncodeDirents(t *testing.T) {
	ents := []dirent{{name: ".", typ: 4, ino: 1000}, {name: "a-long-name", typ: 8, ino: 1001}}
	tests := []struct {
		name     string
		is64     bool
		count    int
		wantLen  int
		wantNext int
		reclen0  int
		typeAt0  int
		nameAt   int
	}{
		{name: "getdents64 all", is64: true, count: 4096, wantLen: 24 + 32, wantNext: 2, reclen0: 24, typeAt0: 18, nameAt: 19},
		{name: "getdents64 one fits", is64: true, count: 40, wantLen: 24, wantNext: 1, reclen0: 24, typeAt0: 18, nameAt: 19},
		{name: "getdents64 none fits", is64: true, count: 8, wantLen: 0, wantNext: 0},
		{name: "getdents all", count: 4096, wantLen: 24 + 32, wantNext: 2, reclen0: 24, typeAt0: 23, nameAt: 18},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, next := encodeDirents(ents, 0, tc.count, tc.is64)
			if len(b) != tc.wantLen || next != tc.wantNext {
				t.Fatalf("got %d bytes, next %d; want %d, %d", len(b), next, tc.wantLen, tc.wantNext)
			}
			if len(b) == 0 {
				return
			}
			if got := int(le16(b[16:])); got != tc.reclen0 {
				t.Errorf("reclen %d, want %d", got, tc.reclen0)
			}
			if le64(b) != 1000 || le64(b[8:]) != 1 || b[tc.typeAt0] != 4 || b[tc.nameAt] != '.' || b[tc.nameAt+1] != 0 {
				t.Errorf("first record % x", b[:24])
			}
		})
	}
}

func TestSortEntries(t *testing.T) {
	ents := []DirEntry{{Name: "b"}, {Name: ".."}, {Name: "B"}, {Name: "."}, {Name: "a"}, {Name: ".a"}}
	sortEntries(ents)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name)
	}
	want := []string{".", "..", ".a", "B", "a", "b"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

func TestStatRoundTrip(t *testing.T) {
	var st StatxBuf
	putLE32(st[stxMask:], statxBasicStats)
	putLE32(st[stxBlksize:], 4096)
	putLE32(st[stxNlink:], 3)
	putLE32(st[stxUID:], 1000)
	putLE32(st[stxGID:], 100)
	st[stxMode], st[stxMode+1] = 0xa4, 0x81 // 0100644
	putLE64(st[stxIno:], 123456789)
	putLE64(st[stxSize:], 1<<33)
	putLE64(st[stxBlocks:], 17)
	for i, off := range []int{stxAtime, stxCtime, stxMtime} {
		putTimestamp(st[off:], int64(1_700_000_000+i)*1e9+int64(i+1))
	}
	putLE32(st[stxRdevMajor:], 259)
	putLE32(st[stxRdevMinor:], 0x12345)
	putLE32(st[stxDevMajor:], 8)
	putLE32(st[stxDevMinor:], 1)
	b := statxToStat(&st)
	if got := le64(b[statDev:]); got != 0x801 {
		t.Errorf("st_dev %#x, want 0x801", got)
	}
	if back := statToStatx(b); !bytes.Equal(back[:128], st[:128]) || !bytes.Equal(back[stxRdevMajor:144], st[stxRdevMajor:144]) {
		t.Errorf("round trip changed the struct:\n% x\n% x", back[:144], st[:144])
	}
}

func TestDevEncoding(t *testing.T) {
	for _, d := range [][2]uint32{{0, 0}, {8, 1}, {0, 0x8000}, {259, 0xfffff}, {0xfff, 0xff}} {
		if ma, mi := decodeDev(encodeDev(d[0], d[1])); ma != d[0] || mi != d[1] {
			t.Errorf("%d:%d came back as %d:%d", d[0], d[1], ma, mi)
		}
	}
}

func TestVirtualInodes(t *testing.T) {
	fs := &fileState{inodes: map[devIno]*inodeGen{}, nextIno: virtualInoBase}
	a := FileID{Dev: 1, Ino: 10, Btime: 5, BtimeKnown: true}
	steps := []struct {
		name string
		id   FileID
		want uint64
	}{
		{"first file", a, 1000},
		{"another file", FileID{Dev: 2, Ino: 10, BtimeKnown: true}, 1001},
		{"first again", a, 1000},
		{"birth time unknown", FileID{Dev: 1, Ino: 10}, 1000},
		{"inode reused by a new file", FileID{Dev: 1, Ino: 10, Btime: 6, BtimeKnown: true}, 1002},
		{"unknown birth time adopts the next known one", FileID{Dev: 3, Ino: 1}, 1003},
		{"adopted", FileID{Dev: 3, Ino: 1, Btime: 9, BtimeKnown: true}, 1003},
	}
	for _, s := range steps {
		if got := fs.vino(s.id); got != s.want {
			t.Errorf("%s: got %d, want %d", s.name, got, s.want)
		}
	}
}

func TestPutTimestamp(t *testing.T) {
	var b [16]byte
	putTimestamp(b[:], -1) // 1969-12-31 23:59:59.999999999
	if int64(le64(b[:])) != -1 || le32(b[8:]) != 999_999_999 || getTimestamp(b[:]) != -1 {
		t.Errorf("got % x", b)
	}
}

func TestParentOf(t *testing.T) {
	for p, want := range map[string]string{
		"f": "", "d/": "", "a/b": "a", "a/b/": "a", "/x": "/", "/a/b/c": "/a/b", "a//b": "a", "./f": ".", "../d/f": "../d",
	} {
		if got := parentOf(p); got != want {
			t.Errorf("parentOf(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestUnderPattern: a --real-mtimes entry that begins with */ holds the
// files under directories that match its names in a row, at any depth.
func TestUnderPattern(t *testing.T) {
	for _, c := range []struct {
		path string
		want bool
	}{
		{"/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py", true},
		{"/home/u/proj/.venv/lib/python3.12/site-packages/six.py", true},
		{"/opt/conda/lib/python3.10/os.py", true},
		{"/home/u/proj/lib/python3.11", false}, // the directory itself
		{"/home/u/proj/lib/python2.7/os.py", false},
		{"/home/u/proj/mylib/python3/x.py", false},
		{"/home/u/proj/src/app.py", false},
	} {
		if got := underPattern("*/lib/python3*/", c.path); got != c.want {
			t.Errorf("underPattern(*/lib/python3*/, %s) = %v, want %v", c.path, got, c.want)
		}
	}
}
