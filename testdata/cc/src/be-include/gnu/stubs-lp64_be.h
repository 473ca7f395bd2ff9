/* Empty stand-in: Debian ships no big-endian aarch64 glibc, only its headers;
   gnu/stubs.h wants this file for -mbig-endian. Used by testdata/regen.sh. */
