/* version.h: the project's version, and the runtime's interface version.
 *
 * TR_VERSION is the one place the project's version is written: programs
 * print it, and the generator (gen/trgen/version.py reads it from
 * here) writes it into every file's banner. TR_RUNTIME_VERSION is the
 * interface generated code is written against: a generated header checks
 * it, so a stale build/gen/ fails to compile instead of misbehaving. */
#ifndef TR_VERSION_H
#define TR_VERSION_H
#define TR_VERSION "0.1.0"
#define TR_RUNTIME_VERSION 4
#endif
