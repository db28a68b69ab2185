/* version.h: the runtime's interface version. Generated code checks it, so
 * a stale build/gen/ fails to compile instead of misbehaving. */
#ifndef TR_VERSION_H
#define TR_VERSION_H
#define TR_RUNTIME_VERSION 1
#endif
