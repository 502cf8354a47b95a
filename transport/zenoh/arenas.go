//go:build cgo && linux

package zenoh

// The native library's threads (zenoh's runtime, iceoryx2) allocate with
// glibc's malloc, which gives every thread that contends an arena of its
// own and reserves 64 MiB of address space for each, up to eight per core.
// Under an address-space limit (ulimit -v, as CI containers set it) those
// reservations, not the data, used up the limit: a replay of a few records
// reserved about 2 GB and the Go runtime then died with "out of memory"
// at 30 MB resident. Bounding the arenas to one per core (at least two)
// before any thread starts keeps the reservation near the data; a
// MALLOC_ARENA_MAX set by the user is left as it is.

/*
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void vrlog_bound_malloc_arenas(void) {
	if (getenv("MALLOC_ARENA_MAX") != NULL) {
		return;
	}
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	mallopt(M_ARENA_MAX, n < 2 ? 2 : (int)n);
}

// vrlog_malloc_arenas counts the arenas malloc_info lists (one <heap> each).
static int vrlog_malloc_arenas(void) {
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL) {
		return -1;
	}
	malloc_info(0, f);
	fclose(f);
	int n = 0;
	for (char *p = buf; (p = strstr(p, "<heap nr=")) != NULL; p++) {
		n++;
	}
	free(buf);
	return n;
}
*/
import "C"

// mallocArenas is how many malloc arenas the process has (-1 when it
// cannot tell): what the bound above limits.
func mallocArenas() int { return int(C.vrlog_malloc_arenas()) }
