package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hermitdbg/hermit/tests/internal/procrun"
)

// realTarget is the hermit/native ratio the programs users run should
// stay under.
const realTarget = 1.5

// realWorkloads prepares, in dir, the programs users run: a Go test
// binary, Python, gcc, make -j2, sqlite3 and sort, each on inputs made
// here. It returns the workloads it could prepare and a line for each it
// could not (a tool missing).
func realWorkloads(dir string, timeout time.Duration) ([]workload, []string) {
	var out []workload
	var missing []string
	add := func(name string, argv []string, err error) {
		if err != nil {
			missing = append(missing, fmt.Sprintf("%s: left out: %v", name, err))
			return
		}
		out = append(out, workload{name: name, argv: argv, target: realTarget})
	}
	add(goTestWorkload(dir, timeout))
	add(pythonWorkload(dir))
	add(gccWorkload(dir))
	add(makeWorkload(dir))
	add(sqliteWorkload(dir))
	add(sortWorkload(dir))
	return out, missing
}

// shell runs script with sh -c (for a working directory or redirection).
func shell(script string) []string { return []string{"/bin/sh", "-c", script} }

func goTestWorkload(dir string, timeout time.Duration) (string, []string, error) {
	const name = "Go test binary: encoding/json -test.short"
	bin := filepath.Join(dir, "json.test")
	res, err := procrun.Run(exec.Command("go", "test", "-c", "-o", bin, "encoding/json"), timeout)
	if err == nil && res.Exit != 0 {
		err = fmt.Errorf("go test -c: exit %d: %s", res.Exit, firstLine(res.Stderr))
	}
	if err != nil {
		return name, nil, err
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return name, nil, err
	}
	// Its tests read their testdata from the package's directory.
	src := filepath.Join(strings.TrimSpace(string(goroot)), "src", "encoding", "json")
	return name, shell(fmt.Sprintf("cd %s && exec %s -test.short", src, bin)), nil
}

func pythonWorkload(dir string) (string, []string, error) {
	const name = "python3: json round trip of a 4 MB file"
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		if py, err = exec.LookPath("python3"); err != nil {
			return name, nil, err
		}
	}
	var doc []map[string]any
	for i := 0; i < 40000; i++ {
		doc = append(doc, map[string]any{"id": i, "name": fmt.Sprintf("item-%d", i), "tags": []string{"a", "b", "c"}, "price": float64(i) / 7})
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return name, nil, err
	}
	f := filepath.Join(dir, "doc.json")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		return name, nil, err
	}
	return name, []string{py, "-c", "import json,sys; d=json.load(open(sys.argv[1])); s=json.dumps(d, sort_keys=True); assert json.loads(s)==d", f}, nil
}

// cSource returns n lines of C: small functions calling each other.
func cSource(n int, prefix string) string {
	var b strings.Builder
	b.WriteString("#include <stdio.h>\n")
	for i := 0; i < n/5; i++ {
		fmt.Fprintf(&b, "int %s%d(int x) {\n\tint y = x * %d + %d;\n\treturn y %% 7 ? y + %s%d(x - 1) : y;\n}\n", prefix, i, i+3, i, prefix, max(i-1, 0))
	}
	return b.String()
}

func gccWorkload(dir string) (string, []string, error) {
	const name = "gcc -O2 of a generated 2,000-line file"
	cc, err := exec.LookPath("gcc")
	if err != nil {
		return name, nil, err
	}
	f := filepath.Join(dir, "gen.c")
	if err := os.WriteFile(f, []byte(cSource(2000, "f")), 0o644); err != nil {
		return name, nil, err
	}
	return name, []string{cc, "-O2", "-c", "-o", filepath.Join(dir, "gen.o"), f}, nil
}

func makeWorkload(dir string) (string, []string, error) {
	const name = "make -j2 of a 16-file C project"
	mk, err := exec.LookPath("make")
	if err != nil {
		return name, nil, err
	}
	proj := filepath.Join(dir, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		return name, nil, err
	}
	var objs []string
	for i := 0; i < 16; i++ {
		src := fmt.Sprintf("m%d.c", i)
		if err := os.WriteFile(filepath.Join(proj, src), []byte(cSource(200, fmt.Sprintf("m%d_", i))), 0o644); err != nil {
			return name, nil, err
		}
		objs = append(objs, fmt.Sprintf("m%d.o", i))
	}
	main := "int m0_0(int);\nint main(void) { return m0_0(3) & 0; }\n"
	if err := os.WriteFile(filepath.Join(proj, "main.c"), []byte(main), 0o644); err != nil {
		return name, nil, err
	}
	makefile := fmt.Sprintf("prog: main.o %s\n\tcc -o $@ $^\n%%.o: %%.c\n\tcc -O1 -c -o $@ $<\n", strings.Join(objs, " "))
	if err := os.WriteFile(filepath.Join(proj, "Makefile"), []byte(makefile), 0o644); err != nil {
		return name, nil, err
	}
	// -B: every run builds everything.
	return name, []string{mk, "-s", "-B", "-j2", "-C", proj}, nil
}

func sqliteWorkload(dir string) (string, []string, error) {
	const name = "sqlite3: 10k inserts into a file"
	sq, err := exec.LookPath("sqlite3")
	if err != nil {
		return name, nil, err
	}
	var b strings.Builder
	b.WriteString("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v REAL);\nBEGIN;\n")
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&b, "INSERT INTO t(name, v) VALUES ('row %d', %d.5);\n", i, i)
	}
	b.WriteString("COMMIT;\nSELECT count(*), sum(v) FROM t;\n")
	script := filepath.Join(dir, "inserts.sql")
	if err := os.WriteFile(script, []byte(b.String()), 0o644); err != nil {
		return name, nil, err
	}
	db := filepath.Join(dir, "bench.db")
	return name, shell(fmt.Sprintf("rm -f %s && %s %s < %s", db, sq, db, script)), nil
}

func sortWorkload(dir string) (string, []string, error) {
	const name = "sort of 1M lines"
	st, err := exec.LookPath("sort")
	if err != nil {
		return name, nil, err
	}
	var b strings.Builder
	x := uint64(88172645463325252)
	for i := 0; i < 1000000; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		fmt.Fprintf(&b, "%016x line %d\n", x, i)
	}
	f := filepath.Join(dir, "lines.txt")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		return name, nil, err
	}
	return name, []string{st, "-o", filepath.Join(dir, "sorted.txt"), f}, nil
}
