/* A signal handler running on the stack: an interval timer interrupts the
   main loop, the handler does work in functions of its own. */
#include <signal.h>
#include <string.h>
#include <sys/time.h>
volatile long sink;
__attribute__((noinline)) static void handler_work(int n) {
	for (volatile int i = 0; i < n; i++)
		sink += i;
}
static void handler(int sig) {
	handler_work(3000 + sig);
}
__attribute__((noinline)) static void loop(void) {
	for (volatile int i = 0; i < 100; i++)
		sink ^= i;
}
int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, 0);
	struct itimerval it = {{0, 500}, {0, 500}};
	setitimer(ITIMER_REAL, &it, 0);
	for (;;)
		loop();
}
