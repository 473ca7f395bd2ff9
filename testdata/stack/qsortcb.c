/* qsort calling back into the program through libc (the callback called
   through a pointer, libc's functions through the PLT). */
#include <stdlib.h>
#include <string.h>
volatile long sink;
static int cmp(const void *a, const void *b) {
	long x = *(const long *)a, y = *(const long *)b;
	sink++;
	return (x > y) - (x < y);
}
int main(void) {
	static long v[512];
	for (unsigned s = 1;; s++) {
		for (int i = 0; i < 512; i++)
			v[i] = (long)((s * 2654435761u) ^ (unsigned)i * 40503u) % 1000;
		qsort(v, 512, sizeof v[0], cmp);
		sink += (long)strlen("x");
	}
}
