/* guest.h: output and checking helpers shared by the C guest programs.
 *
 * Include it first: it defines _GNU_SOURCE. say() formats a message and emits
 * it with a single write(2) on stdout, so the output never depends on stdio
 * buffering, is not duplicated by fork, and lines from different threads or
 * processes never interleave mid-line. CHECK() fails the guest with exit
 * status 1 and a message on stderr naming the broken condition.
 */
#ifndef GUEST_H
#define GUEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* writeall writes all of buf to fd, retrying short writes and EINTR. */
static inline void writeall(int fd, const char *buf, size_t len) {
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(3);
		buf += n;
		len -= (size_t)n;
	}
}

/* vformat formats into buf, truncating at its size; returns the length. */
static inline size_t vformat(char *buf, size_t size, const char *fmt, va_list ap) {
	int n = vsnprintf(buf, size, fmt, ap);
	if (n < 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

__attribute__((format(printf, 2, 3))) static inline void sayfd(int fd, const char *fmt, ...) {
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	size_t n = vformat(buf, sizeof buf, fmt, ap);
	va_end(ap);
	writeall(fd, buf, n);
}

#define say(...) sayfd(1, __VA_ARGS__)

__attribute__((noreturn)) static inline void check_failed(const char *file, int line, const char *cond) {
	sayfd(2, "FAILED %s:%d: %s (errno %d)\n", file, line, cond, errno);
	exit(1);
}

#define CHECK(cond)                                              \
	do {                                                     \
		if (!(cond))                                     \
			check_failed(__FILE__, __LINE__, #cond); \
	} while (0)

#endif /* GUEST_H */
