/* hello.c: the sample for `make run` (testdata/regen.sh builds it as a PIE
 * without SFrame, hello-x86_64, and with GNU's SFrame, hello-x86_64.gs).
 * Public domain / CC0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long fact(unsigned n)
{
	return n < 2 ? 1 : n * fact(n - 1);
}

static void greet(const char *who)
{
	char buf[256];

	snprintf(buf, sizeof buf, "hello, %s", who);
	puts(buf);
}

int main(int argc, char **argv)
{
	greet(argc > 1 ? argv[1] : "world");
	printf("10! = %lu\n", fact(10));
	return strlen(argv[0]) > 1000;
}
