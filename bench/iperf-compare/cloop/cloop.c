// cloop runs tsolab's stream loops (engine/kernel/workload.go: streamSend
// and drain) in C, one process with a sending and a receiving thread as
// tsolab's, without the Go runtime: no scheduler passes, no runtime
// threads. run.sh -C runs it in every round beside iperf3 and tsolab, so
// that a gap between tsolab and iperf3 splits into what the loops do
// (cloop against iperf3) and what the Go runtime and the engine add
// (tsolab against cloop). A benchmark tool, not part of the product.
//
//   cloop TX_NETNS RX_NETNS RX_ADDR PORT SECONDS WRITE_SIZE
//
// The receiver listens on RX_ADDR:PORT in RX_NETNS (/run/netns), the
// sender connects from TX_NETNS; both sockets are then non-blocking.
// The sender writes one reused WRITE_SIZE buffer: a write cut short
// writes the rest at once, a refused one (EAGAIN) writes again, and ten
// refused in a row since the last whole write poll for room (fullTries).
// The receiver reads 128 KiB (recvBufSize) a call; a read that found less
// polls (drain). The polls time out after 8 ms, as tsolab's do at its
// next pass. The main thread shuts the sending side SECONDS after both
// threads start, as the engine's sampler does at the deadline; the
// sender's next write fails and it ends; the receiver reads to EOF. It
// prints, like the driver, throughput_bps (everything read, over the
// start to the receiver's end) and each thread's CPU (its
// CLOCK_THREAD_CPUTIME_ID) in % of one core.
//
// With CLOOP_PIN=TX,RX in the environment the sending thread is pinned to
// CPU TX and the receiving thread to CPU RX (a test of placement, as
// goloop's pin step; neither tool pins by default).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { RECV_BUF = 128 << 10, FULL_TRIES = 10, POLL_MS = 8 };

static int cfd, sfd, write_size;
static pthread_barrier_t go;
static double tx_cpu, rx_cpu, rx_end;
static long long got;

static double now(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

// enter moves the calling thread into network namespace name.
static void enter(const char *name)
{
	char p[512];
	snprintf(p, sizeof p, "/run/netns/%s", name);
	int f = open(p, O_RDONLY | O_CLOEXEC);
	if (f < 0 || setns(f, CLONE_NEWNET) < 0)
		die(p);
	close(f);
}

// pin pins the calling thread to CPU cpu when cpu >= 0.
static void pin(int cpu)
{
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) < 0)
		die("sched_setaffinity");
}

static int pin_tx = -1, pin_rx = -1;

static void *sender(void *arg)
{
	(void)arg;
	pin(pin_tx);
	char *buf = malloc(write_size);
	for (int i = 0; i < write_size; i++)
		buf[i] = (char)i;
	pthread_barrier_wait(&go);
	double c0 = now(CLOCK_THREAD_CPUTIME_ID);
	struct pollfd p = {.fd = cfd, .events = POLLOUT};
	int off = 0, refused = 0;
	for (;;) {
		ssize_t n = write(cfd, buf + off, write_size - off);
		if (n > 0 && (off += n) == write_size)
			off = 0;
		if ((n < 0 && errno == EAGAIN) || (n > 0 && off != 0)) {
			if (n < 0 && ++refused >= FULL_TRIES) {
				refused = 0;
				poll(&p, 1, POLL_MS);
			}
			continue;
		}
		refused = 0;
		if (n < 0 && errno != EINTR)
			break; // the deadline shut the sending side
	}
	tx_cpu = now(CLOCK_THREAD_CPUTIME_ID) - c0;
	free(buf);
	return NULL;
}

static void *receiver(void *arg)
{
	(void)arg;
	pin(pin_rx);
	char *buf = malloc(RECV_BUF);
	pthread_barrier_wait(&go);
	double c0 = now(CLOCK_THREAD_CPUTIME_ID);
	struct pollfd p = {.fd = sfd, .events = POLLIN};
	for (;;) {
		ssize_t n = read(sfd, buf, RECV_BUF);
		if (n == 0)
			break;
		if (n > 0)
			got += n;
		if ((n < 0 && errno == EAGAIN) || (n > 0 && n < RECV_BUF))
			poll(&p, 1, POLL_MS);
		else if (n < 0 && errno != EINTR)
			die("read");
	}
	rx_cpu = now(CLOCK_THREAD_CPUTIME_ID) - c0;
	rx_end = now(CLOCK_MONOTONIC);
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: cloop TX_NETNS RX_NETNS RX_ADDR PORT SECONDS WRITE_SIZE\n");
		return 2;
	}
	double secs = atof(argv[5]);
	write_size = atoi(argv[6]);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[4]))};
	if (inet_pton(AF_INET, argv[3], &sa.sin_addr) != 1 || secs <= 0 || write_size <= 0) {
		fprintf(stderr, "cloop: bad address, duration or write size\n");
		return 2;
	}
	const char *pins = getenv("CLOOP_PIN");
	if (pins && sscanf(pins, "%d,%d", &pin_tx, &pin_rx) != 2) {
		fprintf(stderr, "cloop: CLOOP_PIN=%s: want TX_CPU,RX_CPU\n", pins);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	// The main thread makes the sockets: the listener in the receiver's
	// namespace, the client in the sender's (a socket stays in the
	// namespace it was made in).
	enter(argv[2]);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(lfd, 1) < 0)
		die("listen");
	enter(argv[1]);
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cfd < 0 || connect(cfd, (struct sockaddr *)&sa, sizeof sa) < 0)
		die("connect");
	if ((sfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
		die("accept");
	close(lfd);
	if (fcntl(cfd, F_SETFL, O_NONBLOCK) < 0 || fcntl(sfd, F_SETFL, O_NONBLOCK) < 0)
		die("O_NONBLOCK");
	pthread_barrier_init(&go, NULL, 3);
	pthread_t tx, rx;
	if (pthread_create(&rx, NULL, receiver, NULL) || pthread_create(&tx, NULL, sender, NULL))
		die("pthread_create");
	pthread_barrier_wait(&go);
	double t0 = now(CLOCK_MONOTONIC);
	struct timespec d = {.tv_sec = (time_t)secs, .tv_nsec = (long)((secs - (time_t)secs) * 1e9)};
	while (nanosleep(&d, &d) < 0 && errno == EINTR)
		;
	shutdown(cfd, SHUT_WR);
	pthread_join(tx, NULL);
	pthread_join(rx, NULL);
	double el = rx_end - t0;
	printf("throughput_bps=%.0f task_tx_pct=%.1f task_rx_pct=%.1f task_other_pct=0.0\n", got * 8 / el, 100 * tx_cpu / el, 100 * rx_cpu / el);
	return 0;
}
