/* main.c: an executable using libc and, when linked with -DUSE_DEMO, the demo
 * library (link goldens, testdata/regen.sh). Public domain / CC0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef USE_DEMO
extern int demo_sort(const char **, size_t, int (**)(const char *, const char *));
extern char *demo_format(const char *, ...);
extern unsigned demo_checksum(const char *);
extern long demo_vla(int);
extern unsigned long demo_fib(unsigned);
extern void demo_print(const char *, long);
#endif

static int count_chars(const char *s, int c)
{
	int n = 0;
	for (; *s; s++)
		n += *s == c;
	return n;
}

static __attribute__((noinline)) void report(const char *name, long value)
{
	printf("%-10s %ld\n", name, value);
}

int main(int argc, char **argv)
{
	const char *words[] = { "pear", "apple", "fig", "plum" };
	long total = 0;
	int i;

	for (i = 1; i < argc; i++)
		total += atoi(argv[i]) + count_chars(argv[i], 'a');
	report("total", total);
#ifdef USE_DEMO
	{
		int (*cmp)(const char *, const char *) = 0;
		char *s;

		demo_sort(words, 4, &cmp);
		s = demo_format("%s,%s,%s,%s", words[0], words[1], words[2], words[3]);
		puts(s);
		demo_print("checksum", demo_checksum(s));
		demo_print("vla", demo_vla(argc + 5));
		demo_print("fib", (long)demo_fib(20));
		free(s);
	}
#else
	qsort(words, 4, sizeof words[0], (int (*)(const void *, const void *))strcmp);
	puts(words[0]);
#endif
	return 0;
}
