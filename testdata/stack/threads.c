/* Threads doing different work: recursion, qsort, string work. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
volatile long sink;
__attribute__((noinline)) static long rec(int n) { return n ? rec(n - 1) + 1 : (long)(sink & 1); }
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
static void *recurse(void *p) { for (;;) sink += rec(30); return p; }
static void *sorter(void *p) {
	int v[128];
	for (unsigned s = 0;; s++) {
		for (int i = 0; i < 128; i++) v[i] = (int)((s + i) * 2654435761u % 997);
		qsort(v, 128, sizeof v[0], cmp);
	}
	return p;
}
static void *strings(void *p) {
	char a[256], b[256];
	for (;;) { memset(a, 'a' + (sink & 7), sizeof a - 1); a[255] = 0; memcpy(b, a, sizeof a); sink += (long)strlen(b); }
	return p;
}
int main(void) {
	pthread_t t[3];
	pthread_create(&t[0], 0, recurse, 0);
	pthread_create(&t[1], 0, sorter, 0);
	pthread_create(&t[2], 0, strings, 0);
	for (;;) sink += rec(10);
}
