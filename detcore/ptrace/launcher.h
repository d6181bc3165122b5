// Shared by the launcher's C files (launcher.c, tmp.c, machine.c).
#ifndef HERMIT_LAUNCHER_H
#define HERMIT_LAUNCHER_H

#include <dirent.h>

// say writes "hermit: launcher: a b: strerror(err)" to stderr.
void say(const char *a, const char *b, int err);

// private_tmp gives the mount namespace its own /tmp (tmp.c).
int private_tmp(const char *spec);

// machine_files writes the machine files the tracer passed in file fd
// (machineFiles in machine.go: for each, a line "NAME SEC NSEC LEN" and
// LEN bytes) into directory dir, made if missing, and closes fd. It
// returns dir open, or NULL (machine.c).
DIR *machine_files(int fd, const char *dir);

// overlay_machine mounts the machine files of file fd over the host's
// files whose paths their names encode, and closes fd (machine.c).
void overlay_machine(int fd);

#endif
