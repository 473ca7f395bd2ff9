/* sframe-bench: how long GNU libsframe takes to look up PCs in an SFrame
   section, for testdata/bench-lookup.sh (the same PCs are timed with
   emit.Reader.Lookup by testdata/lookupbench).

   Usage: sframe-bench SECTION-FILE PCS-FILE PASSES

   SECTION-FILE holds one SFrame section's bytes; PCS-FILE the PCs to look
   up, little-endian int64 offsets from the start of the section (what
   sframe_find_fre takes).  The section is decoded once (sframe_decode,
   not timed); then PASSES times, every PC is looked up as an unwinder
   does: sframe_find_fre, then the CFA, RA and FP offsets of the FRE found
   (sframe_fre_get_cfa_offset, _ra_offset, _fp_offset).  Printed:

     ns_per_lookup N found F checksum C

   N is the best pass's CPU time per lookup (the process's, so that a
   loaded machine's other work is not counted); F the PCs found in a pass; C the
   sum over a pass of the CFA offsets found (none for an outermost frame), to check that both sides
   found the same FREs.  Exit status 1 when a file cannot be read or the
   section cannot be decoded, 2 for a usage error.  */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sframe-api.h>

static char *
read_file (const char *path, size_t *size)
{
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    return NULL;
  if (fseek (f, 0, SEEK_END) != 0)
    {
      fclose (f);
      return NULL;
    }
  long n = ftell (f);
  rewind (f);
  char *buf = n > 0 ? malloc ((size_t) n) : NULL;
  if (buf == NULL || fread (buf, 1, (size_t) n, f) != (size_t) n)
    {
      free (buf);
      fclose (f);
      return NULL;
    }
  fclose (f);
  *size = (size_t) n;
  return buf;
}

static double
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int
main (int argc, char **argv)
{
  if (argc != 4)
    {
      fprintf (stderr, "usage: sframe-bench SECTION-FILE PCS-FILE PASSES\n");
      return 2;
    }
  int passes = atoi (argv[3]);
  size_t sec_size, pcs_size;
  char *sec = read_file (argv[1], &sec_size);
  char *pcs_buf = read_file (argv[2], &pcs_size);
  if (sec == NULL || pcs_buf == NULL || pcs_size % 8 != 0 || passes < 1)
    {
      fprintf (stderr, "sframe-bench: cannot read %s or %s\n", argv[1], argv[2]);
      return 1;
    }
  size_t npcs = pcs_size / 8;
  int64_t *pcs = malloc (npcs * sizeof *pcs);
  for (size_t i = 0; i < npcs; i++)
    {
      uint64_t v = 0;
      for (int b = 7; b >= 0; b--)
	v = v << 8 | (unsigned char) pcs_buf[i * 8 + b];
      pcs[i] = (int64_t) v;
    }

  int err = 0;
  sframe_decoder_ctx *dctx = sframe_decode (sec, sec_size, &err);
  if (dctx == NULL)
    {
      fprintf (stderr, "sframe-bench: sframe_decode: error %d\n", err);
      return 1;
    }

  double best = 0;
  int64_t found = 0, checksum = 0;
  for (int p = 0; p < passes; p++)
    {
      int64_t f = 0, sum = 0;
      double t0 = now_ns ();
      for (size_t i = 0; i < npcs; i++)
	{
	  sframe_frame_row_entry fre;
	  if (sframe_find_fre (dctx, pcs[i], &fre) != 0)
	    continue;
	  int e = 0, ea = 0, ef = 0;
	  int32_t cfa = sframe_fre_get_cfa_offset (dctx, &fre, SFRAME_FDE_TYPE_DEFAULT, &e);
	  int32_t ra = sframe_fre_get_ra_offset (dctx, &fre, SFRAME_FDE_TYPE_DEFAULT, &ea);
	  int32_t fp = sframe_fre_get_fp_offset (dctx, &fre, SFRAME_FDE_TYPE_DEFAULT, &ef);
	  (void) ra;
	  (void) fp;
	  f++;
	  if (e == 0) /* an outermost frame (RA undefined) has no CFA offset */
	    sum += cfa;
	}
      double ns = (now_ns () - t0) / (double) npcs;
      if (p == 0 || ns < best)
	best = ns;
      found = f;
      checksum = sum;
    }
  printf ("ns_per_lookup %.1f found %" PRId64 " checksum %" PRId64 "\n", best, found, checksum);
  sframe_decoder_free (&dctx);
  free (pcs);
  free (pcs_buf);
  free (sec);
  return 0;
}
