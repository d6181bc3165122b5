/* cpu_view.c: prints what a program can learn, without a system call,
 * about the CPU it runs on and the files it has mapped: the CPU number
 * from the segment limit the vDSO's getcpu reads (lsl) and from rdpid
 * where the CPU has it, the initial APIC id of cpuid leaf 1 (which glibc
 * keeps in ld.so's memory), and a checksum of every readable file mapping
 * with the device and inode /proc/self/maps names it by. The file given
 * as argv[1] is mapped too, so that a file on the private /tmp (an
 * overlay, whose device number the kernel hands out) is among them.
 * hermit's own page (/memfd:hermit-clock) is listed, not checksummed: its
 * table of descriptors holds the host's file identities, which differ in
 * a replay (README, "File reads and writes without stops"). */
#include "guest.h"
#include <cpuid.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

static unsigned lsl_cpu(void) {
	unsigned v = 0;
	__asm__ volatile("lsl %1, %0" : "=r"(v) : "r"(0x7b)); /* GDT_ENTRY_CPUNODE */
	return v & 0xfff;
}

int main(int argc, char **argv) {
	unsigned a, b, c, d;
	CHECK(argc == 2);
	int fd = open(argv[1], O_RDONLY);
	CHECK(fd >= 0);
	CHECK(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) != MAP_FAILED);
	struct stat st;
	CHECK(fstat(fd, &st) == 0);
	say("%s: stat dev %lx ino %lu\n", argv[1], (unsigned long)st.st_dev, (unsigned long)st.st_ino);

	say("lsl cpu %u\n", lsl_cpu());
	CHECK(__get_cpuid(1, &a, &b, &c, &d));
	say("apic id %u\n", b >> 24);
	__cpuid_count(7, 0, a, b, c, d);
	if (c & (1u << 22)) {
		unsigned long p;
		__asm__ volatile("rdpid %0" : "=r"(p));
		say("rdpid %lu\n", p & 0xfff);
	}

	FILE *maps = fopen("/proc/self/maps", "r");
	CHECK(maps != NULL);
	char line[512];
	while (fgets(line, sizeof line, maps)) {
		unsigned long lo, hi;
		char perm[5], dev[16], path[256] = "";
		unsigned long ino;
		if (sscanf(line, "%lx-%lx %4s %*s %15s %lu %255s", &lo, &hi, perm, dev, &ino, path) < 5)
			continue;
		if (perm[0] != 'r' || path[0] != '/')
			continue;
		if (strncmp(path, "/memfd:hermit-", 14) == 0) {
			say("%lx-%lx %s %s %lu %s\n", lo, hi, perm, dev, ino, path);
			continue;
		}
		uint64_t h = 1469598103934665603ULL;
		for (const unsigned char *p = (const unsigned char *)lo; p < (const unsigned char *)hi; p++)
			h = (h ^ *p) * 1099511628211ULL;
		say("%lx-%lx %s %s %lu %s %016llx\n", lo, hi, perm, dev, ino, path, (unsigned long long)h);
	}
	return 0;
}
