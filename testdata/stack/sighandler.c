/* A signal handler running on the stack: an interval timer interrupts the
   main loop, the handler does work in functions of its own. On x86-64 the
   handler returns to glibc's __restore_rt; on AArch64 and s390x to
   sig_restorer (sigtramp_<arch>.S), whose CFI gdb can follow in qemu's
   cores (gdb 13 loops on qemu's own AArch64 trampoline frames and cannot
   read s390x ones). */
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>
volatile long sink;
void sig_restorer(void);
__attribute__((noinline)) static void handler_work(int n) {
	for (volatile int i = 0; i < n; i++)
		sink += i;
}
/* Natively the handler works for most of the timer's period, so that
   most stops land in it; under qemu's single-step mode 3000 is enough. */
#ifdef __x86_64__
#define HANDLER_WORK 200000
#else
#define HANDLER_WORK 3000
#endif
static void handler(int sig) {
	handler_work(HANDLER_WORK + sig);
}
__attribute__((noinline)) static void loop(void) {
	for (volatile int i = 0; i < 100; i++)
		sink ^= i;
}
int main(void) {
#if defined(__aarch64__) || defined(__s390x__)
	/* The kernel's struct sigaction, with a restorer; SA_SIGINFO for
	   the rt_sigframe (s390x writes an older frame without it). */
	struct {
		void (*handler)(int);
		unsigned long flags;
		void (*restorer)(void);
		unsigned long mask;
	} ka = {handler, SA_RESTART | SA_SIGINFO | 0x04000000 /* SA_RESTORER */, sig_restorer, 0};
	syscall(SYS_rt_sigaction, SIGALRM, &ka, 0, sizeof ka.mask);
#else
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, 0);
#endif
	struct itimerval it = {{0, 500}, {0, 500}};
	setitimer(ITIMER_REAL, &it, 0);
	for (;;)
		loop();
}
