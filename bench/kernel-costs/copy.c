// copy.c: what a byte copied costs on this machine as a function of the
// bytes written between its write and its read (issue 11): the copies of
// a TCP stream through one machine, as the kernel makes them, with
// `rep movsb` (copy_user_generic on a CPU with FSRM, as this one).
//
//   gcc -O2 -o copy copy.c && ./copy [MB_TOTAL [NAP_US]]
//
// For each distance D a ring of D bytes is written in 64 KiB chunks from
// a 64 KiB user buffer (the sender's tcp_sendmsg copy into fresh pages)
// and each chunk is read back into another 64 KiB user buffer when D
// more bytes have been written since (the receiver's copy to user). It
// prints ns a byte of each copy and of both together, of the median
// chunk (a chunk preempted mid-copy on a busy machine is left out so). With NAP_US the
// process sleeps that long before each chunk (the shaped path's wake-up
// a unit: an idle vCPU halts, and its caches may serve others meanwhile). A byte read D
// bytes after its write is in a cache of D bytes or more (LRU, a stream).
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 65536

static inline void movsb(void *d, const void *s, size_t n) {
	asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
	size_t total = (argc > 1 ? atol(argv[1]) : 512) << 20;
	int nap = argc > 2 ? atoi(argv[2]) : 0; // us slept before each chunk: a wake-up a unit
	size_t dists[] = {128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20,
			  16 << 20, 32 << 20, 64 << 20, 128 << 20};
	char *ubuf = aligned_alloc(4096, CHUNK), *rbuf = aligned_alloc(4096, CHUNK);
	memset(ubuf, 1, CHUNK);
	memset(rbuf, 2, CHUNK);
	printf("%-10s %10s %10s %10s\n", "distance", "write ns/B", "read ns/B", "both ns/B");
	for (size_t i = 0; i < sizeof dists / sizeof dists[0]; i++) {
		size_t d = dists[i], n = d / CHUNK;
		char *ring = aligned_alloc(4096, d);
		memset(ring, 3, d);
		size_t rounds = total / CHUNK;
		double *tw = calloc(rounds, sizeof(double)), *tr = calloc(rounds, sizeof(double));
		for (size_t k = 0; k < rounds + n; k++) {
			char *c = ring + (k % n) * CHUNK;
			if (nap)
				usleep(nap);
			double t0 = now();
			if (k >= n)
				movsb(rbuf, c, CHUNK); // read the chunk written d bytes ago
			double t1 = now();
			movsb(c, ubuf, CHUNK); // write a new chunk in its place
			double t2 = now();
			if (k >= n) {
				tr[k - n] = t1 - t0;
				tw[k - n] = t2 - t1;
			}
		}
		// the median chunk: a chunk preempted mid-copy (a busy machine)
		// is an outlier, not the copy's cost
		qsort(tw, rounds, sizeof(double), cmp);
		qsort(tr, rounds, sizeof(double), cmp);
		double w = tw[rounds / 2] / CHUNK, r = tr[rounds / 2] / CHUNK;
		printf("%-10zu %10.4f %10.4f %10.4f\n", d >> 10, w, r, (w + r) / 2);
		free(ring);
		free(tw);
		free(tr);
	}
	return 0;
}
