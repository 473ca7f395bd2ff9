/* The shared library of the integration fixtures. */
#include <stdio.h>
#include <string.h>
int greet(const char *who) { printf("hello, %s\n", who); return (int)strlen(who); }
