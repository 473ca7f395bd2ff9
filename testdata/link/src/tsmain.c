/* tsmain.c: drives the tree-sitter runtime (cc/src/tree-sitter) so that it
 * can be linked into an executable for the link goldens. It only creates and
 * frees objects; no grammar is linked in. Public domain / CC0. */
#include <stdio.h>
#include "tree_sitter/api.h"

int main(void)
{
	TSParser *p = ts_parser_new();
	uint32_t min = 0, max = 0;

	ts_parser_set_timeout_micros(p, 1000);
	printf("timeout %llu, abi %u..%u\n",
	       (unsigned long long)ts_parser_timeout_micros(p),
	       (unsigned)TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION,
	       (unsigned)TREE_SITTER_LANGUAGE_VERSION);
	(void)min; (void)max;
	ts_parser_delete(p);
	return 0;
}
