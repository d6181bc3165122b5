// Package debuginfo turns the addresses of a replayed x86-64 Linux process
// into source-level answers for the REPL: function, file and line of a PC,
// global variables with their DWARF types and gdb-style values, backtraces,
// disassembly and source listings.
//
// A Space describes one address space. It is built from the process's
// /proc/PID/maps text and an Opener that yields the recording's copies of
// the mapped files. Each mapped ELF file (the executable, ld.so, libc, …)
// becomes a module, loaded on first use and cached by path. A module's load
// bias is the start of a mapping minus the page-aligned p_vaddr of the
// PT_LOAD segment whose page-aligned p_offset equals the mapping's offset;
// addresses in the process are module link-time addresses plus that bias.
//
// Symbols come from DWARF subprograms when present, else from .symtab and
// .dynsym. Lines come from the DWARF line tables. Unwinding interprets the
// DWARF call frame information of .eh_frame or .debug_frame and falls back
// to the frame-pointer chain where no CFI covers a PC.
//
// Nothing here touches a live process: memory is read through a Mem
// function and registers are passed as values, so the package works the
// same on traces, core-like dumps and live replays. Malformed ELF or DWARF
// yields errors or unknown answers, never a panic, and every walk is capped.
//
// A Space is safe for concurrent use; its mu guards the module cache.
package debuginfo
