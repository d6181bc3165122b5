// Shared by the launcher's C files (launcher.c, tmp.c).
#ifndef HERMIT_LAUNCHER_H
#define HERMIT_LAUNCHER_H

// say writes "hermit: launcher: a b: strerror(err)" to stderr.
void say(const char *a, const char *b, int err);

// private_tmp gives the mount namespace its own /tmp (tmp.c).
int private_tmp(const char *spec);

#endif
