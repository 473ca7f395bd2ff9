/* Threads blocked at different depths (for sframe-gen stack --pid against
   eu-stack: the stacks do not change between the two walks). Each worker
   recurses, then waits in read on its pipe; main waits for a line on
   stdin, wakes the workers, joins them, prints "done" and exits 0. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static int pipes[3][2];
__attribute__((noinline)) static long descend(int n, int fd) {
	char c;
	if (n == 0)
		return read(fd, &c, 1);
	return descend(n - 1, fd) + 1;
}
static void *worker(void *arg) {
	long i = (long)arg;
	descend(3 + 5 * (int)i, pipes[i][0]);
	return 0;
}
int main(void) {
	pthread_t t[3];
	for (long i = 0; i < 3; i++) {
		if (pipe(pipes[i]) != 0)
			return 1;
		pthread_create(&t[i], 0, worker, (void *)i);
	}
	printf("ready\n");
	fflush(stdout);
	char line[16];
	if (!fgets(line, sizeof line, stdin))
		return 2;
	for (int i = 0; i < 3; i++) {
		if (write(pipes[i][1], "x", 1) != 1)
			return 3;
		pthread_join(t[i], 0);
	}
	printf("done\n");
	return 0;
}
