/* demo.c: a small shared library for the link goldens (testdata/regen.sh).
 * Several functions with different frame shapes, calls into libc through the
 * PLT, and the address of an external function taken (strcmp: GOT + PLT use,
 * which gives a .plt.got entry on x86-64). Public domain / CC0. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int demo_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorts words in place with qsort; also calls strcmp directly and passes it
 * around as a pointer. */
int demo_sort(const char **words, size_t n, int (**cmp_out)(const char *, const char *))
{
	qsort(words, n, sizeof *words, demo_cmp);
	if (cmp_out)
		*cmp_out = strcmp;
	return n > 1 ? strcmp(words[0], words[n - 1]) : 0;
}

/* Formats into a malloc'ed buffer (varargs, vsnprintf, malloc). */
char *demo_format(const char *fmt, ...)
{
	va_list ap;
	char *buf;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0)
		return NULL;
	buf = malloc((size_t)len + 1);
	if (!buf)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(buf, (size_t)len + 1, fmt, ap);
	va_end(ap);
	return buf;
}

/* A large stack frame (CFA offset above 255: 2-byte data words). */
unsigned demo_checksum(const char *s)
{
	char tmp[4096];
	unsigned h = 5381;
	size_t i, n = strlen(s);

	if (n >= sizeof tmp)
		n = sizeof tmp - 1;
	memcpy(tmp, s, n);
	tmp[n] = 0;
	for (i = 0; i < n; i++)
		h = h * 33 + (unsigned char)tmp[i];
	return h;
}

/* A variable-length array: keeps a frame pointer even when omitted elsewhere. */
long demo_vla(int n)
{
	long v[n > 0 ? n : 1];
	long sum = 0;
	int i;

	for (i = 0; i < n; i++)
		v[i] = i * (long)i;
	for (i = 0; i < n; i++)
		sum += v[i];
	return sum;
}

static unsigned long fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

unsigned long demo_fib(unsigned n)
{
	return fib(n);
}

void demo_print(const char *what, long v)
{
	printf("%s = %ld\n", what, v);
	fflush(stdout);
}
