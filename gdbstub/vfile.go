package gdbstub

import (
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"strconv"
	"strings"
)

// vFile: gdb reads the recording's files (the executable, libraries)
// through these. Replies are "F<result>[,<errno>]" in hex, with binary data
// after a ';'. Only reading is possible.

// gdb's File-I/O errno values (gdb/gdbsupport/fileio.h).
const (
	fileioENOENT = 2
	fileioEIO    = 5
	fileioEBADF  = 9
	fileioEACCES = 13
	fileioEINVAL = 22
)

// gdb's File-I/O open flags and mode bits.
const (
	fileioOAccMode = 3
	fileioSIFREG   = 0o100000
	fileioSIFDIR   = 0o40000
)

// fileioError is the reply for a failure with errno e.
func fileioError(e int) []byte {
	return []byte("F-1," + strconv.FormatInt(int64(e), 16))
}

// errnoOf maps an Open or read error to a File-I/O errno.
func errnoOf(err error) int {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fileioENOENT
	case errors.Is(err, fs.ErrPermission):
		return fileioEACCES
	case errors.Is(err, fs.ErrInvalid):
		return fileioEINVAL
	}
	return fileioEIO
}

func (s *session) vFile(r *request) []byte {
	op, args, _ := strings.Cut(strings.TrimPrefix(r.args, ":"), ":")
	f := strings.Split(args, ",")
	switch op {
	case "setfs":
		return []byte("F0")
	case "open":
		return s.fileOpen(f)
	case "pread":
		return s.filePread(f)
	case "pwrite", "unlink":
		return fileioError(fileioEACCES)
	case "fstat":
		return s.fileFstat(f)
	case "close":
		return s.fileClose(f)
	}
	return nil // readlink and others: unsupported
}

// hexInt parses a hex number that fits an int.
func hexInt(s string) (int, bool) {
	v, err := strconv.ParseInt(s, 16, 64)
	if err != nil || v < 0 || v > 1<<40 {
		return 0, false
	}
	return int(v), true
}

// maxOpenFiles bounds the descriptors a client may hold.
const maxOpenFiles = 256

// fileOpen answers "open:<hex path>,<flags>,<mode>".
func (s *session) fileOpen(f []string) []byte {
	if len(f) != 3 {
		return fileioError(fileioEINVAL)
	}
	path, err := decodeHex(f[0])
	flags, ok := hexInt(f[1])
	if err != nil || !ok {
		return fileioError(fileioEINVAL)
	}
	if flags&fileioOAccMode != 0 {
		return fileioError(fileioEACCES)
	}
	if len(s.files) >= maxOpenFiles {
		return fileioError(fileioEIO)
	}
	file, err := s.t.Open(string(path))
	if err != nil {
		s.logf("gdbstub: open %q: %v", path, err)
		return fileioError(errnoOf(err))
	}
	fd := s.nextFD
	s.nextFD++
	s.files[fd] = file
	return []byte("F" + strconv.FormatInt(int64(fd), 16))
}

// file finds descriptor fd.
func (s *session) file(arg string) (int, fs.File, bool) {
	fd, ok := hexInt(arg)
	if !ok {
		return 0, nil, false
	}
	file, ok := s.files[fd]
	return fd, file, ok
}

// filePread answers "pread:<fd>,<count>,<offset>".
func (s *session) filePread(f []string) []byte {
	if len(f) != 3 {
		return fileioError(fileioEINVAL)
	}
	_, file, ok := s.file(f[0])
	if !ok {
		return fileioError(fileioEBADF)
	}
	count, ok1 := hexInt(f[1])
	off, ok2 := hexInt(f[2])
	if !ok1 || !ok2 {
		return fileioError(fileioEINVAL)
	}
	ra, ok := file.(io.ReaderAt)
	if !ok {
		return fileioError(fileioEIO)
	}
	buf := make([]byte, min(count, maxReply))
	n, err := ra.ReadAt(buf, int64(off))
	if n == 0 && err != nil && err != io.EOF {
		if fi, serr := file.Stat(); serr != nil || int64(off) < fi.Size() {
			return fileioError(errnoOf(err))
		}
		// At or past the end: some ReaderAts call that invalid, not EOF.
	}
	b := []byte("F" + strconv.FormatInt(int64(n), 16) + ";")
	return escapeBinary(b, buf[:n])
}

// fileFstat answers "fstat:<fd>" with gdb's struct stat: big-endian,
// 32-bit dev, ino, mode, nlink, uid, gid, rdev, 64-bit size, blksize,
// blocks, 32-bit atime, mtime, ctime.
func (s *session) fileFstat(f []string) []byte {
	if len(f) != 1 {
		return fileioError(fileioEINVAL)
	}
	_, file, ok := s.file(f[0])
	if !ok {
		return fileioError(fileioEBADF)
	}
	fi, err := file.Stat()
	if err != nil {
		return fileioError(errnoOf(err))
	}
	st := fioStat(fi)
	b := []byte("F" + strconv.FormatInt(int64(len(st)), 16) + ";")
	return escapeBinary(b, st)
}

// fioStat encodes fi as gdb's struct fio_stat.
func fioStat(fi fs.FileInfo) []byte {
	be := binary.BigEndian
	mode := uint32(fi.Mode().Perm())
	if fi.IsDir() {
		mode |= fileioSIFDIR
	} else {
		mode |= fileioSIFREG
	}
	size := uint64(max(fi.Size(), 0))
	mtime := uint32(max(fi.ModTime().Unix(), 0))
	b := make([]byte, 0, 64)
	b = be.AppendUint32(b, 0)    // st_dev
	b = be.AppendUint32(b, 0)    // st_ino
	b = be.AppendUint32(b, mode) // st_mode
	b = be.AppendUint32(b, 1)    // st_nlink
	b = be.AppendUint32(b, 0)    // st_uid
	b = be.AppendUint32(b, 0)    // st_gid
	b = be.AppendUint32(b, 0)    // st_rdev
	b = be.AppendUint64(b, size) // st_size
	b = be.AppendUint64(b, 4096) // st_blksize
	b = be.AppendUint64(b, (size+511)/512)
	b = be.AppendUint32(b, mtime) // st_atime
	b = be.AppendUint32(b, mtime) // st_mtime
	b = be.AppendUint32(b, mtime) // st_ctime
	return b
}

func (s *session) fileClose(f []string) []byte {
	if len(f) != 1 {
		return fileioError(fileioEINVAL)
	}
	fd, file, ok := s.file(f[0])
	if !ok {
		return fileioError(fileioEBADF)
	}
	delete(s.files, fd)
	file.Close()
	return []byte("F0")
}
